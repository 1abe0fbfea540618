"""The compiled scanner of Wikidata dump lines (``_dumpscan.c``) against the msgspec parser.

``parse_block(..., compiled=True)`` hands each line to the C scanner first, which either
finishes it itself (``scan`` returns True), returns what it read for the Python side to finish
(a tuple), or leaves the whole line to the msgspec parser (None). The contract tested here: for
every line, good or bad, both modes give equal tables, skip counts, problems and line counts.
It is checked on every line of the dump fixture, on hand-built lines whose exact rows were
worked out by hand (JSON escapes, non-ASCII text, every kind of skipped statement), on unusual
lines the scanner must leave whole, on seeded random damage to the fixture's lines, and on a
synthetic dump from the benchmark. Each hand-built case also asks ``scan`` directly which way
the line went, so a test of the compiled path cannot pass on the Python fallback.
"""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from collections import Counter
from pathlib import Path

import msgspec
import pytest

from chronoprobe.kg.io import wikidata_dump
from chronoprobe.kg.records import ENTITY_SCHEMA

ROOT = Path(__file__).parents[3]
FIXTURE = ROOT / "tests" / "fixtures" / "wikidata" / "dump.json"
BENCHMARK = ROOT / "benchmarks" / "bench_wikidata_dump.py"
GREGORIAN = "http://www.wikidata.org/entity/Q1985727"
SOME = frozenset({"P39", "P54"})
TABLES = ("entities", "relations", "facts")

needs_scanner = pytest.mark.skipif(
    wikidata_dump.Scanner is None, reason="the compiled scanner is not built"
)


def assert_same(block: bytes, first_line: int = 1, **kw) -> wikidata_dump.Parsed:
    """Parse ``block`` with the compiled scanner and with msgspec alone; every field equal."""
    fast = wikidata_dump.parse_block(block, first_line, compiled=True, **kw)
    slow = wikidata_dump.parse_block(block, first_line, compiled=False, **kw)
    where = f"{kw} on {bytes(block[:300])!r}"
    for name in TABLES:
        compiled, python = getattr(fast, name), getattr(slow, name)
        assert compiled.equals(python), (
            f"{name} differ, {where}\ncompiled: {compiled.to_pylist()}\n"
            f"python:   {python.to_pylist()}"
        )
    assert fast.skipped == slow.skipped, f"skipped differ, {where}"
    assert fast.problems == slow.problems, f"problems differ, {where}"
    assert fast.lines == slow.lines, f"lines differ, {where}"
    return fast


def scanner(
    lang: str = "en",
    relations: frozenset[str] | None = None,
    time_bounds=wikidata_dump._time_bounds,
    cache: dict | None = None,
) -> wikidata_dump.Scanner:
    """A scanner built as ``parse_block`` builds it, with a cache of its own by default."""
    return wikidata_dump.Scanner(
        lang.encode(), wikidata_dump._SPAN_BYTES, relations, time_bounds,
        msgspec.ValidationError, wikidata_dump.BoundsCache(1 << 20) if cache is None else cache,
        [], [], len(ENTITY_SCHEMA),
    )  # fmt: skip


def scan(line: bytes, lang: str = "en", relations: frozenset[str] | None = None):
    """What the scanner makes of one line: True (it finished the line), a tuple (the Python
    side finishes it) or None (msgspec reads it)."""
    return scanner(lang, relations).scan(line, 0, len(line))


def compact(value) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def fixture_lines() -> list[bytes]:
    """The fixture's entity lines, without the dump's brackets and trailing commas."""
    lines = []
    for line in FIXTURE.read_bytes().splitlines():
        span = wikidata_dump._entity_span(line, 0, len(line))
        if span is not None:
            lines.append(line[span[0] : span[1]])
    return lines


# Builders of entity JSON in the dump's layout.


