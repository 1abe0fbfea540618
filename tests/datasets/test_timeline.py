"""Timeline questions: Allen relations, answers and precision hand-checked on a tiny KG."""

from __future__ import annotations

import random

import pytest

from chronoprobe.datasets.timeline import (
    ALLEN,
    KINDS,
    Generator,
    TimedFact,
    allen,
    fact_splits,
    generate,
    holds_in,
    load_timeline_templates,
    overlap,
    spans,
)
from chronoprobe.kg.graph import TemporalKG
from chronoprobe.kg.records import Entity, Fact, Relation
from chronoprobe.kg.samples import load_sample
from chronoprobe.time import Period, Precision, TimePoint

P = TimePoint.parse


def fact(subject, relation, obj, start, end):
    return TimedFact(subject, relation, obj, P(start) if start else None, P(end) if end else None)


# interval B is 2001-03-10 .. 2001-03-20; each A gives one relation of A to B
B = fact("b", "P39", "x", "2001-03-10", "2001-03-20")
CASES = {
    "before": ("2001-03-01", "2001-03-05"),
    "after": ("2001-03-25", "2001-03-30"),
    "meets": ("2001-03-01", "2001-03-10"),
    "met by": ("2001-03-20", "2001-03-30"),
    "overlaps": ("2001-03-01", "2001-03-15"),
    "overlapped by": ("2001-03-15", "2001-03-30"),
    "starts": ("2001-03-10", "2001-03-15"),
    "started by": ("2001-03-10", "2001-03-30"),
    "during": ("2001-03-12", "2001-03-18"),
    "contains": ("2001-03-01", "2001-03-30"),
    "finishes": ("2001-03-15", "2001-03-20"),
    "finished by": ("2001-03-01", "2001-03-20"),
    "equals": ("2001-03-10", "2001-03-20"),
}


@pytest.mark.parametrize("relation", list(CASES))
def test_each_allen_relation_at_day_precision(relation):
    a = fact("a", "P39", "y", *CASES[relation])
    assert allen(a.span(Precision.DAY), B.span(Precision.DAY)) == relation


def test_the_thirteen_relations_are_the_phrased_ones():
    assert set(CASES) == set(ALLEN)


def test_coarse_bounds_are_compared_at_their_common_precision():
    # day bounds against a month bound: both cut to months, March = March -> "starts"
    day = fact("a", "P39", "y", "2001-03-10", "2001-04-20")
    month = fact("c", "P39", "z", "2001-03", "2001-06")
    precision, (sa, sb) = spans([day, month])
    assert precision == Precision.MONTH
    assert allen(sa, sb) == "starts"
    # a term within one year shrinks to a point counted in years: undetermined, no spans
    short = fact("d", "P39", "w", "2001-02-01", "2001-11-30")
    assert spans([short, fact("e", "P54", "v", "1999", "2004")]) is None
    # only a shared bound at the common precision: overlap undetermined
    assert (
        overlap(fact("f", "P54", "u", "1999", "2001"), fact("g", "P54", "u", "2001", "2003"))
        is None
    )
    assert overlap(fact("f", "P54", "u", "1999", "2002"), fact("g", "P54", "u", "2001", "2003"))


def test_a_fact_known_to_the_month_is_not_known_to_the_day():
    month = fact("a", "P54", "y", "2009-03", "2010-05")
    assert holds_in(month, Period.parse("2009-03")) is True
    assert holds_in(month, Period.parse("2009-03-15")) is None  # which day of March?
    assert holds_in(month, Period.parse("2009-02-28")) is False
    assert holds_in(month, Period.parse("2010-06-01")) is False


def tiny_kg() -> TemporalKG:
    facts = [
        Fact("alice", "P39", "mayor", P("2001-01-10"), P("2001-03-20")),
        Fact("bob", "P39", "mayor", P("2001-03-20"), P("2001-06-01")),
        Fact("carol", "P39", "mayor", P("2001-06-01"), P("2002-01-15")),
        Fact("alice", "P54", "reds", P("2001-02-01"), P("2001-05-01")),
        Fact("dan", "P54", "reds", P("2001-02"), P("2001-07")),  # known to the month
    ]
    names = {"alice": "Alice", "bob": "Bob", "carol": "Carol", "dan": "Dan"}
    names |= {"mayor": "Mayor of Town", "reds": "Reds"}
    return TemporalKG.from_records(
        facts,
        [Entity(k, v) for k, v in names.items()],
        [Relation("P39", "position held"), Relation("P54", "member of sports team")],
    )


@pytest.fixture
def gen():
    kg = tiny_kg()
    generator = Generator(kg, load_timeline_templates(), {})
    generator.split_of = {f.id: "train" for f in generator.named}
    return generator


def named(gen, subject, relation):
    return next(f for f in gen.named if f.subject == subject and f.relation == relation)


def test_simple_answers(gen):
    alice = named(gen, "alice", "P39")
    assert gen.simple(alice, "start").labels == ["2001-01-10"]
    assert gen.simple(alice, "end").labels == ["2001-03-20"]
    assert gen.simple(alice, "start_end").labels == ["2001-01-10 to 2001-03-20"]
    duration = gen.simple(alice, "duration")
    assert duration.labels == ["69 days"]  # 21 + 28 + 20 days from 10 January to 20 March
    assert "Alice" in duration.slots["period_a"] and duration.slots["unit"] == "days"
    dan = named(gen, "dan", "P54")
    assert gen.simple(dan, "duration").labels == ["5 months"]  # never counted in days
    assert gen.simple(dan, "start").labels == ["2001-02"]


