"""How sure a figure is: 95% intervals for shares and means, as metrics.json carries them.

A figure over a few hundred rows moves by several points between samples of the same
population, so every rate or mean comes with its ``n`` and an interval:

- a share of independent yes/no outcomes (accuracy, Hits@k, P@k) gets the Wilson score
  interval (Wilson, "Probable Inference, the Law of Succession, and Statistical Inference",
  JASA, 1927), which stays inside [0, 1] and is sound at 0 and n successes, where the normal
  approximation collapses to a point;
- any other figure (MRR, F1, mean log-probability, perplexity, a difference of perplexities,
  a median) gets a percentile bootstrap (Efron and Tibshirani, "An Introduction to the
  Bootstrap", 1993): resample the units with replacement, recompute the figure, and take the
  2.5th and 97.5th percentiles. The units are the rows, or the clusters of rows that are not
  independent of each other (an entity's sentences, when a perplexity averages per entity
  first; a fact's pairs of dates). A share over clustered rows is bootstrapped over the
  clusters too.

A bootstrap over fewer than two units (one entity's sentences: every resample is that entity
again), or one whose resamples' 2.5th and 97.5th percentiles coincide, would give the point
``[x, x]``, which reads as certainty where there is none to tell. Such a figure keeps its value,
its interval is null and ``<figure>_no_interval`` says why ("n too small: 1 entity; ...").
Wilson's interval is sound at any n (one row gives a wide one), so shares never lose it.

The bootstrap is seeded, so the same rows give the same interval on every run, and vectorised
over a block of resamples at once: a statistic of :func:`bootstrap_interval` is a function of a
count matrix (how often each unit was drawn in each resample), and a mean, the common case, is
summed over the drawn indices directly (the same resamples, without building the matrix).
Spreads over seeds (:func:`mean_over_seeds`) are another matter: how much a figure moves when
the model is trained again, which no interval over test rows can tell.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from chronoprobe.errors import UserError

Z95 = 1.959963984540054  # the standard normal's 97.5th percentile
RESAMPLES = 1000
SEED = 0
# a bootstrap over fewer units than this, or whose resamples all give one value, has no spread
# to tell: its interval would be the point [x, x]. It is left out (null), with the reason
MIN_UNITS = 2
_BLOCK_CELLS = 1 << 22  # counts held at once: resamples per block x units

Statistic = Callable[[np.ndarray], np.ndarray]  # (resamples, units) counts -> (resamples,)


@dataclass(frozen=True)
class Estimate:
    """A figure, its 95% interval (None where it has none: no rows, or too few units for a
    bootstrap to tell a spread, said in ``no_interval``) and the rows it counts."""

    value: float | None
    low: float | None
    high: float | None
    n: int
    no_interval: str | None = None  # why a figure has no interval, where it has a value

    def fields(self, name: str, group_n: int | None = None) -> dict:
        """``name``, ``name_ci95``, ``name_no_interval`` where the interval was left out, and,
        unless the group's ``n`` already says it, ``name_n``."""
        interval = None if self.low is None else [self.low, self.high]
        out = {name: self.value, f"{name}_ci95": interval}
        if self.no_interval is not None:
            out[f"{name}{NO_INTERVAL}"] = self.no_interval
        if self.n != group_n:
            out[f"{name}_n"] = self.n
        return out


NO_INTERVAL = "_no_interval"  # the suffix of the key saying why a figure has no interval


def too_few(units: int, unit: str = "row") -> str:
    """Why a bootstrap over ``units`` units gives no interval."""
    plural = unit if units == 1 else f"{unit}s"
    return (
        f"n too small: {units} {plural}; a bootstrap interval needs at least {MIN_UNITS} "
        f"(one {unit} resampled is always itself)"
    )


NO_SPREAD = (
    "no spread: the resamples' 2.5th and 97.5th percentiles are one value (its units (nearly) "
    "all agree), so the bootstrap cannot tell how far the figure could move"
)


def summary(n: int, estimates: dict[str, Estimate], **counts: int) -> dict:
    """A group's figures as metrics.json holds them: ``n`` (its rows), other ``counts``, then
    each estimate with its interval (and its own ``_n`` where it counts other units)."""
    out: dict = {"n": n, **counts}
    for name, estimate in estimates.items():
        out.update(estimate.fields(name, n))
    return out


EMPTY = Estimate(None, None, None, 0)


def wilson_interval(successes: int, n: int) -> tuple[float, float] | None:
    """The 95% Wilson score interval of ``successes`` out of ``n`` (None when n is 0)."""
    if n <= 0:
        return None
    if not 0 <= successes <= n:
        raise UserError(f"{successes} successes out of {n}")
    p, z2 = successes / n, Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    # at 0 or n successes one end is exactly the bound; keep it so despite rounding
    return (0.0 if successes == 0 else centre - half, 1.0 if successes == n else centre + half)


