"""The symbolic oracle of timeline questions: right on every question of the KG they were built
from, and wrong exactly where a removed fact was read."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.datasets.timeline import KINDS, generate, timed_facts
from chronoprobe.datasets.timeline_oracle import UNKNOWN, Oracle, agrees, dropped, judge_rows
from chronoprobe.jsonl import write_jsonl
from chronoprobe.kg.graph import TemporalKG
from chronoprobe.kg.records import Entity, Fact, Relation
from chronoprobe.kg.samples import load_sample
from chronoprobe.time import TimePoint

P = TimePoint.parse


@pytest.fixture(scope="module")
def sample():
    kg = load_sample()
    rows, _ = generate(kg, per_kind=12, seed=0)
    return kg, rows, timed_facts(kg)


def key(fact) -> tuple:
    d = fact.to_dict() if hasattr(fact, "to_dict") else fact
    return d["subject"], d["relation"], d["object"], d["start"], d["end"]


def test_the_oracle_answers_every_sample_question_as_the_generator_did(sample):
    _, rows, facts = sample
    assert {r["timeline"]["kind"] for r in rows} == set(KINDS)
    oracle = Oracle(facts)
    wrong = [
        r["id"] for r in rows if not agrees(oracle.answer(r["timeline"]), r["timeline"]["gold"])
    ]
    assert wrong == []


def test_a_dropped_fact_costs_exactly_the_questions_that_read_it(sample):
    _, rows, facts = sample
    read = {key(f) for r in rows for f in r["timeline"]["facts"]}
    checked = 0
    for fact in [f for f in facts if key(f) in read][::3]:  # a third of them, for speed
        oracle = Oracle([f for f in facts if f is not fact])
        lost = {
            r["id"] for r in rows if not agrees(oracle.answer(r["timeline"]), r["timeline"]["gold"])
        }
        readers = {r["id"] for r in rows if key(fact) in map(key, r["timeline"]["facts"])}
        assert lost == readers, fact
        checked += 1
    assert checked > 30


def test_the_oracle_reads_the_kg_not_the_gold(sample):
    _, rows, facts = sample
    row = next(r for r in rows if r["timeline"]["kind"] == "start")
    named = row["timeline"]["facts"][0]
    moved = [
        type(f)(f.subject, f.relation, f.object, TimePoint(1111), f.end)
        if key(f) == key(named)
        else f
        for f in facts
    ]
    assert Oracle(moved).answer(row["timeline"]) == {"point": "1111"}


def tiny_kg(drop_bob: bool = False) -> TemporalKG:
    facts = [
        Fact("alice", "P39", "mayor", P("2001-01-10"), P("2001-03-20")),
        Fact("bob", "P39", "mayor", P("2001-03-20"), P("2001-06-01")),
        Fact("carol", "P39", "mayor", P("2001-06-01"), P("2002-01-15")),
        Fact("alice", "P54", "reds", P("2001-02-01"), P("2001-05-01")),
    ]
    if drop_bob:
        facts = [f for f in facts if f.subject != "bob"]
    names = {"alice": "Alice", "bob": "Bob", "carol": "Carol", "mayor": "Mayor", "reds": "Reds"}
    return TemporalKG.from_records(
        facts,
        [Entity(k, v) for k, v in names.items()],
        [Relation("P39", "position held"), Relation("P54", "member of sports team")],
    )


def timeline(kind: str, facts: list[dict], asks: dict, gold: dict) -> dict:
    return {"kind": kind, "facts": facts, "asks": asks, "gold": gold}


def test_hand_checked_answers_with_and_without_a_fact():
    full, less = Oracle(timed_facts(tiny_kg())), Oracle(timed_facts(tiny_kg(drop_bob=True)))
    at = {"asked": "subject", "given": "mayor", "relation": "P39", "time": "2001-04"}
    assert full.answer(timeline("at_time", [], at, {})) == {"entities": ["bob"]}
    assert less.answer(timeline("at_time", [], at, {})) is None  # nobody held it then
    march = {**at, "time": "2001-03-20"}  # the handover day: both held it
    assert full.answer(timeline("at_time", [], march, {})) == {"entities": ["alice", "bob"]}
    assert less.answer(timeline("at_time", [], march, {})) == {"entities": ["alice"]}
    assert not agrees({"entities": ["alice"]}, {"entities": ["alice", "bob"]})
    rank = {"asked": "subject", "given": "mayor", "relation": "P39", "rank": -1,
            "options": ["carol", "alice", "bob"]}  # fmt: skip
    assert full.answer(timeline("ranking", [], rank, {})) == {"entities": ["carol"]}
    assert less.answer(timeline("ranking", [], rank, {})) is None  # an option is missing
    assert full.answer(timeline("order", [], rank, {})) == {"order": ["alice", "bob", "carol"]}
    alice = {"subject": "alice", "relation": "P39", "object": "mayor"}
    bob = {"subject": "bob", "relation": "P39", "object": "mayor"}
    reds = {"subject": "alice", "relation": "P54", "object": "reds"}
    assert full.answer(timeline("allen_relation", [alice, bob], {}, {})) == {"relation": "meets"}
    assert less.answer(timeline("allen_relation", [alice, bob], {}, {})) is None
    yes_no = timeline("allen_yes_no", [reds, alice], {"relation": "overlapped by"}, {})
    assert full.answer(yes_no) == {"yes": True}
    assert full.answer(timeline("intersection", [alice, reds], {}, {})) == {
        "range": ["2001-02-01", "2001-03-20"]
    }
    during = {"asked": "subject", "given": "mayor", "relation": "P39"}
    assert full.answer(timeline("during_fact", [reds], during, {})) == {
        "entities": ["alice", "bob"]
    }
    assert less.answer(timeline("during_fact", [reds], during, {})) == {"entities": ["alice"]}
    assert full.answer(timeline("duration", [bob], {}, {})) == {"duration": 73, "unit": "days"}


def test_dropping_is_seeded_and_nested(sample):
    _, _, facts = sample
    assert dropped(facts, 0.0, 0) == facts
    fifth, half = dropped(facts, 0.2, 0), dropped(facts, 0.5, 0)
    assert set(map(key, half)) < set(map(key, fifth)) < set(map(key, facts))
    assert 0.1 < 1 - len(fifth) / len(facts) < 0.3
    assert dropped(facts, 0.2, 0) == fifth and dropped(facts, 0.2, 1) != fifth


def test_judged_rows_say_unknown_and_name_a_bad_line(tmp_path, sample):
    kg, rows, facts = sample
    judged = judge_rows(Oracle([]), rows[:3], kg, tmp_path / "q.jsonl")
    assert [j["answer"] for j in judged] == [UNKNOWN] * 3 and not any(j["right"] for j in judged)
    with pytest.raises(ValueError, match=r"q.jsonl:2: not a timeline question with 'asks'"):
        judge_rows(Oracle(facts), [rows[0], {"id": "x", "query": "?"}], kg, tmp_path / "q.jsonl")


def test_build_timeline_oracle_writes_answers_a_judge_reads(tmp_path, sample):
    kg, rows, _ = sample
    kg.save(tmp_path / "kg")
    write_jsonl(tmp_path / "q.jsonl", rows)
    runner = CliRunner()
    said = {}
    for drop, out in ((None, "full"), ("0.3", "less")):
        args = ["build", "timeline-oracle", str(tmp_path / "kg"), "--questions",
                str(tmp_path / "q.jsonl"), "-o", str(tmp_path / out)]  # fmt: skip
        result = runner.invoke(app, [*args, *(["--drop", drop] if drop else [])])
        assert result.exit_code == 0, result.output
        said[out] = " ".join(result.output.split())
    full = json.loads((tmp_path / "full" / "metrics.json").read_text())
    less = json.loads((tmp_path / "less" / "metrics.json").read_text())
    # it prints its figure: accuracy with its interval, overall and per complexity
    low, high = less["accuracy_ci95"]
    assert (
        f"│ all │ {less['n']} │ {less['accuracy']:.3f} │ [{low:.3f}, {high:.3f}] │"
        in (said["less"])
    )
    assert f"({less['facts_dropped']} dropped)" in said["less"] and "dropped" in said["full"]
    assert full["accuracy"] == 1.0 and full["n"] == len(rows) and full["unanswered"] == 0
    assert set(full["grid"]) == {"simple x retrieval", "simple x constrained retrieval",
                                 "medium x timeline operation", "medium x semantic operation",
                                 "complex x timeline operation"}  # fmt: skip
    assert less["accuracy"] < 1.0 and less["facts_dropped"] > 0
    answers = [json.loads(line) for line in (tmp_path / "full" / "answers.jsonl").open()]
    assert [a["id"] for a in answers] == [r["id"] for r in rows]


def test_only_the_oracle_takes_questions_and_it_needs_them(tmp_path):
    load_sample().save(tmp_path / "kg")
    runner = CliRunner()
    kg, out = str(tmp_path / "kg"), str(tmp_path / "out")
    result = runner.invoke(app, ["build", "timeline-oracle", kg, "-o", out])
    assert result.exit_code == 2
    said = " ".join(result.output.replace("│", " ").split())
    assert "inputs.questions: required by build timeline-oracle: The timeline questions" in said
    drift = ["build", "drift", kg, "--first", "2000", "--last", "2001", "-o", out]
    result = runner.invoke(app, [*drift, "--questions", str(tmp_path)])
    assert result.exit_code == 2
    assert "inputs.questions: only build timeline-oracle reads it, not build drift" in result.output
    empty = tmp_path / "empty"
    empty.mkdir()
    result = runner.invoke(
        app, ["build", "timeline-oracle", kg, "--questions", str(empty), "-o", out]
    )
    assert result.exit_code == 2 and "questions.jsonl: no such file of timeline questions" in (
        " ".join(result.output.split())
    )
