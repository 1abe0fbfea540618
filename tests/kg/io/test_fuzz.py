"""Property tests of every loader: random damage to one record of a fixture, seeded.

Each case damages one record (a dump line, a JSONL row, a CronQuestions line, a SPARQL binding,
an entity of a wbgetentities response, a probe row) in one of two ways: a value replaced by
something hostile (an id with a space, a year past 32 bits, year 0, other scripts' digits,
invalid UTF-8, nesting thousands deep, a wrong type, a missing or extra key), or its bytes
damaged (flipped, cut, doubled, a byte-order mark, stray quotes and brackets). The loader must
then, in lenient mode:

- never raise, except a ValueError that names the file and the line;
- report each problem at the damaged record's line, and no new problem anywhere else;
- keep every fact the file gives with that record taken out.

Byte damage inside a one-document format (SPARQL results, an entities response) may break the
whole document; there only the first rule is asked. ``CHRONOPROBE_FUZZ_CASES`` sets the cases
per format (default 120, a few seconds each); with ``CHRONOPROBE_FUZZ_REPORT=FILE`` the
outcomes are written to FILE as JSON (how docs/reliability.md's figures were made).
"""

from __future__ import annotations

import json
import os
import random
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from chronoprobe.kg.io.jsonl import fact_tuples
from chronoprobe.kg.io.options import LoadOptions, get_loader
from chronoprobe.kg.io.problems import Problems
from chronoprobe.probes.rows import read_rows

FIXTURES = Path(__file__).parents[2] / "fixtures"
CASES = int(os.environ.get("CHRONOPROBE_FUZZ_CASES", "120"))
REPORT = os.environ.get("CHRONOPROBE_FUZZ_REPORT")

RAW = "@@raw@@"  # stands for raw bytes spliced into serialized JSON
HOSTILE_STRINGS = [
    *("", " ", "Q 1", "\ufeffQ1", "Q1\t", "\x00", "Q0", "P", "eleven", "14", "8", "-0059"),
    *("0000", "+2147483648", "-2147483649", "2009-13-01", "2009-02-29", "2021-08", "9" * 30),
    *("\u0661\u0669\u0669\u0669", "+2147483648-01-01T00:00:00Z", "0000-01-01T00:00:00Z"),
    *("-0000-01-01T00:00:00Z", "http://www.wikidata.org/entity/Q", "\u2028", "\ud800"),
]
HOSTILE_VALUES = [0, -1, 9, 11, 2**31, -(2**31) - 1, 2**64, 1e308, 0.5, True, None, [], {}, [1]]
HOSTILE_RAW = [
    b'"\xff\xfe"',
    b'"Obama\xc3"',
    b"[" * 3000 + b"]" * 3000,
    b'{"a": ' * 2000 + b"1" + b"}" * 2000,
    b"1e999999",
    b'"' + b"x" * 100_000 + b'"',
]
STRAY_BYTES = [b"\xff", b"\x00", b"\xef\xbb\xbf", b'"', b"{", b"}", b"[", b",", b"\t", b"\\", b"\r"]
TSV_TOKENS = [
    *(b"0", b"9999", b"-0", b"2147483648", b"-2147483649", b"+2001", b"1e3", b"", b" "),
    *("\u0661\u0669\u0669\u0669".encode(), b"\xef\xbb\xbf", b"\xff", b"Q1 Q2", b"P39\r"),
]


# ----- damage -------------------------------------------------------------------------------


def damage_bytes(rng: random.Random, record: bytes) -> bytes:
    """Random byte damage that never adds a newline (the record stays on its lines)."""
    record = bytearray(record)
    for _ in range(rng.choice((1, 1, 2, 3))):
        at = rng.randrange(len(record) + 1)
        op = rng.randrange(6)
        if op == 0 and record:
            record[min(at, len(record) - 1)] = rng.choice([b for b in range(256) if b != 10])
        elif op == 1:
            record[at:at] = rng.choice(STRAY_BYTES)
        elif op == 2:
            del record[at : at + rng.randrange(1, 20)]
        elif op == 3:
            del record[at:]
        elif op == 4:
            record[at:at] = record[at : at + rng.randrange(1, 40)]
        else:
            record[at:at] = b"[" * 3000
    return bytes(record)


