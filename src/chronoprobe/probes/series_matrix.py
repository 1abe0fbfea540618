"""The model-series matrix: a view's metric for every (model, period), and the t-1/t/t+1 window.

This is the paper's Table 2 (models as rows, test periods as columns) and its Figure 4 (each
model trained on period t, tested on t-1, t and t+1: adapted models peak at t on the updated
split). Everything is computed from prediction rows that carry a ``model`` field, so a matrix
can be recomputed from ``predictions.parquet`` without touching a model.

A matrix shows the view's own metrics (``View.metric_names``: its drift matrix's ``metrics``,
else every figure its ``summarize`` gives); besides those, two kinds are computed here:

- ``median_nll`` (pll): the median over gold labels of the negated summed log-probability,
  the paper's Table 2 figure (lower is better).
- ``temporal_acc`` / ``temporal_mrr`` (pll): a query's text is the same in every period, so
  the labels that answer it in *any* probed period compete for it: the rank of the row's best
  gold label among all of them says whether the model prefers this period's answer to the
  answers of other periods. Rows whose query never changes answer have no competitor and no
  rank; they count in neither metric.

The ``all`` matrices leave the deleted rows out (they carry the previous period's answers)
unless ``include_deleted``; the ``deleted`` split has its own matrix either way.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import pyarrow.parquet as pq

from chronoprobe.errors import UserError
from chronoprobe.metrics.uncertainty import EMPTY, RESAMPLES, Estimate
from chronoprobe.probes.grouping import outside_all
from chronoprobe.probes.view import View
from chronoprobe.set_files import DRIFT_SPLITS
from chronoprobe.time import Period

ALL = "all"  # the split name of a matrix over every row
WINDOW = ("t-1", "t", "t+1")


def read_predictions(path: str | Path) -> list[dict]:
    """Prediction rows of a ``predictions.parquet``, map columns back to dicts."""
    return prediction_rows(pq.read_table(path))


def prediction_rows(table) -> list[dict]:
    """The rows of a predictions table, map columns back to dicts."""
    rows = table.to_pylist()
    for row in rows:
        for key in ("label_scores", "label_tokens"):
            if isinstance(row.get(key), list):
                row[key] = dict(row[key])
    return rows


def with_temporal_ranks(predictions: Sequence[dict]) -> list[dict]:
    """PLL rows with ``temporal_rank``: the best gold label's rank among the query's labels of
    every period (ties ranked optimistically), or None when no other period has another label.

    Rows are grouped by (model, query): the ``query`` field when present, else the id without
    its period suffix, which is how drift ids are made.
    """
    groups: dict[tuple, dict[str, float]] = defaultdict(dict)

    def key(row: dict) -> tuple:
        query = row.get("query") or str(row["id"]).removesuffix(f"_{row.get('period')}")
        return row.get("model"), query

    for row in predictions:
        groups[key(row)].update(row["label_scores"])
    out = []
    for row in predictions:
        scores = groups[key(row)]
        gold = row["label_scores"]
        others = [s for label, s in scores.items() if label not in gold]
        rank = None
        if gold and others:
            best = max(gold.values())
            rank = 1 + sum(s > best for s in others)
        out.append({**row, "temporal_rank": rank})
    return out


def metric_estimate(
    view: View, metric: str, rows: Sequence[dict], resamples: int = RESAMPLES
) -> Estimate:
    """One metric of ``view`` over a group of its prediction rows, with its n and 95%
    interval (``resamples`` 0: the figure alone); no value for an empty group."""
    if not rows:
        return EMPTY
    cell_metrics = view.drift.cell_metrics if view.drift is not None else {}
    if metric in cell_metrics:
        return cell_metrics[metric](rows, resamples)
    summary = view.summarize(rows, resamples=resamples)
    if metric not in summary:
        known = ", ".join(view.metric_names(rows))
        raise UserError(f"view {view.name!r} has no metric {metric!r}; choose one of {known}")
    value, interval = summary[metric], summary.get(f"{metric}_ci95")
    low, high = interval if interval else (None, None)
    n = summary.get(f"{metric}_n", summary["n"])
    return Estimate(None if value is None else float(value), low, high, n)


def period_order(periods: Sequence[str]) -> list[str]:
    """Distinct periods in calendar order (unparseable names last, alphabetically)."""

    def key(label: str) -> tuple:
        try:
            p = Period.parse(label)
            return (0, p.first_day(), p.granularity, label)
        except ValueError:
            return (1, 0, 0, label)

    return sorted(set(periods), key=key)


@dataclass(frozen=True)
class SeriesMatrix:
    """``values[i][j]``: the metric of model ``models[i]`` on period ``periods[j]``'s rows,
    ``intervals[i][j]`` its 95% bootstrap interval ([low, high]; None without one) and
    ``counts[i][j]`` the rows it counts."""

    view: str
    metric: str
    split: str  # ALL or one fine-grained split
    models: list[str]
    periods: list[str]
    values: list[list[float | None]]
    counts: list[list[int]]
    excludes: list[str]  # splits left out of ALL (the deleted rows, unless included)
    intervals: list[list[list[float] | None]]

    def to_dict(self) -> dict:
        return asdict(self)

    def window(self) -> dict:
        """The t-1 / t / t+1 window of every model named by a period of the matrix.

        ``models`` maps each such model to its values at t-1, t, t+1 (None where the neighbour
        is outside the matrix or empty) and their mean; ``mean`` averages each offset over the
        models whose three values all exist, so every offset averages the same models.
        """
        column = {p: j for j, p in enumerate(self.periods)}
        per_model: dict[str, dict[str, float | None]] = {}
        for i, model in enumerate(self.models):
            if model not in column:
                continue
            j = column[model]
            cells = {}
            for offset, name in zip((-1, 0, 1), WINDOW, strict=True):
                k = j + offset
                ok = 0 <= k < len(self.periods) and _adjacent(self.periods, j, k)
                cells[name] = self.values[i][k] if ok else None
            present = [v for v in cells.values() if v is not None]
            cells["mean"] = sum(present) / len(present) if present else None
            per_model[model] = cells
        full = [c for c in per_model.values() if all(c[n] is not None for n in WINDOW)]
        mean = {n: (sum(c[n] for c in full) / len(full) if full else None) for n in WINDOW}
        return {"models": per_model, "mean": mean, "full_windows": len(full)}


def _adjacent(periods: Sequence[str], j: int, k: int) -> bool:
    """Are columns j and k consecutive periods (not just neighbours in a gappy list)?"""
    if j == k:
        return True
    a, b = sorted((j, k))
    try:
        return Period.parse(periods[a]).next() == Period.parse(periods[b])
    except ValueError:
        return True  # not periods: neighbouring columns are the best we know


def series_matrix(
    predictions: Sequence[dict],
    view: View,
    metric: str | None = None,
    *,
    split: str = ALL,
    models: Sequence[str] | None = None,
    periods: Sequence[str] | None = None,
    include_deleted: bool = False,
    prepared: bool = False,
    resamples: int = RESAMPLES,
) -> SeriesMatrix:
    """The models x periods matrix of ``metric`` (default: the view's first) over the rows of
    ``split`` (ALL: every row but the deleted ones, unless ``include_deleted``), each cell with
    its interval (``resamples`` 0: none).

    ``models`` and ``periods`` fix the order (default: models as they first appear, periods in
    calendar order); the rows go through the view's ``prepare`` here unless ``prepared``.
    """
    rows = list(predictions)
    prepare = view.drift.prepare if view.drift is not None else None
    if prepare and rows and not prepared:
        rows = prepare(rows)
    if metric is None:
        names = view.metric_names(rows)
        if not names:
            raise UserError(f"view {view.name!r} gives no figure with an interval to show")
        metric = names[0]
    models = list(models) if models is not None else list(dict.fromkeys(r["model"] for r in rows))
    periods = list(periods) if periods is not None else period_order([r["period"] for r in rows])
    left_out = outside_all(include_deleted) if split == ALL else []
    cells: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for row in rows:
        if in_split(row, split, left_out):
            cells[row["model"], row["period"]].append(row)
    estimates = [
        [metric_estimate(view, metric, cells[m, p], resamples) for p in periods] for m in models
    ]
    values = [[e.value for e in row] for row in estimates]
    intervals = [[None if e.low is None else [e.low, e.high] for e in row] for row in estimates]
    counts = [[len(cells[m, p]) for p in periods] for m in models]
    return SeriesMatrix(
        view.name, metric, split, models, periods, values, counts, left_out, intervals
    )


def in_split(row: dict, split: str, left_out: Sequence[str]) -> bool:
    """Is ``row`` one of ``split``'s (ALL: any split but those ``left_out``)?"""
    if split == ALL:
        return row.get("split") not in left_out
    return row.get("split") == split


def series_tables(
    predictions: Sequence[dict],
    view: View,
    *,
    models: Sequence[str] | None = None,
    splits: Sequence[str] | None = None,
    include_deleted: bool = False,
) -> dict:
    """Every metric of the view, over all rows and per split, as JSON: the matrix, its window,
    and ``overall`` (each model's value over all periods' rows of the split) with
    ``overall_ci95`` (its 95% interval). ``all`` leaves the deleted rows out unless
    ``include_deleted``."""
    prepare = view.drift.prepare if view.drift is not None else None
    rows = prepare(predictions) if prepare else list(predictions)
    names = view.metric_names(rows)
    models = list(models) if models is not None else list(dict.fromkeys(r["model"] for r in rows))
    present = [s for s in DRIFT_SPLITS if any(r.get("split") == s for r in rows)]
    splits = [ALL, *(splits if splits is not None else present)]
    left_out = outside_all(include_deleted)
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for row in rows:
        for split in splits:
            if in_split(row, split, left_out):
                groups[row["model"], split].append(row)
    out: dict[str, dict] = {}
    for metric in names:
        out[metric] = {}
        for split in splits:
            matrix = series_matrix(
                rows,
                view,
                metric,
                split=split,
                models=models,
                include_deleted=include_deleted,
                prepared=True,
            )
            overall = [metric_estimate(view, metric, groups[m, split]) for m in models]
            out[metric][split] = {
                **matrix.to_dict(),
                "window": matrix.window(),
                "overall": [e.value for e in overall],
                "overall_ci95": [None if e.low is None else [e.low, e.high] for e in overall],
            }
    return {
        "view": view.name,
        "default_metric": names[0] if names else None,
        "all_excludes": left_out,
        "metrics": out,
    }
