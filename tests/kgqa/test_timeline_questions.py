"""Timeline questions read by the KGQA models: the rows each answerable kind becomes (hand-checked
on a tiny KG with day- and year-precision facts), the kinds left out with their counts, and
`kgqa train` over a timeline directory through the CLI."""

from __future__ import annotations

import json
import random

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.datasets.timeline import Generator, _row, load_timeline_templates
from chronoprobe.jsonl import write_jsonl
from chronoprobe.kg.graph import TemporalKG
from chronoprobe.kg.records import Entity, Fact, Relation
from chronoprobe.kgqa.data import read_split
from chronoprobe.kgqa.timeline_questions import Refusal, convert, named_order, refusal
from chronoprobe.time import TimePoint

P = TimePoint.parse
runner = CliRunner()


def tiny_kg() -> TemporalKG:
    facts = [
        Fact("alice", "P39", "mayor", P("2001-01-10"), P("2001-03-20")),  # known to the day
        Fact("bob", "P39", "mayor", P("2001-03-20"), P("2001-06-01")),
        Fact("carol", "P39", "mayor", P("2001-06-01"), P("2002-01-15")),
        Fact("alice", "P54", "reds", P("2001-02-01"), P("2001-05-01")),
        Fact("erin", "P54", "reds", P("1995"), P("1999")),  # known to the year
        Fact("frank", "P54", "reds", P("1990"), P("1996")),
        Fact("gus", "P54", "reds", P("1997"), P("2000")),
        Fact("hal", "P54", "blues", P("2001-04-01"), P("2001-05-15")),
    ]
    names = {"alice": "Alice", "bob": "Bob", "carol": "Carol", "erin": "Erin", "frank": "Frank"}
    names |= {"gus": "Gus", "hal": "Hal", "mayor": "Mayor of Town", "reds": "Reds"}
    names |= {"blues": "Blues"}
    return TemporalKG.from_records(
        facts,
        [Entity(k, v) for k, v in names.items()],
        [Relation("P39", "position held"), Relation("P54", "member of sports team")],
    )


@pytest.fixture
def gen() -> Generator:
    generator = Generator(tiny_kg(), load_timeline_templates(), {})
    generator.split_of = {f.id: "train" for f in generator.named}
    return generator


def fact(gen: Generator, subject: str, relation: str):
    return next(f for f in gen.named if f.subject == subject and f.relation == relation)


def row(gen: Generator, question) -> dict:
    return _row(gen, question, random.Random(0))


def test_start_and_end_asked_to_the_year_are_simple_time(gen):
    erin = fact(gen, "erin", "P54")
    start = row(gen, gen.simple(erin, "start"))
    converted = convert(start, "here")
    assert {k: v for k, v in converted.items() if k not in ("template", "question", "id")} == {
        "type": "simple_time",
        "answer_type": "time",
        "answers": ["1995"],
        "entities": ["erin", "reds"],
        "times": [],
        "relations": ["P54"],
        "annotation": {"head": "erin", "tail": "reds"},
        "timeline": {
            "kind": "start",
            "complexity": "simple",
            "capability": "retrieval",
            "answer_type": "time point",
            "precision": "year",
        },
    }
    assert converted["template"] == start["question"].replace("Erin", "{head}").replace(
        "Reds", "{tail}"
    )
    assert convert(row(gen, gen.simple(erin, "end")), "here")["answers"] == ["1999"]


def test_a_time_point_asked_to_the_day_is_not_answered(gen):
    alice = fact(gen, "alice", "P39")
    start = row(gen, gen.simple(alice, "start"))
    assert start["timeline"]["precision"] == "day"
    assert convert(start, "here") == Refusal(
        "start (day)",
        "start",
        "time point",
        "a time point asked to the day, finer than the years CronKGQA ranks",
    )