def _paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*path, index))


def damage_value(rng: random.Random, record: dict) -> bytes:
    """``record`` as one line of JSON with one value replaced, removed or added."""
    record = json.loads(json.dumps(record))
    path = rng.choice([p for p in _paths(record) if p])
    parent = record
    for key in path[:-1]:
        parent = parent[key]
    key, op = path[-1], rng.randrange(10)
    raw = rng.choice(HOSTILE_RAW)
    if op == 0 and isinstance(parent, dict):
        del parent[key]
    elif op == 1 and isinstance(parent, dict):
        parent[rng.choice(["qualifier", "x", "kind", "datatype", "type"])] = "P580"
    elif op == 2:
        parent[key] = RAW
    elif op in (3, 4, 5) and isinstance(parent[key], str):
        text = parent[key]
        at = rng.randrange(len(text) + 1)
        parent[key] = text[:at] + rng.choice(HOSTILE_STRINGS) + text[at + rng.randrange(3) :]
    elif op in (6, 7):
        parent[key] = rng.choice(HOSTILE_STRINGS)
    else:
        parent[key] = rng.choice(HOSTILE_VALUES)
    text = json.dumps(record, ensure_ascii=rng.random() < 0.5).encode("utf-8", "surrogatepass")
    return text.replace(f'"{RAW}"'.encode(), raw)


def damage_fields(rng: random.Random, line: bytes) -> bytes:
    """A CronQuestions line with one field replaced, removed or added."""
    fields = line.split(b"\t")
    at, op = rng.randrange(len(fields)), rng.randrange(4)
    if op == 0:
        del fields[at]
    elif op == 1:
        fields.insert(at, rng.choice(TSV_TOKENS))
    else:
        fields[at] = rng.choice(TSV_TOKENS)
    return b"\t".join(fields)


# ----- formats ------------------------------------------------------------------------------


@dataclass
class Format:
    """A fixture as records on lines: ``write`` lays records out (record ``i`` on line
    ``line(i)``); ``neutral`` is a record that gives neither a fact nor a problem."""

    name: str
    loader: str
    records: list[bytes]
    write: Callable[[list[bytes]], bytes]
    line: Callable[[int], int]
    neutral: bytes
    damage: Callable[[random.Random, bytes], bytes]
    document: bool = False  # byte damage may break the whole file


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().rstrip(b"\n").split(b"\n")


def _json_damage(rng: random.Random, record: bytes) -> bytes:
    return damage_value(rng, json.loads(record.rstrip(b",")))


def _dump() -> Format:
    lines = _lines(FIXTURES / "wikidata" / "dump.json")

    def damage(rng, record):
        try:
            return _json_damage(rng, record) + b","
        except ValueError:  # one of the fixture's broken lines
            return damage_bytes(rng, record)

    return Format(
        "wikidata-json dump lines",
        "wikidata-json",
        lines,
        lambda records: b"\n".join(records) + b"\n",
        lambda i: i + 1,
        b"",
        damage,
    )


def _jsonl() -> Format:
    lines = _lines(FIXTURES / "jsonl" / "presidents.jsonl")

    def damage(rng, record):
        try:
            return _json_damage(rng, record)
        except ValueError:
            return damage_bytes(rng, record)

    join = b"\n".join
    return Format("jsonl", "jsonl", lines, lambda r: join(r) + b"\n", lambda i: i + 1, b"", damage)


def _cronquestions() -> Format:
    lines = _lines(FIXTURES / "cronquestions" / "kg" / "full.txt")
    join = b"\n".join
    return Format(
        "cronquestions", "cronquestions", lines, lambda r: join(r) + b"\n", lambda i: i + 1, b"",
        damage_fields,
    )  # fmt: skip


