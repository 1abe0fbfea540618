"""The report section of a ``tkg`` step: how well the embeddings rank held-out facts.

The first ``tkg`` step of a run also compares every ``tkg`` step of the run in one bar chart,
so that ComplEx against TComplEx (the paper's question) reads at a glance. Each step's own
section shows its figures as tiles, and as bars only what the tiles do not say: the MRR of
the queries asking the object against those asking the subject.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from chronoprobe.report.blocks import Block, Section, Stats, Table, with_uncertainty
from chronoprobe.report.plots import embed, error_rows, grouped_bars, line_plot
from chronoprobe.report.sections import (
    no_metrics,
    read_metrics,
    section,
    side_by_side,
    step_id_of,
)

METRICS = {
    "mrr": "MRR",
    "hits@1": "Hits@1",
    "hits@3": "Hits@3",
    "hits@10": "Hits@10",
    "time_accuracy": "time accuracy",
}


def _label(step_id: str, metrics: dict[str, Any]) -> str:
    return f"{step_id} ({metrics.get('model', '?')})"


def bar_value(value: Any) -> float:
    """A figure as a bar's length: NaN (no bar) where metrics.json has none, as a split
    without a query or question has none."""
    return math.nan if value is None else float(value)


def metric_bars(steps: list[tuple[str, dict[str, Any]]]) -> Block:
    names = list(METRICS.values())
    series = {
        _label(step_id, m): [bar_value(m.get(key)) for key in METRICS] for step_id, m in steps
    }
    errors = {_label(step_id, m): error_rows([(m, key) for key in METRICS]) for step_id, m in steps}
    figure = grouped_bars(
        names,
        series,
        title="Filtered ranking of held-out facts",
        xlabel="metric",
        ylabel="score (higher is better)",
        value_limits=(0, 1),
        errors=errors,
    )
    alt = "Bar chart of filtered MRR, Hits@1/3/10 and time accuracy: " + "; ".join(
        f"{name} MRR {values[0]:.3f}"
        for name, values in series.items()
        if not math.isnan(values[0])
    )
    data = Table(
        ["model", *names],
        [
            [_label(step_id, m), *(with_uncertainty(m, key, 4) for key in METRICS)]
            for step_id, m in steps
        ],
    )
    caption = (
        "Each test fact is asked in both directions at its start year; answers true in that "
        "year are filtered. Time accuracy: the fact's year ranked first among all years "
        "(ComplEx has no time embeddings, so no bar). Error bars: 95% intervals (a bootstrap "
        "over test facts; Wilson for time accuracy), or ± one sd over seeds for a step "
        "repeated over them."
    )
    return embed(figure, alt=alt, caption=caption, data=data)


DIRECTIONS = {
    "object_mrr": "object asked (s, r, ?, t)",
    "subject_mrr": "subject asked (?, r, o, t)",
}


def direction_bars(step_id: str, metrics: dict[str, Any]) -> list[Block]:
    """MRR of the queries asking the object against those asking the subject: the tiles
    give both together, and an N-1 relation (many people, one office) is easy one way only."""
    if not all(metrics.get(key) is not None for key in DIRECTIONS):
        return []
    label = _label(step_id, metrics)
    figure = grouped_bars(
        list(DIRECTIONS.values()),
        {label: [float(metrics[key]) for key in DIRECTIONS]},
        title="Filtered MRR by the entity asked",
        xlabel="MRR (higher is better)",
        ylabel="query",
        errors={label: error_rows([(metrics, key) for key in DIRECTIONS])},
        horizontal=True,
        value_format="{:.3f}",
        value_limits=(0, 1),
    )
    parts = [f"{name} {metrics[key]:.3f}" for key, name in DIRECTIONS.items()]
    data = Table(
        ["query", "MRR", "queries"],
        [
            [name, with_uncertainty(metrics, key, 4), metrics.get(f"{key}_n")]
            for key, name in DIRECTIONS.items()
        ],
    )
    caption = (
        "Each test fact is asked both ways at its start year, answers true in that year "
        "filtered; error bars: 95% bootstrap intervals over the test facts."
    )
    alt = "Bars of filtered MRR by the entity asked: " + "; ".join(parts)
    return [embed(figure, alt=alt, caption=caption, data=data)]


def loss_curve(step_dir: Path, ylabel: str = "cross entropy over entities") -> list[Block]:
    """The training loss per epoch from a checkpoint's ``config.json`` history (tkg and kgqa)."""
    path = step_dir / "config.json"
    if not path.is_file():
        return []
    history = json.loads(path.read_text(encoding="utf-8")).get("history") or []
    if len(history) < 2:
        return []
    epochs = [row["epoch"] for row in history]
    losses = [row["loss"] for row in history]
    figure = line_plot(
        {"training loss": (epochs, losses)},
        title="Training loss per epoch",
        xlabel="epoch",
        ylabel=ylabel,
        markers=True,
    )
    alt = f"Line chart of the training loss from {losses[0]:.3f} to {losses[-1]:.3f}."
    return [embed(figure, alt=alt)]


@section(
    "tkg",
    headline=("mrr", "hits@1", "hits@10", "time_accuracy"),
    compare=side_by_side("embedding models", metric_bars),
)
def tkg_section(step_dir: Path, record: dict) -> Section:
    """TKG embeddings' MRR, Hits@1/10 and time accuracy on the test queries, by direction,
    and the loss curve."""
    step_id = step_id_of(step_dir, record)
    title = f"Temporal KG embeddings: {step_id}"
    metrics = read_metrics(step_dir)
    if not metrics:
        return no_metrics(title)
    params = record.get("params") or {}
    tiles: dict[str, Any] = {
        "model": metrics.get("model", params.get("arch", "?")),
        "rank": params.get("rank", "?"),
        "test queries": metrics.get("queries", 0),
        **{
            label: with_uncertainty(metrics, key, 4)
            for key, label in METRICS.items()
            if key in metrics
        },
    }
    blocks: list[Block] = [Stats(tiles), *direction_bars(step_id, metrics)]
    return Section(title, [*blocks, *loss_curve(step_dir)])
