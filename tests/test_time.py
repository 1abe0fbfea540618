"""TimePoint, Period and overlap, checked against hand-worked dates and Python's own calendar."""

from __future__ import annotations

import datetime as dt
import random

import numpy as np
import pytest

from chronoprobe.time import (
    Granularity,
    Period,
    Precision,
    TimePoint,
    civil_from_day_number,
    day_number,
    days_in_month,
    format_year,
    period_range,
)

# day_number counts from 1970-01-01; date.toordinal() counts from 0001-01-01 = 1.
EPOCH_ORDINAL = dt.date(1970, 1, 1).toordinal()


def days(y: int, m: int, d: int) -> int:
    """The expected day number, from the standard library rather than from the code under test."""
    return dt.date(y, m, d).toordinal() - EPOCH_ORDINAL


# ----- TimePoint.parse ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "point", "precision"),
    [
        ("2009", TimePoint(2009), Precision.YEAR),
        ("2009-01", TimePoint(2009, 1), Precision.MONTH),
        ("2009-01-20", TimePoint(2009, 1, 20), Precision.DAY),
        ("-0059", TimePoint(-59), Precision.YEAR),
        ("-0044-03-15", TimePoint(-44, 3, 15), Precision.DAY),
        ("0800", TimePoint(800), Precision.YEAR),
        (" 2009-01 ", TimePoint(2009, 1), Precision.MONTH),
        # A plus sign is accepted, as in ISO 8601's expanded years and Wikidata's values.
        ("+2009", TimePoint(2009), Precision.YEAR),
        ("+2009-01-20", TimePoint(2009, 1, 20), Precision.DAY),
        ("+12345", TimePoint(12345), Precision.YEAR),
    ],
)
def test_parse_iso(text: str, point: TimePoint, precision: Precision) -> None:
    parsed = TimePoint.parse(text)
    assert parsed == point
    assert parsed.precision == precision
    assert int(parsed.precision) == {"YEAR": 9, "MONTH": 10, "DAY": 11}[precision.name]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "abc",
        "2009-1",
        "2009-01-2",
        "2009/01/20",
        "2009-Q1",
        "2009-01-20T00:00:00Z",
        "+-2009",
        "20090120",  # basic-format date, not a year of twenty million
        "200901",
    ],
)
def test_parse_rejects_non_iso(text: str) -> None:
    with pytest.raises(ValueError) as err:
        TimePoint.parse(text)
    assert str(err.value) == f"not an ISO date of year, month or day precision: {text!r}"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("2009-13", "month 13 is not in 1..12"),
        ("2009-00", "month 0 is not in 1..12"),
        ("2009-02-30", "day 30 does not exist in 2009-02"),
        ("2009-02-29", "day 29 does not exist in 2009-02"),
        ("1900-02-29", "day 29 does not exist in 1900-02"),
        ("2009-04-31", "day 31 does not exist in 2009-04"),
        ("2009-01-00", "day 0 does not exist in 2009-01"),
        ("-0001-02-29", "day 29 does not exist in -0001-02"),
    ],
)
def test_parse_rejects_invalid_dates(text: str, reason: str) -> None:
    with pytest.raises(ValueError) as err:
        TimePoint.parse(text)
    assert str(err.value) == f"not a valid date: {text!r} ({reason})"


@pytest.mark.parametrize("text", ["2008-02-29", "2000-02-29", "2024-02-29", "2009-12-31"])
def test_parse_accepts_leap_days(text: str) -> None:
    point = TimePoint.parse(text)
    assert point.first_day() == days(*map(int, text.split("-")))


def test_constructor_validates() -> None:
    with pytest.raises(ValueError) as err:
        TimePoint(2009, None, 3)
    assert str(err.value) == "a day needs a month: TimePoint(year=2009, month=None, day=3)"
    with pytest.raises(ValueError) as err:
        TimePoint(2009, 13)
    assert str(err.value) == "month 13 is not in 1..12"


