"""Judging timeline answers by type, and probe generate's figures on timeline rows."""

from __future__ import annotations

import json

import pytest

from chronoprobe.datasets.timeline import generate
from chronoprobe.kg.samples import load_sample
from chronoprobe.probes.timeline_judging import dates, duration, judge_timeline, relation
from chronoprobe.time import TimePoint


def row(answer_type, gold):
    return {"answer_type": answer_type, "gold": gold}


@pytest.mark.parametrize(
    ("said", "gold", "right"),
    [
        ("On 4 March 2009.", "2009-03-04", True),
        ("March 4, 2009", "2009-03-04", True),
        ("2009-03-04", "2009-03-04", True),
        ("March 2009", "2009-03-04", False),  # coarser than the gold: not the day
        ("2009", "2009-03-04", False),
        ("5 March 2009", "2009-03-04", False),
        ("4 March 2009", "2009-03", True),  # finer: cut to the gold's month
        ("in 2009, I think", "2009", True),
        ("It was 2010.", "2009", False),
        ("I do not know", "2009", False),
        # years before 1000: with their era, or signed as Wikidata writes BCE
        ("He died on 19 August 14 AD.", "0014-08-19", True),
        ("August 19, AD 14", "0014-08-19", True),
        ("In 52 BC.", "-0052", True),
        ("52 BCE", "-0052", True),
        ("in 52 B.C.", "-0052", True),
        ("-0052", "-0052", True),
        ("52 AD", "-0052", False),  # the other era
        ("52", "-0052", False),  # a bare number of two digits is no year
        ("2 November 7 BC", "-0007-11-02", True),
        ("-0027-01-16", "-0027-01-16", True),
        ("0027-01-16", "-0027-01-16", False),
    ],
)
def test_time_points_at_the_gold_precision(said, gold, right):
    assert judge_timeline(said, row("time point", {"point": gold}), [gold], [[]]) == (right, right)


def test_ranges_durations_relations_yes_no_lists_entities():
    span = row("time range", {"range": ["1933", "1955-04-18"]})
    assert judge_timeline("From 1933 to 18 April 1955", span, [], [])[0]
    assert not judge_timeline("From 1933 to April 1955", span, [], [])[0]
    assert not judge_timeline("1933", span, [], [])[0]
    days = row("duration", {"duration": 69, "unit": "days"})
    assert judge_timeline("69 days", days, [], []) == (True, True)
    assert judge_timeline("about 72 days", days, [], []) == (False, True)  # within 10%
    assert judge_timeline("80 days", days, [], []) == (False, False)
    years = row("duration", {"duration": 8, "unit": "years"})
    assert judge_timeline("8", years, [], []) == (True, True)  # a bare number: the unit asked
    assert judge_timeline("96 months", years, [], []) == (True, True)
    assert judge_timeline("9 years", years, [], []) == (False, True)  # one unit off
    assert duration("8 years and 2 months", "months") == 98
    allen = row("allen relation", {"relation": "met by"})
    assert judge_timeline("It is met by the other.", allen, [], [])[0]
    assert judge_timeline("immediately after", allen, [], [])[0]
    assert not judge_timeline("meets", allen, [], [])[0]
    assert relation("overlapped by") == "overlapped by" and relation("it overlaps") == "overlaps"
    yes = row("yes/no", {"yes": True})
    assert judge_timeline("Yes, it did.", yes, [], [])[0]
    assert not judge_timeline("No.", yes, [], [])[0]
    assert not judge_timeline("Maybe yes", yes, [], [])[0]
    assert not judge_timeline("No idea.", row("yes/no", {"yes": False}), [], [])[0]
    ranked = row("ranked list", {"labels": ["Yukio Hatoyama", "Naoto Kan", "Fumio Kishida"]})
    assert judge_timeline("Yukio Hatoyama, Naoto Kan, Fumio Kishida", ranked, [], []) == (
        True,
        True,
    )
    assert judge_timeline("Naoto Kan; Yukio Hatoyama; Fumio Kishida", ranked, [], []) == (
        False,
        True,
    )
    assert judge_timeline("Naoto Kan, Fumio Kishida", ranked, [], []) == (False, False)
    entity = row("entity", {"entities": ["Q1", "Q2"]})
    labels, aliases = ["Alice Smith", "Bob Jones"], [["A. Smith"], []]
    assert judge_timeline("Bob Jones", entity, labels, aliases)[0]
    assert judge_timeline("A. Smith", entity, labels, aliases)[0]
    assert not judge_timeline("Carol White", entity, labels, aliases)[0]


