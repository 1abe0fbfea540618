"""The report section of a ``probe`` step whose view has no section of its own.

Any view writes ``metrics.json`` with, per model, its figures and their 95% intervals (a figure
is a key with a ``_ci95`` beside it, as :func:`chronoprobe.metrics.uncertainty.summary` writes
them), the rows it answered and those it skipped. This section shows them as one table, so a
view added by a plugin is reported without a line of report code; a view whose family draws
more registers its own section under ``probe:VIEW`` (see :mod:`chronoprobe.report.sections`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chronoprobe.report.blocks import Block, Section, Stats, Table, Text, with_uncertainty
from chronoprobe.report.sections import answered_nothing, no_metrics, read_metrics, section


def figure_names(metrics: dict[str, Any]) -> list[str]:
    """The figures of one model's metrics.json entry: the keys with an interval beside them."""
    return [k for k in metrics if f"{k}_ci95" in metrics or f"{k}_sd" in metrics]


def figures_table(models: dict[str, dict[str, Any]]) -> Table:
    """One row per model: each figure with its 95% interval, the rows predicted and skipped."""
    names = list(dict.fromkeys(n for m in models.values() for n in figure_names(m)))
    rows = [
        [
            model,
            *(with_uncertainty(m, name) for name in names),
            m.get("predicted"),
            sum((m.get("skipped") or {}).values()),
        ]
        for model, m in models.items()
    ]
    return Table(
        ["model", *names, "predicted", "skipped"],
        rows,
        caption="In brackets: 95% intervals (metrics.json holds every figure).",
    )


def coverage_text(models: dict[str, dict[str, Any]]) -> list[str]:
    """What each model's figures cover (its coverage record, see
    :mod:`chronoprobe.probes.coverage`), and its figures per form; a model of a step written
    before coverage records gives its skipped rows instead."""
    from chronoprobe.probes.coverage import coverage_notes

    notes = []
    for name, m in models.items():
        if m.get("coverage"):
            notes += coverage_notes(name, m)
            continue
        skipped = [f"{n:,} ({why})" for why, n in (m.get("skipped") or {}).items()]
        if skipped:
            notes.append(f"{name}: rows skipped by the view: {'; '.join(skipped)}")
    return notes


@section("probe", headline=("view", "rows", "model_count"))
def view_section(step_dir: Path, record: dict) -> Section:
    """Any view's figures per model, with their intervals, and why rows were skipped."""
    metrics = read_metrics(step_dir)
    view = metrics.get("view") or (record.get("params") or {}).get("view", "?")
    title = f"Probe {view}: {record.get('id', step_dir.name)}"
    models = metrics.get("models") or {}
    if not models:
        return no_metrics(title)
    blocks: list[Block] = [
        Stats({"view": view, "rows": metrics.get("rows"), "models": len(models)})
    ]
    answered = {}
    for name, m in models.items():
        note = answered_nothing(name, m)
        if note is None:
            answered[name] = m
        else:
            blocks.append(note)
    if answered:
        blocks.append(figures_table(answered))
    blocks += [Text(note, style="note") for note in coverage_text(answered)]
    warnings = [f"{name}: {w}" for name, m in answered.items() for w in m.get("warnings") or ()]
    if warnings:
        blocks.append(Text("Warnings: " + "; ".join(warnings), style="note"))
    return Section(title, blocks)
