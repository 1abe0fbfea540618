"""Effective knowledge cutoffs: the last period whose answers a model prefers to the answers
before them, found on its preference curve.

Cheng et al. ("Dated Data: Tracing Knowledge Cutoffs in Large Language Models", COLM 2024)
define a resource's *effective cutoff* as the version of it a model aligns with best. For facts
the versions are periods, and the evidence is the facts that changed: wherever a subject's
answer changed at period t (its answers differ from the period before), the model either prefers
the new answers (a preference of 1), the earlier ones (0), or neither (0.5, a tie). A model that
knows the world up to period c prefers the new answers of the changes at c, and the earlier
answers of the change right after c (the answer it knows); before c, a model that knows every
fact of its past prefers the new answers too, while one that knows only the present of c prefers
either with even chance; after c, the new answers are unknown to it. Either way the preference of
period c stands above that of the periods after it, and no later period's does.

The estimator, exactly. Let the periods that have changes be ``p_0 < ... < p_{m-1}``, and each
change i have its period and preference ``w_i``; ``v`` is the variance of all ``w``. For each
period ``j``, its excess is ``z_j = (mean_j - mean_after) / sqrt(v (1/n_j + 1/n_after))``, the
mean preference of its changes against the mean of every change after it (for the last period,
against every change before it, so that a model whose knowledge ends with the set's last period
is told too). The cutoff is the last period whose excess is significant: ``z_j`` above the
``1 - alpha`` quantile of the largest excess over every period when the changes' periods are
shuffled (``permutations`` times; a max-T permutation test, so that the chance of a false
cutoff anywhere on the curve is ``alpha``). A cutoff at ``p_{m-1}`` is ``"after"``: the model
knows the set's whole span. Without a significant excess the curve has one level, and the mean
preference with its 95% interval tells which: above 0.5, the model prefers every change's new
answers (``"after"``, at or after ``p_{m-1}``); below 0.5, none of them (``"before"`` ``p_0``);
across 0.5, no cutoff is found (``"none"``). The estimate's 95% interval is the percentile
bootstrap over subjects (a subject's changes resampled together), each resample deciding by the
same threshold.
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

    ``kind``: ``step`` (the preference of ``cutoff`` stands above every later period's),
    ``after`` (the cutoff is at or after ``cutoff``, the last period with changes), ``before``
    (before ``cutoff``'s period, the first), ``none`` (``cutoff`` None). ``interval``: the
    bootstrap's 95% interval as two periods (``before P`` for a low end before the first).
    ``p_value``: the max-T permutation p-value of the cutoff's excess (None without one).
    ``levels``: the mean preference at the cutoff and after it. ``curve``: per period, the
    mean preference with its interval, its excess and the changes it rests on."""

    kind: str
    cutoff: str | None
    interval: tuple[str, str] | None
    p_value: float | None
    levels: tuple[float | None, float | None]
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
            "p_value": self.p_value,
            "level_at": self.levels[0],
            "level_after": self.levels[1],
            "preference": self.preference,
            "preference_ci95": list(self.preference_ci95) if self.preference_ci95 else None,
            "changes": self.changes,
            "subjects": self.subjects,
            "curve": self.curve,
        }


