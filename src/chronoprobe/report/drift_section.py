"""The report section of a drift view's ``probe`` step (single-token, multi-token, PLL): what
each model knows, period by period.

It reads the step's ``matrix.json`` (no model is loaded, no prediction re-scored): a heatmap of
the models x periods matrix (the paper's Table 2; for one model, a line over the periods), one
per split that has rows, each cell with the rows behind it and faded below a few, bars of each
model's score per fine-grained split, and, when the models are a series named by period, the
t-1 / t / t+1 window (the paper's Figure 4: an adapting series peaks at t on updated facts).
Deleted rows carry the previous period's answers: figures over "all rows" leave them out unless
the step's ``include_deleted`` was set, and every such figure says which.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from chronoprobe.report.blocks import Block, Section, Stats, Table, Text, with_uncertainty
from chronoprobe.report.plots import FEW_ROWS, embed, error_rows, grouped_bars, heatmap, line_plot
from chronoprobe.report.sections import answered_nothing, read_metrics, section
from chronoprobe.report.view_section import coverage_text, view_section

# what each metric means, for captions and axis labels
LABELS = {
    "P@1": "P@1 (share of rows with a gold label ranked first)",
    "MRR": "MRR of the best single-token gold label",
    "f1": "token F1 of the greedy multi-token prediction",
    "exact_match": "exact match of the greedy multi-token prediction",
    "temporal_acc": "temporal accuracy (this period's answer beats other periods' answers)",
    "temporal_mrr": "temporal MRR (rank of this period's answer among all periods' answers)",
    "median_nll": "median negated log-likelihood of the gold labels (lower is better)",
    "mean_label_logprob": "mean summed log-probability of the gold labels",
}
HEATMAP_SPLITS = ("all", "updated", "new")


def _short(models: list[str]) -> list[str]:
    """Local model directories by their last part, when that keeps the names apart."""
    short = [Path(m).name or m if "/" in m else m for m in models]
    return short if len(set(short)) == len(short) else list(models)


def _nan(values: list[list[float | None]]) -> list[list[float]]:
    return [[math.nan if v is None else v for v in row] for row in values]


def _cell(value: float | None) -> Any:
    return None if value is None else round(value, 4)


def _cells(matrix: dict, metric: str) -> list[list[dict[str, Any]]]:
    """Each cell of a matrix as a figure with its 95% interval (matrices written before cells
    had intervals have none)."""
    values = matrix["values"]
    intervals = matrix.get("intervals") or [[None] * len(row) for row in values]
    return [
        [{metric: v, f"{metric}_ci95": ci} for v, ci in zip(row, cis, strict=True)]
        for row, cis in zip(values, intervals, strict=True)
    ]


def rows_named(split: str, excludes: list[str]) -> str:
    """How a figure names its rows: a split's, or all but the excluded splits'."""
    if split != "all":
        return f"{split} rows"
    return f"all rows but {' and '.join(excludes)}" if excludes else "all rows, deleted included"


def _heatmap(matrix: dict, metric: str, split: str) -> Block:
    """The models x periods matrix of ``metric``: a heatmap, or a line for a single model; each
    cell with its rows, faded below ``FEW_ROWS``."""
    rows_label = "model (trained up to)" if _is_series(matrix) else "model"
    rows = rows_named(split, matrix.get("excludes", []))
    models, periods, counts = _short(matrix["models"]), matrix["periods"], matrix["counts"]
    cells = _cells(matrix, metric)
    scale = (0.0, 1.0) if metric not in ("median_nll", "mean_label_logprob") else (None, None)
    if len(models) == 1:
        values = _nan(matrix["values"])[0]
        figure = line_plot(
            {models[0]: (list(range(len(periods))), values)},
            title=f"{metric} of {models[0]} per period ({rows})",
            xlabel="test period",
            ylabel=metric,
            markers=True,
            ylim=scale if scale[0] is not None else None,
            categories=periods,
            faded={models[0]: [n < FEW_ROWS for n in counts[0]]},
            errors={models[0]: error_rows([(cell, metric) for cell in cells[0]])},
        )
        alt = f"Line chart of {metric} for {models[0]} over {len(periods)} periods ({rows})"
    else:
        figure = heatmap(
            _nan(matrix["values"]),
            models,
            periods,
            title=f"{metric} per model and period ({rows})",
            xlabel="test period",
            ylabel=rows_label,
            value_label=metric,
            vmin=scale[0],
            vmax=scale[1],
            counts=counts,
        )
        alt = f"Heatmap of {metric} for {len(models)} models over {len(periods)} periods ({rows})"
    data = Table(
        ["model", *(f"{p} ({what})" for p in periods for what in ("value [95% CI]", "rows"))],
        [
            [
                m,
                *(
                    x
                    for c, n in zip(row, ns, strict=True)
                    for x in (with_uncertainty(c, metric, 4), n)
                ),
            ]
            for m, row, ns in zip(matrix["models"], cells, counts, strict=True)
        ],
    )
    few = sum(0 < n < FEW_ROWS for cells in counts for n in cells)
    caption = LABELS.get(metric, metric)
    if few:
        caption += (
            f". {few} of {sum(n > 0 for c in counts for n in c)} cells come from fewer than "
            f"{FEW_ROWS} rows (n in each cell) and are drawn faded: values from so few rows "
            "are uncertain (a share from 30 rows by about 18 points either way)"
        )
    return embed(figure, alt=alt, caption=caption, data=data)


def _is_series(matrix: dict) -> bool:
    return bool(set(matrix["models"]) & set(matrix["periods"]))


def _overall(matrix: dict, i: int, metric: str) -> dict:
    """Model ``i``'s figure over every period of a split's matrix, with its 95% interval
    (matrices written before intervals have none)."""
    intervals = matrix.get("overall_ci95") or [None] * len(matrix["overall"])
    return {metric: matrix["overall"][i], f"{metric}_ci95": intervals[i]}


def _split_bars(by_split: dict[str, dict], metric: str) -> Block | None:
    splits = [s for s in by_split if s != "all"]
    if not splits:
        return None
    models = _short(by_split["all"]["models"])
    series = {
        model: [
            math.nan if by_split[s]["overall"][i] is None else by_split[s]["overall"][i]
            for s in splits
        ]
        for i, model in enumerate(models)
    }
    errors = {
        model: error_rows([(_overall(by_split[s], i, metric), metric) for s in splits])
        for i, model in enumerate(models)
    }
    figure = grouped_bars(
        splits,
        series,
        title=f"{metric} per split",
        xlabel="split",
        ylabel=metric,
        errors=errors,
    )
    data = Table(
        ["model", *splits],
        [
            [model, *(with_uncertainty(_overall(by_split[s], i, metric), metric) for s in splits)]
            for i, model in enumerate(models)
        ],
        caption="In brackets and as error bars: 95% intervals.",
    )
    alt = f"Bars of {metric} per fine-grained split for {len(models)} models"
    return embed(figure, alt=alt, data=data)


def _window_table(by_split: dict[str, dict], metric: str) -> Block | None:
    rows = []
    excludes = by_split["all"].get("excludes", []) if "all" in by_split else []
    for split, matrix in by_split.items():
        window = matrix["window"]
        for model, cells in window["models"].items():
            rows.append([split, model, *(_cell(cells[k]) for k in ("t-1", "t", "t+1", "mean"))])
        if window["full_windows"]:
            mean = window["mean"]
            label = f"mean of {window['full_windows']} full windows"
            rows.append([split, label, *(_cell(mean[k]) for k in ("t-1", "t", "t+1")), None])
    if not rows:
        return None
    return Table(
        ["split", "model (period t)", "t-1", "t", "t+1", "mean"],
        rows,
        caption=(
            f"{metric} of each model on the periods before, at and after its own; an adapted "
            f"series peaks at t on updated rows. Split 'all': {rows_named('all', excludes)}."
        ),
    )


def _skipped_note(metrics: dict) -> Block | None:
    """What each model's figures cover: the rows a view did not answer and those it leaves
    out, per reason, and the rows a causal model was asked as questions (their gap comes
    first), with the figures per form."""
    notes = coverage_text(metrics.get("models", {}))
    return Text(" ".join(f"{n}." for n in notes), style="note") if notes else None


HEADLINE = ("view", "rows", "model_count", "P@1", "f1", "temporal_acc")


@section("probe:single-token", headline=HEADLINE)
@section("probe:multi-token", headline=HEADLINE)
@section("probe:pll", headline=HEADLINE)
def probe_section(step_dir: Path, record: dict) -> Section:
    """The models x periods matrix of matrix.json; rows without periods (no matrix) get any
    view's section."""
    metrics = read_metrics(step_dir)
    title = f"Drift probe: {record.get('id', step_dir.name)}"
    path = step_dir / "matrix.json"
    models = metrics.get("models") or {}
    notes = [n for name, m in models.items() if (n := answered_nothing(name, m)) is not None]
    if models and len(notes) == len(models):
        return Section(title, notes)
    if not path.is_file():
        return view_section(step_dir, record)
    tables = json.loads(path.read_text(encoding="utf-8"))
    metric = tables["default_metric"]
    by_split = tables["metrics"][metric]
    excludes = metrics.get("overall_excludes", [])
    one = metrics.get("model_count") == 1
    over = "" if one else "mean over models; "
    tiles = {
        "view": tables["view"],
        "rows": metrics.get("rows"),
        "models": metrics.get("model_count"),
        f"{metric} ({over}{rows_named('all', excludes)})": with_uncertainty(metrics, metric),
    }
    blocks: list[Block] = [Stats(tiles)]
    skipped = _skipped_note(metrics)
    if skipped is not None:
        blocks.append(skipped)
    for split in HEATMAP_SPLITS:
        matrix = by_split.get(split)
        if matrix and any(sum(c) for c in matrix["counts"]):
            blocks.append(_heatmap(matrix, metric, split))
    bars = _split_bars(by_split, metric)
    if bars is not None:
        blocks.append(bars)
    window = _window_table(by_split, metric)
    if window is not None:
        blocks.append(window)
    others = [m for m in tables["metrics"] if m != metric]
    if others:
        blocks.append(Text(f"matrix.json also holds {', '.join(others)}, per split.", style="note"))
    return Section(title, blocks)
