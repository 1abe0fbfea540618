"""CronQuestions generation on a hand-worked presidency timeline, splits, and safe pickles."""

from __future__ import annotations

import os
import pickle

import pytest

from chronoprobe.datasets.cronq import (
    generate_questions,
    load_cronq_templates,
    question_statistics,
    read_released_questions,
    split_questions,
)
from chronoprobe.kg import Entity, Fact, TemporalKG
from chronoprobe.kg.io.safe_pickle import safe_loads
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
    assert answer(questions, "when_office", head=OBAMA, tail=PRES) == list(range(2009, 2018))
    cleveland = [*range(1885, 1890), *range(1893, 1898)]
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
    assert answer(questions, "first_time_office", head=CLEVELAND, tail=PRES) == [1885]
    assert answer(questions, "last_time_office", head=CLEVELAND, tail=PRES) == [1897]


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
    assert row["entities"] == [BIDEN, PRES, VP]
    assert "{tail}" in row["template"] and "{head}" in row["template"]


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


class Exploit:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


def released(**fields) -> dict:
    """A question as the released pickles hold it: Python sets, integer years and ids."""
    base = {
        "question": "Who was the President of USA before Barack Obama",
        "answers": {BUSH},
        "answer_type": "entity",
        "template": "Who was the {tail} before {head}",
        "entities": {PRES, OBAMA},
        "times": set(),
        "relations": {"P39"},
        "type": "before_after",
        "annotation": {"head": OBAMA, "tail": PRES, "type": "before"},
        "uniq_id": 7,
        "paraphrases": [],
    }
    return {**base, **fields}


def test_restricted_unpickler_refuses_code_and_loads_data(tmp_path):
    with pytest.raises(pickle.UnpicklingError, match=r"refused to load posix\.system"):
        safe_loads(pickle.dumps(Exploit()))
    for protocol in (2, 4, 5):
        path = tmp_path / f"test{protocol}.pickle"
        path.write_bytes(pickle.dumps([released()], protocol=protocol))
        (row,) = read_released_questions(path)
        assert row["answers"] == [BUSH] and set(row["entities"]) == {PRES, OBAMA}
        assert row["id"] == "7" and row["type"] == "before_after"
    evil = tmp_path / "evil.pickle"
    evil.write_bytes(pickle.dumps([Exploit()]))
    with pytest.raises(ValueError, match=r"evil\.pickle: refused to load"):
        read_released_questions(evil)


def test_released_rows_give_head_and_tail_as_annotated(tmp_path):
    """Sorting the entity set as strings would put PRES (Q11696) before OBAMA (Q76) and
    BIDEN (Q6279) before CHENEY (Q48259): the tail as head. The annotation decides."""
    rows = [
        released(),
        released(
            question="When did Q48259 play their last game",
            template="When did {head} play their {adj} game",
            answers={2009},
            answer_type="time",
            entities={CHENEY},
            type="first_last",
            annotation={"head": CHENEY, "adj": "last"},
            uniq_id=8,
        ),
        released(
            question="Who was the Q11699 when Q6279 held the position of Q11696",
            entities={BIDEN, VP, PRES},
            type="time_join",
            annotation={"head": BIDEN, "tail": VP},
            uniq_id=9,
        ),
        released(
            question="Who was the Q11696 in 2010",
            template="Who was the {tail} in {time}",
            entities={PRES},
            times={2010},
            type="simple_entity",
            annotation={"tail": PRES, "time": 2010},
            uniq_id=10,
        ),
        # No annotation: entities in the order the question names them.
        released(
            question="Who was Q48259's predecessor as Q11699",
            entities={VP, CHENEY},
            annotation=None,
            uniq_id=11,
        ),
    ]
    path = tmp_path / "valid.pickle"
    path.write_bytes(pickle.dumps(rows))
    got = read_released_questions(path)
    assert [r["entities"] for r in got] == [
        [OBAMA, PRES],
        [CHENEY],
        [BIDEN, VP, PRES],
        [PRES],
        [CHENEY, VP],
    ]
    assert [r["direction"] for r in got] == ["before", "last", None, None, None]
    assert [r["uniq_id"] for r in got] == [7, 8, 9, 10, 11]
    assert [r["id"] for r in got] == ["7", "8", "9", "10", "11"]
    assert got[1]["answers"] == [2009] and got[3]["times"] == [2010]
    assert got[3]["annotation"] == {"tail": PRES, "time": 2010}
    assert got[0]["template"] == "Who was the {tail} before {head}"