def _draws(units: int, resamples: int, seed: int):
    """Bootstrap resamples of ``units`` units, in blocks: (block, units) arrays of the drawn
    units' indices, a row per resample."""
    rng = np.random.default_rng(seed)
    per_block = max(1, _BLOCK_CELLS // max(units, 1))
    for start in range(0, resamples, per_block):
        yield rng.integers(0, units, size=(min(per_block, resamples - start), units))


def resample_counts(units: int, resamples: int = RESAMPLES, seed: int = SEED) -> list[np.ndarray]:
    """Bootstrap resamples of ``units`` units as blocks of counts, (block, units) each: how
    often each unit was drawn in each resample (every row sums to ``units``)."""
    blocks = []
    for drawn in _draws(units, resamples, seed):
        size = len(drawn)
        flat = (drawn + (np.arange(size) * units)[:, None]).ravel()
        counts = np.bincount(flat, minlength=size * units)
        blocks.append(counts.reshape(size, units).astype(np.float64))
    return blocks


def _percentiles(values: np.ndarray) -> tuple[tuple[float, float] | None, str | None]:
    """The 2.5th and 97.5th percentiles of the resamples' figures (NaN left out), or None with
    the reason where they are one point."""
    values = values[~np.isnan(values)]
    if not len(values):
        return None, None
    low, high = np.percentile(values, [2.5, 97.5])
    if low == high:
        return None, NO_SPREAD
    return (float(low), float(high)), None


def _bootstrap(
    statistic: Statistic, units: int, resamples: int, seed: int, unit: str
) -> tuple[tuple[float, float] | None, str | None]:
    if units <= 0 or resamples <= 0:
        return None, None
    if units < MIN_UNITS:
        return None, too_few(units, unit)
    return _percentiles(
        np.concatenate([statistic(c) for c in resample_counts(units, resamples, seed)])
    )


def bootstrap_interval(
    statistic: Statistic, units: int, *, resamples: int = RESAMPLES, seed: int = SEED
) -> tuple[float, float] | None:
    """The percentile bootstrap's 95% interval of ``statistic`` over ``units`` units (None
    with no units, or with ``resamples`` 0: where only the figure is wanted; None too with
    fewer than :data:`MIN_UNITS` units, or where the resamples give one point: no spread to
    tell). ``statistic`` takes a (resamples, units) count matrix and returns the figure of
    each resample; resamples where it is undefined (NaN) are left out."""
    return _bootstrap(statistic, units, resamples, seed, "unit")[0]


def _ratio_interval(
    numerator: np.ndarray, denominator: np.ndarray | None, resamples: int, seed: int, unit: str
) -> tuple[tuple[float, float] | None, str | None]:
    """The bootstrap interval of sum(numerator) / sum(denominator) over resampled units (of
    the mean of ``numerator`` without a denominator): the same resamples as
    :func:`bootstrap_interval`'s, summed by indexing rather than through a count matrix, which
    is two to three times faster: the path of every mean. With it, why there is none."""
    if len(numerator) == 0 or resamples <= 0:
        return None, None
    if len(numerator) < MIN_UNITS:
        return None, too_few(len(numerator), unit)
    blocks = [
        numerator[drawn].mean(axis=1)
        if denominator is None
        else numerator[drawn].sum(axis=1) / denominator[drawn].sum(axis=1)
        for drawn in _draws(len(numerator), resamples, seed)
    ]
    return _percentiles(np.concatenate(blocks))


def weighted_mean(counts: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Each resample's mean of per-unit ``values``."""
    return counts @ values / counts.sum(axis=1)


def cluster_ids(clusters: Sequence[Hashable], n: int) -> tuple[np.ndarray, int]:
    """Each of ``n`` values' cluster as a number (clusters in order of first appearance), and
    the number of clusters."""
    if len(clusters) != n:
        raise UserError(f"{len(clusters)} cluster labels for {n} values")
    index: dict[Hashable, int] = {}
    ids = np.fromiter((index.setdefault(c, len(index)) for c in clusters), np.int64, n)
    return ids, len(index)


def cluster_sums(
    values: Sequence[float], clusters: Sequence[Hashable]
) -> tuple[np.ndarray, np.ndarray]:
    """(sum of values, number of rows) per cluster, clusters in order of first appearance."""
    ids, k = cluster_ids(clusters, len(values))
    x = np.asarray(values, dtype=np.float64)
    return np.bincount(ids, x, k), np.bincount(ids, minlength=k).astype(float)


def mean(
    values: Sequence[float],
    clusters: Sequence[Hashable] | None = None,
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    unit: str = "row",
) -> Estimate:
    """The mean of ``values`` with its bootstrap interval, resampling rows, or whole
    ``clusters`` (one label per value) when rows of a cluster are not independent; ``unit``
    names what is resampled, for the reason a figure over too few has no interval."""
    n = len(values)
    if n == 0:
        return EMPTY
    if clusters is None:
        sums, sizes = np.asarray(values, dtype=np.float64), None
    else:
        sums, sizes = cluster_sums(values, clusters)
    interval, why = _ratio_interval(sums, sizes, resamples, seed, unit)
    value = float(np.mean(np.asarray(values, dtype=np.float64)))
    return Estimate(value, *_ends(interval), n, why)


def median(
    values: Sequence[float],
    clusters: Sequence[Hashable] | None = None,
    *,
    unit: str = "row",
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Estimate:
    """The median of ``values`` with its bootstrap interval, resampling rows, or whole
    ``clusters`` (one label per value: a row's several labels, an entity's spans)."""
    n = len(values)
    if n == 0:
        return EMPTY
    x = np.asarray(values, dtype=np.float64)
    order = np.argsort(x, kind="stable")
    ordered = x[order]
    if clusters is None:
        unit_of, units = order, n  # each value is its own unit
    else:
        ids, units = cluster_ids(clusters, n)
        unit_of = ids[order]

    def middle(counts: np.ndarray) -> np.ndarray:
        # each value drawn as often as its unit; the middle one (or two) of the drawn values
        drawn = counts[:, unit_of].cumsum(axis=1)
        size = drawn[:, -1:]
        low = np.argmax(drawn > (size - 1) // 2, axis=1)
        high = np.argmax(drawn > size // 2, axis=1)
        return (ordered[low] + ordered[high]) / 2

    def statistic(counts: np.ndarray) -> np.ndarray:
        # a block holds _BLOCK_CELLS counts of units; spread over the values (many more than
        # the units when clustered) it is cut again, so memory stays as bounded as for a mean
        rows = max(1, _BLOCK_CELLS // n)
        return np.concatenate([middle(counts[i : i + rows]) for i in range(0, len(counts), rows)])

    return estimate(
        float(np.median(x)), statistic, units, n, resamples=resamples, seed=seed, unit=unit
    )


def proportion(
    outcomes: Sequence[bool],
    clusters: Sequence[Hashable] | None = None,
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    unit: str = "group",
) -> Estimate:
    """The share of true ``outcomes``: Wilson's interval for independent outcomes (sound at
    any n, so never left out), the bootstrap over ``clusters`` (each a ``unit``) when outcomes
    come in dependent groups (``resamples`` applies to that bootstrap only: Wilson's interval
    costs nothing)."""
    if clusters is not None:
        floats = [float(o) for o in outcomes]
        return mean(floats, clusters, resamples=resamples, seed=seed, unit=unit)
    n = len(outcomes)
    if n == 0:
        return EMPTY
    k = int(np.count_nonzero(np.asarray(outcomes, dtype=bool)))
    low, high = wilson_interval(k, n)  # type: ignore[misc]
    return Estimate(k / n, low, high, n)


def estimate(
    value: float | None,
    statistic: Statistic,
    units: int,
    n: int,
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    unit: str = "row",
) -> Estimate:
    """Any figure with its bootstrap interval: ``statistic`` recomputes it from unit counts
    (see :func:`bootstrap_interval`; ``unit`` names what is resampled); ``n`` is the rows it
    counts."""
    if value is None or units == 0:
        return Estimate(value, None, None, n)
    interval, why = _bootstrap(statistic, units, resamples, seed, unit)
    return Estimate(value, *_ends(interval), n, why)


def _ends(interval: tuple[float, float] | None) -> tuple:
    return (None, None) if interval is None else interval


def with_interval(group: dict, name: str, digits: int = 3) -> str:
    """``group[name]`` as a table shows it: the figure and its 95% interval,
    "0.433 [0.401, 0.465]" (the figure alone where it has none, "0.433 (n too small)" where it
    was left out for too few units; "-" where it is missing)."""
    value = group.get(name)
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return "-"
    interval = group.get(f"{name}_ci95")
    if not interval or None in interval:
        why = group.get(f"{name}{NO_INTERVAL}")
        return f"{value:.{digits}f}" + (f" ({short_reason(why)})" if why else "")
    return f"{value:.{digits}f} [{interval[0]:.{digits}f}, {interval[1]:.{digits}f}]"


def short_reason(why: str) -> str:
    """The head of a ``no_interval`` reason, for a table cell: "n too small", "no spread"."""
    return why.split(":")[0]


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def mean_over_seeds(runs: Sequence[dict]) -> dict:
    """One metrics.json for a step run with several seeds: each figure (a key with a
    ``_ci95`` beside it) is the mean over the runs, with ``<figure>_sd``, their sample
    standard deviation, in place of one run's interval; anything else is the first run's.
    ``seeds`` says how many runs there were."""

    def merge(values: list) -> Any:
        first = values[0]
        if not all(isinstance(v, dict) for v in values):
            return first
        out: dict = {}
        for key, item in first.items():
            interval_keys = ("_ci95", NO_INTERVAL)  # a run's own interval: the sd replaces it
            if any(key.endswith(k) and key.removesuffix(k) in first for k in interval_keys):
                continue
            column = [v.get(key) for v in values]
            if f"{key}_ci95" in first and all(_is_number(v) for v in column):
                out[key] = float(np.mean(column))
                out[f"{key}_sd"] = float(np.std(column, ddof=1)) if len(column) > 1 else None
            else:
                out[key] = merge(column) if isinstance(item, dict) else item
        return out

    if not runs:
        raise UserError("no runs to merge")
    return {**merge(list(runs)), "seeds": len(runs)}