def test_at_time_links_the_entity_given_and_the_year_of_the_day_asked(gen):
    question = row(gen, gen.at_time(fact(gen, "carol", "P39"), "subject"))
    assert question["timeline"]["precision"] == "day"  # an entity answer: still answered
    converted = convert(question, "here")
    assert converted["type"] == "simple_entity" and converted["answer_type"] == "entity"
    assert converted["answers"] == ["carol"]
    assert converted["entities"] == ["mayor"] and converted["times"] == [2001]
    # who held the office: the office is the fact's object, the tail of (?, P39, mayor, 2001)
    assert converted["annotation"] == {"tail": "mayor", "time": 2001}
    assert "23 September 2001" in question["question"]
    assert converted["template"] == question["question"].replace("Mayor of Town", "{head}").replace(
        "23 September 2001", "{time}"
    )


def test_during_fact_is_a_time_join_of_the_entity_given(gen):
    blues, bob = fact(gen, "hal", "P54"), fact(gen, "bob", "P39")
    question = row(gen, gen.during_fact(blues, bob, "subject"))
    assert question["question"] == (
        "Who held the position of Mayor of Town during the time when Hal played for Blues?"
    )
    converted = convert(question, "here")
    assert converted["type"] == "time_join" and converted["answers"] == ["bob"]
    # linked in the order the question names them: the office, the other fact's subject, its
    # object; the first two are the head and tail the models read
    assert converted["entities"] == ["mayor", "hal", "blues"] and converted["times"] == []
    assert converted["annotation"] == {"tail": "mayor"} and converted["relations"] == ["P39"]
    assert converted["template"] == (
        "Who held the position of {head} during the time when {tail} played for {other}?"
    )
    # another paraphrase names them in another order, and so links them
    draws = [_row(gen, gen.during_fact(blues, bob, "subject"), random.Random(s)) for s in range(9)]
    (first,) = {q["question"] for q in draws if q["question"].startswith("While")}
    converted = convert(next(q for q in draws if q["question"] == first), "here")
    assert first == "While Hal played for Blues, who held the position of Mayor of Town?"
    assert converted["entities"] == ["hal", "blues", "mayor"]


def test_ranking_is_first_last_with_its_options_named_but_not_linked(gen):
    spells = [fact(gen, s, "P54") for s in ("erin", "frank", "gus")]
    question = row(gen, gen.ranking(spells, "subject", "ranking", random.Random(3)))
    rank = question["timeline"]["gold"]["rank"]
    converted = convert(question, "here")
    assert converted["type"] == "first_last"
    assert converted["answers"] == [["frank", "erin", "gus"][rank]]  # starts 1990, 1995, 1997
    assert converted["entities"] == ["reds"] and converted["annotation"] == {"tail": "reds"}
    assert converted["template"].count("{other}") == 3 and "{head}" in converted["template"]


def test_the_other_kinds_are_counted_with_their_reason(gen, tmp_path):
    alice, bob = fact(gen, "alice", "P39"), fact(gen, "bob", "P39")
    rng = random.Random(0)
    spells = [fact(gen, s, "P54") for s in ("erin", "frank", "gus")]
    rows = [
        row(gen, gen.simple(alice, "duration")),
        row(gen, gen.simple(alice, "start_end")),
        row(gen, gen.simple(bob, "start_end")),
        row(gen, gen.simple(alice, "start")),
        row(gen, gen.pair(alice, bob, "allen_relation", rng)),
        row(gen, gen.ranking(spells, "subject", "order", rng)),
        row(gen, gen.at_time(fact(gen, "carol", "P39"), "subject")),
    ]
    write_jsonl(tmp_path / "test.jsonl", rows)
    read, not_answered = read_split(tmp_path / "test.jsonl", "template")
    assert [r["timeline"]["kind"] for r in read] == ["at_time"]
    assert {k: e["questions"] for k, e in not_answered.items()} == {
        "allen_relation": 1,
        "duration": 1,
        "order": 1,
        "start (day)": 1,
        "start_end": 2,
    }
    assert not_answered["start_end"] == {
        "kind": "start_end",
        "answer_type": "time range",
        "questions": 2,
        "reason": "a time range (two dates), not one answer among the KG's entities and years",
    }
    assert not_answered["order"]["reason"].startswith("an ordered list")
    assert refusal({"kind": "ranking", "answer_type": "entity", "precision": "day"}) is None