def _benchmark():
    spec = importlib.util.spec_from_file_location("bench_wikidata_dump", BENCHMARK)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)
    spec.loader.exec_module(module)
    return module


BENCH = _benchmark()  # its snak builders write the synthetic dump's lines; these lines too
item_snak = BENCH._item


def time_snak(pid: str, time: str, precision: int) -> dict:
    """A time snak of ``time`` as the dump writes it, ``+YYYY-MM-DDT00:00:00Z``."""
    return BENCH._time(pid, int(time[1:5]), int(time[6:8]), int(time[9:11]), precision)


def statement(main: dict, qualifiers: dict | None = None, rank: str = "normal") -> dict:
    out = {"mainsnak": main, "type": "statement", "id": "Q42$0000-1111", "rank": rank}
    if qualifiers is not None:
        out["qualifiers"] = qualifiers
        out["qualifiers-order"] = list(qualifiers)
    out["references"] = [{"hash": "abc", "snaks": {"P248": [item_snak("P248", 328)]}}]
    return out


def term(pid: str, q: int, rank: str = "normal", **times: tuple[str, int]) -> dict:
    """An item statement of ``pid`` with value Q``q`` and time qualifiers P580=..., P582=..."""
    qualifiers = {key: [time_snak(key, *value)] for key, value in times.items()}
    return statement(item_snak(pid, q), qualifiers or None, rank)


def item(qid: str, claims: dict, **fields) -> dict:
    return {
        "type": "item",
        "id": qid,
        "labels": fields.pop("labels", {"en": {"language": "en", "value": qid.lower()}}),
        "descriptions": fields.pop("descriptions", {}),
        "aliases": fields.pop("aliases", {}),
        "claims": claims,
        "sitelinks": {"enwiki": {"site": "enwiki", "title": qid, "badges": []}},
        "lastrevid": 123456,
        **fields,
    }


# 1. The extension is there.


def test_the_compiled_scanner_is_built():
    assert wikidata_dump.Scanner is not None, (
        "chronoprobe.kg.io._dumpscan is not built: `make test` (pip install -e .) compiles it "
        "with a C compiler; without it the dump loader still works, with msgspec alone, slower"
    )


# 2. Every line of the dump fixture, alone and all together.


@needs_scanner
@pytest.mark.parametrize("relations", [None, SOME], ids=["all", "some"])
@pytest.mark.parametrize("lang", ["en", "de"])
def test_every_fixture_line_parses_alike(lang, relations):
    block = FIXTURE.read_bytes()
    whole = assert_same(block, lang=lang, relations=relations)
    assert whole.facts.num_rows and whole.problems  # the fixture has facts and bad lines
    lines = block.splitlines(keepends=True)
    assert len(lines) == whole.lines == 19
    for number, line in enumerate(lines, 1):
        assert_same(line, number, lang=lang, relations=relations)


@needs_scanner
def test_the_fixture_goes_every_way_through_the_scanner():
    # so the parity above covers lines the scanner finishes, returns, and leaves whole
    ways = Counter(type(scan(line)).__name__ for line in fixture_lines())
    assert ways["bool"] >= 3 and ways["tuple"] >= 3 and ways["NoneType"] >= 2, ways


# 3. Exact rows of lines the scanner finishes itself.

LABEL = 'Douglas "Doug" Adams\n\u00e9\U0001f600'  # a quote, a newline, é, and an emoji
DESCRIPTION = "englischer Schriftsteller \u2013 \u201eH2G2\u201c, \u65e5\u672c\u8a9e"
ALIASES = ["DNA", "Douglas Noël Adams", "a/b\tc"]


