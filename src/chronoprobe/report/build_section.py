"""The report sections of ``build`` steps: what the probe set holds, per builder.

Each builder that ships with chronoprobe has its section under ``build:FAMILY``, drawn from the
``stats.json`` it wrote (the same numbers ``chronoprobe build`` prints): drift rows per period
and split, LAMA-TK statements per relation and slot, CronQuestions questions per reasoning type
and split, ECBD examples per origination-year group. Any other builder (a plugin's) gets the
headline counts of its metrics.json.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from chronoprobe.report.blocks import Block, Percent, Section, Stats, Table, Text
from chronoprobe.report.lamatk_section import sample_note
from chronoprobe.report.plots import embed, grouped_bars
from chronoprobe.report.sections import SectionFunction, read_metrics, section

DRIFT_SPLITS = ("first period", "unchanged", "updated", "new", "deleted")
HEADLINE = ("rows", "statements", "questions", "examples")


def _drift(stats: list[dict]) -> list[Block]:
    periods = [row["period"] for row in stats]
    series = {split: [row.get(split, 0) for row in stats] for split in DRIFT_SPLITS}
    series = {split: values for split, values in series.items() if any(values)}
    figure = grouped_bars(
        periods, series, title="Rows per period and split", xlabel="period", ylabel="rows"
    )
    columns = ["period", "total", *series]
    rows = [[row["period"], row.get("total", 0), *(row.get(s, 0) for s in series)] for row in stats]
    table = Table(columns, rows)
    alt = f"Bars of probe rows per split in {len(periods)} periods, {periods[0]} to {periods[-1]}"
    return [embed(figure, alt=alt, data=table)]


def _lamatk(stats: dict) -> list[Block]:
    main = stats["statements"]
    relations = main["relations"]
    names = sorted(relations, key=lambda r: -relations[r]["statements"])
    counts = [relations[r]["statements"] for r in names]
    multi = [relations[r].get("multi_answer", 0) for r in names]
    figure = grouped_bars(
        names,
        {"statements": counts, "multi-answer": multi},
        title="Statements per relation",
        xlabel="statements",
        ylabel="relation",
        horizontal=True,
    )
    rows = [
        [r, c, m, Percent(m / c if c else 0.0)]
        for r, c, m in zip(names, counts, multi, strict=True)
    ]
    table = Table(["relation", "statements", "multi-answer", "share"], rows)
    slots = Table(["slot", "statements"], sorted(main["slots"].items()), caption="Per masked slot")
    blocks: list[Block] = [embed(figure, alt="Bars of statements per relation", data=table), slots]
    if "sample" in stats:
        blocks.insert(0, Text(sample_note(stats["sample"], main["statements"]), style="note"))
    skipped = sorted((k, v) for k, v in (main.get("skipped_facts") or {}).items() if v)
    if skipped:
        blocks.append(Table(["reason", "facts"], skipped, caption="Facts skipped by the builder"))
    return blocks


def _cronq(stats: dict) -> list[Block]:
    splits = ("train", "valid", "test")
    types = list(stats["all"]["types"])
    series = {split: [stats[split]["types"][t] for t in types] for split in splits}
    figure = grouped_bars(
        types, series, title="Questions per reasoning type", xlabel="type", ylabel="questions"
    )
    table = Table(
        ["type", *splits], [[t, *(series[s][i] for s in splits)] for i, t in enumerate(types)]
    )
    return [embed(figure, alt="Bars of questions per reasoning type and split", data=table)]


def _ecbd(stats: dict) -> list[Block]:
    groups = list(stats["groups"])
    counts = [stats["groups"][g] for g in groups]
    figure = grouped_bars(
        groups, {"examples": counts}, title="Examples per group", xlabel="group", ylabel="examples"
    )
    table = Table(["group", "examples"], list(zip(groups, counts, strict=True)))
    return [embed(figure, alt="Bars of ECBD examples per origination-year group", data=table)]


def _blocks(step_dir: Path, figures: Callable[[Any], list[Block]] | None) -> list[Block]:
    """The headline counts of metrics.json as tiles, then ``figures`` of stats.json."""
    metrics = read_metrics(step_dir)
    tiles = {k: v for k, v in metrics.items() if k != "family" and not isinstance(v, dict)}
    blocks: list[Block] = [Stats(tiles)] if tiles else []
    if figures is not None:
        stats = json.loads((step_dir / "stats.json").read_text(encoding="utf-8"))
        blocks += figures(stats)
    return blocks


def probe_set_section(
    title: str, figures: Callable[[Any], list[Block]] | None = None
) -> SectionFunction:
    """A builder's section, titled ``title: <step id>``: its headline counts (metrics.json) as
    tiles, then ``figures`` of the stats.json it wrote."""

    def build(step_dir: Path, record: dict[str, Any]) -> Section:
        return Section(f"{title}: {record.get('id', step_dir.name)}", _blocks(step_dir, figures))

    figured = ", then the figures of stats.json" if figures else ""
    build.__doc__ = f"{title}: the counts of metrics.json{figured}"
    return build


@section("build", headline=HEADLINE)
def build_section(step_dir: Path, record: dict[str, Any]) -> Section:
    """A builder without a section of its own: the counts of its metrics.json."""
    family = (record.get("params") or {}).get("family") or read_metrics(step_dir).get("family")
    blocks = _blocks(step_dir, None) or [Text("The builder wrote no metrics.json.", style="note")]
    return Section(f"Probe set {record.get('id', step_dir.name)} ({family})", blocks)


section("build:drift", headline=HEADLINE)(
    probe_set_section("Drift probe set (DynamicTempLAMA)", _drift)
)
section("build:lamatk", headline=HEADLINE)(probe_set_section("LAMA-TK statements", _lamatk))
section("build:cronq", headline=HEADLINE)(probe_set_section("CronQuestions questions", _cronq))
section("build:ecbd", headline=HEADLINE)(probe_set_section("Entity Cloze By Date examples", _ecbd))
section("build:dates", headline=HEADLINE)(
    probe_set_section("Statements under right and wrong dates")
)
