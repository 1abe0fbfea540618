"""Time points with a precision, periods of a granularity, and interval overlap.

Every module shares these semantics (see ARCHITECTURE.md): a bound covers its whole span at its
precision, so a fact "from 2009 to 2011" holds from 2009-01-01 to 2011-12-31 inclusive. Days are
counted as proleptic-Gregorian day numbers that work for negative (BCE) years as well, which
lets the KG compare millions of bounds as plain integers.

BCE years are negative, as in Wikidata's JSON. We use the year number directly on the day axis
(no year-zero shift): the mapping is monotone, so ordering and overlap are exact, and the only
effect is that day numbers before year 1 are not those of an astronomical calendar.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import IntEnum
from functools import total_ordering

import numpy as np

from chronoprobe.errors import UserError

MONTH_NAMES = (
    "January February March April May June July August September October November December"
).split()
QUARTER_NAMES = ("first", "second", "third", "fourth")
# Sentinels for open bounds on the day axis: an unknown start is "always", a missing end "still".
OPEN_START = np.iinfo(np.int64).min
OPEN_END = np.iinfo(np.int64).max


class Precision(IntEnum):
    """Wikidata's precision codes, kept so that dump values round-trip unchanged."""

    YEAR = 9
    MONTH = 10
    DAY = 11


_DAYS_IN_MONTH = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _is_leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def days_in_month(year: int, month: int) -> int:
    return 29 if month == 2 and _is_leap(year) else _DAYS_IN_MONTH[month - 1]