def adams_line() -> bytes:
    """Q42 with one term of office, an unqualified item statement, a deprecated term, a term
    of unknown value, and statements that are no item; its label written with JSON escapes
    (\\", \\n, \\u00e9, a surrogate pair), the rest as raw UTF-8."""
    of_term = term("P39", 3, P585=("+1999-07-00T00:00:00Z", 10))
    of_term["qualifiers"]["P642"] = [item_snak("P642", 11)]  # no time: ignored
    claims = {
        "P31": [statement(item_snak("P31", 5))],
        "P39": [
            term("P39", 1, P580=("+2001-02-03T00:00:00Z", 11), P582=("+2005-00-00T00:00:00Z", 9)),
            term("P39", 2, "deprecated", P580=("+1990-00-00T00:00:00Z", 9)),
            statement(
                {"snaktype": "somevalue", "property": "P39", "datatype": "wikibase-item"},
                {"P580": [time_snak("P580", "+1995-00-00T00:00:00Z", 9)]},
            ),
            of_term,
        ],
        "P569": [statement(time_snak("P569", "+1952-03-11T00:00:00Z", 11))],
        "P214": [
            statement(
                {
                    "snaktype": "value",
                    "property": "P214",
                    "datavalue": {"value": "113230702", "type": "string"},
                    "datatype": "external-id",
                }
            )
        ],
    }
    entity = item(
        "Q42",
        claims,
        labels={
            "en": {"language": "en", "value": "@LABEL@"},
            "fr": {"language": "fr", "value": "Douglas Adams"},
        },
        descriptions={"en": {"language": "en", "value": DESCRIPTION}},
        aliases={"en": [{"language": "en", "value": alias} for alias in ALIASES]},
    )
    label = json.dumps(LABEL, ensure_ascii=True)
    line = compact(entity).replace('"@LABEL@"', label).encode()
    for escape in (b'\\"', b"\\n", b"\\u00e9", b"\\ud83d\\ude00", "\u201e".encode()):
        assert escape in line
    return line


@needs_scanner
def test_the_scanner_finishes_an_item_with_exact_rows():
    line = adams_line()
    assert scan(line) is True
    parsed = assert_same(line)
    assert parsed.facts.to_pylist() == [
        {
            "subject": "Q42",
            "relation": "P39",
            "object": "Q1",
            **dict(start_year=2001, start_month=2, start_day=3, start_precision=11),
            **dict(end_year=2005, end_month=None, end_day=None, end_precision=9),
        },
        {
            "subject": "Q42",
            "relation": "P39",
            "object": "Q3",
            **dict(start_year=1999, start_month=7, start_day=None, start_precision=10),
            **dict(end_year=1999, end_month=7, end_day=None, end_precision=10),
        },
    ]
    bounds = {name: None for name in ENTITY_SCHEMA.names[4:]}
    assert parsed.entities.to_pylist() == [
        {"id": "Q42", "label": LABEL, "aliases": ALIASES, "description": DESCRIPTION, **bounds}
    ]
    assert parsed.entities["label"][0].as_py() == json.loads(adams_line())["labels"]["en"]["value"]
    assert parsed.skipped == Counter(
        {"no time qualifier": 1, "deprecated": 1, "somevalue/novalue": 1}
    )
    assert parsed.problems == [] and parsed.relations.num_rows == 0 and parsed.lines == 1


@needs_scanner
def test_the_scanner_reads_one_language_and_some_relations():
    line = adams_line()
    assert scan(line, "fr") is True and scan(line, "de") is True
    french = assert_same(line, lang="fr")
    assert french.entities.to_pylist()[0]["label"] == "Douglas Adams"
    assert french.entities.to_pylist()[0]["aliases"] == []
    assert french.entities.to_pylist()[0]["description"] is None
    german = assert_same(line, lang="de")
    assert german.entities["label"].to_pylist() == ["Q42"]  # no label: the id
    assert scan(line, relations=frozenset({"P31"})) is True
    only_p31 = assert_same(line, relations=frozenset({"P31"}))
    assert only_p31.facts.num_rows == 0
    assert only_p31.skipped == Counter({"no time qualifier": 1})
    assert assert_same(line, relations=frozenset({"P39"})).facts.num_rows == 2


