"""Differential fuzz of the compiled dump scanner against the msgspec parser.

    python benchmarks/fuzz_dumpscan.py --seed 1 --cases 20000 --seconds 60 [--scanner FILE.so]

Each case is a block of dump lines built from the structure of real ones (entities like the
synthetic dump's, properties, items with spans of their own, time qualifiers of every
precision, calendar and snak type, item values of every vintage), damaged at the JSON level (a
field dropped, doubled, renamed or its name escaped; a value replaced by one of another type,
nested deep, or written with escapes and odd numbers) and now and then at the byte level. Each
block is parsed both ways (``parse_block`` with and without the compiled scanner); any
difference in tables, skips, problems or line counts, or any exception, fails, and the case is
cut down to its first differing line and saved with ``--save``. Each line is also scanned from
a buffer of exactly its length, whose end AddressSanitizer guards, to the same answer.

``--scanner`` loads the scanner from another build of ``_dumpscan.c`` (the sanitizer job
builds it with AddressSanitizer and UndefinedBehaviorSanitizer, and without SSE2); ``--run``
checks which string scan that build has (16 bytes at a time: SSE2; 8: portable). The cases of a
seed are the same on every run; ``--seconds`` only stops early.
"""

from __future__ import annotations

import argparse
import copy
import ctypes
import importlib.util
import json
import random
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import msgspec

from bench_wikidata_dump import _entity, _item, _time  # beside this file, as it is run
from chronoprobe.kg.io import wikidata_dump
from chronoprobe.kg.records import ENTITY_SCHEMA

JULIAN = "http://www.wikidata.org/entity/Q1985786"
LANGS = ("en", "de", "fr")
RELATIONS = (None, frozenset({"P39", "P54"}), frozenset({"P31"}), frozenset({"P580", "P571"}))
TIME_PIDS = ("P580", "P582", "P585", "P571", "P576", "P577", "P575", "P642")
TIMES = (
    "+2001-00-00T00:00:00Z", "+1999-07-00T00:00:00Z", "+2001-02-03T00:00:00Z",
    "-0044-03-15T00:00:00Z", "+1582-10-04T00:00:00Z", "+0000-00-00T00:00:00Z",
    "+2001-13-45T00:00:00Z", "+20010-01-01T00:00:00Z", "2001-01-01", "+2001-02-30T00:00:00Z",
    "+999999999-00-00T00:00:00Z", "", "+1900-01-01T00:00:00+01:00",
)  # fmt: skip
ODD_VALUES = (
    None, True, False, 0, -0.0, 1.5, 1e300, 2**70, -(2**63), "", "x", "\u00e9\U0001f600",
    "\\", '"', "\x00\x1f", [], {}, [[[]]], {"a": {"b": None}}, [1, "a", None],
)  # fmt: skip
NEAR_NAMES = {
    "type": "typ", "id": "ID", "claims": "claim", "labels": "label", "mainsnak": "mainSnak",
    "snaktype": "snakType", "datavalue": "dataValue", "datatype": "dataType", "rank": "Rank",
    "qualifiers": "qualifier", "value": "values", "P580": "P58", "P582": "P5820",
    "numeric-id": "numeric_id", "entity-type": "entitytype", "time": "Time",
}  # fmt: skip


class Pairs(list):
    """A JSON object written member by member, so that a name can be given twice."""


def _time_snak(rng: random.Random, pid: str) -> dict:
    snak = _time(pid, 2000, 1, 1, rng.choice((9, 9, 10, 11, 7, 0, 14, 12, -1)))
    snak["datavalue"]["value"]["time"] = rng.choice(TIMES)
    if rng.random() < 0.3:
        snak["datavalue"]["value"]["calendarmodel"] = JULIAN
    kind = rng.randrange(16)
    if kind == 0:
        return {"snaktype": rng.choice(("somevalue", "novalue")), "property": pid}
    if kind == 1:
        del snak["datatype"]
    return snak


def _item_snak(rng: random.Random, pid: str) -> dict:
    snak = _item(pid, rng.choice((1, 5, 42, 10**6, 0)))
    value = snak["datavalue"]["value"]
    kind = rng.randrange(30)
    if kind == 0:
        del value["id"]  # dumps before 2016
    elif kind == 1:
        value["id"] = rng.choice(("Q01", "P5", "Q", "q5", "Q5 ", "L1"))
    elif kind == 2:
        value["entity-type"] = rng.choice(("property", None, 5))
    elif kind == 3:
        snak["snaktype"] = rng.choice(("somevalue", "novalue"))
        del snak["datavalue"]
    elif kind == 4:
        del snak["datatype"]
    return snak