def _sparql() -> Format:
    document = json.loads((FIXTURES / "sparql" / "heads_of_state.json").read_text())
    head = json.dumps({"head": document["head"]})[:-1].encode()
    bindings = [json.dumps(b).encode() for b in document["results"]["bindings"]]
    iri = "http://www.wikidata.org/entity/"
    neutral = {  # sound, but no time: skipped, not a problem
        "subject": {"type": "uri", "value": iri + "Q1"},
        "relation": {"type": "uri", "value": iri + "P1"},
        "object": {"type": "uri", "value": iri + "Q2"},
    }
    return Format(
        "wikidata-sparql bindings",
        "wikidata-sparql",
        bindings,
        lambda records: head + b', "results": {"bindings": [\n' + b",\n".join(records) + b"\n]}}",
        lambda i: i + 2,
        json.dumps(neutral).encode(),
        _json_damage,
        document=True,
    )


def _entities() -> Format:
    shown = json.loads((FIXTURES / "wikidata" / "wbgetentities.json").read_text())["entities"]
    shown = [e for e in shown.values() if "missing" not in e]
    array = json.loads((FIXTURES / "wikidata" / "entities_array.json").read_text())
    entities = [json.dumps(e).encode() for e in [*shown, *array]]

    def write(records):
        members = [b'"E%d": %s' % (n, r) for n, r in enumerate(records)]
        return b'{"entities": {\n' + b",\n".join(members) + b'\n}, "success": 1}'

    neutral = b'{"type": "item", "id": "Q999", "claims": {}}'
    return Format(
        "wikidata-json entities response", "wikidata-json", entities, write, lambda i: i + 2,
        neutral, _json_damage, document=True,
    )  # fmt: skip


FORMATS = {f.name: f for f in (_dump(), _jsonl(), _cronquestions(), _sparql(), _entities())}


# ----- the property -------------------------------------------------------------------------


class Recorded(Problems):
    """Problems that keeps every report, not a first example per kind."""

    def __init__(self) -> None:
        super().__init__()
        self.all: list[tuple[str, int, str]] = []

    def report(self, file: str, line: int, reason: str, kind: str | None = None) -> None:
        self.all.append((file, line, reason))
        super().report(file, line, reason, kind)


@dataclass
class Tally:
    cases: Counter = field(default_factory=Counter)  # outcome -> cases
    failures: list[str] = field(default_factory=list)


def _load(fmt: Format, path: Path, records: list[bytes]):
    path.write_bytes(fmt.write(records))
    problems = Recorded()
    try:
        kg = get_loader(fmt.loader)([path], LoadOptions(), problems)
    except ValueError as err:  # only a located one is allowed
        if not re.match(rf"{re.escape(str(path))}:\d+: ", str(err)):
            raise
        return None, problems, str(err)
    return kg, problems, None


def run_case(fmt: Format, case: int, tmp_path: Path, tally: Tally) -> None:
    rng = random.Random(case)
    index = rng.randrange(len(fmt.records))
    by_bytes = fmt.damage is not damage_fields and rng.random() < 0.3
    damaged = (damage_bytes if by_bytes else fmt.damage)(rng, fmt.records[index])
    records = list(fmt.records)
    where = f"{fmt.name} case {case} (record {index}: {damaged[:80]!r})"
    records[index] = damaged
    try:
        kg, problems, error = _load(fmt, tmp_path / f"damaged-{fmt.loader}", records)
    except Exception as err:  # exactly what the property forbids
        tally.cases["uncaught"] += 1
        tally.failures.append(f"{where}: uncaught {err!r}")
        return
    line = fmt.line(index)
    located = all(1 <= n <= fmt.write(records).count(b"\n") + 1 for _, n, _ in problems.all)
    if not located:
        tally.failures.append(f"{where}: a problem outside the file: {problems.all}")
    if error is not None or problems.all != _baseline(fmt, index, tmp_path)[1]:
        tally.cases["reported with location"] += 1
    else:
        tally.cases["kept as sound"] += 1
    if fmt.document and by_bytes:
        return  # the whole document may be lost; located is all that is asked
    base_kg, base_problems = _baseline(fmt, index, tmp_path)
    new = [p for p in problems.all if p not in base_problems]
    if any(n != line for _, n, _ in new):
        tally.failures.append(f"{where}: a problem away from line {line}: {new}")
    if error is not None:
        if not error.startswith(f"{tmp_path / ('damaged-' + fmt.loader)}:{line}: "):
            tally.failures.append(f"{where}: an error away from line {line}: {error}")
        return
    lost = set(fact_tuples(base_kg)) - set(fact_tuples(kg))
    if lost:
        tally.failures.append(f"{where}: good facts lost: {sorted(lost)}")