@needs_scanner
def test_an_item_with_a_span_of_its_own_is_finished_by_the_python_side():
    # A span property's statements, and a term whose qualifiers give no bounds, come back
    # as a tuple; the rows are the same as the msgspec parser's.
    claims = {
        "P571": [statement(time_snak("P571", "+1927-03-14T00:00:00Z", 11))],
        "P576": [statement(time_snak("P576", "+1991-12-04T00:00:00Z", 11))],
        "P39": [term("P39", 7, P642=("+2000-00-00T00:00:00Z", 9))],
        "P54": [term("P54", 8, P580=("+2001-00-00T00:00:00Z", 9))],
    }
    line = compact(item("Q8691", claims)).encode()
    scanned = scan(line)
    assert isinstance(scanned, tuple) and scanned[:2] == ("item", "Q8691")
    parsed = assert_same(line)
    row = parsed.entities.to_pylist()[0]
    assert (row["start_year"], row["start_month"], row["start_day"]) == (1927, 3, 14)
    assert (row["end_year"], row["end_month"], row["end_day"]) == (1991, 12, 4)
    assert parsed.facts.select(["subject", "relation", "object", "start_year"]).to_pylist() == [
        {"subject": "Q8691", "relation": "P54", "object": "Q8", "start_year": 2001}
    ]
    assert parsed.skipped == Counter({"no time qualifier": 1})


@needs_scanner
def test_a_property_is_read_by_the_scanner_as_a_relation():
    line = compact(
        {
            "type": "property",
            "id": "P39",
            "datatype": "wikibase-item",
            "labels": {"en": {"language": "en", "value": "position \u201cheld\u201d"}},
            "claims": {"P31": [statement(item_snak("P31", 18608871))]},
        }
    ).encode()
    assert isinstance(scan(line), tuple)
    assert assert_same(line).relations.to_pylist() == [
        {"id": "P39", "label": "position \u201cheld\u201d"}
    ]
    assert assert_same(line, relations=frozenset({"P54"})).relations.num_rows == 0


# 4. Lines the scanner leaves whole to the msgspec parser.

BASE = compact(
    item(
        "Q7",
        {
            "P31": [statement(item_snak("P31", 5))],
            "P39": [term("P39", 9, P580=("+2001-00-00T00:00:00Z", 9))],
        },
    )
)
TERM_39 = compact(term("P39", 9, P580=("+2001-00-00T00:00:00Z", 9)))
ITEM_VALUE = '{"entity-type":"item","numeric-id":9,"id":"Q9"},"type":"wikibase-entityid"}'
SITELINKS = '"sitelinks":{"enwiki":{"site":"enwiki","title":"Q7","badges":[]}}'
LASTREVID = '"lastrevid":123456'
UNTYPED = {k: v for k, v in item_snak("P31", 5).items() if k != "datatype"}  # older dumps


def replaced(old: str, new: str | bytes) -> bytes:
    assert BASE.count(old) == 1, old
    line = BASE.encode()
    new = new if isinstance(new, bytes) else new.encode()
    return line.replace(old.encode(), new)


