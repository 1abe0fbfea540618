"""A TemporalKG as the integer facts temporal KG embeddings train and are ranked on.

Timestamps are years. Time indices cover every year from the first to the last year in the KG,
contiguously, so that neighbouring indices are neighbouring years (the temporal smoothness
penalty relies on it). Relations get reciprocals (index ``r + n_relations``) so that subject
prediction is object prediction with the inverse relation, as in tkbc.

Facts are kept as intervals of time indices, ``(s, r, o, first, last)``; a :class:`TimeMode`
says which ``(s, r, o, t)`` quadruples a training epoch draws from them. Entities and relations
are all the KG's, so ranking is among all of them; the split is the KG's own
(:func:`given_split`) or one drawn with a seed (:func:`split_kg`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from chronoprobe.errors import UserError
from chronoprobe.kg.graph import TemporalKG
from chronoprobe.kg.records import SPLIT_COLUMN, SPLIT_NAMES
from chronoprobe.time import format_year

SPLITS = SPLIT_NAMES
# the most years a KG's facts may span: the time table holds a row per year of the span (a KG
# of facts from year 1 to 2**31 - 1 asked for billions), and every-year training a quadruple
# per year of each fact
MAX_YEARS = 100_000
ORIGINS = {
    "seeded": "split with the seed",
    "given": "the KG's own split",
    "split-from": "the split of another KG",
}


class TimeMode(StrEnum):
    """Which years of a fact ``(s, r, o, [first, last])`` become training quadruples."""

    every_year = "every-year"  # one per year of the interval (CronQuestions' semantics)
    start = "start"  # one, at the start year (tkbc's setting for CronQuestions)
    sampled = "sampled"  # one per epoch, at a year drawn uniformly from the interval


@dataclass(frozen=True)
class Vocab:
    """Id vocabularies in row order: entity ids, relation ids, and the years time rows stand for."""

    entities: tuple[str, ...]
    relations: tuple[str, ...]
    first_year: int
    last_year: int

    @property
    def n_times(self) -> int:
        return self.last_year - self.first_year + 1

    @property
    def years(self) -> range:
        return range(self.first_year, self.last_year + 1)

    def to_json(self) -> dict:
        return {
            "entities": list(self.entities),
            "relations": list(self.relations),
            "years": list(self.years),
        }

    @classmethod
    def from_json(cls, data: dict) -> Vocab:
        years = [int(y) for y in data["years"]]
        if not years or years != list(range(years[0], years[0] + len(years))):
            raise UserError("`years` must be a non-empty run of consecutive years")
        return cls(tuple(data["entities"]), tuple(data["relations"]), years[0], years[-1])


def check_span(kg: TemporalKG, facts_file: Path) -> None:
    """A UserError naming ``facts_file`` when the KG's facts span more than MAX_YEARS."""
    first, last = kg.year_range()
    if first is not None and last - first + 1 > MAX_YEARS:
        raise UserError(
            f"{facts_file}: its facts span {last - first + 1:,} years ({format_year(first)} "
            f"to {format_year(last)}); temporal embeddings keep a row per year, of at most "
            f"{MAX_YEARS:,} years: give a KG of the facts of a narrower span"
        )


def with_reciprocals(quads: np.ndarray, n_relations: int) -> np.ndarray:
    """Each (s, r, o, t) and its inverse (o, r + n_relations, s, t), stacked."""
    inverse = quads[:, [2, 1, 0, 3]].copy()
    inverse[:, 1] += n_relations
    return np.concatenate([quads, inverse])


def every_year(intervals: np.ndarray) -> np.ndarray:
    """(m, 4) quadruples: one per fact and year of its interval, in fact order."""
    spans = intervals[:, 4] - intervals[:, 3] + 1
    rows = np.repeat(np.arange(len(intervals)), spans)
    offsets = np.arange(len(rows)) - np.repeat(np.cumsum(spans) - spans, spans)
    quads = intervals[rows, :4].copy()
    quads[:, 3] += offsets
    return quads


def start_year(intervals: np.ndarray) -> np.ndarray:
    return intervals[:, :4].copy()


