"""The rules every loader shares for ids, years and intervals."""

from __future__ import annotations

import re

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from chronoprobe.kg.io.checks import (
    ID_PATTERN,
    Invalid,
    check_id,
    check_interval,
    check_point,
    ends_before,
)
from chronoprobe.time import TimePoint


@pytest.mark.parametrize(
    ("end", "start", "before"),
    [
        (TimePoint(2009), TimePoint(2009, 6), False),  # 2009-06 to 2009 holds
        (TimePoint(2009, 12, 31), TimePoint(2010), True),
        (TimePoint(2009, 6), TimePoint(2009, 7, 15), True),
        (TimePoint(2009, 7, 15), TimePoint(2009, 7), False),
        (TimePoint(-44), TimePoint(-100, 7, 12), False),
    ],
)
def test_an_interval_ends_before_it_starts_only_when_its_spans_say_so(end, start, before):
    assert ends_before(end, start) is before
    if before:
        with pytest.raises(Invalid, match=f"end {end} before start {start}"):
            check_interval(start, end)
    else:
        check_interval(start, end)


@pytest.mark.parametrize(
    ("year", "message"),
    [
        (0, "year 0 does not exist"),
        (2**31, "year +2147483648 is outside"),
        (-(2**31) - 1, "year -2147483649 is outside"),
    ],
)
def test_years_a_kg_cannot_hold(year, message):
    with pytest.raises(Invalid, match=re.escape(f"start: {message}")) as caught:
        check_point(TimePoint(year), "start")
    assert caught.value.kind == "bad year"
    assert check_point(TimePoint(2**31 - 1)) == TimePoint(2**31 - 1)


@pytest.mark.parametrize(
    ("value", "good"),
    [
        ("Q76", True),
        ("E12", True),
        ("Ludwig_van_Beethoven", True),
        ("Beyoncé", True),
        ("", False),
        ("Q 76", False),
        ("Q76\t", False),
        ("\ufeffQ76", False),
        ("Q7\x006", False),
        ("Q76\n", False),  # re's $ alone would let a last newline through
        ("Q1\x85", False),  # next line (a C1 control and a space to str.isspace)
        ("Q1\u2028", False),  # line separator
        ("Q\u30001", False),  # ideographic space
        ("Q1\xa0", False),  # no-break space
        ("Q\u200b1", False),  # zero-width space
        ("Q\u202e1", False),  # right-to-left override
        ("Q1\xad", False),  # soft hyphen
        ("Q\x9f", False),  # C1 control
        ("東京", True),
        ("\U0001f469\u200d\U0001f52c", True),  # an emoji sequence keeps its joiner
    ],
)
def test_ids_are_the_same_to_python_and_to_arrow(value, good):
    assert bool(re.fullmatch(ID_PATTERN, value, re.ASCII)) is good
    assert pc.match_substring_regex(pa.array([value]), ID_PATTERN)[0].as_py() is good
    if good:
        assert check_id(value, "id") == value
    else:
        with pytest.raises(Invalid, match=f"id is not an id: {re.escape(repr(value))}"):
            check_id(value, "id")
