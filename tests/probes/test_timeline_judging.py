"""Judging timeline answers by type, and probe generate's figures on timeline rows."""

from __future__ import annotations

import json

import pytest

from chronoprobe.datasets.timeline import generate
from chronoprobe.datasets.timeline_oracle import Oracle, said
from chronoprobe.kg.samples import load_sample
from chronoprobe.probes.timeline_judging import (
    dates,
    duration,
    judge_timeline,
    relation,
    yes_no,
)
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
        # a decade is coarser than a year
        ("in the early 1990s", "1990", False),
        ("the 1990s", "1990", False),
        ("1990s", "1990", False),
        ("1990's", "1990", False),
        ("the 1990s, in 1994", "1994", True),
        # what is denied is not said; a bound or two candidates are no answer
        ("not 2003, but 2004", "2003", False),
        ("not 2003, but 2004", "2004", True),
        ("2004 (not 2003)", "2004", True),
        ("not on 21 October 1969", "1969-10-21", False),
        ("It was not until 1969 that it ended.", "1969", True),
        ("before 2003", "2003", False),
        ("by 2003", "2003", False),
        ("between 1906 and 1907", "1906", False),
        ("1906 or 1907", "1906", False),
        ("59 BC or 58 BC", "-0059", False),
        ("2009 (or, to the day, 4 March 2009)", "2009", True),  # the same date, finer
        ("around 2003", "2003", True),
        # months cut to "Sept"; numbers with slashes read only where they are unambiguous
        ("Sept. 12, 1953", "1953-09-12", True),
        ("24 Sept. 2008", "2008-09-24", True),
        ("1969/10/21", "1969-10-21", True),
        ("21/10/1969", "1969-10-21", True),  # 21 is no month
        ("10/21/1969", "1969-10-21", True),
        ("3/4/1969", "1969-04-03", False),  # 3 April or 4 March: not guessed
        ("3/4/1969", "1969-03-04", False),
        ("3/4/1969", "1969", True),  # the year is said either way
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


@pytest.mark.parametrize(
    ("said", "first", "last", "right"),
    [
        ("2018-19", "2018", "2019", True),
        ("1999-00", "1999", "2000", True),
        ("2009\u201310", "2009", "2010", True),
        ("59\u201344 BC", "-0059", "-0044", True),
        ("from 59 to 44 BC", "-0059", "-0044", True),
        ("59 BC to 44 BC", "-0059", "-0044", True),
        ("59\u201344 BC", "0059", "0044", False),  # the era holds for both
        ("2009-10", "2009", "2010", False),  # ISO: October 2009
        ("From 1933, not 1934, to 1955", "1933", "1955", True),
        ("1933 or 1934 to 1955", "1933", "1955", False),
        ("the 1930s to the 1950s", "1930", "1950", False),
    ],
)
def test_ranges(said, first, last, right):
    span = row("time range", {"range": [first, last]})
    assert judge_timeline(said, span, [], []) == (right, right)


@pytest.mark.parametrize(
    ("said", "gold", "unit", "judged"),
    [
        ("not 13 years", 13, "years", (False, False)),
        ("13 years", 13, "years", (True, True)),
        # a range of amounts: not exact; lenient where all of it is within the tolerance
        ("9 to 10 years", 9, "years", (False, True)),
        ("9 to 10 years", 19, "years", (False, False)),  # not 19
        ("4 to 6 years", 5, "years", (False, True)),
        ("4-6 years", 10, "years", (False, False)),
        ("9 or 10 years", 10, "years", (False, True)),
        ("between 60 and 80 days", 69, "days", (False, False)),  # 60 is 9 days off
        ("more than 10 years", 10, "years", (False, False)),  # a bound
        # in words
        ("three years", 3, "years", (True, True)),
        ("a decade", 10, "years", (True, True)),
        ("ten years", 10, "years", (True, True)),
        ("twenty-one years", 21, "years", (True, True)),
        ("seventeen years", 17, "years", (True, True)),
        ("two decades", 240, "months", (True, True)),
        # the years of a text are no amount; of a sum the result is read
        ("1354 days (from 1990 to 1994)", 1354, "days", (True, True)),
        ("3 + 3 + 4 = 10 years", 10, "years", (True, True)),
        ("3 years + 3 years + 4 years = 10 years", 10, "years", (True, True)),
        ("10 years, not 11 years", 10, "years", (True, True)),
        ("10 years (3652 days)", 10, "years", (True, True)),  # said again: not added
        ("1,354 days", 1354, "days", (True, True)),
        ("1 year, 6 months", 18, "months", (True, True)),
    ],
)
def test_durations(said, gold, unit, judged):
    assert judge_timeline(said, row("duration", {"duration": gold, "unit": unit}), [], []) == judged


