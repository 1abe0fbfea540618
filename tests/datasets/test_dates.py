"""Dated statements: right and wrong date contexts at each precision, checked by hand."""

from __future__ import annotations

import pytest

from chronoprobe.datasets.dates import build_dated_statements, date_contexts, shifted, spoken
from chronoprobe.kg.graph import TemporalKG
from chronoprobe.kg.records import Entity, Fact, Relation
from chronoprobe.time import Precision, TimePoint

P = TimePoint.parse


def test_shifts_cross_year_and_month_ends():
    assert shifted(P("2019"), -10) == P("2009")
    assert shifted(P("2019-02"), -2) == P("2018-12")
    assert shifted(P("2019-11"), 14) == P("2021-01")
    assert shifted(P("2020-03-01"), -1) == P("2020-02-29")  # a leap year
    assert shifted(P("2019-12-31"), 1) == P("2020-01-01")


def test_contexts_at_each_precision_lie_inside_or_wholly_outside_the_interval():
    start, end = P("2017-03-04"), P("2019-06-30")
    # the middle day: (2017-03-04 + 2019-06-30) / 2 = 2018-05-02
    assert date_contexts(start, end, Precision.YEAR, [1, 5]) == [
        ("right", 0, P("2018")),
        ("before", 1, P("2016")),
        ("before", 5, P("2012")),
        ("after", 1, P("2020")),
        ("after", 5, P("2024")),
    ]
    assert date_contexts(start, end, Precision.MONTH, [1, 12]) == [
        ("right", 0, P("2018-05")),
        ("before", 1, P("2017-02")),
        ("before", 12, P("2016-03")),
        ("after", 1, P("2019-07")),
        ("after", 12, P("2020-06")),
    ]
    assert date_contexts(start, end, Precision.DAY, [1, 30]) == [
        ("right", 0, P("2018-05-02")),
        ("before", 1, P("2017-03-03")),
        ("before", 30, P("2017-02-02")),
        ("after", 1, P("2019-07-01")),
        ("after", 30, P("2019-07-30")),
    ]


def test_open_and_coarse_facts_get_only_the_contexts_their_dates_allow():
    assert date_contexts(P("2015-06"), None, Precision.YEAR, [2]) == [
        ("right", 0, P("2015")),
        ("before", 2, P("2013")),
    ]
    assert date_contexts(P("2015-06"), None, Precision.DAY, [2]) == []  # known to the month
    assert date_contexts(P("2015-06-01"), P("2016"), Precision.MONTH, [1]) == []


def test_dates_are_spoken_as_contexts():
    assert spoken(P("2005")) == "In 2005, "
    assert spoken(P("2005-03")) == "In March 2005, "
    assert spoken(P("2005-03-04")) == "On 4 March 2005, "
    assert spoken(P("-0052")) == "In 52 BC, "


@pytest.fixture
def kg():
    return TemporalKG.from_records(
        [
            Fact("Q1", "P108", "Q2", P("1997-09-16"), P("2011-08-24")),
            Fact("Q1", "P108", "Q3", P("1986"), None),
            Fact("Q3", "P108", "Q2", None, None),  # no start: no statements
        ],
        [Entity("Q1", "Steve Jobs"), Entity("Q2", "Apple Inc."), Entity("Q3", "Pixar")],
        [Relation("P108", "employer")],
    )


def test_statements_of_a_kg(kg):
    statements, stats = build_dated_statements(kg, distances=[1])
    assert stats["facts"] == 2 and stats["skipped_facts"] == {"no start date": 1}
    apple = [s for s in statements if s["object"] == "Q2"]
    assert [(s["precision"], s["kind"], s["date"]) for s in apple] == [
        ("year", "right", "2004"),
        ("year", "before", "1996"),
        ("year", "after", "2012"),
        ("month", "right", "2004-09"),
        ("month", "before", "1997-08"),
        ("month", "after", "2011-09"),
        ("day", "right", "2004-09-04"),
        ("day", "before", "1997-09-15"),
        ("day", "after", "2011-08-25"),
    ]
    first = apple[0]
    assert (first["left"], first["span"], first["right"]) == (
        "In 2004, Steve Jobs works for ",
        "Apple Inc.",
        "",  # the label's own stop ends the sentence: no "Apple Inc.."
    )
    assert apple[-1]["left"] == "On 25 August 2011, Steve Jobs works for "
    pixar = [s["id"] for s in statements if s["object"] == "Q3"]
    assert pixar == ["Q1_P108_Q3_1986_year_right", "Q1_P108_Q3_1986_year_before1"]
    assert stats["by_precision"]["year"] == {"right": 2, "before": 2, "after": 1}