def test_at_time_keeps_every_holder_and_never_asks_a_month_fact_by_the_day(gen):
    carol = named(gen, "carol", "P39")
    question = gen.at_time(carol, "subject")
    assert question.gold == {"entities": ["carol"], "time": "2001-09-23"}
    assert question.slots["when"] == "on 23 September 2001"
    # Dan's spell (February to July, known to the month) surely covers 17 March
    reds = gen.at_time(named(gen, "alice", "P54"), "subject")
    assert reds.gold == {"entities": ["alice", "dan"], "time": "2001-03-17"}
    # but not 15 February: the question is not asked
    dan_fact = named(gen, "dan", "P54")
    assert holds_in(dan_fact, Period.parse("2001-02-15")) is None
    dan = gen.at_time(named(gen, "dan", "P54"), "subject")
    assert dan.precision == Precision.MONTH and dan.slots["when"] == "in May 2001"
    assert dan.labels == ["Alice", "Dan"]  # Alice's spell ends on 1 May; both kept


def test_two_fact_answers(gen):
    rng = random.Random(0)
    alice, bob = named(gen, "alice", "P39"), named(gen, "bob", "P39")
    reds = named(gen, "alice", "P54")
    assert gen.pair(alice, bob, "allen_relation", rng).labels == ["meets"]
    assert gen.pair(alice, reds, "allen_relation", rng).labels == ["overlaps"]
    assert gen.pair(alice, reds, "intersection", rng).labels == ["2001-02-01 to 2001-03-20"]
    assert gen.pair(alice, bob, "intersection", rng) is None  # they only touch
    compare = gen.pair(alice, bob, "duration_compare", rng)
    assert compare.gold["durations"] == [69, 73] and compare.labels == ["no"]
    dan = named(gen, "dan", "P54")
    month = gen.pair(alice, dan, "allen_relation", rng)
    assert month.precision == Precision.MONTH and month.labels == ["overlaps"]
    assert month.slots["unit"] == "months"
    yes_no = [gen.pair(alice, bob, "allen_yes_no", random.Random(s)) for s in range(8)]
    assert {q.labels[0] for q in yes_no} == {"yes", "no"}
    assert all((q.gold["asked"] == "meets") == (q.labels == ["yes"]) for q in yes_no)
    during = gen.during_fact(reds, bob, "subject")
    assert during.labels == ["Alice", "Bob"]  # who was mayor while Alice played for the Reds


def test_complex_answers(gen):
    rng = random.Random(1)
    terms = [named(gen, s, "P39") for s in ("carol", "alice", "bob")]
    order = gen.ranking(terms, "subject", "order", rng)
    assert order.labels == ["Alice; Bob; Carol"] and order.gold["order"] == [
        "alice",
        "bob",
        "carol",
    ]
    first = gen.ranking(terms, "subject", "ranking", random.Random(3))
    rank = first.gold["rank"]
    assert first.answers == [["alice", "bob", "carol"][rank]]
    total = gen.total_duration(terms)
    assert total.labels == [f"{69 + 73 + 228} days"]
    alice, bob, carol = terms[1], terms[2], terms[0]
    reds = named(gen, "alice", "P54")
    # Alice's mayoralty and Bob's cover 10 January to 1 June; the Reds spell lies within
    assert gen.set_operation([alice, bob, reds], "union").labels == ["yes"]
    assert gen.set_operation([alice, bob, reds], "complement").labels == ["no"]
    assert gen.set_operation([alice, carol, reds], "complement").labels == ["yes"]
    assert gen.set_operation([alice, reds, bob], "intersection") is None  # they only touch
    assert gen.set_operation([alice, bob, carol], "intersection").labels == ["no"]
    dan = named(gen, "dan", "P54")
    all_three = gen.set_operation([alice, reds, dan], "intersection")
    assert all_three.precision == Precision.MONTH and all_three.labels == ["yes"]


def test_rows_are_split_by_fact_and_cover_every_kind_on_the_sample():
    rows, _ = generate(load_sample(), per_kind=20, seed=0)
    kinds = {r["timeline"]["kind"] for r in rows}
    assert kinds == set(KINDS)
    facts = {s: set() for s in ("train", "valid", "test")}
    for row in rows:
        ids = {
            (f["subject"], f["relation"], f["object"], f["start"]) for f in row["timeline"]["facts"]
        }
        facts[row["split"]] |= ids
        assert row["query"].count("[MASK]") == 1 and row["answer_labels"]
        assert "{" not in row["question"]
    assert not facts["test"] & facts["train"] and not facts["valid"] & facts["train"]
    assert {r["split"] for r in rows if r["timeline"]["complexity"] == "complex"} >= {"test"}
    again, _ = generate(load_sample(), per_kind=20, seed=0)
    assert again == rows


def test_splits_are_stable_for_a_fact():
    facts = [fact(f"s{i}", "P39", "x", "2001", "2003") for i in range(200)]
    splits = fact_splits(facts, seed=0)
    assert fact_splits(facts[:50], seed=0) == {f.id: splits[f.id] for f in facts[:50]}


def test_a_bad_templates_file_is_one_line(tmp_path):
    bad = tmp_path / "t.yaml"
    bad.write_text("relations: {P39: {did: x}}\nquestions: {start: ['q']}\n")
    with pytest.raises(ValueError, match=r"t.yaml: relations.P39: needs did, past"):
        load_timeline_templates(bad)
    bad.write_text("relations: {}\nquestions: {begin: ['q']}\n")
    with pytest.raises(ValueError, match=r"questions.begin: unknown question kind"):
        load_timeline_templates(bad)
    bad.write_text("relations: [\n")
    with pytest.raises(ValueError, match=r"t.yaml:\d+: not a YAML file of templates"):
        load_timeline_templates(bad)
