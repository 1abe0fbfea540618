"""Effective knowledge cutoffs: the last period whose answers a model prefers to the answers
before them, as a changepoint of its preference curve.

Cheng et al. ("Dated Data: Tracing Knowledge Cutoffs in Large Language Models", COLM 2024)
define a resource's *effective cutoff* as the version of it a model aligns with best. For facts
the versions are periods, and the evidence is the facts that changed: wherever a subject's
answer changed at period t (its answers differ from the period before), the model either
prefers the new answers (a preference of 1), the earlier ones (0), or neither (0.5, a tie). A
model that knows the world up to period c prefers the new answers of the changes up to c more
than those of the changes after it, which it cannot know: its preference curve (the mean
preference of the changes at each period) falls after c, a step down.

The estimator, exactly. Let the periods that have changes be ``p_1 < ... < p_m``, and for each
change i its period ``k_i`` and preference ``w_i``. For each split ``j`` in 1..m-1 (the first
``j`` periods known), fit one level before and one after by least squares; the sum of squared
errors is smallest where ``S_1^2/N_1 + S_2^2/N_2`` is largest (``S`` the sum of the preferences
of a segment, ``N`` its count), among the splits whose level falls (``S_1/N_1 > S_2/N_2``).
The best split ``j`` is a cutoff at ``p_j`` when it is significant: a permutation test (the
changes' periods shuffled ``permutations`` times; the p-value the share of shuffles whose best
split fits as much better than one level as the real one, counted with it) below
``alpha``. Otherwise the curve has one level, and the mean preference with its 95% interval
tells which: above 0.5, the model prefers every change's new answers (its cutoff is at or after
``p_m``: ``"after"``); below 0.5, none of them (before ``p_1``: ``"before"``); across 0.5, no
preference, and no cutoff is found (``"none"``). The estimate's 95% interval is the percentile
bootstrap of the split over subjects (a subject's changes resampled together), each resample
deciding by the fit alone: a split where the level falls, else the side of 0.5 its mean lies on.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from chronoprobe.metrics.uncertainty import RESAMPLES, SEED, cluster_ids, mean, resample_counts

PERMUTATIONS = 1000
ALPHA = 0.05
STEP, AFTER, BEFORE, NONE = "step", "after", "before", "none"


@dataclass(frozen=True)
class Cutoff:
    """A model's effective cutoff over a group of changes.

    ``kind``: ``step`` (the preference falls after ``cutoff``), ``after`` (every change's new
    answers preferred: the cutoff is at or after ``cutoff``, the last period), ``before`` (none
    preferred: before ``cutoff``, the first period), ``none`` (no preference either way;
    ``cutoff`` None). ``interval``: the bootstrap's 95% interval as two periods (``before`` the
    first for a low end before it). ``split``: the least-squares split (the last period
    before the fall), significant or not (None where the level never falls). ``curve``: per
    period, the mean preference with its
    interval and the changes it rests on. ``changes``, ``subjects``: what it rests on."""

    kind: str
    cutoff: str | None
    split: str | None
    interval: tuple[str, str] | None
    p_value: float | None
    levels: tuple[float | None, float | None]  # the preference before and after the split
    preference: float | None  # over every change, with its interval
    preference_ci95: tuple[float, float] | None
    curve: list[dict]
    changes: int
    subjects: int

    def to_dict(self) -> dict:
        """As metrics.json holds it: the periods, and ``cutoff_year``, the cutoff as a number
        with its interval (the decimal year its period starts; a period's span before the
        first for ``before``), so that tables and plots can hold it."""
        years = [decimal_year(p) for p in self.interval] if self.interval else None
        return {
            "n": self.changes,
            "kind": self.kind,
            "cutoff": self.cutoff,
            "cutoff_interval": list(self.interval) if self.interval else None,
            "cutoff_year": None if self.cutoff is None else decimal_year(self.cutoff),
            "cutoff_year_ci95": years if self.cutoff is not None else None,
            "best_split": self.split,
            "p_value": self.p_value,
            "level_before": self.levels[0],
            "level_after": self.levels[1],
            "preference": self.preference,
            "preference_ci95": list(self.preference_ci95) if self.preference_ci95 else None,
            "changes": self.changes,
            "subjects": self.subjects,
            "curve": self.curve,
        }


def decimal_year(label: str) -> float:
    """A period label as the decimal year its period starts (2019-Q3: 2019.5); ``before P``:
    one span of P earlier."""
    from chronoprobe.time import Period

    before = label.startswith("before ")
    period = Period.parse(label.removeprefix("before "))
    first, last = period.months()
    start = period.year + (first - 1) / 12
    return start - (last - first + 1) / 12 if before else start


def _gains(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """For (..., m) per-period sums and counts, the (..., m - 1) gain of each split over one
    level (how much smaller its squared error is), -inf where the level does not fall or a
    segment is empty."""
    s1, n1 = np.cumsum(sums, axis=-1)[..., :-1], np.cumsum(counts, axis=-1)[..., :-1]
    total_s, total_n = sums.sum(axis=-1, keepdims=True), counts.sum(axis=-1, keepdims=True)
    s2, n2 = total_s - s1, total_n - n1
    with np.errstate(divide="ignore", invalid="ignore"):
        gain = s1**2 / n1 + s2**2 / n2 - total_s**2 / total_n
        falls = s1 / n1 > s2 / n2
    return np.where((n1 > 0) & (n2 > 0) & falls, gain, -np.inf)


def _decide(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The index of the last known period for each (..., m) row: the best falling split, else
    m - 1 (a level above 0.5) or -1 (at or below)."""
    m = sums.shape[-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        level = sums.sum(axis=-1) / counts.sum(axis=-1)
    by_level = np.where(level > 0.5, m - 1, -1)
    if m < 2:
        return by_level
    gains = _gains(sums, counts)
    best = gains.argmax(axis=-1)
    found = np.take_along_axis(gains, best[..., None], axis=-1)[..., 0] > 0
    return np.where(found, best, by_level)


def _permutation_p(
    periods: np.ndarray, wins: np.ndarray, m: int, observed: float, permutations: int, seed: int
) -> float:
    """The share of shuffles of the changes' periods whose best split gains at least
    ``observed`` (the real data counted as one of them)."""
    rng = np.random.default_rng(seed)
    counts = np.bincount(periods, minlength=m).astype(float)
    above, block = 0, max(1, (1 << 22) // max(len(wins), 1))
    for start in range(0, permutations, block):
        size = min(block, permutations - start)
        shuffled = rng.permuted(np.tile(periods, (size, 1)), axis=1)
        flat = (shuffled + (np.arange(size) * m)[:, None]).ravel()
        sums = np.bincount(flat, np.tile(wins, size), size * m).reshape(size, m)
        gains = _gains(sums, np.broadcast_to(counts, (size, m)))
        above += int((gains.max(axis=-1) >= observed - 1e-12).sum())
    return (above + 1) / (permutations + 1)


def _period_label(index: int, order: Sequence[str]) -> str:
    return f"before {order[0]}" if index < 0 else order[index]


def effective_cutoff(
    periods: Sequence[str],
    wins: Sequence[float],
    subjects: Sequence[Hashable],
    order: Sequence[str],
    *,
    resamples: int = RESAMPLES,
    permutations: int = PERMUTATIONS,
    alpha: float = ALPHA,
    seed: int = SEED,
) -> Cutoff | None:
    """The effective cutoff of changes at ``periods`` (each a label in ``order``, the periods
    in time order) with preferences ``wins`` (1, 0.5 or 0), clustered by ``subjects`` for the
    bootstrap; None without a change. See the module for the estimator."""
    if not len(wins):
        return None
    present = [p for p in order if p in set(periods)]
    index = {p: i for i, p in enumerate(present)}
    k = np.fromiter((index[p] for p in periods), np.int64, len(periods))
    w = np.asarray(wins, dtype=np.float64)
    m = len(present)
    sums = np.bincount(k, w, m)
    counts = np.bincount(k, minlength=m).astype(float)
    overall = mean(list(w), list(subjects), resamples=resamples, seed=seed)
    curve = []
    for i, period in enumerate(present):
        mine = k == i
        chosen = [s for s, keep in zip(subjects, mine, strict=True) if keep]
        point = mean(list(w[mine]), chosen, resamples=resamples, seed=seed)
        low_high = None if point.low is None else [point.low, point.high]
        curve.append({"period": period, "preference": point.value, "ci95": low_high, "n": point.n})
    gains = _gains(sums, counts)
    split = int(gains.argmax()) if m > 1 else 0
    p_value, levels, best = None, (None, None), None
    kind = NONE
    if m > 1 and np.isfinite(gains[split]) and gains[split] > 0:
        best = present[split]
        p_value = _permutation_p(k, w, m, float(gains[split]), permutations, seed)
        before, after = slice(0, split + 1), slice(split + 1, m)
        levels = (
            float(sums[before].sum() / counts[before].sum()),
            float(sums[after].sum() / counts[after].sum()),
        )
        kind = STEP if p_value < alpha else NONE
    low, high = overall.low, overall.high
    if low is None and overall.n > 1:  # every change the same preference: no spread to resample
        low = high = overall.value
    if kind != STEP:
        if low is not None and low > 0.5:
            kind, split = AFTER, m - 1
        elif high is not None and high < 0.5:
            kind, split = BEFORE, -1
    interval = None
    ids, groups = cluster_ids(list(subjects), len(w))
    if resamples > 0 and groups > 1:
        per_subject_sums = np.zeros((groups, m))
        per_subject_counts = np.zeros((groups, m))
        np.add.at(per_subject_sums, (ids, k), w)
        np.add.at(per_subject_counts, (ids, k), 1.0)
        decided = np.concatenate(
            [
                _decide(c @ per_subject_sums, c @ per_subject_counts)
                for c in resample_counts(groups, resamples, seed)
            ]
        )
        low, high = np.percentile(decided, [2.5, 97.5], method="nearest")
        interval = (_period_label(int(low), present), _period_label(int(high), present))
    cutoff = None if kind == NONE else _period_label(split, present)
    return Cutoff(
        kind,
        cutoff,
        best,
        interval,
        p_value,
        levels,
        overall.value,
        None if overall.low is None else (overall.low, overall.high),
        curve,
        len(w),
        groups,
    )


def within(estimate: Cutoff | None, truth: str, order: Sequence[str], periods: int = 1) -> bool:
    """Whether an estimate is within ``periods`` of the true last known period ``truth``: a
    step at a period that near; ``after``, a truth at most that far before the last period it
    saw; ``before``, one at most that far after the first (a truth outside ``order`` counts at
    its end)."""
    if estimate is None or estimate.kind == NONE or estimate.cutoff is None:
        return False
    position = {p: i for i, p in enumerate(order)}
    true = position.get(truth, len(order) if truth > order[-1] else -1)
    said = -1 if estimate.kind == BEFORE else position[estimate.cutoff]
    if estimate.kind == AFTER:
        return true >= said - periods
    if estimate.kind == BEFORE:
        first = position[estimate.cutoff.removeprefix("before ")]
        return true <= first - 1 + periods
    return abs(true - said) <= periods