# ----- TimePoint.from_wikidata -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "precision", "point"),
    [
        ("+2009-01-20T00:00:00Z", 11, TimePoint(2009, 1, 20)),
        ("+2009-01-00T00:00:00Z", 10, TimePoint(2009, 1)),
        ("+2009-01-20T00:00:00Z", 10, TimePoint(2009, 1)),
        ("+2009-00-00T00:00:00Z", 9, TimePoint(2009)),
        ("+2009-01-20T00:00:00Z", 9, TimePoint(2009)),
        ("-0044-03-15T00:00:00Z", 11, TimePoint(-44, 3, 15)),
        ("-0059-00-00T00:00:00Z", 9, TimePoint(-59)),
        # Hours, minutes and seconds: the day is what we keep.
        ("+2009-01-20T13:45:10Z", 12, TimePoint(2009, 1, 20)),
        ("+2009-01-20T13:45:10Z", 14, TimePoint(2009, 1, 20)),
        # Coarser than a year (decade, century, ...) is unknown.
        ("+2000-00-00T00:00:00Z", 8, None),
        ("+2000-00-00T00:00:00Z", 7, None),
        ("+13798000000-00-00T00:00:00Z", 3, None),
    ],
)
def test_from_wikidata(value: str, precision: int, point: TimePoint | None) -> None:
    assert TimePoint.from_wikidata(value, precision) == point


def test_from_wikidata_bce_formats_back() -> None:
    point = TimePoint.from_wikidata("-0044-03-15T00:00:00Z", 11)
    assert point is not None
    assert point.iso() == "-0044-03-15"
    assert point.precision == Precision.DAY


@pytest.mark.parametrize(
    ("value", "precision", "message"),
    [
        ("2009-01-20T00:00:00Z", 11, "not a Wikidata time value: '2009-01-20T00:00:00Z'"),
        ("+2009-01-20", 11, "not a Wikidata time value: '+2009-01-20'"),
        ("", 9, "not a Wikidata time value: ''"),
        ("+2009-1-20T00:00:00Z", 11, "not a Wikidata time value: '+2009-1-20T00:00:00Z'"),
        ("+2009-00-00T00:00:00Z", 10, "precision 10 but month is 00 in '+2009-00-00T00:00:00Z'"),
        ("+2009-01-00T00:00:00Z", 11, "precision 11 but day is 00 in '+2009-01-00T00:00:00Z'"),
        (
            "+2009-02-30T00:00:00Z",
            11,
            "day 30 does not exist in 2009-02 in '+2009-02-30T00:00:00Z'",
        ),
        ("+2009-13-01T00:00:00Z", 10, "month 13 is not in 1..12 in '+2009-13-01T00:00:00Z'"),
    ],
)
def test_from_wikidata_rejects_malformed(value: str, precision: int, message: str) -> None:
    with pytest.raises(ValueError) as err:
        TimePoint.from_wikidata(value, precision)
    assert str(err.value) == message


# ----- formatting, spans, ordering ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("point", "text"),
    [
        (TimePoint(2009), "2009"),
        (TimePoint(2021, 8), "2021-08"),
        (TimePoint(2009, 1, 20), "2009-01-20"),
        (TimePoint(-59), "-0059"),
        (TimePoint(-44, 3, 15), "-0044-03-15"),
        (TimePoint(800), "0800"),
        (TimePoint(12345, 6), "+12345-06"),
    ],
)
def test_iso_round_trip(point: TimePoint, text: str) -> None:
    assert point.iso() == text
    assert str(point) == text
    assert TimePoint.parse(text) == point


def test_format_year() -> None:
    assert [format_year(y) for y in (-59, -1, 0, 7, 2009, 9999, 10000)] == [
        "-0059",
        "-0001",
        "0000",
        "0007",
        "2009",
        "9999",
        "+10000",
    ]


def test_first_and_last_day() -> None:
    year = TimePoint(2019)
    assert year.first_day() == days(2019, 1, 1)
    assert year.last_day() == days(2019, 12, 31)
    assert year.last_day() - year.first_day() == 364
    assert TimePoint(2020).last_day() - TimePoint(2020).first_day() == 365
    assert TimePoint(1970).first_day() == 0
    assert TimePoint(2009, 1, 20).first_day() == TimePoint(2009, 1, 20).last_day()
    assert TimePoint(2009, 1, 20).first_day() == days(2009, 1, 20)
    assert TimePoint(2019, 12).last_day() == days(2019, 12, 31)
    # February: 28 days, 29 in leap years (every 4th, not centuries, except every 400th).
    february_lengths = {
        y: TimePoint(y, 2).last_day() - TimePoint(y, 2).first_day() + 1
        for y in (2019, 2020, 1900, 2000, 2100)
    }
    assert february_lengths == {2019: 28, 2020: 29, 1900: 28, 2000: 29, 2100: 28}
    assert [days_in_month(2023, m) for m in range(1, 13)] == [
        31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31
    ]  # fmt: skip