def test_rows_without_names_ask_for_a_rebuild(gen):
    """Without the names, neither the question's entity order nor its template is known."""
    question = row(gen, gen.at_time(fact(gen, "carol", "P39"), "subject"))
    del question["timeline"]["names"]
    with pytest.raises(ValueError, match=r"q\.jsonl:1: timeline\.names is missing.*build timeline"):
        convert(question, "q.jsonl:1")


def test_entities_are_linked_in_the_order_the_question_names_them():
    names = {"p": "President of X", "v": "Vice President of X", "a": "Ann"}
    question = "While Ann was Vice President of X, who was President of X?"
    assert named_order(question, ["p", "a", "v"], names) == ["a", "v", "p"]
    assert named_order("Who was President of X?", ["p", "a"], names) == ["p", "a"]


# --- through the CLI, on the synthetic world of conftest --------------------------------------


def build_timeline(world, out, *kinds: str) -> None:
    args = ["build", "timeline", str(world.kg), "--per-group", "40", "-o", str(out)]
    result = runner.invoke(app, [*args, *(["--kinds", ",".join(kinds)] if kinds else [])])
    assert result.exit_code == 0, result.output


def test_kgqa_trains_on_a_timeline_directory_and_says_what_it_left(world, tmp_path):
    questions, out = tmp_path / "timeline", tmp_path / "qa"
    build_timeline(world, questions)
    args = ["kgqa", "train", str(questions), "--tkg", str(world.tcomplex), "-o", str(out)]
    result = runner.invoke(app, [*args, "--epochs", "1", "--batch-size", "32", "--device", "cpu"])
    assert result.exit_code == 0, result.output
    printed = " ".join(result.output.split())
    assert "Not answered:" in printed and "timeline simple" in printed

    test_rows = [json.loads(line) for line in (questions / "test.jsonl").open()]
    expected: dict[str, int] = {}
    for r in test_rows:
        why = refusal(r["timeline"])
        if why is not None:
            expected[why.category] = expected.get(why.category, 0) + 1
    metrics = json.loads((out / "metrics.json").read_text())
    timeline = metrics["timeline"]
    assert {k: e["questions"] for k, e in timeline["not_answered"].items()} == expected
    assert metrics["questions"] == len(test_rows) - sum(expected.values()) > 0
    assert sum(g["n"] for g in timeline["grid"].values()) == metrics["questions"]
    group = next(iter(timeline["by_kind"].values()))
    assert {"n", "accuracy", "accuracy_ci95", "hits@10"} <= set(group)
    assert set(timeline["by_kind"]) <= {"start", "end", "at_time", "during_fact", "ranking"}
    kinds = pq.read_table(out / "predictions.parquet").column("timeline_kind").to_pylist()
    assert sorted(set(kinds)) == sorted(timeline["by_kind"])

    # the report's section shows the grid and the kinds not answered
    from chronoprobe.report.blocks import Table
    from chronoprobe.report.kgqa_section import kgqa_section

    section = kgqa_section(out, {"id": "qa", "params": {}})
    tables = [b for b in section.blocks if isinstance(b, Table)]
    left = next(t for t in tables if t.columns[0] == "not answered")
    assert {r[0]: r[2] for r in left.rows} == expected

    result = runner.invoke(app, ["kgqa", "eval", str(out), str(questions), "--split", "valid"])
    assert result.exit_code == 0, result.output
    assert "Not answered:" in " ".join(result.output.split())


def test_a_timeline_directory_without_answerable_questions_is_refused(world, tmp_path):
    questions = tmp_path / "timeline"
    build_timeline(world, questions, "duration", "start_end")
    out = tmp_path / "qa"
    args = ["kgqa", "train", str(questions), "--tkg", str(world.tcomplex), "-o", str(out)]
    result = runner.invoke(app, [*args, "--epochs", "1", "--device", "cpu"])
    assert result.exit_code == 2
    message = " ".join(result.output.split())
    assert "train.jsonl: no question the KGQA models can answer; not answered:" in message
    assert "duration " in message and "start_end " in message
    assert "--kinds at_time,start,end,during_fact,ranking" in message