def excess(sums: np.ndarray, counts: np.ndarray, variance: float) -> np.ndarray:
    """For (..., m) per-period sums and counts of preferences, each period's standardised
    excess over the periods after it (the last period's over those before it); NaN where a
    side is empty or nothing varies."""
    total_s, total_n = sums.sum(axis=-1, keepdims=True), counts.sum(axis=-1, keepdims=True)
    after_s = total_s - np.cumsum(sums, axis=-1)
    after_n = total_n - np.cumsum(counts, axis=-1)
    other_s = np.concatenate([after_s[..., :-1], total_s - sums[..., -1:]], axis=-1)
    other_n = np.concatenate([after_n[..., :-1], total_n - counts[..., -1:]], axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        difference = sums / counts - other_s / other_n
        spread = np.sqrt(variance * (1 / counts + 1 / other_n))
        z = difference / spread
    return np.where((counts > 0) & (other_n > 0) & (spread > 0), z, np.nan)


def _shuffled_maxima(
    periods: np.ndarray, wins: np.ndarray, m: int, variance: float, permutations: int, seed: int
) -> np.ndarray:
    """The largest excess over periods in each of ``permutations`` shuffles of the changes'
    periods: the null distribution of the max-T test."""
    rng = np.random.default_rng(seed)
    counts = np.bincount(periods, minlength=m).astype(float)
    largest, block = [], max(1, (1 << 22) // max(len(wins), 1))
    for start in range(0, permutations, block):
        size = min(block, permutations - start)
        shuffled = rng.permuted(np.tile(periods, (size, 1)), axis=1)
        flat = (shuffled + (np.arange(size) * m)[:, None]).ravel()
        sums = np.bincount(flat, np.tile(wins, size), size * m).reshape(size, m)
        z = excess(sums, np.broadcast_to(counts, (size, m)), variance)
        largest.append(np.nanmax(np.where(np.isnan(z), -np.inf, z), axis=-1))
    return np.concatenate(largest)


def _last_above(z: np.ndarray, threshold: float) -> np.ndarray:
    """The last period of each row whose excess is above ``threshold`` (-2: none)."""
    above = np.nan_to_num(z, nan=-np.inf) > threshold
    last = z.shape[-1] - 1 - np.argmax(above[..., ::-1], axis=-1)
    return np.where(above.any(axis=-1), last, -2)


def decimal_year(label: str) -> float:
    """A period label as the decimal year its period starts (2019-Q3: 2019.5); ``before P``:
    one span of P earlier."""
    from chronoprobe.time import Period

    before = label.startswith("before ")
    period = Period.parse(label.removeprefix("before "))
    first, last = period.months()
    start = period.year + (first - 1) / 12
    return start - (last - first + 1) / 12 if before else start


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
    m, variance = len(present), float(w.var())
    sums, counts = np.bincount(k, w, m), np.bincount(k, minlength=m).astype(float)
    z = excess(sums, counts, variance)
    threshold, maxima = np.inf, np.array([])
    if m > 1 and variance > 0:
        maxima = _shuffled_maxima(k, w, m, variance, permutations, seed)
        threshold = float(np.quantile(maxima, 1 - alpha))
    overall = mean(list(w), list(subjects), resamples=resamples, seed=seed)
    curve = []
    for i, period in enumerate(present):
        mine = k == i
        chosen = [s for s, keep in zip(subjects, mine, strict=True) if keep]
        point = mean(list(w[mine]), chosen, resamples=resamples, seed=seed)
        curve.append(
            {
                "period": period,
                "preference": point.value,
                "ci95": None if point.low is None else [point.low, point.high],
                "excess": None if np.isnan(z[i]) else float(z[i]),
                "n": point.n,
            }
        )
    last = int(_last_above(z, threshold))
    kind, at, p_value, levels = NONE, None, None, (None, None)
    if last >= 0:
        kind, at = (AFTER if last == m - 1 else STEP), last
        p_value = (int((maxima >= z[last]).sum()) + 1) / (len(maxima) + 1)
        after = k > last
        levels = (float(w[k == last].mean()), float(w[after].mean()) if after.any() else None)
    elif overall.low is not None and overall.low > 0.5:
        kind, at = AFTER, m - 1
    elif overall.high is not None and overall.high < 0.5:
        kind, at = BEFORE, -1
    interval = None
    ids, groups = cluster_ids(list(subjects), len(w))
    if resamples > 0 and groups > 1:
        per_subject_sums = np.zeros((groups, m))
        per_subject_counts = np.zeros((groups, m))
        np.add.at(per_subject_sums, (ids, k), w)
        np.add.at(per_subject_counts, (ids, k), 1.0)
        decided = []
        for c in resample_counts(groups, resamples, seed):
            s, n = c @ per_subject_sums, c @ per_subject_counts
            found = _last_above(excess(s, n, variance), threshold)
            level = s.sum(axis=-1) / n.sum(axis=-1)
            by_level = np.where(level > 0.5, m - 1, -1)
            decided.append(np.where(found >= 0, found, by_level))
        low, high = np.percentile(np.concatenate(decided), [2.5, 97.5], method="nearest")
        interval = (_period_label(int(low), present), _period_label(int(high), present))
    return Cutoff(
        kind,
        None if at is None else _period_label(at, present),
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