def day_number(year, month, day):
    """Day number of a civil date; scalars or numpy arrays (vectorised, any sign of year).

    Howard Hinnant's days-from-civil algorithm: exact for the proleptic Gregorian calendar.
    """
    y = np.asarray(year, dtype=np.int64)
    m = np.asarray(month, dtype=np.int64)
    d = np.asarray(day, dtype=np.int64)
    y = y - (m <= 2)
    era = np.floor_divide(y, 400)
    yoe = y - era * 400
    mp = (m + 9) % 12
    doy = (153 * mp + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    out = era * 146097 + doe - 719468
    return int(out) if out.ndim == 0 else out


def civil_from_day_number(n: int) -> tuple[int, int, int]:
    """Inverse of :func:`day_number` for one day."""
    n += 719468
    era = n // 146097
    doe = n - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return (y + (m <= 2), m, d)


def civil_from_day_numbers(days) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vectorised inverse of :func:`day_number`: (years, months, days) arrays."""
    n = np.asarray(days, dtype=np.int64) + 719468
    era = np.floor_divide(n, 146097)
    doe = n - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = np.where(mp < 10, mp + 3, mp - 9)
    return yoe + era * 400 + (m <= 2), m, d


def format_year(year: int) -> str:
    """ISO-style year: at least four digits, a leading minus for BCE ("-0059").

    Years past 9999 take a plus sign (ISO 8601's expanded form), so that an unsigned run of
    more than four digits is never a year and ``20090120`` cannot pass for one.
    """
    if year < 0:
        return f"-{-year:04d}"
    return f"+{year}" if year > 9999 else f"{year:04d}"


# A year is a signed run of digits (ISO expanded form, Wikidata style) or at most four unsigned.
# Digits are ASCII ones: \d would also take other scripts' digits, which int() reads.
_YEAR = r"([+-][0-9]{1,16}|[0-9]{1,4})"
_ISO = re.compile(rf"^{_YEAR}(?:-([0-9]{{2}})(?:-([0-9]{{2}}))?)?$")
_WIKIDATA = re.compile(r"^([+-])([0-9]{1,16})-([0-9]{2})-([0-9]{2})T")


@total_ordering
@dataclass(frozen=True)
class TimePoint:
    """A date known to year, month or day precision.

    Coarser parts than the precision are meaningful, finer ones are None: ``TimePoint(2009)`` is
    the year 2009, ``TimePoint(2009, 1)`` January 2009. Points order chronologically by their
    first day, a coarser point before a finer one starting the same day (2009 < 2009-01 <
    2009-01-01), so points of mixed precision sort without comparing None to an int.
    """

    year: int
    month: int | None = None
    day: int | None = None

    def __post_init__(self) -> None:
        if self.day is not None and self.month is None:
            raise UserError(f"a day needs a month: {self!r}")
        if self.month is not None and not 1 <= self.month <= 12:
            raise UserError(f"month {self.month} is not in 1..12")
        if self.day is not None and not 1 <= self.day <= days_in_month(self.year, self.month):
            raise UserError(
                f"day {self.day} does not exist in {format_year(self.year)}-{self.month:02d}"
            )

    def _key(self) -> tuple[int, int, int]:
        return (self.year, self.month or 0, self.day or 0)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, TimePoint):
            return NotImplemented
        return self._key() < other._key()

    @property
    def precision(self) -> Precision:
        if self.day is not None:
            return Precision.DAY
        return Precision.MONTH if self.month is not None else Precision.YEAR

    @classmethod
    def parse(cls, text: str) -> TimePoint:
        """Parse ``2009``, ``2009-01``, ``2009-01-20`` or ``-0059`` (BCE).

        A leading ``+`` is accepted (``+2009``, ``+12345``) as in ISO 8601's expanded years.
        """
        match = _ISO.match(text.strip())
        if not match:
            raise UserError(f"not an ISO date of year, month or day precision: {text!r}")
        year, month, day = match.groups()
        try:
            return cls(int(year), int(month) if month else None, int(day) if day else None)
        except ValueError as err:
            raise UserError(f"not a valid date: {text!r} ({err})") from None

    @classmethod
    def from_wikidata(cls, time: str, precision: int) -> TimePoint | None:
        """A Wikidata time value at its precision; None when coarser than a year (unknown).

        Wikidata writes unknown parts as ``00`` (``+2009-00-00T00:00:00Z`` at precision 9).
        """
        if precision < Precision.YEAR:
            return None
        if precision > Precision.DAY:
            precision = Precision.DAY  # hours/minutes/seconds: the day is what we keep
        match = _WIKIDATA.match(time)
        if not match:
            raise UserError(f"not a Wikidata time value: {time!r}")
        sign, year, month, day = match.groups()
        y = -int(year) if sign == "-" else int(year)
        if precision == Precision.YEAR:
            return cls(y)
        if int(month) == 0:
            raise UserError(f"precision {precision} but month is 00 in {time!r}")
        if precision != Precision.MONTH and int(day) == 0:
            raise UserError(f"precision {precision} but day is 00 in {time!r}")
        try:
            if precision == Precision.MONTH:
                return cls(y, int(month))
            return cls(y, int(month), int(day))
        except ValueError as err:
            raise UserError(f"{err} in {time!r}") from None

    def iso(self) -> str:
        text = format_year(self.year)
        if self.month is not None:
            text += f"-{self.month:02d}"
        if self.day is not None:
            text += f"-{self.day:02d}"
        return text

    def __str__(self) -> str:
        return self.iso()

    def words(self) -> str:
        """As a sentence says it: "2009", "March 2009", "4 March 2009"; a BCE year as "52 BC"
        (Wikidata's year -52)."""
        year = f"{-self.year} BC" if self.year < 0 else str(self.year)
        if self.month is None:
            return year
        if self.day is None:
            return f"{MONTH_NAMES[self.month - 1]} {year}"
        return f"{self.day} {MONTH_NAMES[self.month - 1]} {year}"

    def at_precision(self, precision: Precision) -> TimePoint:
        """This point cut to ``precision`` (which must not be finer than the point's own)."""
        if precision == Precision.YEAR:
            return TimePoint(self.year)
        if precision == Precision.MONTH:
            return TimePoint(self.year, self.month)
        return self

    def first_day(self) -> int:
        """Day number of the first day this point's span covers."""
        return day_number(self.year, self.month or 1, self.day or 1)

    def last_day(self) -> int:
        """Day number of the last day this point's span covers."""
        month = self.month or 12
        return day_number(self.year, month, self.day or days_in_month(self.year, month))


class Granularity(IntEnum):
    YEAR = 1
    QUARTER = 2
    MONTH = 3
    DAY = 4


_PERIOD = re.compile(rf"^{_YEAR}(?:-(Q[1-4]|[0-9]{{2}})(?:-([0-9]{{2}}))?)?$")
_PERIODS_PER_YEAR = {Granularity.YEAR: 1, Granularity.QUARTER: 4, Granularity.MONTH: 12}


@dataclass(frozen=True, order=True)
class Period:
    """A calendar period: a year, quarter, month or day, e.g. ``2019``, ``2019-Q3``, ``2019-07``.

    ``index`` is the period's position in its granularity (e.g. quarter 3 of 2019 is index 3,
    month 7 is 7), so ordering compares (granularity, year, index, day) consistently.
    """

    granularity: Granularity
    year: int
    index: int = 1
    day: int = 1

    def __post_init__(self) -> None:
        # Only the canonical form is valid, so equal periods compare and hash equal.
        granularity = Granularity(self.granularity)
        if granularity == Granularity.DAY:
            TimePoint(self.year, self.index, self.day)  # validates month and day
            return
        if self.day != 1:
            raise UserError(f"a {granularity.name.lower()} period has no day (got {self.day})")
        if granularity == Granularity.MONTH:
            TimePoint(self.year, self.index)  # validates the month
        elif not 1 <= self.index <= _PERIODS_PER_YEAR[granularity]:
            raise UserError(
                f"{granularity.name.lower()} index {self.index} is not in "
                f"1..{_PERIODS_PER_YEAR[granularity]}"
            )

    @classmethod
    def parse(cls, text: str) -> Period:
        match = _PERIOD.match(text.strip())
        if not match:
            raise UserError(f"not a period: {text!r} (use 2019, 2019-Q3, 2019-07 or 2019-07-24)")
        year, mid, day = match.groups()
        y = int(year)
        if mid is None:
            return cls(Granularity.YEAR, y)
        if mid.startswith("Q"):
            if day is not None:
                raise UserError(f"not a period: {text!r} (a quarter has no day)")
            return cls(Granularity.QUARTER, y, int(mid[1]))
        try:
            if day is None:
                return cls(Granularity.MONTH, y, int(mid))
            return cls(Granularity.DAY, y, int(mid), int(day))
        except ValueError as err:
            raise UserError(f"not a period: {text!r} ({err})") from None

    @classmethod
    def containing(cls, point: TimePoint, granularity: Granularity) -> Period:
        """The period of ``granularity`` that holds the start of ``point``'s span."""
        month = point.month or 1
        if granularity == Granularity.YEAR:
            return cls(granularity, point.year)
        if granularity == Granularity.QUARTER:
            return cls(granularity, point.year, (month - 1) // 3 + 1)
        if granularity == Granularity.MONTH:
            return cls(granularity, point.year, month)
        return cls(granularity, point.year, month, point.day or 1)

    def label(self) -> str:
        year = format_year(self.year)
        if self.granularity == Granularity.YEAR:
            return year
        if self.granularity == Granularity.QUARTER:
            return f"{year}-Q{self.index}"
        if self.granularity == Granularity.MONTH:
            return f"{year}-{self.index:02d}"
        return f"{year}-{self.index:02d}-{self.day:02d}"

    def __str__(self) -> str:
        return self.label()

    def words(self) -> str:
        """As a sentence says it, after "in" (or "on", for a day): "2019", "the third quarter of
        2019", "July 2019", "24 July 2019"; a BCE year as "52 BC"."""
        if self.granularity == Granularity.QUARTER:
            return f"the {QUARTER_NAMES[self.index - 1]} quarter of {TimePoint(self.year).words()}"
        if self.granularity == Granularity.YEAR:
            return TimePoint(self.year).words()
        day = self.day if self.granularity == Granularity.DAY else None
        return TimePoint(self.year, self.index, day).words()

    def months(self) -> tuple[int, int]:
        """The first and last month this period covers."""
        if self.granularity == Granularity.YEAR:
            return 1, 12
        if self.granularity == Granularity.QUARTER:
            return 3 * self.index - 2, 3 * self.index
        return self.index, self.index

    def first_day(self) -> int:
        first, _ = self.months()
        return day_number(self.year, first, self.day if self.granularity == Granularity.DAY else 1)

    def last_day(self) -> int:
        _, last = self.months()
        if self.granularity == Granularity.DAY:
            return day_number(self.year, last, self.day)
        return day_number(self.year, last, days_in_month(self.year, last))

    def next(self) -> Period:
        if self.granularity == Granularity.DAY:
            y, m, d = civil_from_day_number(self.first_day() + 1)
            return Period(Granularity.DAY, y, m, d)
        if self.index < _PERIODS_PER_YEAR[self.granularity]:
            return Period(self.granularity, self.year, self.index + 1)
        return Period(self.granularity, self.year + 1, 1)

    def overlaps(self, start: TimePoint | None, end: TimePoint | None) -> bool:
        """Does a fact holding from ``start`` to ``end`` (None: open) overlap this period?"""
        return (start is None or start.first_day() <= self.last_day()) and (
            end is None or end.last_day() >= self.first_day()
        )


def period_range(first: Period | str, last: Period | str) -> list[Period]:
    """Every period from ``first`` to ``last`` inclusive, both of one granularity."""
    a = Period.parse(first) if isinstance(first, str) else first
    b = Period.parse(last) if isinstance(last, str) else last
    if a.granularity != b.granularity:
        raise UserError(f"{a} and {b} are of different granularities")
    if b < a:
        raise UserError(f"the range ends ({b}) before it starts ({a})")
    out = [a]
    while out[-1] != b:
        out.append(out[-1].next())
    return out


def periods_between(first: str, last: str, granularity: Granularity) -> list[Period]:
    """Every period of ``granularity`` from the start of ``first`` to the end of ``last``.

    ``first`` and ``last`` may be coarser than the granularity: 2010..2020 by quarter runs from
    2010-Q1 to 2020-Q4.
    """
    a, b = Period.parse(first), Period.parse(last)
    if a.granularity > granularity or b.granularity > granularity:
        raise UserError(f"{first}..{last} is finer than the granularity {granularity.name.lower()}")
    start = Period.containing(TimePoint(a.year, *_month_day(a, last=False)), granularity)
    end = Period.containing(TimePoint(b.year, *_month_day(b, last=True)), granularity)
    return period_range(start, end)


def _month_day(period: Period, last: bool) -> tuple[int | None, int | None]:
    """The first (or last) month of a period, as a TimePoint's month, day."""
    first_month, last_month = period.months()
    if period.granularity == Granularity.DAY:
        return period.index, period.day
    return (last_month if last else first_month), None
