"""The report section of a ``build`` step: what the probe set holds, per family.

It reads the ``stats.json`` the builder wrote (the same numbers ``chronoprobe build`` prints):
drift rows per period and split, LAMA-TK statements per relation and slot, CronQuestions
questions per reasoning type and split, ECBD examples per origination-year group.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from chronoprobe.report.blocks import Block, Percent, Section, Stats, Table, Text
from chronoprobe.report.lamatk_section import sample_note
from chronoprobe.report.plots import embed, grouped_bars
from chronoprobe.report.sections import read_metrics, section

DRIFT_SPLITS = ("first period", "unchanged", "updated", "new", "deleted")
TITLES = {
    "drift": "Drift probe set (DynamicTempLAMA)",
    "lamatk": "LAMA-TK statements",
    "cronq": "CronQuestions questions",
    "ecbd": "Entity Cloze By Date examples",
    "dates": "Statements under right and wrong dates",
}


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


FAMILIES = {"drift": _drift, "lamatk": _lamatk, "cronq": _cronq, "ecbd": _ecbd}


@section("build", headline=("rows", "statements", "questions", "examples"))
def build_section(step_dir: Path, record: dict[str, Any]) -> Section:
    metrics = read_metrics(step_dir)
    family = metrics.get("family", "")
    tiles = {k: v for k, v in metrics.items() if k != "family" and not isinstance(v, dict)}
    blocks: list[Block] = [Stats(tiles)]
    if family in FAMILIES:  # a builder without its own figures (dates, a plugin's) shows tiles
        stats = json.loads((step_dir / "stats.json").read_text(encoding="utf-8"))
        blocks += FAMILIES[family](stats)
    return Section(TITLES.get(family, f"Probe set {record.get('id')} ({family})"), blocks)
