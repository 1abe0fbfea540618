"""The rules every loader applies to ids and time bounds, in one place.

Each loader reads its own syntax, then hands what it read to these checks, so that a record
rejected by one loader is rejected by all of them for the same reason (and counted under the
same kind). The rules:

- an id is a non-empty run of visible characters: no space of any script, no control or
  invisible format character (Wikidata loaders also ask for the Q/P form);
- a year fits the KG's year column (32 bits) and is not 0: years count as Wikidata's JSON counts
  them, 1 BCE is -1 and there is no year 0;
- an interval does not end before it starts: the end's span is not over before the start's
  begins, so "2009-06 to 2009" holds but "2010 to 2009-12-31" does not.

The id rule is also given as a regular expression (:data:`ID_PATTERN`) that Python's ``re`` and
Arrow's RE2 read alike, for loaders that check whole columns at once.
"""

from __future__ import annotations

import re

from chronoprobe.errors import UserError
from chronoprobe.time import TimePoint, format_year

YEAR_MIN, YEAR_MAX = -(2**31), 2**31 - 1  # the KG's int32 year column
# No space of any script (U+0085, U+00A0, U+2028, U+3000...), no control character (C0, DEL,
# C1) and no invisible format character (zero-width space, direction marks and overrides,
# word joiner, soft hyphen, byte-order mark); the joiners U+200C and U+200D, which some scripts
# and emoji need, stay. Characters past U+00FF reach the pattern as themselves, not as escapes:
# RE2 and re share no escape for them.
ID_PATTERN = (
    "^[^\\s\\x00-\\x1f\\x7f-\\xa0\\xad"
    "\u1680\u180e\u2000-\u200b\u200e\u200f\u2028-\u202f\u205f-\u2064\u2066-\u206f\u3000\ufeff]+$"
)
_ID = re.compile(ID_PATTERN, re.ASCII)


class Invalid(UserError):
    """A value a record cannot use; ``kind`` groups the problem counts."""

    def __init__(self, reason: str, kind: str) -> None:
        super().__init__(reason)
        self.kind = kind


def year_problem(year: int) -> str | None:
    """Why ``year`` is no year of a KG, or None."""
    if year == 0:
        return "year 0 does not exist (1 BCE is -1)"
    if not YEAR_MIN <= year <= YEAR_MAX:
        return f"year {format_year(year)} is outside {YEAR_MIN}..{YEAR_MAX}"
    return None


def check_point(point: TimePoint, name: str = "time") -> TimePoint:
    """``point`` if its year is one a KG holds; :class:`Invalid` (kind "bad year") if not."""
    problem = year_problem(point.year)
    if problem is not None:
        raise Invalid(f"{name}: {problem}", "bad year")
    return point


def ends_before(end: TimePoint, start: TimePoint) -> bool:
    """Whether ``end``'s span is over before ``start``'s begins: compared at the coarser
    precision of the two (year: 1 part, month: 2, day: 3), on plain tuples."""
    parts = min(end.precision, start.precision) - 8
    return (end.year, end.month, end.day)[:parts] < (start.year, start.month, start.day)[:parts]


def check_interval(start: TimePoint | None, end: TimePoint | None) -> None:
    """:class:`Invalid` (kind "end before start") for an interval that ends before it starts."""
    if start is not None and end is not None and ends_before(end, start):
        raise Invalid(f"end {end} before start {start}", "end before start")


def check_id(value: object, name: str) -> str:
    """``value`` if it is an id; :class:`Invalid` (kind "bad id") saying why not."""
    if not isinstance(value, str):
        raise Invalid(f"{name} must be a string id, not {json_type(value)}", "bad id")
    if not _ID.fullmatch(value):  # empty, or with a space or a control character (even last)
        raise Invalid(f"{name} is not an id: {value!r}", "bad id")
    return value


def json_type(value: object) -> str:
    """How a decoded JSON value is named in messages ("a number", "a list", ...)."""
    names = {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        list: "a list",
        dict: "an object",
    }
    return "null" if value is None else names.get(type(value), type(value).__name__)


# ----- the same rules over whole Arrow columns, for readers of KG directories ---------------

_PRECISIONS = (9, 10, 11)  # Wikidata's codes for year, month and day, as the KG stores them


def _part(table, name: str):
    """A bound's part as int64 (0 where null) and where it is given."""
    import numpy as np

    column = table.column(name)
    given = column.is_valid().to_numpy(zero_copy_only=False)
    return column.fill_null(0).to_numpy().astype(np.int64), given


def bound_problems(table, prefix: str):
    """(rows, reason) for each rule the ``prefix`` bound columns (``<prefix>_year``,
    ``_month``, ``_day``, ``_precision``) break, as a boolean mask over the rows: the parts of
    an absent bound, a precision that is none of 9, 10 and 11, a year 0 or none, a month or day
    a precision does not have or that does not exist (month 13, day 32, February 30)."""
    import numpy as np

    (year, has_year), (month, has_month), (day, has_day), (precision, present) = (
        _part(table, f"{prefix}_{part}") for part in ("year", "month", "day", "precision")
    )
    by_day = present & (precision == 11)
    needs_month = (present & (precision == 10)) | by_day
    month_ok = has_month & (month >= 1) & (month <= 12)
    leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
    lengths = np.array([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])
    last = lengths[np.where(month_ok, month, 1) - 1] + (leap & (month == 2))
    yield ~present & (has_year | has_month | has_day), "a month, day or year without a precision"
    yield (
        present & ~np.isin(precision, _PRECISIONS),
        "a precision that is not 9 (year), 10 (month) or 11 (day)",
    )
    yield present & ~has_year, "a precision without a year"
    yield present & has_year & (year == 0), "year 0 does not exist (1 BCE is -1)"
    yield needs_month & ~month_ok, "a month that is not in 1..12"
    yield (
        present & ~needs_month & (has_month | has_day),
        "a month or day finer than its precision (year)",
    )
    yield present & (precision == 10) & has_day, "a day finer than its precision (month)"
    yield (
        by_day & month_ok & ~(has_day & (day >= 1) & (day <= last)),
        "a day that does not exist in its month",
    )


def interval_problems(table):
    """Rows whose end (``end_*`` columns) is over before their start begins: compared at the
    coarser precision of the two, as :func:`ends_before` compares them (for rows whose bounds
    pass :func:`bound_problems`)."""
    import numpy as np

    starts = [_part(table, f"start_{p}")[0] for p in ("year", "month", "day")]
    ends = [_part(table, f"end_{p}")[0] for p in ("year", "month", "day")]
    start_precision, has_start = _part(table, "start_precision")
    end_precision, has_end = _part(table, "end_precision")
    parts = np.minimum(start_precision, end_precision) - 8

    def key(year, month, day):
        by_month = year * 13 + month
        return np.where(parts == 1, year, np.where(parts == 2, by_month, by_month * 32 + day))

    return has_start & has_end & (key(*ends) < key(*starts))
