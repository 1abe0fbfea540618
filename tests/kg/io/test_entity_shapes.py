"""Wikidata entity JSON in every published shape, told apart by content, and the files the
entity loader must refuse as another format.

The fixtures are hand-written in the shapes Wikidata serves: a pretty-printed single entity
(entity_pretty.json), a wbgetentities response with a missing id (wbgetentities.json) and a
JSON array of entities (entities_array.json). The expected facts were worked out by hand.
"""

from __future__ import annotations

import bz2
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.kg.graph import TemporalKG
from chronoprobe.kg.io import wikidata_load
from chronoprobe.kg.io.jsonl import fact_tuples
from chronoprobe.kg.io.options import LoadOptions
from chronoprobe.kg.io.problems import Problems

FIXTURES = Path(__file__).parents[2] / "fixtures"
WIKIDATA = FIXTURES / "wikidata"

SHAPES = {
    # Marie Curie: a start year with a day-precise end, two awards at a point in time; the
    # deprecated employer and the unqualified P31 are no facts.
    "entity_pretty.json": [
        ("Q7186", "P108", "Q209842", "1906", "1934-07-04"),
        ("Q7186", "P166", "Q38104", "1903", "1903"),
        ("Q7186", "P166", "Q44585", "1911", "1911"),
    ],
    # Two items (empty maps written as []), a property, and an id the API did not find.
    "wbgetentities.json": [
        ("Q1048", "P39", "Q39686", "-0059", "-0059"),
        ("Q11571", "P54", "Q18656", "2003", "2009"),
        ("Q11571", "P54", "Q8682", "2009-07-01", "2018-07-10"),
    ],
    # Gandhi's second school ends before it starts: that statement alone goes.
    "entities_array.json": [
        ("Q1001", "P69", "Q1060", "1888-09", "1891-06"),
        ("Q22686", "P39", "Q11696", "2017-01-20", "2021-01-20"),
        ("Q22686", "P39", "Q11696", "2025-01-20", None),
    ],
}


def convert(*args: str):
    return CliRunner().invoke(app, ["kg", "convert", *args])