def test_at_precision_cuts_finer_parts() -> None:
    day = TimePoint(2009, 3, 4)
    assert day.at_precision(Precision.YEAR) == TimePoint(2009)
    assert day.at_precision(Precision.MONTH) == TimePoint(2009, 3)
    assert day.at_precision(Precision.DAY) is day
    assert TimePoint(-59, 12).at_precision(Precision.YEAR).iso() == "-0059"


def test_bce_spans_are_ordered() -> None:
    # No year-zero shift, but the axis stays monotone: -0059 ends the day before -0058 starts.
    assert TimePoint(-59).last_day() + 1 == TimePoint(-58).first_day()
    assert TimePoint(-1).last_day() + 1 == TimePoint(0).first_day()
    assert TimePoint(-44, 3, 15).first_day() < TimePoint(-44, 3, 16).first_day()


def test_points_of_mixed_precision_sort() -> None:
    # Failed before: dataclass ordering compared None with an int.
    points = [
        TimePoint(2010),
        TimePoint(2009, 1, 2),
        TimePoint(2009, 2),
        TimePoint(2009),
        TimePoint(2009, 1, 1),
        TimePoint(-59),
        TimePoint(2009, 1),
    ]
    assert sorted(points) == [
        TimePoint(-59),
        TimePoint(2009),
        TimePoint(2009, 1),
        TimePoint(2009, 1, 1),
        TimePoint(2009, 1, 2),
        TimePoint(2009, 2),
        TimePoint(2010),
    ]
    assert TimePoint(2009) < TimePoint(2009, 1) <= TimePoint(2009, 1)
    assert TimePoint(2009, 12, 31) > TimePoint(2009, 12) >= TimePoint(2009)
    assert not TimePoint(2009) < TimePoint(2009)
    assert len({TimePoint(2009), TimePoint(2009), TimePoint(2009, 1)}) == 2


# ----- day numbers -------------------------------------------------------------------------------


def test_day_number_matches_python_calendar() -> None:
    rng = random.Random(7)
    dates = [
        dt.date.fromordinal(rng.randint(1, dt.date(9999, 12, 31).toordinal())) for _ in range(3000)
    ]
    dates += [dt.date(1, 1, 1), dt.date(1970, 1, 1), dt.date(2000, 2, 29), dt.date(9999, 12, 31)]
    years = np.array([d.year for d in dates])
    months = np.array([d.month for d in dates])
    days_ = np.array([d.day for d in dates])
    expected = np.array([d.toordinal() - EPOCH_ORDINAL for d in dates])
    vector = day_number(years, months, days_)
    assert vector.dtype == np.int64
    np.testing.assert_array_equal(vector, expected)
    scalars = [day_number(d.year, d.month, d.day) for d in dates]
    assert all(isinstance(s, int) for s in scalars)
    assert scalars == expected.tolist()


def test_civil_from_day_number_inverts_day_number() -> None:
    # Consecutive days across 400-year era boundaries (negative ones included) and year 0.
    for first in (days(1, 1, 1) - 800 * 366, days(1, 1, 1) - 400, days(1600, 1, 1) - 400):
        previous = None
        for n in range(first, first + 1200):
            y, m, d = civil_from_day_number(n)
            assert 1 <= m <= 12 and 1 <= d <= days_in_month(y, m)
            assert day_number(y, m, d) == n
            if previous is not None:
                assert (y, m, d) > previous
            previous = (y, m, d)
    # Sampled across -5000..5000, the other way round.
    rng = random.Random(3)
    for _ in range(3000):
        y = rng.randint(-5000, 5000)
        m = rng.randint(1, 12)
        d = rng.randint(1, days_in_month(y, m))
        assert civil_from_day_number(day_number(y, m, d)) == (y, m, d)
    assert civil_from_day_number(0) == (1970, 1, 1)
    assert civil_from_day_number(days(2000, 2, 29)) == (2000, 2, 29)