@pytest.mark.parametrize(
    ("said", "gold"),
    [
        ("The first ended before the second started.", "before"),
        ("It is not before; it is after", "after"),
        ("It is not before, it is after.", "after"),
        ("The first started after the other ended", "after"),
        ("The first ended when the second started", "meets"),
        ("It started just as the other ended", "met by"),
        ("It isn't during it but contains it", "contains"),
        ("It does not meet it; it is just after it", "met by"),
    ],
)
def test_allen_relations_named_and_not_denied(said, gold):
    assert relation(said) == gold


@pytest.mark.parametrize("negated", ["not before", "It is not before.", "neither before nor after"])
def test_a_denied_relation_is_none(negated):
    assert relation(negated) is None
    assert not judge_timeline(negated, row("allen relation", {"relation": "before"}), [], [])[0]


@pytest.mark.parametrize(
    ("said", "yes"),
    [
        ("No doubt about it, yes.", True),
        ("Nope", False),
        ("Yeah", True),
        ("Yep.", True),
        ("Correct", True),
        ("Incorrect", False),
        ("That is not correct.", False),
        ("Not at all", False),
        ("It did not.", False),
        ("It didn't.", False),
        ("It did.", True),
        ("No doubt, it did not.", False),
        ("I think yes.", True),
        ("Yes, it did.", True),
        ("No.", False),
        ("Maybe yes", None),
        ("Perhaps not", None),
        ("No idea.", None),
        ("I don't know.", None),
        ("It happened in 1990.", None),
    ],
)
def test_yes_and_no_in_their_many_words(said, yes):
    assert yes_no(said) is yes


@pytest.mark.parametrize(
    ("said", "judged"),
    [
        ("1. Alan Greenspan\n2. Ben Bernanke\n3. Janet Yellen\n4. Jerome Powell", (True, True)),
        (
            "In order:\n\n- Alan Greenspan\n- Ben Bernanke\n- Janet Yellen\n- Jerome Powell\n"
            "Each followed the one before.",
            (True, True),
        ),
        ("1) Ben Bernanke\n2) Alan Greenspan\n3) Janet Yellen\n4) Jerome Powell", (False, True)),
        ("Alan Greenspan, Ben Bernanke, Janet Yellen, Jerome Powell", (True, True)),
    ],
)
def test_a_ranked_list_over_several_lines_is_read_whole(said, judged):
    chairs = ["Alan Greenspan", "Ben Bernanke", "Janet Yellen", "Jerome Powell"]
    assert judge_timeline(said, row("ranked list", {"labels": chairs}), [], []) == judged


def test_the_oracle_answers_of_every_type_on_the_sample_kg_are_judged_right():
    """The symbolic oracle's answers in words (what ``build timeline-oracle`` writes to
    answers.jsonl) are right on the KG the questions were built from, whatever their type."""
    from chronoprobe.datasets.timeline import timed_facts

    kg = load_sample()
    rows, _ = generate(kg, per_kind=50, seed=1)
    oracle = Oracle(timed_facts(kg))
    types = set()
    for r in rows:
        text = said(oracle.answer(r["timeline"]), kg)
        judged = judge_timeline(text, r["timeline"], r["answer_labels"], r["answer_aliases"])
        assert judged == (True, True), (text, r["timeline"]["gold"])
        types.add(r["timeline"]["answer_type"])
    assert len(types) == 7


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
    import chronoprobe

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
    metrics = chronoprobe.probe("generate", data, responses=answers).model()
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