def _statement(rng: random.Random, main: dict, times: int) -> dict:
    statement = {"mainsnak": main, "type": "statement", "id": "Q1$X"}
    statement["rank"] = rng.choice(("normal", "normal", "preferred", "deprecated", "weird"))
    if times:
        pids = rng.sample(("P580", "P582", "P585", "P642"), times)
        qualifiers = {
            pid: [_time_snak(rng, pid) for _ in range(rng.randrange(1, 3))] for pid in pids
        }
        statement["qualifiers"] = rng.choice((qualifiers,) * 8 + (None, [], {}))
    return statement


def _small_entity(rng: random.Random, number: int) -> dict:
    """An item or property of a few statements, each of the kinds the parsers tell apart."""
    if rng.random() < 0.1:
        pid = f"P{number}"
        return {
            "type": "property", "id": pid, "datatype": rng.choice(("wikibase-item", "time", None)),
            "labels": {"en": {"language": "en", "value": f"prop {number}"}}, "claims": {},
        }  # fmt: skip
    claims: dict = {}
    for _ in range(rng.randrange(4)):
        pid = rng.choice(("P39", "P54", "P31", "P26"))
        claims.setdefault(pid, []).append(_statement(rng, _item_snak(rng, pid), rng.randrange(4)))
    if rng.random() < 0.3:
        pid = rng.choice(TIME_PIDS[:7])
        main = _time_snak(rng, pid) if rng.random() < 0.8 else _item_snak(rng, pid)
        claims.setdefault(pid, []).append(_statement(rng, main, 0))
    label = rng.choice((f"q{number}", 'Douglas "Doug" Adams\n\u00e9', "\u65e5\u672c", ""))
    return {
        "type": rng.choice(("item",) * 9 + ("lexeme",)),
        "id": f"Q{number}",
        "labels": {lang: {"language": lang, "value": label} for lang in rng.sample(LANGS, 2)},
        "descriptions": rng.choice(({}, [], None, {"en": {"language": "en", "value": "d"}})),
        "aliases": rng.choice(({}, {"en": [{"language": "en", "value": "a"}, {"value": "b"}]})),
        "claims": rng.choice((claims,) * 6 + ([], None)),
        "sitelinks": {"enwiki": {"site": "enwiki", "title": "t", "badges": []}},
    }


def _odd(rng: random.Random):
    return copy.deepcopy(rng.choice(ODD_VALUES))


def _nodes(value, path=()) -> list[tuple]:
    """Every container of ``value`` with its path, the value first (not inside a Pairs)."""
    if isinstance(value, Pairs):
        return []
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, dict | list):
                found += _nodes(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, dict | list):
                found += _nodes(item, (*path, index))
    return found


def _at(value, path: tuple):
    for step in path:
        value = value[step]
    return value


def _damage_tree(rng: random.Random, entity: dict) -> dict | Pairs:
    """One JSON-level change somewhere in ``entity`` (changed in place, or returned)."""
    if isinstance(entity, Pairs):
        return entity
    path = rng.choice(_nodes(entity))
    node = _at(entity, path)
    if isinstance(node, list):
        if node and rng.random() < 0.5:
            node[rng.randrange(len(node))] = _odd(rng)
        else:
            node.append(copy.deepcopy(rng.choice((*ODD_VALUES, *node))))
        return entity
    if not node:
        node["x"] = _odd(rng)
        return entity
    key = rng.choice(list(node))
    kind = rng.randrange(7)
    if kind == 0:
        del node[key]
    elif kind == 1:
        node[key] = _odd(rng)
    elif kind == 2:
        node[NEAR_NAMES.get(key, key + "_")] = node.pop(key)
    elif kind == 3:
        node[key] = [node[key]] if rng.random() < 0.5 else {"value": node[key]}
    elif kind == 4:
        node[key] = json.loads("[" * 70 + "]" * 70) if rng.random() < 0.5 else [[[node[key]]]]
    else:  # a name given twice, the second value another's or odd
        twice = Pairs(node.items())
        again = copy.deepcopy(rng.choice((node[key], *ODD_VALUES)))
        twice.insert(rng.randrange(len(twice) + 1), (key, again))
        if not path:
            return twice
        _at(entity, path[:-1])[path[-1]] = twice
    return entity