_BASELINES: dict[tuple[str, int], tuple] = {}


def _baseline(fmt: Format, index: int, tmp_path: Path):
    """The KG and problems of the fixture with record ``index`` made neutral."""
    key = (fmt.name, index)
    if key not in _BASELINES:
        records = list(fmt.records)
        records[index] = fmt.neutral
        kg, problems, error = _load(fmt, tmp_path / f"baseline-{fmt.loader}", records)
        assert error is None, error
        renamed = [(f.replace("baseline-", "damaged-"), n, r) for f, n, r in problems.all]
        _BASELINES[key] = (kg, renamed)
    return _BASELINES[key]


@pytest.mark.parametrize("name", list(FORMATS))
def test_damage_to_one_record_is_located_and_spares_the_others(name, tmp_path):
    tally = Tally()
    for case in range(CASES):
        run_case(FORMATS[name], case, tmp_path, tally)
    _write_report(name, tally)
    assert tally.failures == []
    assert tally.cases["uncaught"] == 0
    assert tally.cases["reported with location"] > CASES // 4  # the damage does bite


# ----- readers that stop at the first bad line ----------------------------------------------


def test_probe_rows_fail_only_with_file_and_line(tmp_path):
    rows = [
        {"id": f"r{n}", "query": f"Person {n} played for [MASK].", "answer_labels": [f"Team {n}"]}
        for n in range(8)
    ]
    lines = [json.dumps(row).encode() for row in rows]
    tally = Tally()
    path = tmp_path / "probe.jsonl"
    for case in range(CASES):
        rng = random.Random(case)
        index = rng.randrange(len(lines))
        damage = damage_bytes if rng.random() < 0.3 else _json_damage
        damaged = list(lines)
        damaged[index] = damage(rng, lines[index])
        path.write_bytes(b"\n".join(damaged) + b"\n")
        try:
            ids = [row.id for row in read_rows(path)]
        except ValueError as err:
            tally.cases["reported with location"] += 1
            if not str(err).startswith(f"{path}:{index + 1}: "):
                tally.failures.append(f"case {case}: {err}")
            continue
        except Exception as err:  # exactly what the property forbids
            tally.cases["uncaught"] += 1
            tally.failures.append(f"case {case}: uncaught {err!r}")
            continue
        tally.cases["kept as sound"] += 1
        others = [row["id"] for n, row in enumerate(rows) if n != index]
        if [i for i in ids if i in others] != others:
            tally.failures.append(f"case {case}: rows lost: {ids}")
    _write_report("probe rows", tally)
    assert tally.failures == []


def _write_report(name: str, tally: Tally) -> None:
    if not REPORT:
        return
    path = Path(REPORT)
    report = json.loads(path.read_text()) if path.is_file() else {}
    outcomes = ("kept as sound", "reported with location", "uncaught")
    report[name] = {"records tried": CASES, **{o: tally.cases[o] for o in outcomes}}
    report[name]["violations"] = len(tally.failures)
    path.write_text(json.dumps(report, indent=2) + "\n")
