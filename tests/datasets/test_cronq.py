"""CronQuestions generation on a hand-worked presidency timeline, and its splits."""

from __future__ import annotations

import pytest

from chronoprobe.datasets.cronq import (
    generate_questions,
    load_cronq_templates,
    mentioned_entities,
    question_statistics,
    split_questions,
)
from chronoprobe.kg import Entity, Fact, TemporalKG
from chronoprobe.time import TimePoint

PRES, VP = "Q11696", "Q11699"
BUSH, OBAMA, TRUMP, BIDEN = "Q207", "Q76", "Q22686", "Q6279"
CLEVELAND, HARRISON = "Q35171", "Q35678"
CHENEY, PENCE, HARRIS = "Q48259", "Q24313", "Q10853588"
IRAQ_WAR = "Q545449"


def spell(s, o, a, b):
    return Fact(s, "P39", o, TimePoint.parse(a), TimePoint.parse(b))


@pytest.fixture(scope="module")
def kg() -> TemporalKG:
    facts = [
        spell(CLEVELAND, PRES, "1885-03-04", "1889-03-04"),
        spell(HARRISON, PRES, "1889-03-04", "1893-03-04"),
        spell(CLEVELAND, PRES, "1893-03-04", "1897-03-04"),
        spell(BUSH, PRES, "2001-01-20", "2009-01-20"),
        spell(OBAMA, PRES, "2009-01-20", "2017-01-20"),
        spell(TRUMP, PRES, "2017-01-20", "2021-01-20"),
        spell(BIDEN, PRES, "2021-01-20", "2025-01-20"),
        spell(CHENEY, VP, "2001-01-20", "2009-01-20"),
        spell(BIDEN, VP, "2009-01-20", "2017-01-20"),
        spell(PENCE, VP, "2017-01-20", "2021-01-20"),
        spell(HARRIS, VP, "2021-01-20", "2025-01-20"),
    ]
    entities = [
        Entity(PRES, "President of the United States"),
        Entity(VP, "Vice President of the United States"),
        Entity(OBAMA, "Barack Obama"),
        Entity(BIDEN, "Joe Biden"),
        Entity(CLEVELAND, "Grover Cleveland"),
        Entity(
            IRAQ_WAR,
            "Iraq War",
            start=TimePoint(2003, 3, 20),
            end=TimePoint(2011, 12, 18),
            type="event",
        ),
    ]
    return TemporalKG.from_records(facts, entities)


@pytest.fixture(scope="module")
def questions(kg):
    rows, skipped = generate_questions(kg, exhaustive=True)
    assert not skipped
    return rows


def answer(questions, template, **slots):
    found = [r for r in questions if r["template_name"] == template and r["annotation"] == slots]
    assert len(found) == 1, (template, slots, len(found))
    return found[0]["answers"]


def test_simple_entity_counts_every_year_of_an_interval(questions):
    assert answer(questions, "office_in_year", tail=PRES, time=2009) == sorted([OBAMA, BUSH])
    assert answer(questions, "office_in_year", tail=PRES, time=2010) == [OBAMA]
    assert answer(questions, "office_in_year", tail=PRES, time=1890) == [HARRISON]


def test_simple_time_lists_every_year_of_repeated_terms(questions):
    years = list(map(str, range(2009, 2018)))  # years as text: every answer is a string
    assert answer(questions, "when_office", head=OBAMA, tail=PRES) == years
    cleveland = list(map(str, [*range(1885, 1890), *range(1893, 1898)]))
    assert answer(questions, "when_office", head=CLEVELAND, tail=PRES) == cleveland


def test_before_after_from_first_and_last_years(questions):
    assert answer(questions, "office_before", tail=PRES, head=OBAMA) == [BUSH]
    assert answer(questions, "office_after", tail=PRES, head=OBAMA) == [TRUMP]
    assert answer(questions, "office_before", tail=PRES, head=HARRISON) == [CLEVELAND]
    assert answer(questions, "office_after", tail=PRES, head=HARRISON) == [CLEVELAND]
    assert answer(questions, "office_after", tail=PRES, head=CLEVELAND) == [BUSH]
    none_before = [
        r
        for r in questions
        if r["template_name"] == "office_before" and r["annotation"]["head"] == CLEVELAND
    ]
    assert none_before == []  # no answer, no question


def test_first_last(questions):
    assert answer(questions, "first_holder", tail=PRES) == [CLEVELAND]
    assert answer(questions, "last_holder", tail=PRES) == [BIDEN]
    assert answer(questions, "first_time_office", head=CLEVELAND, tail=PRES) == ["1885"]
    assert answer(questions, "last_time_office", head=CLEVELAND, tail=PRES) == ["1897"]