def test_a_hyphenated_range_gives_both_years_and_a_word_with_a_dash_no_year():
    assert dates("1990-2000") == [TimePoint(1990), TimePoint(2000)]
    assert dates("in 1999\u20132003") == [TimePoint(1999), TimePoint(2003)]
    assert dates("from-2009 on") == []  # a dash inside a word is no minus sign
    assert dates("it cost 5 cents in 1990; HEAD 14") == [TimePoint(1990)]


def test_the_oracle_answers_of_every_time_question_on_the_sample_kg_are_judged_right():
    """The sample KG holds Roman consuls and emperors (years -70 to 14): each question's own
    gold in words is read back as that gold, BCE dates included, and BCE years are asked as
    '52 BC', never '-52'."""
    from chronoprobe.datasets.timeline import answer_label

    rows, _ = generate(load_sample(), per_kind=200, seed=0)
    timed = [r for r in rows if r["timeline"]["answer_type"] in ("time point", "time range")]
    golds = [
        [r["timeline"]["gold"].get("point"), *r["timeline"]["gold"].get("range", [])] for r in timed
    ]
    assert any(d and d.startswith("-") for g in golds for d in g)  # the draw reaches BCE facts
    for r in timed:
        said = answer_label(r["timeline"]["gold"])
        assert judge_timeline(said, r["timeline"], [], [])[0], (said, r["timeline"]["gold"])
    asked = " ".join(r["question"] for r in rows)
    assert " BC" in asked and not any(f" -{d}" in asked for d in "123456789")


def test_dates_in_words_in_order():
    assert dates("from June 1999 until the 3rd of May, 2001 (2001-05-03)") == [
        TimePoint(1999, 6),
        TimePoint(2001, 5, 3),
        TimePoint(2001, 5, 3),
    ]
    assert dates("on 31 February 2001") == []  # no such day: no date said


def test_probe_generate_judges_timeline_rows_by_category(tmp_path):
    from chronoprobe.probes.generate import GenerateParams
    from chronoprobe.probes.responses import Responses
    from chronoprobe.probes.runner import run_probe

    rows, _ = generate(load_sample(), per_kind=3, seed=0)
    data = tmp_path / "questions.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    wrong = {r["id"] for r in rows if r["timeline"]["complexity"] == "complex"}
    answers = tmp_path / "answers.jsonl"
    answers.write_text(
        "".join(
            json.dumps({"id": r["id"], "answer": "no idea" if r["id"] in wrong else a}) + "\n"
            for r in rows
            for a in r["answer_labels"][:1]
        )
    )
    params = GenerateParams(responses=answers)
    metrics = run_probe(data, Responses.read(answers, None), "generate", tmp_path / "out", params)
    grid = metrics["timeline"]["grid"]
    assert grid["simple x retrieval"]["accuracy"] == 1.0
    assert grid["complex x timeline operation"]["accuracy"] == 0.0
    by_type = metrics["timeline"]["by_answer_type"]
    assert set(by_type) == {
        "entity", "time point", "time range", "duration", "allen relation", "yes/no",
        "ranked list",
    }  # fmt: skip
    assert metrics["predicted"] == len(rows)
    share = 1 - len(wrong) / len(rows)
    assert metrics["accuracy"] == pytest.approx(share)
    low, high = metrics["timeline"]["by_complexity"]["simple"]["accuracy_ci95"]
    assert low < 1.0 == high
