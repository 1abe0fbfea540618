"""Timeline questions: Allen relations, answers and precision hand-checked on a tiny KG."""

from __future__ import annotations

import random

import pyarrow.compute as pc
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
    # who was mayor while Dan played for the Reds (February to July, counted in months)
    during = gen.during_fact(named(gen, "dan", "P54"), bob, "subject")
    assert during.labels == ["Alice", "Bob", "Carol"]
    # who was mayor while Alice played for the Reds: Alice and Bob, but the question names
    # Alice, one of its answers, so it is not asked
    assert gen.during_fact(reds, bob, "subject") is None


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


# --- symmetric relations: a marriage stored both ways is one fact -----------------------------


def married_kg() -> TemporalKG:
    """Ann and Ben married 1990-2000, stored both ways as Wikidata does; Ann worked for Acme
    1995-1999 and Ben for Bolt 1992-1996."""
    facts = [
        Fact("ann", "P26", "ben", P("1990"), P("2000")),
        Fact("ben", "P26", "ann", P("1990"), P("2000")),
        Fact("ann", "P108", "acme", P("1995"), P("1999")),
        Fact("ben", "P108", "bolt", P("1992"), P("1996")),
    ]
    names = {"ann": "Ann", "ben": "Ben", "acme": "Acme", "bolt": "Bolt"}
    return TemporalKG.from_records(
        facts,
        [Entity(k, v) for k, v in names.items()],
        [Relation("P26", "spouse"), Relation("P108", "employer")],
    )


def test_a_mirrored_marriage_is_asked_about_once_and_never_against_itself():
    templates = load_timeline_templates()
    assert [r for r, p in templates.relations.items() if p.symmetric] == ["P26"]
    gen = Generator(married_kg(), templates, {})
    marriages = [f for f in gen.named if f.relation == "P26"]
    assert [(f.subject, f.object) for f in marriages] == [("ann", "ben")]
    ann_ben = marriages[0]
    ben_ann = next(f for f in gen.by_given[("subject", "ben", "P26")])
    gen.split_of = {ann_ben.id: "test", ben_ann.id: "train"}
    assert gen.split(ben_ann) == gen.split(ann_ben) == "test"  # one fact, one split
    # "While Ann was married to Ben, who was Ben married to?" would answer Ann: not asked
    assert gen.during_fact(ann_ben, ben_ann, "object") is None
    assert gen.during_fact(ann_ben, ann_ben, "subject") is None
    # both ways stay in the lookups: who was married to Ben, and Ben's spouse, in 1995
    assert gen.at_time(ann_ben, "subject").gold == {"entities": ["ann"], "time": "1995"}
    ben = gen.at_time(ben_ann, "object")
    assert ben.gold["entities"] == ["ann"]
    rows, _ = generate(married_kg(), per_kind=50, seed=0)
    read = [
        {(f["subject"], f["object"]) for f in row["timeline"]["facts"] if f["relation"] == "P26"}
        for row in rows
    ]
    assert not any({("ann", "ben"), ("ben", "ann")} <= facts for facts in read)
    starts = [r for r in rows if r["timeline"]["kind"] == "start"]
    assert sum(r["timeline"]["facts"][0]["relation"] == "P26" for r in starts) == 1


def test_a_relation_marked_symmetric_must_say_true_or_false(tmp_path):
    bad = tmp_path / "t.yaml"
    phrases = "{did: x <object>, past: x <object>, ask_object: x <subject>, ask_subject: x <object>"
    bad.write_text(
        f"relations: {{P26: {phrases}, symmetric: maybe}}}}\nquestions: {{start: [q]}}\n"
    )
    with pytest.raises(ValueError, match=r"t.yaml: relations.P26.symmetric: true or false"):
        load_timeline_templates(bad)


def _own_answers(row: dict) -> set[str]:
    """The answers of an entity question that the question itself names: the entity given, and
    for during_fact the people and things of the fact it reads the time of. (A ranking names
    its options, the answer among them, by design.)"""
    timeline = row["timeline"]
    if timeline["kind"] not in ("at_time", "during_fact"):
        return set()
    named = {timeline["asks"]["given"]}
    if timeline["kind"] == "during_fact":
        named |= {timeline["facts"][0]["subject"], timeline["facts"][0]["object"]}
    return named & set(timeline["gold"]["entities"])


def _mirrored_in(row: dict) -> bool:
    """Does the question read a fact and its mirror (a marriage against itself)?"""
    keys = {tuple(f[k] for k in ("subject", "relation", "object", "start", "end"))
            for f in row["timeline"]["facts"]}  # fmt: skip
    return any((o, r, s, a, b) in keys for s, r, o, a, b in keys if s != o)


@pytest.mark.slow
@pytest.mark.parametrize("world", ["sample", "synthetic"])
def test_no_question_contains_its_own_answer_or_sets_a_fact_against_its_mirror(world):
    """Over the sample KG and the 20,000-fact world (`kg synth --facts 20000 --seed 0`), every
    kind: before symmetric relations were declared, 29 of 80 during_fact questions on the sample
    KG named an answer and 30 questions read a marriage and its mirror."""
    if world == "sample":
        kg = load_sample()
    else:
        from chronoprobe.kg.synth import SynthConfig, synthesize

        kg = synthesize(SynthConfig(seed=0, facts=20000, text=False)).kg
    assert kg.facts.filter(pc.equal(kg.facts.column("relation"), "P26")).num_rows > 10
    rows, _ = generate(kg, per_kind=200, seed=0)
    kinds = {r["timeline"]["kind"] for r in rows}
    assert {"during_fact", "intersection", "total_duration", "set_operation"} <= kinds
    assert [r["question"] for r in rows if _own_answers(r)] == []
    assert [r["question"] for r in rows if _mirrored_in(r)] == []
    # a marriage lies in one split: no test question reads one a training question reads
    splits: dict[frozenset, set[str]] = {}
    for row in rows:
        for f in row["timeline"]["facts"]:
            key = frozenset((f["subject"], f["object"])) | {f["relation"], f["start"]}
            splits.setdefault(key, set()).add(row["split"])
    assert not [key for key, seen in splits.items() if len(seen) > 1]