def test_time_join_over_an_event_spanning_two_presidencies(questions):
    during = "office_during_event"
    assert answer(questions, during, tail=PRES, event=IRAQ_WAR) == sorted([OBAMA, BUSH])
    assert answer(questions, during, tail=VP, event=IRAQ_WAR) == sorted([CHENEY, BIDEN])
    # While Biden was vice president (2009-2017), boundary years included.
    got = answer(questions, "office_when_other_office", tail=PRES, head=BIDEN, other=VP)
    assert got == sorted([BUSH, OBAMA, TRUMP])
    # Biden's presidency starts in 2021, the year Pence's term ends: both vice presidents count.
    got = answer(questions, "office_when_other_office", tail=VP, head=BIDEN, other=PRES)
    assert got == sorted([HARRIS, PENCE])


def test_row_fields(questions):
    (row,) = [
        r
        for r in questions
        if r["template_name"] == "office_before"
        and r["annotation"] == {"tail": PRES, "head": OBAMA}
    ]
    surfaces = {row["question"], *row["paraphrases"]}
    assert "Who was the President of the United States before Barack Obama?" in surfaces
    assert len(surfaces) == 4
    assert (row["type"], row["direction"], row["answer_type"]) == (
        "before_after",
        "before",
        "entity",
    )
    # Head first, then tail, whatever the wording's order (as released rows are read).
    assert row["entities"] == [OBAMA, PRES] and row["times"] == [] and row["relations"] == ["P39"]
    timed = next(r for r in questions if r["template_name"] == "office_in_year")
    assert timed["times"] == [timed["annotation"]["time"]]
    stats = question_statistics(questions)
    assert stats["questions"] == len(questions) and set(stats["types"]) >= {"time_join"}
    assert stats["templates"]["office_before"] == sum(
        r["template_name"] == "office_before" for r in questions
    )


def test_template_is_the_shown_wording_with_its_placeholders(kg, questions):
    """As in released CronQuestions rows: ``template`` is the question before slot filling."""
    seeds = {t.name: t for t in load_cronq_templates()}
    for row in questions:
        surfaces = seeds[row["template_name"]].surfaces
        assert row["template"] in surfaces
        labels = {
            k: str(v) if k == "time" else kg.label(str(v)) for k, v in row["annotation"].items()
        }
        assert row["template"].format(**labels) == row["question"]
    (row,) = [
        r
        for r in questions
        if r["template_name"] == "office_when_other_office"
        and r["annotation"] == {"tail": PRES, "head": BIDEN, "other": VP}
    ]
    assert "{tail}" in row["template"] and "{head}" in row["template"]


def test_entities_come_in_the_order_the_question_names_them(kg, questions):
    """As CronKGQA's code reads a question: its first-named entity is the head the models score
    with, its second the tail, whichever slot of the fact each fills (the paper gives that
    annotation with training questions only). Every split's rows are built so."""
    for row in questions:
        slot = {str(v): k for k, v in row["annotation"].items() if k != "time"}
        named = sorted(row["entities"], key=lambda e: row["template"].index(f"{{{slot[e]}}}"))
        assert row["entities"] == named, row["question"]
    slots = {"tail": PRES, "head": BIDEN, "other": VP}
    assert mentioned_entities("Who was the {tail} while {head} was the {other}?", slots) == [
        PRES,
        BIDEN,
        VP,
    ]
    assert mentioned_entities("While {head} was {other}, who was the {tail}?", slots) == [
        BIDEN,
        VP,
        PRES,
    ]
    # "Who was the {tail} before {head}": the annotated tail (the office) comes first.
    before = [r for r in questions if r["template"].startswith("Who was the {tail} before")]
    assert before and all(r["entities"][0] == r["annotation"]["tail"] for r in before)


def test_a_template_whose_paraphrases_name_other_slots_is_refused(tmp_path):
    path = tmp_path / "cronq.yaml"
    path.write_text(
        "- name: odd\n  type: simple_entity\n  relation: P39\n  procedure: heads_of_tail_in_year\n"
        '  question: "Who was the {tail} in {time}?"\n  paraphrases:\n'
        '    - "Who held {tail} in {time}?"\n    - "Who was {tail}?"\n    - "Who was it?"\n',
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match=r"template 1 \(odd\): the question and its paraphrases"):
        load_cronq_templates(path)


def test_sampling_caps_each_template_and_is_seeded(kg):
    a, _ = generate_questions(kg, max_per_template=2, seed=3)
    b, _ = generate_questions(kg, max_per_template=2, seed=3)
    assert a == b
    per_template = {}
    for row in a:
        name = row["template_name"]
        per_template[name] = per_template.get(name, 0) + 1
    assert max(per_template.values()) <= 2


def test_splits_share_no_entity_except_events(questions):
    splits = split_questions(questions, event_ids={IRAQ_WAR}, seed=1)
    owners = {}
    for name in ("train", "valid", "test"):
        for row in splits[name]:
            for entity in row["entities"]:
                if entity != IRAQ_WAR:
                    owners.setdefault(entity, set()).add(name)
    assert all(len(names) == 1 for names in owners.values())
    total = sum(len(v) for v in splits.values())
    assert total == len(questions)
    train_text = {s for r in splits["train"] for s in (r["question"], *r["paraphrases"])}
    assert not any(r["question"] in train_text for r in splits["test"])