LEFT_WHOLE = {
    "escaped key": replaced('"claims"', '"cl\\u0061ims"'),
    "duplicate top-level key": replaced(LASTREVID, f'"type":"item",{LASTREVID}'),
    "duplicate property in claims": replaced('"P39":[', f'"P39":[{TERM_39}],"P39":['),
    "item value with only numeric-id": replaced(
        ITEM_VALUE, '{"entity-type":"item","numeric-id":9},"type":"wikibase-entityid"}'
    ),
    "snak without datatype": compact(item("Q7", {"P31": [statement(UNTYPED)]})).encode(),
    "trailing garbage": BASE.encode() + b" x",
    "a second object after the first": BASE.encode() + b"{}",
    "invalid UTF-8 in a skipped string": replaced('"title":"Q7"', b'"title":"Q\xff7"'),
    "an encoded surrogate in a skipped string": replaced('"title":"Q7"', b'"title":"\xed\xa0\x80"'),
    "lone surrogate escape in the label": replaced('"value":"q7"', '"value":"q\\ud83d7"'),
    "lone low surrogate in a skipped string": replaced('"title":"Q7"', '"title":"\\ude00"'),
    "number 01 in a skipped field": replaced(LASTREVID, '"lastrevid":0123456'),
    "number 1. in a skipped field": replaced(LASTREVID, '"lastrevid":1.'),
    "number .5 in a skipped field": replaced(LASTREVID, '"lastrevid":.5'),
    "control character in the label": replaced('"value":"q7"', b'"value":"q\x017"'),
    "tab in a skipped string": replaced('"title":"Q7"', b'"title":"Q\t7"'),
    "nesting deeper than 64 in a skipped field": replaced(
        LASTREVID, '"lastrevid":' + "[" * 70 + "]" * 70
    ),
    "truncated line": BASE.encode()[:-7],
    "claims null": replaced('"claims":{', '"claims":null,"x":{'),
    "a bad escape": replaced('"title":"Q7"', '"title":"Q\\x7"'),
    "a missing comma": replaced(f",{LASTREVID}", f" {LASTREVID}"),
    "a trailing comma in an object": replaced(LASTREVID, f"{LASTREVID},"),
    "not an object": b'["type","item"]',
}


@needs_scanner
def test_the_base_of_the_unusual_lines_is_finished_by_the_scanner():
    assert scan(BASE.encode()) is True
    assert assert_same(BASE.encode()).facts.num_rows == 1


@needs_scanner
@pytest.mark.parametrize("line", list(LEFT_WHOLE.values()), ids=list(LEFT_WHOLE))
def test_unusual_lines_are_left_whole_to_the_python_parser_alike(line):
    assert scan(line) is None
    for lang in ("en", "de"):
        for relations in (None, SOME, frozenset({"P31"})):
            assert_same(line, lang=lang, relations=relations)
            assert_same(line + b",\n", 3, lang=lang, relations=relations)


# 5. Seeded random damage to the fixture's lines.

MUTANTS = 3000
SUBSTITUTES = b'{}[]:,"\\0 1-eE.nulltrue\x00\xff\xc3'


def mutant(rng: random.Random, line: bytes) -> bytes:
    """``line`` with one to three random byte edits, or cut short."""
    data = bytearray(line)
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        if len(data) < 2:
            break
        at = rng.randrange(len(data))
        edit = rng.randrange(5)
        if edit == 0:
            del data[at]
        elif edit == 1:
            data.insert(at, data[at])
        elif edit == 2:
            data[at] = rng.choice(SUBSTITUTES)
        elif edit == 3 and at + 1 < len(data):
            data[at], data[at + 1] = data[at + 1], data[at]
        else:
            del data[rng.randrange(1, len(data)) :]
    return bytes(data)


@needs_scanner
def test_damaged_lines_parse_alike():
    rng = random.Random(20240501)
    lines = fixture_lines()
    ways: Counter = Counter()
    for _ in range(MUTANTS):
        line = mutant(rng, rng.choice(lines))
        lang = rng.choice(("en", "de"))
        relations = rng.choice((None, SOME))
        ways[type(scan(line, lang, relations)).__name__] += 1
        assert_same(line, lang=lang, relations=relations)
    # Most damage lands inside strings and leaves valid JSON: the fuzz must exercise the
    # compiled path, not only the fallback.
    assert ways["bool"] > MUTANTS // 20 and ways["tuple"] > MUTANTS // 20, ways
    assert ways["NoneType"] > MUTANTS // 10, ways


# 6. A synthetic dump from the benchmark, in several blocks.


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory) -> bytes:
    path = tmp_path_factory.mktemp("dump") / "dump.json"
    written = BENCH.write_dump(path, 2, seed=7)
    assert written["facts"] > 100
    return path.read_bytes()


