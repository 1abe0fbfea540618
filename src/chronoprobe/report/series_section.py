"""The report section of a ``series`` step: one model per period, each continued from the last.

It reads ``metrics.json`` (each period's sentences and final training loss) and, for each
model's parent, ``series.json``; the probe steps that read the series show what it knows.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from chronoprobe.report.blocks import DASH, Block, Section, Stats, Table, Text
from chronoprobe.report.plots import embed, line_plot
from chronoprobe.report.sections import read_metrics, section


def series_figures(metrics: dict[str, Any]) -> dict[str, Any]:
    """The series at a glance: models, periods, sentences read, the last model's loss."""
    losses = metrics.get("final_loss") or {}
    sentences = metrics.get("sentences") or {}
    if not isinstance(losses, dict) or not losses:
        return {}
    periods = list(losses)
    out: dict[str, Any] = {
        "models": len(periods),
        "periods": periods[0] if len(periods) == 1 else f"{periods[0]}{DASH}{periods[-1]}",
    }
    if isinstance(sentences, dict) and sentences:
        out["sentences"] = sum(v for v in sentences.values() if isinstance(v, int))
    last = losses[periods[-1]]
    if isinstance(last, int | float):
        out[f"final loss ({periods[-1]})"] = round(float(last), 3)
    return out


def _parents(step_dir: Path) -> dict[str, str | None]:
    path = step_dir / "series.json"
    if not path.is_file():
        return {}
    periods = json.loads(path.read_text(encoding="utf-8")).get("periods") or []
    return {p["period"]: p.get("parent") for p in periods if isinstance(p, dict) and "period" in p}


@section("series", headline=series_figures)
def series_section(step_dir: Path, record: dict) -> Section:
    """A model series: each period's model, the one it continued from, its sentences and
    final loss."""
    title = f"Model series: {record.get('id', step_dir.name)}"
    metrics = read_metrics(step_dir)
    figures = series_figures(metrics)
    if not figures:
        return Section(title, [Text("The step wrote no per-period losses.", style="error")])
    losses, sentences = metrics["final_loss"], metrics.get("sentences") or {}
    parents = _parents(step_dir)
    periods = list(losses)
    table = Table(
        ["period", "continued from", "sentences", "final loss"],
        [[p, parents.get(p) or DASH, sentences.get(p), losses[p]] for p in periods],
        caption="Each period's model reads that period's text only, starting from the "
        "previous period's model (the first reads all text up to its period's end).",
    )
    blocks: list[Block] = [Stats(figures)]
    if len(periods) > 1:
        figure = line_plot(
            {"final training loss": (list(range(len(periods))), [losses[p] for p in periods])},
            title="Final training loss per period's model",
            xlabel="period",
            ylabel="masked-LM loss",
            markers=True,
            categories=periods,
        )
        alt = f"Line of the final training loss of {len(periods)} models, one per period"
        blocks.append(embed(figure, alt=alt, data=table))
    else:
        blocks.append(table)
    return Section(title, blocks)
