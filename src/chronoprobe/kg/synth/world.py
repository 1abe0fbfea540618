"""The synthetic world's facts, generated relation by relation with numpy.

Every relation gets a budget of facts from LAMA-TK's relation shares, and a generator that
produces that many facts with real-world structure:

- careers (P54 teams, P108 employers, P102 parties): sequences of spells, the next starting the
  year the last one ended, sometimes after a gap, sometimes back at an earlier club;
- offices held by one person at a time (P39 ministers and mayors, P6 heads of government,
  P286 head coaches, P488 chairs): chains of terms, some with exact handover days, some holders
  returning for a second term;
- concurrent positions (an MP who is also a minister, a player also on the national team, a
  consultant with two employers), the main source of multi-answer statements;
- awards (P166) at a point in time, some with one winner a year, some with several;
- spouses (P26, both directions), education (P69), citizenship changes (P27).

Popularity is Zipfian: winners, holders and clubs are drawn with weights ~ 1/rank.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from chronoprobe.time import civil_from_day_numbers

# LAMA-TK's shares of its seven relations, and the drift family's relations on top.
LAMATK_SHARES = {
    "P54": 0.43,
    "P39": 0.36,
    "P166": 0.12,
    "P108": 0.04,
    "P69": 0.03,
    "P26": 0.02,
    "P27": 0.003,
}
DRIFT_SHARES = {"P6": 0.004, "P286": 0.012, "P488": 0.012, "P102": 0.032}
RELATION_LABELS = {
    "P54": "member of sports team",
    "P39": "position held",
    "P166": "award received",
    "P108": "employer",
    "P69": "educated at",
    "P26": "spouse",
    "P27": "country of citizenship",
    "P6": "head of government",
    "P286": "head coach",
    "P488": "chairperson",
    "P102": "member of political party",
}


@dataclass
class Dates:
    """A column of dates: year, month and day (0 = unknown) and precision (0 = absent)."""

    year: np.ndarray
    month: np.ndarray
    day: np.ndarray
    precision: np.ndarray

    @classmethod
    def years(cls, years) -> Dates:
        y = np.asarray(years, dtype=np.int64)
        zero = np.zeros(len(y), dtype=np.int64)
        return cls(y, zero, zero.copy(), np.full(len(y), 9, dtype=np.int64))

    @classmethod
    def months(cls, years, months) -> Dates:
        d = cls.years(years)
        d.month = np.asarray(months, dtype=np.int64)
        d.precision[:] = 10
        return d

    @classmethod
    def days(cls, day_numbers) -> Dates:
        y, m, d = civil_from_day_numbers(day_numbers)
        return cls(y, m, d, np.full(len(y), 11, dtype=np.int64))

    def take(self, index) -> Dates:
        return Dates(self.year[index], self.month[index], self.day[index], self.precision[index])

    def open_after(self, last_year: int) -> Dates:
        """Bounds past the world's last year become absent: the fact still holds."""
        out = self.take(slice(None))
        out.precision = np.where(self.year > last_year, 0, self.precision)
        return out


@dataclass
class FactChunk:
    relation: str
    subject: np.ndarray
    object: np.ndarray
    start: Dates
    end: Dates


@dataclass
class EntityTable:
    label: list[str] = field(default_factory=list)
    type: list[str] = field(default_factory=list)
    aliases: list[tuple[str, ...]] = field(default_factory=list)
    description: list[str | None] = field(default_factory=list)
    start: list[tuple[int, int, int, int]] = field(default_factory=list)  # year, month, day, prec
    end: list[tuple[int, int, int, int]] = field(default_factory=list)

    def add(self, labels, kind, start_years=None, end_years=None, aliases=None, descriptions=None):
        """Append entities; returns their indices. Years of 0 or None mean unknown."""
        first = len(self.label)
        n = len(labels)
        self.label.extend(labels)
        self.type.extend([kind] * n)
        self.aliases.extend(aliases if aliases is not None else [()] * n)
        self.description.extend(descriptions if descriptions is not None else [None] * n)
        for years, column in ((start_years, self.start), (end_years, self.end)):
            if years is None:
                column.extend([(0, 0, 0, 0)] * n)
            else:
                column.extend((int(y), 0, 0, 9 if y else 0) for y in years)
        return np.arange(first, first + n)


def zipf_weights(n: int, exponent: float, rng: np.random.Generator) -> np.ndarray:
    """Weights ~ 1/rank**exponent, assigned to items in random order (popularity is not age)."""
    weights = 1.0 / np.arange(1, n + 1) ** exponent
    return (weights / weights.sum())[rng.permutation(n)]


def pick_active(rng, years, starts, ends, weights, tries: int = 24) -> np.ndarray:
    """For each year, a pool member active that year (starts <= year <= ends), drawn by weight;
    -1 when no draw out of ``tries`` was active."""
    draws = rng.choice(len(weights), size=(len(years), tries), p=weights)
    active = (starts[draws] <= years[:, None]) & (ends[draws] >= years[:, None])
    first = active.argmax(axis=1)
    chosen = draws[np.arange(len(years)), first]
    return np.where(active.any(axis=1), chosen, -1)


def group_positions(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For groups of sizes ``counts``: each item's group, its position in the group, and each
    group's first item index."""
    group = np.repeat(np.arange(len(counts)), counts)
    first = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    position = np.arange(len(group)) - first[group]
    return group, position, first


def sequences(rng, counts, first_years, mean_length: float, gap_rate: float):
    """Consecutive spells: the next starts the year the previous ended (or a year later)."""
    group, position, first = group_positions(counts)
    length = rng.geometric(1.0 / mean_length, size=len(group))
    gap = (rng.random(len(group)) < gap_rate).astype(np.int64)
    step = length + gap
    before = np.cumsum(step) - step
    start = first_years[group] + before - before[first[group]]
    return group, position, start, start + length


def other_than(rng, chosen: np.ndarray, n: int) -> np.ndarray:
    """For each of ``chosen`` (indices below ``n``), another index below ``n``, uniformly."""
    return (chosen + 1 + rng.integers(0, n - 1, len(chosen))) % n


def avoid_repeats(rng, objects, position, n_objects, return_rate: float) -> np.ndarray:
    """Objects of consecutive spells: no spell continues the previous one's object, and with
    ``return_rate`` a spell goes back to the object of two spells before (a second spell)."""
    objects = objects.copy()
    back = (position >= 2) & (rng.random(len(objects)) < return_rate)
    idx = np.flatnonzero(back)
    objects[idx] = objects[idx - 2]
    same = np.flatnonzero((position >= 1) & (objects == np.roll(objects, 1)))
    objects[same] = other_than(rng, objects[same], n_objects)
    return objects


def truncate_to_budget(counts: np.ndarray, budget: int) -> int:
    """How many groups (in order) it takes to reach ``budget`` items."""
    total = np.cumsum(counts)
    return int(min(np.searchsorted(total, budget) + 1, len(counts)))
