"""Every reader of a KG directory refuses a damaged or forged one alike, in one line naming the
file: a manifest nested deep or of the wrong types, and facts or entities whose values no
loader writes (month 13, precision 99, year 0, day 32, a negative month, a year without a
precision, an id with a space, an end before its start, a column of the wrong type)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.kg.graph import KGFormatError, TemporalKG, read_manifest
from chronoprobe.kg.records import Entity, Fact
from chronoprobe.time import TimePoint as T

SRC = Path(__file__).parents[2] / "src" / "chronoprobe"
FACTS = [
    Fact(f"Q{i}", "P39", "Q11696", T(1990 + i, 1, 20), T(1994 + i, 1, 20)) for i in range(1, 9)
] + [Fact("Q20", "P54", "Q30", T(2002), T(2003, 5))]
ENTITIES = [Entity("Q1", "Alice", start=T(1950, 2, 5)), Entity("Q11696", "President")]


@pytest.fixture
def saved(tmp_path: Path) -> Path:
    return TemporalKG.from_records(FACTS, ENTITIES, name="small").save(tmp_path / "kg")


def damaged(kg: Path, name: str, column: str, value, row: int = 0) -> Path:
    """``kg``'s table ``name`` with ``value`` in ``column`` at ``row`` (a column of another
    type where ``value`` is a pyarrow array)."""
    file = kg / f"{name}.parquet"
    table = pq.read_table(file)
    index = table.column_names.index(column)
    if not isinstance(value, pa.Array):
        values = table.column(column).to_pylist()
        values[row] = value
        value = pa.array(values, type=table.schema.field(column).type)
    table = table.set_column(index, pa.field(column, value.type), value)
    pq.write_table(table, file)
    return file


FACT_DAMAGE = {
    "month 13": ("start_month", 13, "start holds a month that is not in 1..12"),
    "a negative month": ("end_month", -1, "end holds a month that is not in 1..12"),
    "month 0 at month precision": ("start_month", 0, "start holds a month that is not in 1..12"),
    "day 32": ("start_day", 32, "start holds a day that does not exist in its month"),
    "day 0": ("start_day", 0, "start holds a day that does not exist in its month"),
    "precision 99": ("start_precision", 99, "start holds a precision that is not 9"),
    "precision 0": ("end_precision", 0, "end holds a precision that is not 9"),
    "year 0": ("start_year", 0, "start holds year 0 does not exist"),
    "a year without a precision": ("start_precision", None, "a month, day or year without"),
    "a precision without a year": ("end_year", None, "end holds a precision without a year"),
    "an end before its start": ("end_year", 1900, "its end is before its start"),
    "a subject with a space": ("subject", "Q 1", "subject is not an id"),
    "a relation with a line break": ("relation", "P39\n", "relation is not an id"),
    "an empty object": ("object", "", "object is not an id"),
}


@pytest.mark.parametrize("case", sorted(FACT_DAMAGE))
def test_facts_no_loader_writes_are_refused_naming_the_file_and_row(saved, case):
    column, value, says = FACT_DAMAGE[case]
    file = damaged(saved, "facts", column, value)
    with pytest.raises(KGFormatError) as refused:
        TemporalKG.load(saved)
    message = str(refused.value)
    assert message.startswith(f"{file}: row 1 ("), message
    assert says in message and "\n" not in message


def test_february_30_and_a_month_at_year_precision_are_refused(saved):
    rows = {"start_month": 2, "start_day": 30}
    for column, value in rows.items():
        damaged(saved, "facts", column, value, row=3)
    with pytest.raises(KGFormatError, match=r"row 4 .*a day that does not exist in its month"):
        TemporalKG.load(saved)
    damaged(saved, "facts", "start_month", 3, row=3)
    damaged(saved, "facts", "start_day", 1, row=3)
    damaged(saved, "facts", "end_month", 4, row=8)  # the last fact's end is a year: 2003-05
    TemporalKG.load(saved)  # sound again
    damaged(saved, "facts", "start_month", 4, row=8)  # its start is a year: no month
    with pytest.raises(KGFormatError, match=r"row 9 .*a month or day finer than its precision"):
        TemporalKG.load(saved)


def test_every_bad_row_is_counted_in_the_one_line(saved):
    for row in (2, 5, 7):
        damaged(saved, "facts", "start_month", 13, row=row)
    with pytest.raises(KGFormatError) as refused:
        TemporalKG.load(saved)
    assert "row 3 (" in str(refused.value)
    assert str(refused.value).endswith("; 2 more rows break the KG's rules")


def test_entities_are_held_to_the_same_rules(saved):
    file = damaged(saved, "entities", "start_month", 13)
    with pytest.raises(KGFormatError, match=r"start holds a month that is not in 1\.\.") as err:
        TemporalKG.load(saved)
    assert str(err.value).startswith(f"{file}: row 1 (id 'Q1'")


@pytest.mark.parametrize(
    ("column", "values"),
    [
        ("start_year", pa.array([3_000_000_000] * len(FACTS), pa.int64())),
        ("start_month", pa.array([300] * len(FACTS), pa.int32())),
        ("start_month", pa.array(["jan"] * len(FACTS))),
        ("subject", pa.array(list(range(len(FACTS))))),
        ("subject", pa.array([None] * len(FACTS), pa.string())),
    ],
    ids=["a year past 32 bits", "a month past a byte", "months as text", "numbers", "nulls"],
)
def test_a_column_of_another_type_or_range_is_refused_naming_the_file(saved, column, values):
    file = damaged(saved, "facts", column, values)
    with pytest.raises(KGFormatError, match="a column of the wrong type or range") as refused:
        TemporalKG.load(saved)
    assert str(refused.value).startswith(f"{file}: ")


def manifest_of(kg: Path, text: str | bytes) -> Path:
    data = text if isinstance(text, bytes) else text.encode()
    (kg / "manifest.json").write_bytes(data)
    return kg / "manifest.json"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"format": ' + "[" * 100_000 + "]" * 100_000 + "}", ":1: JSON nested too deeply"),
        ("[" * 5000 + "]" * 5000, ":1: JSON nested too deeply"),
        ('{"format": "chronoprobe-kg", "version": 1, "meta": [1, 2]}', "'meta' must be an object"),
        ('{"format": "chronoprobe-kg", "version": 1, "name": ["x"]}', "'name' must be text"),
        ('{"format": "chronoprobe-kg", "version": true}', "version 'True' is not an integer"),
        ('{"format": "chronoprobe-kg", "fingerprint": 7}', "'fingerprint' must be text"),
        ('{"format": "chronoprobe-kg", "counts": {"facts": "9"}}', "counts 'facts' is no whole"),
        ('{"format": "chronoprobe-kg", "counts": {"facts": -1}}', "counts 'facts' is no whole"),
        ('{"format": {"a": 1}}', "format is a dict, not 'chronoprobe-kg'"),
        ('{"format": "chronoprobe-kg", "version": 1e400}', "version 'inf' is not an integer"),
        (b'{"format": "chronoprobe-kg", "name": "caf\xe9"}', "invalid UTF-8: byte 0xe9"),
    ],
)
def test_a_manifest_of_the_wrong_shape_is_refused_in_one_line(saved, text, says):
    path = manifest_of(saved, text)
    with pytest.raises(KGFormatError) as refused:
        TemporalKG.load(saved)
    message = str(refused.value)
    assert message.startswith(str(path)) and says in message and len(message) < 300, message


def test_a_manifest_larger_than_the_record_limit_is_refused_unread(saved, monkeypatch):
    monkeypatch.setenv("CHRONOPROBE_MAX_RECORD_BYTES", "1K")
    manifest_of(saved, json.dumps({"format": "chronoprobe-kg", "meta": {"x": "y" * 2000}}))
    with pytest.raises(KGFormatError, match=r"manifest.json: 2,0\d\d bytes, more than any"):
        read_manifest(saved)


READERS = [
    ["kg", "info", "{kg}"],
    ["kg", "export", "{kg}", "-o", "{out}/facts.jsonl"],
    ["build", "lamatk", "{kg}", "-o", "{out}", "--no-cache"],
    ["build", "drift", "{kg}", "--first", "1995", "--last", "1997", "-o", "{out}", "--no-cache"],
    ["build", "cronq", "{kg}", "-o", "{out}", "--no-cache"],
    ["build", "dates", "{kg}", "-o", "{out}", "--no-cache"],
    ["build", "timeline", "{kg}", "-o", "{out}", "--no-cache"],
]


@pytest.mark.parametrize("damage", ["manifest nested deep", "month 13", "precision 99", "year 0"])
def test_every_command_reading_a_kg_refuses_it_alike(saved, tmp_path, damage):
    """Before, timeline and dates refused month 13 while lamatk, drift, cronq, info and
    export took it; a deep manifest was a RecursionError in every one."""
    if damage == "manifest nested deep":
        where = manifest_of(saved, '{"format": ' + "[" * 100_000 + "]" * 100_000 + "}")
    else:
        column, value, _ = FACT_DAMAGE[damage]
        where = damaged(saved, "facts", column, value)
    said = set()
    for command in READERS:
        out = tmp_path / "out"
        args = [a.format(kg=saved, out=out) for a in command]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2, (command, result.output)
        line = " ".join(result.output.split())
        assert "Traceback" not in result.output and f"error: {where}" in line, (command, line)
        said.add(re.sub(r"; nothing written to .*", "", line[line.index("error: ") :]))
    assert len(said) == 1, said  # the same line from every reader


def test_no_module_reads_a_kgs_files_but_the_kg_itself():
    """The checks hold for every reader only while every reader goes through them: no line
    outside kg/graph.py both names a file of a KG directory and reads it."""
    names = re.compile(r"""(facts|entities|relations)\.parquet|manifest\.json|_FILES\[""")
    reads = re.compile(r"read_table|ParquetFile|read_text|read_bytes|json\.load|open\(")
    readers = {
        path.relative_to(SRC).as_posix()
        for path in SRC.rglob("*.py")
        for line in path.read_text(encoding="utf-8").splitlines()
        if names.search(line) and reads.search(line)
    }
    assert not readers - {"kg/graph.py"}, readers  # card.py read the manifest itself


@pytest.mark.parametrize(
    ("column", "value"),
    [("end_year", 2**31 - 1), ("start_year", -(2**31))],
    ids=["year 2**31 - 1", "year -2**31"],
)
def test_the_years_the_year_column_holds_are_read_by_every_reader(saved, tmp_path, column, value):
    """Years at the ends of the year column are a KG's years (as the loaders take them), and
    no reader fills the memory with them: cronq, which asks of every year of a spell, took
    more than 4 GiB for a fact from 1991 to 2**31 - 1; it skips a spell past 10,000 years."""
    from chronoprobe.datasets.cronq import LONGEST_SPELL, YearIndex

    damaged(saved, "facts", column, value)
    index = YearIndex.from_kg(TemporalKG.load(saved), ["P39"])
    assert index.skipped == {f"spans more than {LONGEST_SPELL:,} years": 1}
    assert sum(len(spells) for spells in index.by_head["P39"].values()) == 7
    for i, command in enumerate(READERS):
        args = [a.format(kg=saved, out=tmp_path / f"out{i}") for a in command]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, (command, result.output)