def sampled_year(intervals: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    spans = intervals[:, 4] - intervals[:, 3] + 1
    quads = intervals[:, :4].copy()
    quads[:, 3] += (rng.random(len(intervals)) * spans).astype(np.int64)
    return quads


def _distinct(rows: np.ndarray) -> np.ndarray:
    return np.unique(rows, axis=0) if len(rows) else rows


@dataclass
class TKGData:
    """Facts split into train, valid and test over one vocabulary, and what was left out."""

    vocab: Vocab
    mode: TimeMode
    train: np.ndarray  # (n, 5) int64 intervals: s, r, o, first, last (time indices)
    valid: np.ndarray
    test: np.ndarray
    skipped: dict[str, int] = field(default_factory=dict)
    origin: str = "seeded"  # where the split comes from: a key of ORIGINS
    kg_fingerprint: str | None = None  # of the KG the facts come from

    def split(self, name: str) -> np.ndarray:
        if name not in SPLITS:
            raise UserError(f"unknown split {name!r}; choose one of: {', '.join(SPLITS)}")
        return getattr(self, name)

    def queries(self, name: str) -> np.ndarray:
        """The ranking queries of a split: each distinct fact once, at its start year."""
        return _distinct(start_year(self.split(name)))

    @cached_property
    def known(self) -> np.ndarray:
        """Every true quadruple of every split: the filter of filtered ranking.

        In ``start`` mode a fact is only known at its start year (the protocol tkbc reports);
        otherwise at every year it holds, so an answer true in the query's year through a fact
        that started earlier is not counted as a mistake.
        """
        facts = np.concatenate([self.train, self.valid, self.test])
        expand = start_year if self.mode is TimeMode.start else every_year
        return _distinct(expand(facts))

    def training_quadruples(self, epoch: int, seed: int) -> np.ndarray:
        """The quadruples of one epoch (the same for every epoch unless ``sampled``)."""
        if self.mode is TimeMode.start:
            return start_year(self.train)
        if self.mode is TimeMode.every_year:
            return every_year(self.train)
        return sampled_year(self.train, np.random.default_rng([seed, epoch]))

    def summary(self) -> str:
        v = self.vocab
        text = (
            f"{len(v.entities):,} entities, {len(v.relations):,} relations, "
            f"{v.n_times:,} years ({v.first_year} to {v.last_year}); facts: "
            f"{len(self.train):,} train, {len(self.valid):,} valid, {len(self.test):,} test "
            f"({ORIGINS[self.origin]})"
        )
        left_out = ", ".join(f"{n:,} {why}" for why, n in self.skipped.items() if n)
        return f"{text}; left out: {left_out}" if left_out else text


# ----- reading a TemporalKG -------------------------------------------------------------------


def _years(facts: pa.Table, bound: str) -> tuple[np.ndarray, np.ndarray]:
    """A bound's year (0 where absent) and whether it is present (non-null precision); a
    year may be negative (BCE), so no year can stand for "absent"."""
    present = facts.column(f"{bound}_precision").is_valid().to_numpy(zero_copy_only=False)
    years = facts.column(f"{bound}_year").fill_null(0).to_numpy().astype(np.int64)
    return np.where(present, years, 0), present


def _entity_ids(kg: TemporalKG) -> pa.Array:
    """Every entity of the KG, sorted: those with a record and those its facts name."""
    names = [kg.entities.column("id"), kg.facts.column("subject"), kg.facts.column("object")]
    chunks = [chunk for column in names for chunk in column.chunks]
    ids = pc.unique(pa.chunked_array(chunks, pa.string()).combine_chunks())
    return ids.take(pc.array_sort_indices(ids))


def _index(column: pa.ChunkedArray, words: pa.Array) -> np.ndarray:
    return pc.index_in(column, value_set=words).to_numpy(zero_copy_only=False).astype(np.int64)


@dataclass
class _Intervals:
    """One (s, r, o, first, last) row per fact with a time, and which facts those are."""

    vocab: Vocab
    rows: np.ndarray
    timed: np.ndarray  # bool per fact of the KG


def _intervals(kg: TemporalKG) -> _Intervals:
    facts = kg.facts
    (start, has_start), (end, has_end) = _years(facts, "start"), _years(facts, "end")
    timed = has_start | has_end
    if not timed.any():
        raise UserError(
            f"the KG {kg.name!r} has no fact with a start or end year: nothing to train temporal "
            "embeddings on"
        )
    entities = _entity_ids(kg)
    relations = pc.unique(kg.relations.column("id").combine_chunks())
    relations = relations.take(pc.array_sort_indices(relations))
    facts = facts.filter(pa.array(timed))
    start, end, has_start, has_end = start[timed], end[timed], has_start[timed], has_end[timed]
    bounds = np.concatenate([start[has_start], end[has_end]])
    vocab = Vocab(
        tuple(entities.to_pylist()),
        tuple(relations.to_pylist()),
        int(bounds.min()),
        int(bounds.max()),
    )
    first = np.where(has_start, start, end)
    last = np.where(has_end, end, vocab.last_year)
    last = np.where(has_start, np.maximum(last, first), first)
    subject = _index(facts.column("subject"), entities)
    relation = _index(facts.column("relation"), relations)
    object_ = _index(facts.column("object"), entities)
    rows = np.stack([subject, relation, object_, first - vocab.first_year, last - first], 1)
    rows[:, 4] += rows[:, 3]
    return _Intervals(vocab, rows, timed)


def intervals_of(kg: TemporalKG) -> tuple[Vocab, np.ndarray, dict[str, int]]:
    """The vocabulary and distinct (s, r, o, first, last) intervals of a KG.

    The vocabulary holds every entity and relation of the KG, whether or not a fact with a
    time names it, so that ranking is among all of them. A bound of month or day precision
    counts as its year. A missing end means the fact still holds: its interval runs to the KG's
    last year. A missing start means the start is unknown: the fact is only known to hold in
    its end year. Facts with neither bound carry no time and are left out (and counted).
    """
    found = _intervals(kg)
    distinct = _distinct(found.rows)
    skipped = {
        "facts without a start or end year": int((~found.timed).sum()),
        "duplicate facts": len(found.rows) - len(distinct),
    }
    return found.vocab, distinct, skipped


def given_split(
    kg: TemporalKG, mode: TimeMode = TimeMode.every_year, origin: str = "given"
) -> TKGData:
    """The KG's own train/valid/test split (its facts' ``split`` column), kept as given.

    A fact in no split is left out (and counted); facts that become the same interval once
    times are years are one fact per split.
    """
    if not kg.has_split:
        raise UserError(f"the KG {kg.name!r} has no split of its own (no `split` column)")
    found = _intervals(kg)
    split = kg.facts.column(SPLIT_COLUMN).filter(pa.array(found.timed))
    parts = {}
    for name in SPLITS:
        chosen = pc.fill_null(pc.equal(split, name), False).to_numpy(zero_copy_only=False)
        parts[name] = _distinct(found.rows[chosen])
        if name != "valid" and not len(parts[name]):
            raise UserError(f"the KG {kg.name!r} has a split without {name} facts with a time")
    in_none = pc.sum(pc.is_null(split)).as_py() or 0
    kept = sum(len(part) for part in parts.values())
    skipped = {
        "facts without a start or end year": int((~found.timed).sum()),
        "facts in no split": in_none,
        "duplicate facts": len(found.rows) - in_none - kept,
    }
    return TKGData(
        found.vocab,
        TimeMode(mode),
        **parts,
        skipped=skipped,
        origin=origin,
        kg_fingerprint=kg.fingerprint,
    )


def split_kg(
    kg: TemporalKG,
    *,
    valid_fraction: float = 0.05,
    test_fraction: float = 0.05,
    seed: int = 0,
    mode: TimeMode = TimeMode.every_year,
) -> TKGData:
    """Split a KG's distinct facts into train, valid and test, reproducibly from ``seed``.

    The distinct facts, sorted by (subject, relation, object, first, last) ids, are shuffled by
    ``numpy.random.default_rng(seed).permutation``; the first ``round(test_fraction * n)`` are
    test, the next ``round(valid_fraction * n)`` valid, the rest train. A fact's years never
    straddle two splits.
    """
    if not 0.0 < test_fraction < 1.0:
        raise UserError(f"the test fraction must be between 0 and 1, not {test_fraction}")
    if not 0.0 <= valid_fraction < 1.0 - test_fraction:
        raise UserError(
            f"the valid fraction must be at least 0 and below 1 - test fraction "
            f"({1.0 - test_fraction:g}), not {valid_fraction}"
        )
    vocab, facts, skipped = intervals_of(kg)
    order = np.random.default_rng(seed).permutation(len(facts))
    n_test = max(1, round(test_fraction * len(facts)))
    n_valid = round(valid_fraction * len(facts))
    if n_test + n_valid >= len(facts):
        raise UserError(f"the KG has {len(facts)} distinct facts: too few to split")
    parts = np.split(order, [n_test, n_test + n_valid])
    test, valid, train = (facts[np.sort(part)] for part in parts)
    return TKGData(
        vocab, TimeMode(mode), train, valid, test, skipped, kg_fingerprint=kg.fingerprint
    )