def _write_string(rng: random.Random, text: str, escapes: float) -> str:
    out = []
    for char in text:
        if char in '"\\' or char < " ":
            out.append(json.dumps(char)[1:-1])
        elif rng.random() < escapes:  # \u escapes, surrogate pairs beyond the BMP
            out.append(json.dumps(char)[1:-1] if char > "\x7f" else f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def write(rng: random.Random, value, escapes: float, spaces: float) -> str:
    """``value`` as JSON, with some characters of its strings and names written as escapes,
    some blanks between tokens, and an object's members in their order, repeats included."""

    def blank() -> str:
        return rng.choice((" ", "\t", "\r", "  ")) if rng.random() < spaces else ""

    def inner(item) -> str:
        return blank() + write(rng, item, escapes, spaces)

    if isinstance(value, dict | Pairs):
        members = value.items() if isinstance(value, dict) else value
        named = (f"{inner(key)}{blank()}:{inner(item)}" for key, item in members)
        return "{" + ",".join(named) + blank() + "}"
    if isinstance(value, list):
        return "[" + ",".join(map(inner, value)) + blank() + "]"
    if isinstance(value, str):
        return _write_string(rng, value, escapes)
    return json.dumps(value)


def _damage_bytes(rng: random.Random, line: bytes) -> bytes:
    data = bytearray(line)
    for _ in range(rng.choice((1, 1, 2))):
        if not data:
            break
        at = rng.randrange(len(data))
        edit = rng.randrange(5)
        if edit == 0:
            del data[at]
        elif edit == 1:
            data[at] = rng.choice(b'{}[]:,"\\0-eE.n\x00\xff\xc3\xed\x80 ')
        elif edit == 2:
            data[at:at] = rng.choice((b"\\ud800", b"\xf0\x9f\x98", b"\\u", b"1e999", b"\xc0\xaf"))
        elif edit == 3:
            del data[rng.randrange(1, len(data) + 1) :]
        else:
            data[at:at] = data[at : at + rng.randrange(1, 40)]
    return bytes(data)


def case(seed: int, number: int) -> tuple[bytes | bytearray, int, str, frozenset[str] | None]:
    """The block of one case, its first line's number, its language and relations."""
    rng = random.Random(seed * 1_000_003 + number)
    lines = []
    for index in range(rng.randrange(1, 12)):
        entity_number = number * 16 + index + 1
        if rng.random() < 0.05:  # a whole entity like the synthetic dump's, some kB
            entity = _entity(rng, entity_number)[0]
        else:
            entity = _small_entity(rng, entity_number)
        for _ in range(rng.choice((0, 0, 0, 1, 1, 2, 3))):
            entity = _damage_tree(rng, entity)
        text = write(rng, entity, rng.choice((0, 0, 0.05, 0.5)), rng.choice((0, 0, 0.1)))
        line = text.encode("utf-8", "surrogatepass")
        if rng.random() < 0.15:
            line = _damage_bytes(rng, line)
        lines.append(line)
    ends = [rng.choice((b",\n", b",\n", b"\n", b",\r\n", b" ,\n")) for _ in lines]
    block = b"".join(line + end for line, end in zip(lines, ends, strict=True))
    if rng.random() < 0.1:
        block = b"[\n" + block + b"]\n"
    if rng.random() < 0.3:
        block = block.rstrip(b",\n")
    if rng.random() < 0.2:
        block = bytearray(block)  # as the loader's reader hands them over
    return block, rng.randrange(1, 10**6), rng.choice(LANGS), rng.choice(RELATIONS)


def difference(block: bytes, first_line: int, lang: str, relations) -> str | None:
    """How the two parses of ``block`` differ, or None."""
    try:
        fast = wikidata_dump.parse_block(block, first_line, lang, relations, compiled=True)
    except Exception as err:  # any exception is a finding
        return f"the compiled parse raised {err!r}"
    try:
        slow = wikidata_dump.parse_block(block, first_line, lang, relations, compiled=False)
    except Exception as err:
        return f"the msgspec parse raised {err!r}"
    for name in ("entities", "relations", "facts"):
        compiled, python = getattr(fast, name), getattr(slow, name)
        if not compiled.equals(python):
            return f"{name}: compiled {compiled.to_pylist()} python {python.to_pylist()}"
    for name in ("skipped", "problems", "lines"):
        if getattr(fast, name) != getattr(slow, name):
            return f"{name}: compiled {getattr(fast, name)} python {getattr(slow, name)}"
    return None


def exact_buffer_difference(block: bytes, lang: str, relations, ways: Counter) -> str | None:
    """A line scanned from a buffer of exactly its size (its end guarded by AddressSanitizer
    where the scanner is built with it) must answer as from a larger one; ``ways`` counts
    how the lines went (True: finished in C, tuple: finished in Python, None: left whole)."""
    for line in block.split(b"\n"):
        span = wikidata_dump._entity_span(line, 0, len(line))
        if span is None:
            continue
        line = line[span[0] : span[1]]
        exact = (ctypes.c_char * len(line)).from_buffer_copy(line)  # inline when <= 16 bytes
        answers = [_scanner(lang, relations).scan(buffer, 0, len(line)) for buffer in (line, exact)]
        if answers[0] != answers[1]:
            return f"scan of an exact buffer {answers[1]!r}, of bytes {answers[0]!r}"
        ways[type(answers[0]).__name__] += 1
    return None


def _scanner(lang: str, relations) -> wikidata_dump.Scanner:
    return wikidata_dump.Scanner(
        lang.encode(), wikidata_dump._SPAN_BYTES, relations, wikidata_dump._time_bounds,
        msgspec.ValidationError, wikidata_dump.BoundsCache(1 << 20), [], [], len(ENTITY_SCHEMA),
    )  # fmt: skip


def smallest(block: bytes, first_line: int, lang: str, relations, differ: Callable) -> bytes:
    """The first line of ``block`` that differs alone, or the block."""
    for line in block.split(b"\n"):
        if differ(line + b"\n", first_line, lang, relations):
            return line
    return block


def load_scanner(path: Path | str):
    """Make the dump loader use the build of ``_dumpscan.c`` at ``path`` from now on; the
    module."""
    spec = importlib.util.spec_from_file_location("_dumpscan", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    wikidata_dump.Scanner, wikidata_dump.BoundsCache = module.Scanner, module.BoundsCache
    wikidata_dump._SCANNED_BOUNDS = module.BoundsCache(wikidata_dump._SCANNED_BOUNDS_BYTES)
    return module


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cases", type=int, default=5000, help="Blocks to try (the most).")
    parser.add_argument("--seconds", type=float, default=60, help="Stop after this long.")
    parser.add_argument("--scanner", type=Path, help="A build of _dumpscan.c to test.")
    parser.add_argument(
        "--run", type=int, choices=(8, 16), help="The bytes its string scan must take at once."
    )
    parser.add_argument("--save", type=Path, help="Write a failing case here.")
    args = parser.parse_args()
    if args.scanner is not None:
        module = load_scanner(args.scanner)
        if args.run not in (None, module.STRING_RUN):
            print(
                f"{args.scanner}: its string scan takes {module.STRING_RUN} bytes, not {args.run}"
            )
            return 1
    if wikidata_dump.Scanner is None:
        print("the compiled scanner is not built: nothing to compare")
        return 1
    began, ways = time.monotonic(), Counter()
    for number in range(args.cases):
        if time.monotonic() - began > args.seconds:
            break
        block, first_line, lang, relations = case(args.seed, number)
        found = difference(block, first_line, lang, relations)
        found = found or exact_buffer_difference(block, lang, relations, ways)
        if found:
            line = smallest(block, first_line, lang, relations, difference)
            print(f"seed {args.seed} case {number} ({lang}, {sorted(relations or [])}): {found}")
            print(f"line: {line[:2000]!r}")
            if args.save:
                args.save.write_bytes(line)
            return 1
    else:
        number = args.cases
    lines = sum(ways.values())
    print(
        f"seed {args.seed}: {number} blocks, {lines} lines in {time.monotonic() - began:.0f} s, "
        f"no difference; finished in C {ways['bool']}, in Python {ways['tuple']}, "
        f"left whole {ways['NoneType']}"
    )
    # A fuzz whose lines all fall back to Python would test nothing compiled.
    return 0 if ways["bool"] > lines // 10 and ways["tuple"] > lines // 20 else 1


if __name__ == "__main__":
    sys.exit(main())
