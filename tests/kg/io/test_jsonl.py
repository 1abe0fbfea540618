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


def test_export_to_a_folder_is_refused_and_the_folder_kept(tmp_path):
    (tmp_path / "kept.txt").write_text("mine")
    with pytest.raises(ValueError, match="a folder; pass the path of the JSONL file to write"):
        export_jsonl(TemporalKG.from_records([]), tmp_path)
    assert (tmp_path / "kept.txt").read_text() == "mine"


def _problems_of(tmp_path, *lines: str, prefix: bytes = b"") -> tuple[TemporalKG, Problems]:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(prefix + "\n".join(lines).encode() + b"\n")
    problems = Problems()
    return load([path], LoadOptions(), problems), problems


GOOD = '{"subject": "Q1", "relation": "P1", "object": "Q2", "start": "2001", "end": null}'


@pytest.mark.parametrize(
    ("line", "reason", "kind"),
    [
        (
            '{"subject": "Q1", "relation": "P1", "object": "Q3", "start": "2010", "end": "2000"}',
            "end 2000 before start 2010",
            "end before start",
        ),
        (
            '{"subject": "Q1", "relation": "P1", "object": "Q3", "start": "0000", "end": null}',
            "'start': year 0 does not exist (1 BCE is -1)",
            "bad year",
        ),
        (
            '{"subject": "Q1", "relation": "P1", "object": "Q3", "start": "+2147483648"}',
            "'start': year +2147483648 is outside -2147483648..2147483647",
            "bad year",
        ),
        (
            '{"subject": "Q1", "relation": "P1", "object": "Q3", "start": "\u0662\u0660\u0660"}',
            "not an ISO date of year, month or day precision: '\u0662\u0660\u0660'",
            "not an ISO date of year, month or day precision",
        ),
        (
            '{"subject": "Q 1", "relation": "P1", "object": "Q3"}',
            "'subject' is not an id: 'Q 1'",
            "bad id",
        ),
        (
            '{"subject": "Q1", "relation": 39, "object": "Q3"}',
            "'relation' must be a string id, not a number",
            "bad id",
        ),
        (
            '{"subject": "Q1", "relation": "P1", "object": "Q3", "start": null, "end": null}',
            "a fact needs a start or an end: with neither it is no time-scoped fact",
            "no time",
        ),
        (
            '{"subject": "Q1", "relation": "P1", "object": "Q3"}',
            "a fact needs a start or an end: with neither it is no time-scoped fact",
            "no time",
        ),
        (
            '{"subject": "Q1\u2028", "relation": "P1", "object": "Q3", "start": "2001"}',
            "'subject' is not an id: 'Q1\\u2028'",
            "bad id",
        ),
        (
            '{"subject": "Q1", "relation": "P1", "object": "Q3\u0085", "start": "2001"}',
            "'object' is not an id: 'Q3\\x85'",
            "bad id",
        ),
        ('{"id": "Q\u30001", "label": "x"}', "'id' is not an id: 'Q\\u30001'", "bad id"),
        ('{"id": "Q1", "label": 5}', "'label' must be a string, not a number", "bad text"),
        (
            '{"id": "Q1", "description": ["x"]}',
            "'description' must be a string, not a list",
            "bad text",
        ),
        ('{"id": "Q1", "type": {}}', "'type' must be a string, not an object", "bad text"),
        ('{"id": "Q1", "label": "x\udcff"}', "invalid UTF-8: byte 0xff", "invalid UTF-8"),
        (
            '{"subject": ' + "[" * 5000 + "]" * 5000 + "}",
            "JSON nested too deeply (5001 levels)",
            "JSON nested too deeply",
        ),
    ],
)
def test_every_bad_row_is_one_located_problem(tmp_path, line, reason, kind):
    raw = line.encode("utf-8", "surrogateescape")
    path = tmp_path / "rows.jsonl"
    path.write_bytes(GOOD.encode() + b"\n" + raw + b"\n")
    problems = Problems()
    kg = load([path], LoadOptions(), problems)
    assert len(kg) == 1  # the good row stays
    assert problems.examples == {kind: f"{path}:2: {reason}"}


def test_a_byte_order_mark_before_the_first_row_is_no_problem(tmp_path):
    kg, problems = _problems_of(tmp_path, GOOD, prefix=b"\xef\xbb\xbf")
    assert len(kg) == 1 and problems.total == 0


def test_a_file_of_another_format_is_refused_saying_which(tmp_path):
    dump = Path(__file__).parents[2] / "fixtures" / "wikidata" / "dump.json"
    with pytest.raises(ValueError) as caught:
        load([FIXTURE, dump], LoadOptions(), Problems())
    assert str(caught.value) == (
        f"{dump}:2: this looks like Wikidata entity lines (a JSON dump), not chronoprobe JSONL "
        "rows (no subject, relation, object); read it with --format wikidata-json"
    )