@needs_scanner
@pytest.mark.parametrize(
    "relations", [None, frozenset({"P39", "P108", "P26"})], ids=["all", "some"]
)
@pytest.mark.parametrize("lang", ["en", "de"])
def test_a_synthetic_dump_parses_alike_block_by_block(synthetic, lang, relations):
    lines = synthetic.splitlines(keepends=True)
    step = len(lines) // 5 + 1
    facts = number = 0
    for start in range(0, len(lines), step):
        block = b"".join(lines[start : start + step])
        parsed = assert_same(block, number + 1, lang=lang, relations=relations)
        number += parsed.lines
        facts += parsed.facts.num_rows
    assert number == len(lines)
    assert facts > 0
    some_line = lines[len(lines) // 2].rstrip(b",\n")
    assert scan(some_line, lang, relations) is True  # the usual line: finished in C


# 7. The scanner's contract with its Python caller: what it lets through, re-entry, its cache.


def cache(budget: int = 1 << 20):
    return wikidata_dump.BoundsCache(budget)


def p580_list(line: bytes) -> bytes:
    """The raw snak list of the line's one P580 qualifier: what the scanner's cache keys hold."""
    start = line.index(b'"P580":[') + len(b'"P580":')
    return line[start : line.index(b"]", start) + 1]


def dated(year: int) -> bytes:
    """BASE with its term starting in ``year``: one candidate, its own cache key."""
    return replaced('"time":"+2001-', f'"time":"+{year}-')


@needs_scanner
def test_a_malformed_time_sends_the_line_back_to_python_which_reports_it():
    # _time_bounds raises msgspec.ValidationError for a datavalue without "type": the line
    # comes back as a tuple, and the msgspec parser reports it with its JSON path.
    line = replaced('"type":"time"}', '"tipe":"time"}')
    assert isinstance(scan(line), tuple)
    parsed = assert_same(line)
    assert parsed.problems == [
        (
            1,
            "not a Wikidata entity: Object missing required field `type` - at "
            "`$.claims[...][0].qualifiers.P580[0].datavalue`",
            "not a Wikidata entity",
        )
    ]
    assert parsed.facts.num_rows == 0


@needs_scanner
@pytest.mark.parametrize("error", [ZeroDivisionError, KeyError, MemoryError, RuntimeError])
def test_an_unexpected_exception_of_time_bounds_propagates(error):
    def time_bounds(times):
        raise error("a bug, not bad input")

    line = BASE.encode()
    with pytest.raises(error, match="a bug, not bad input"):
        scanner(time_bounds=time_bounds).scan(line, 0, len(line))
    with pytest.raises(error, match="a bug, not bad input"):
        scanner(time_bounds=time_bounds).scan_lines(line, 0)


@needs_scanner
def test_only_the_malformed_exceptions_and_their_subclasses_send_a_line_back():
    class Narrower(msgspec.ValidationError):
        pass

    def time_bounds(times):
        raise Narrower("bad time")

    line = BASE.encode()
    assert isinstance(scanner(time_bounds=time_bounds).scan(line, 0, len(line)), tuple)
    both = wikidata_dump.Scanner(
        b"en", (), None, time_bounds, (KeyError, msgspec.ValidationError), cache(), [], [], 8
    )
    assert isinstance(both.scan(line, 0, len(line)), tuple)
    with pytest.raises(TypeError, match="malformed must be an exception class"):
        wikidata_dump.Scanner(b"en", (), None, time_bounds, "ValueError", cache(), [], [], 8)


def test_parse_block_lets_a_bug_in_the_time_bounds_through(monkeypatch):
    # Before, the scanner took any exception for a malformed time: the bug went unseen and
    # the Python side quietly read the line again.
    def broken(times):
        raise ZeroDivisionError("broken bounds")

    monkeypatch.setattr(wikidata_dump, "_time_bounds", broken)
    monkeypatch.setattr(wikidata_dump, "_SCANNED_BOUNDS", cache())
    with pytest.raises(ZeroDivisionError, match="broken bounds"):
        wikidata_dump.parse_block(BASE.encode(), 1, compiled=True)


@needs_scanner
@pytest.mark.parametrize("method", ["scan", "scan_lines", "__init__"])
def test_a_time_bounds_that_calls_back_into_its_scanner_is_refused(method):
    line = BASE.encode()
    calls = []
    calling_back = [True]

    def time_bounds(times):
        calls.append(times)
        if calling_back[0] and method == "scan":
            the_scanner.scan(line, 0, len(line))
        elif calling_back[0] and method == "scan_lines":
            the_scanner.scan_lines(line, 0)
        elif calling_back[0]:  # would replace the language and lists the outer scan reads
            the_scanner.__init__(b"de", (), None, len, ValueError, cache(), [], [], 8)
        return wikidata_dump._time_bounds(times)

    the_scanner = scanner(time_bounds=time_bounds)
    expected = "__init__ called during a scan" if method == "__init__" else "during a scan of"
    with pytest.raises(RuntimeError, match=expected):
        the_scanner.scan(line, 0, len(line))
    with pytest.raises(RuntimeError, match=expected):
        the_scanner.scan_lines(line + b",\n" + line, 0)
    assert len(calls) == 2  # each scan stopped at its first call
    # The refusal leaves the scanner whole: with time_bounds no longer calling back, it
    # scans again, as it was set up (English, one fact).
    calling_back[0] = False
    block = line + b",\n" + dated(1990)
    assert the_scanner.scan_lines(block, 0) == (len(block) + 1, 2, -1, -1, None)
    assert len(calls) == 4


@needs_scanner
def test_a_time_bounds_that_rewrites_the_buffer_cannot_make_the_scan_read_out_of_it():
    # A bytearray cannot be resized under a scan (its buffer is held), but its bytes can be
    # changed. The Q42 line has two candidates: the second one's snaks are read again after
    # the first call, from bytes rewritten to blanks, and the scan says so instead of
    # reading them wrongly.
    block = bytearray(adams_line())

    def time_bounds(times):
        block[:] = b" " * len(block)
        return wikidata_dump._time_bounds(times)

    with pytest.raises(SystemError, match="validated before, is unreadable"):
        scanner(time_bounds=time_bounds).scan(block, 0, len(block))


@needs_scanner
def test_the_bounds_cache_holds_the_raw_time_snaks():
    bounds = cache()
    line = BASE.encode()
    assert scanner(cache=bounds).scan(line, 0, len(line)) is True
    key = p580_list(line) + b"\x01\x01"  # the raw lists of P580, P582 and P585, joined
    assert list(bounds) == [key]
    assert bounds[key] == (2001, None, None, 9, None, None, None, None)
    assert bounds.used == len(key) + 200 and bounds.budget == 1 << 20
    bounds.clear()
    assert len(bounds) == 0 and bounds.used == 0


@needs_scanner
def test_the_bounds_cache_is_bounded_by_bytes():
    lines = [dated(1900 + i) for i in range(10)]
    entry = len(p580_list(lines[0])) + 2 + 200  # its key's bytes, and 200 for the rest
    bounds = cache(3 * entry + 10)
    sizes = []
    for line in lines:  # a new scanner for each line, as parse_block makes one a block
        assert scanner(cache=bounds).scan(line, 0, len(line)) is True
        assert bounds.used == sum(len(key) + 200 for key in bounds) <= bounds.budget
        sizes.append(len(bounds))
    # three entries fit; the fourth empties the cache first
    assert sizes == [1, 2, 3, 1, 2, 3, 1, 2, 3, 1]
    assert list(bounds) == [p580_list(lines[-1]) + b"\x01\x01"]


@needs_scanner
def test_a_key_larger_than_the_budget_is_not_remembered_and_the_rows_are_the_same():
    line, other = BASE.encode(), dated(1950)
    entry = len(p580_list(line)) + 2 + 200
    small = cache(entry - 1)
    assert scanner(cache=small).scan(line, 0, len(line)) is True
    assert len(small) == 0 and small.used == 0
    room_for_one = cache(entry + 100)
    for scanned in (other, line):
        assert scanner(cache=room_for_one).scan(scanned, 0, len(scanned)) is True
    assert list(room_for_one) == [p580_list(line) + b"\x01\x01"]
    assert assert_same(line).facts.num_rows == 1
    with pytest.raises(ValueError, match="budget must be >= 0"):
        cache(-1)
    with pytest.raises(TypeError):
        scanner(cache={})  # a plain dict would be unbounded


def test_the_python_caches_remember_only_short_keys():
    snaks = p580_list(BASE.encode())
    short = snaks[snaks.index(b'"datavalue":') + 12 : snaks.index(b',"datatype"')]
    long = short.replace(b'"after":0', b'"after":0,"note":"' + b"x" * 2000 + b'"')
    assert wikidata_dump._time(long) == wikidata_dump._time(short) != None  # noqa: E711
    wikidata_dump._time.cache_clear()
    wikidata_dump._time(long)
    assert wikidata_dump._time.cache_info().currsize == 0
    wikidata_dump._time(short)
    assert wikidata_dump._time.cache_info().currsize == 1


@needs_scanner
def test_a_scanner_in_a_reference_cycle_is_collected():
    import gc
    import weakref

    class Holder:
        def bounds(self, times):
            return wikidata_dump._time_bounds(times)

    holder = Holder()
    holder.scanner = scanner(time_bounds=holder.bounds)  # holder -> scanner -> holder.bounds
    line = BASE.encode()
    assert holder.scanner.scan(line, 0, len(line)) is True
    gone = weakref.ref(holder)
    del holder
    gc.collect()
    assert gone() is None


# 8. The first cases of the structure-aware fuzz that the sanitizer job runs at length.


def _fuzz():
    spec = importlib.util.spec_from_file_location(
        "fuzz_dumpscan", ROOT / "benchmarks" / "fuzz_dumpscan.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # imports bench_wikidata_dump, loaded above
    return module


@needs_scanner
def test_the_first_cases_of_the_structure_aware_fuzz_parse_alike():
    fuzz = _fuzz()
    ways: Counter = Counter()
    for number in range(60):
        block, first_line, lang, relations = fuzz.case(1, number)
        assert block == fuzz.case(1, number)[0]  # a seed's cases are the same on every run
        assert fuzz.difference(block, first_line, lang, relations) is None, number
        assert fuzz.exact_buffer_difference(block, lang, relations, ways) is None, number
    assert ways["bool"] >= 20 and ways["tuple"] >= 20 and ways["NoneType"] >= 20, ways


def test_the_fuzz_tells_a_difference_and_cuts_it_down_to_its_line(monkeypatch):
    fuzz = _fuzz()
    good, bad = BASE.encode(), dated(1990)
    real = wikidata_dump.parse_block

    def wrong_in_1990(block, first_line, lang="en", relations=None, *, compiled=True):
        parsed = real(block, first_line, lang, relations, compiled=compiled)
        if compiled and b"+1990-" in block:
            parsed.problems.append((first_line, "made up", "made up"))
        return parsed

    monkeypatch.setattr(wikidata_dump, "parse_block", wrong_in_1990)
    block = good + b",\n" + bad + b",\n" + good
    assert fuzz.difference(good, 1, "en", None) is None
    assert fuzz.difference(block, 1, "en", None).startswith("problems: compiled [(1, 'made up'")
    assert fuzz.smallest(block, 1, "en", None, fuzz.difference) == bad + b","