# ----- Period ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "period"),
    [
        ("2019", Period(Granularity.YEAR, 2019)),
        ("2019-Q3", Period(Granularity.QUARTER, 2019, 3)),
        ("2019-07", Period(Granularity.MONTH, 2019, 7)),
        ("2019-07-24", Period(Granularity.DAY, 2019, 7, 24)),
        ("-0059", Period(Granularity.YEAR, -59)),
        ("-0059-Q1", Period(Granularity.QUARTER, -59, 1)),
        ("2020-02-29", Period(Granularity.DAY, 2020, 2, 29)),
    ],
)
def test_period_parse_label_round_trip(text: str, period: Period) -> None:
    assert Period.parse(text) == period
    assert period.label() == text
    assert str(period) == text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("2019-Q5", "not a period: '2019-Q5' (use 2019, 2019-Q3, 2019-07 or 2019-07-24)"),
        ("2019-Q0", "not a period: '2019-Q0' (use 2019, 2019-Q3, 2019-07 or 2019-07-24)"),
        ("2019-7", "not a period: '2019-7' (use 2019, 2019-Q3, 2019-07 or 2019-07-24)"),
        ("Q3", "not a period: 'Q3' (use 2019, 2019-Q3, 2019-07 or 2019-07-24)"),
        ("2019-13", "not a period: '2019-13' (month 13 is not in 1..12)"),
        ("2019-02-29", "not a period: '2019-02-29' (day 29 does not exist in 2019-02)"),
        ("2019-Q3-01", "not a period: '2019-Q3-01' (a quarter has no day)"),
    ],
)
def test_period_parse_rejects(text: str, message: str) -> None:
    with pytest.raises(ValueError) as err:
        Period.parse(text)
    assert str(err.value) == message


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((Granularity.MONTH, 2019, 13), "month 13 is not in 1..12"),
        ((Granularity.QUARTER, 2019, 5), "quarter index 5 is not in 1..4"),
        ((Granularity.YEAR, 2019, 2), "year index 2 is not in 1..1"),
        ((Granularity.MONTH, 2019, 7, 3), "a month period has no day (got 3)"),
        ((Granularity.DAY, 2019, 6, 31), "day 31 does not exist in 2019-06"),
    ],
)
def test_period_constructor_rejects_non_canonical(args: tuple, message: str) -> None:
    # Failed before: these built silently and gave wrong day numbers.
    with pytest.raises(ValueError) as err:
        Period(*args)
    assert str(err.value) == message


@pytest.mark.parametrize(
    ("text", "first", "last"),
    [
        ("2019", (2019, 1, 1), (2019, 12, 31)),
        ("2019-Q1", (2019, 1, 1), (2019, 3, 31)),
        ("2019-Q3", (2019, 7, 1), (2019, 9, 30)),
        ("2019-Q4", (2019, 10, 1), (2019, 12, 31)),
        ("2020-02", (2020, 2, 1), (2020, 2, 29)),
        ("2019-02", (2019, 2, 1), (2019, 2, 28)),
        ("2019-07-24", (2019, 7, 24), (2019, 7, 24)),
    ],
)
def test_period_first_and_last_day(text: str, first: tuple, last: tuple) -> None:
    period = Period.parse(text)
    assert period.first_day() == days(*first)
    assert period.last_day() == days(*last)


@pytest.mark.parametrize(
    ("text", "following"),
    [
        ("2019", "2020"),
        ("2019-Q1", "2019-Q2"),
        ("2019-Q4", "2020-Q1"),
        ("2019-11", "2019-12"),
        ("2019-12", "2020-01"),
        ("2019-07-24", "2019-07-25"),
        ("2019-12-31", "2020-01-01"),
        ("2020-02-28", "2020-02-29"),
        ("2019-02-28", "2019-03-01"),
        ("-0060", "-0059"),
    ],
)
def test_period_next(text: str, following: str) -> None:
    assert Period.parse(text).next() == Period.parse(following)


def test_period_range() -> None:
    assert [p.label() for p in period_range("2019-11", "2020-02")] == [
        "2019-11",
        "2019-12",
        "2020-01",
        "2020-02",
    ]
    assert [p.label() for p in period_range("2019-Q3", "2020-Q2")] == [
        "2019-Q3",
        "2019-Q4",
        "2020-Q1",
        "2020-Q2",
    ]
    assert [p.label() for p in period_range("2019-12-30", "2020-01-02")] == [
        "2019-12-30",
        "2019-12-31",
        "2020-01-01",
        "2020-01-02",
    ]
    assert period_range(Period.parse("2019"), "2019") == [Period.parse("2019")]
    assert len(period_range("2000", "2019")) == 20


