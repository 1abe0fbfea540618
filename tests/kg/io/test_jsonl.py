"""The project's JSONL: a hand-written fixture, bad lines, and export/load round trips."""

from __future__ import annotations

import gzip
from pathlib import Path

import pyarrow.compute as pc
import pytest

from chronoprobe.kg import Entity, Fact, Relation, TemporalKG
from chronoprobe.kg.io.jsonl import export_jsonl, load
from chronoprobe.kg.io.options import LoadOptions
from chronoprobe.kg.io.problems import BadRecord, Problems
from chronoprobe.kg.records import bound_points
from chronoprobe.time import TimePoint

FIXTURE = Path(__file__).parents[2] / "fixtures" / "jsonl" / "presidents.jsonl"


def facts_of(kg):
    starts, ends = bound_points(kg.facts, "start"), bound_points(kg.facts, "end")
    return sorted(
        (s, r, o, a.iso() if a else None, b.iso() if b else None)
        for s, r, o, a, b in zip(
            kg.facts.column("subject").to_pylist(),
            kg.facts.column("relation").to_pylist(),
            kg.facts.column("object").to_pylist(),
            starts,
            ends,
            strict=True,
        )
    )


def test_fixture_loads_facts_entities_and_relations():
    problems = Problems()
    kg = load([FIXTURE], LoadOptions(), problems)
    assert facts_of(kg) == [
        ("Q1048", "P39", "Q39686", "-0059", "-0059"),
        ("Q11571", "P54", "Q18656", "2003", "2009"),
        ("Q11571", "P54", "Q18656", "2021-08", "2022-11"),
        ("Q11571", "P54", "Q75729", None, "2003"),
        ("Q22686", "P39", "Q11696", "2017-01-20", "2021-01-20"),
        ("Q22686", "P39", "Q11696", "2025-01-20", None),
        ("Q76", "P39", "Q11696", "2009-01-20", "2017-01-20"),
    ]
    assert kg.label("Q76") == "Barack Obama" and kg.label("Q22686") == "Q22686"
    assert kg.relation_label("P54") == "member of sports team"
    caesar = kg.entities.filter(pc.equal(kg.entities.column("id"), "Q1048"))
    assert bound_points(caesar, "end") == [TimePoint(-44, 3, 15)]
    assert problems.total == 5


def test_bad_lines_are_counted_by_reason_with_file_and_line():
    problems = Problems()
    load([FIXTURE], LoadOptions(), problems)
    examples = "\n".join(problems.examples.values())
    assert "presidents.jsonl:14: not a valid date: '2009-13-01'" in examples
    assert "presidents.jsonl:15: unknown key 'qualifier' in a fact row" in examples
    assert "presidents.jsonl:16:" in examples and problems.counts["invalid JSON"] == 1
    assert "presidents.jsonl:17: a line must be a JSON object" in examples
    assert "presidents.jsonl:18: a row needs 'subject'" in examples


def test_strict_mode_stops_at_the_first_bad_line():
    with pytest.raises(BadRecord, match=r"presidents\.jsonl:14: not a valid date"):
        load([FIXTURE], LoadOptions(), Problems(strict=True))


def test_relation_filter():
    kg = load([FIXTURE], LoadOptions(relations=frozenset({"P54"})), Problems())
    assert set(kg.facts.column("relation").to_pylist()) == {"P54"}


def test_export_then_load_round_trips_every_table(tmp_path):
    kg = TemporalKG.from_records(
        [
            Fact("Q1", "P39", "Q2", TimePoint(2009, 1, 20), TimePoint(2017, 1, 20)),
            Fact("Q3", "P39", "Q2", TimePoint(-59), TimePoint(-59)),
            Fact("Q3", "P54", "Q4", TimePoint(2021, 8), None),
            Fact("Q5", "P54", "Q4", None, TimePoint(12345)),
        ],
        entities=[
            Entity(
                "Q1",
                "Barack Obama",
                ("Obama",),
                "a president",
                TimePoint(1961, 8, 4),
                None,
                "person",
            ),
            Entity("Q2", "President", (), None, None, None, None),
        ],
        relations=[Relation("P39", "position held"), Relation("P54", "member of sports team")],
    )
    paths = []
    for what in ("facts", "entities", "relations"):
        paths.append(tmp_path / f"{what}.jsonl.gz")
        plain = tmp_path / f"{what}.jsonl"
        export_jsonl(kg, plain, what)
        paths[-1].write_bytes(gzip.compress(plain.read_bytes()))
    lines = (tmp_path / "facts.jsonl").read_text().splitlines()
    assert (
        lines[1] == '{"subject":"Q3","relation":"P39","object":"Q2","start":"-0059","end":"-0059"}'
    )
    assert '"end":"+12345"' in lines[3]
    entity = (tmp_path / "entities.jsonl").read_text().splitlines()
    assert entity[0] == (
        '{"id":"Q1","label":"Barack Obama","aliases":["Obama"],"description":"a president",'
        '"start":"1961-08-04","end":null,"type":"person"}'
    )
    again = load(paths, LoadOptions(), Problems(strict=True))
    assert again.facts.equals(kg.facts)
    assert again.entities.equals(kg.entities)
    assert again.relations.sort_by("id").equals(kg.relations.sort_by("id"))


def test_unknown_export_table(tmp_path):
    kg = TemporalKG.from_records([])
    with pytest.raises(ValueError, match="facts, entities or relations"):
        export_jsonl(kg, tmp_path / "x.jsonl", "edges")