@pytest.mark.parametrize("name", list(SHAPES))
def test_every_shape_converts_from_the_cli_with_exact_facts(name, tmp_path):
    out = tmp_path / "kg"
    result = convert(str(WIKIDATA / name), "-f", "wikidata-json", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert fact_tuples(TemporalKG.load(out)) == SHAPES[name]


def test_labels_terms_and_problems_of_documents_are_located_in_them():
    problems = Problems()
    paths = [WIKIDATA / name for name in SHAPES]
    kg = wikidata_load.load(paths, LoadOptions(), problems)
    assert kg.label("Q7186") == "Marie Curie" and kg.label("Q11571") == "Cristiano Ronaldo"
    assert kg.relation_label("P54") == "member of sports team"
    assert problems.examples == {
        "end before start": f"{WIKIDATA / 'entities_array.json'}:31: Q1001 P69: end before "
        "start: end 1888 before start 1891"
    }
    assert kg.meta["skipped"] == {"deprecated": 1, "missing entity": 1, "no time qualifier": 1}


def _dump_lines() -> list[str]:
    """The fixture dump's entity lines that are whole JSON (the broken ones go)."""
    lines = []
    for line in (WIKIDATA / "dump.json").read_text(encoding="utf-8").splitlines()[1:-1]:
        try:
            json.loads(line.rstrip(","))
        except json.JSONDecodeError:
            continue
        lines.append(line.rstrip(","))
    return lines


@pytest.mark.parametrize("indent", [None, 2])
def test_an_entity_alone_gives_what_its_dump_line_gives(tmp_path, indent):
    for number, line in enumerate(_dump_lines()):
        dump = tmp_path / f"dump{number}.json"
        dump.write_text(f"[\n{line}\n]\n", encoding="utf-8")
        alone = tmp_path / f"entity{number}.json.bz2"  # compressed, as a download may be
        text = json.dumps(json.loads(line), indent=indent, ensure_ascii=False)
        alone.write_bytes(bz2.compress(text.encode()))
        expected = wikidata_load.load([dump], LoadOptions(), Problems())
        got = wikidata_load.load([alone], LoadOptions(), Problems())
        assert got.facts.equals(expected.facts), line[:60]
        assert got.entities.equals(expected.entities), line[:60]
        assert got.relations.equals(expected.relations), line[:60]


def test_an_array_of_all_dump_entities_on_one_line_gives_the_dump(tmp_path):
    entities = [json.loads(line) for line in _dump_lines()]
    array = tmp_path / "array.json"
    array.write_text(json.dumps(entities), encoding="utf-8")
    dump = wikidata_load.load([WIKIDATA / "dump.json"], LoadOptions(), Problems())
    got = wikidata_load.load([array], LoadOptions(), Problems())
    assert fact_tuples(got) == fact_tuples(dump)


def test_a_byte_order_mark_before_the_dump_is_no_problem(tmp_path):
    marked = tmp_path / "dump.json"
    marked.write_bytes(b"\xef\xbb\xbf" + (WIKIDATA / "dump.json").read_bytes())
    plain, plain_problems = Problems(), Problems()
    expected = wikidata_load.load([WIKIDATA / "dump.json"], LoadOptions(), plain_problems)
    got = wikidata_load.load([marked], LoadOptions(), plain)
    assert got.facts.equals(expected.facts)
    assert plain.counts == plain_problems.counts


@pytest.mark.parametrize(
    ("fixture", "looks_like"),
    [
        (
            "sparql/heads_of_state.json",
            "this looks like SPARQL JSON results, not Wikidata entity JSON (no type, id); read "
            "it with --format wikidata-sparql",
        ),
        (
            "jsonl/presidents.jsonl",
            "this looks like chronoprobe JSONL rows, not Wikidata entity JSON (no type); read it "
            "with --format jsonl",
        ),
        (
            "cronquestions/kg/full.txt",
            "this looks like CronQuestions KG lines (head rel tail start end), not Wikidata "
            "entity JSON (no type, id); read it with --format cronquestions",
        ),
    ],
)
def test_a_file_of_another_format_fails_saying_which_it_looks_like(tmp_path, fixture, looks_like):
    out = tmp_path / "kg"
    path = FIXTURES / fixture
    result = convert(str(WIKIDATA / "dump.json"), str(path), "-f", "wikidata-json", "-o", str(out))
    assert result.exit_code == 2
    assert f"error: {path}:1: {looks_like}" in " ".join(result.output.split())
    assert not out.exists()


def test_a_conversion_without_facts_fails_and_writes_nothing(tmp_path):
    empty = tmp_path / "empty.json"
    empty.write_text("[\n]\n")
    timeless = tmp_path / "timeless.json"
    timeless.write_text(
        '{"type": "item", "id": "Q5", "labels": {}, "claims": {"P31": [{"mainsnak": '
        '{"snaktype": "value", "property": "P31", "datatype": "wikibase-item", "datavalue": '
        '{"type": "wikibase-entityid", "value": {"id": "Q215627"}}}, "rank": "normal"}]}}'
    )
    out = tmp_path / "kg"
    result = convert(str(empty), "-f", "wikidata-json", "-o", str(out))
    assert result.exit_code == 2
    message = f"error: no facts and no dated entities in {empty} (no records); nothing written"
    assert f"{message} to {out}" in " ".join(result.output.split())
    result = convert(str(timeless), "-f", "wikidata-json", "-o", str(out))
    assert result.exit_code == 2
    assert "(records that are no time-scoped facts: no time qualifier 1)" in " ".join(
        result.output.split()
    )
    assert not out.exists()


def test_an_entity_nested_too_deeply_is_one_located_problem_and_the_others_load(tmp_path):
    text = (WIKIDATA / "entities_array.json").read_text(encoding="utf-8")
    deep = "[" * 5000 + "]" * 5000
    broken = tmp_path / "entities.json"
    broken.write_text(text.replace('"type": "item",', f'"type": "item", "deep": {deep},', 1))
    problems = Problems()
    kg = wikidata_load.load([broken], LoadOptions(), problems)
    assert fact_tuples(kg) == [f for f in SHAPES["entities_array.json"] if f[0] == "Q1001"]
    assert problems.examples["JSON nested too deeply"] == (
        f"{broken}:2: JSON nested too deeply (5001 levels)"
    )