def test_period_range_errors() -> None:
    with pytest.raises(ValueError) as err:
        period_range("2019", "2019-07")
    assert str(err.value) == "2019 and 2019-07 are of different granularities"
    with pytest.raises(ValueError) as err:
        period_range("2020-02", "2019-11")
    assert str(err.value) == "the range ends (2019-11) before it starts (2020-02)"


def test_period_containing() -> None:
    day = TimePoint(2019, 8, 15)
    assert [Period.containing(day, g).label() for g in Granularity] == [
        "2019",
        "2019-Q3",
        "2019-08",
        "2019-08-15",
    ]
    # A coarse point stands for the start of its span.
    assert [Period.containing(TimePoint(2019), g).label() for g in Granularity] == [
        "2019",
        "2019-Q1",
        "2019-01",
        "2019-01-01",
    ]
    assert Period.containing(TimePoint(2019, 12), Granularity.QUARTER).label() == "2019-Q4"
    assert Period.containing(TimePoint(-59, 4), Granularity.QUARTER).label() == "-0059-Q2"


# ----- overlap -----------------------------------------------------------------------------------

OBAMA = (TimePoint(2009, 1, 20), TimePoint(2017, 1, 20))


@pytest.mark.parametrize(
    ("period", "expected"),
    [
        ("2017-Q1", True),
        ("2009-01", True),
        ("2009", True),
        ("2017", True),
        ("2009-01-20", True),
        ("2017-01-20", True),
        ("2013-06", True),
        ("2017-Q2", False),
        ("2008", False),
        ("2009-01-19", False),
        ("2017-01-21", False),
        ("2008-Q4", False),
    ],
)
def test_overlap_of_a_day_precise_fact(period: str, expected: bool) -> None:
    assert Period.parse(period).overlaps(*OBAMA) is expected


def test_overlap_covers_whole_span_of_coarse_bounds() -> None:
    # A fact ending "2019" holds until 2019-12-31; one starting 2019-07 from 2019-07-01.
    ends_2019 = (TimePoint(2015), TimePoint(2019))
    assert Period.parse("2019-12").overlaps(*ends_2019)
    assert Period.parse("2019-12-31").overlaps(*ends_2019)
    assert not Period.parse("2020-01").overlaps(*ends_2019)
    assert Period.parse("2015-01-01").overlaps(*ends_2019)
    assert not Period.parse("2014-12-31").overlaps(*ends_2019)
    from_july = (TimePoint(2019, 7), TimePoint(2019, 7))
    assert Period.parse("2019-07-01").overlaps(*from_july)
    assert Period.parse("2019-07-31").overlaps(*from_july)
    assert not Period.parse("2019-06-30").overlaps(*from_july)
    assert not Period.parse("2019-08-01").overlaps(*from_july)


def test_overlap_with_open_bounds() -> None:
    start_only = (TimePoint(2019, 7), None)  # still true
    assert not Period.parse("2019-06").overlaps(*start_only)
    assert Period.parse("2019-Q3").overlaps(*start_only)
    assert Period.parse("2100").overlaps(*start_only)
    end_only = (None, TimePoint(2010))  # unknown start: open
    assert Period.parse("-0059").overlaps(*end_only)
    assert Period.parse("2010-12-31").overlaps(*end_only)
    assert not Period.parse("2011").overlaps(*end_only)
    assert Period.parse("1000").overlaps(None, None)


@pytest.mark.parametrize(
    "digits", ["\u0662\u0660\u0660\u0669", "\uff12\uff10\uff10\uff19", "2009-\u0660\u0661"]
)
def test_only_ascii_digits_make_a_date(digits: str) -> None:
    # int() reads other scripts' digits; a date in a KG file must not.
    with pytest.raises(ValueError, match="not an ISO date"):
        TimePoint.parse(digits)
    with pytest.raises(ValueError, match="not a Wikidata time value"):
        TimePoint.from_wikidata(f"+{digits}-00-00T00:00:00Z", 9)
    with pytest.raises(ValueError, match="not a period"):
        Period.parse(digits)


@pytest.mark.parametrize(
    ("iso", "words"),
    [
        ("2009", "2009"),
        ("2009-03", "March 2009"),
        ("2009-03-04", "4 March 2009"),
        ("0014-08-19", "19 August 14"),
        ("-0052", "52 BC"),
        ("-0007-11-02", "2 November 7 BC"),
    ],
)
def test_a_point_in_words_as_a_sentence_says_it(iso: str, words: str) -> None:
    assert TimePoint.parse(iso).words() == words
