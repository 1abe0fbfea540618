"""The report section of a ``memorize`` step: how much of LAMA-TK the model recites.

Shows the paper's four numbers, accuracy by relation and by slot, and single- against
multi-answer statements (the paper's Table 2: conflicts keep Acc@K high but pull Hit@K down).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chronoprobe.report.blocks import Block, Percent, Section, Stats, Table, Text
from chronoprobe.report.plots import embed, grouped_bars
from chronoprobe.report.sections import read_metrics, section

METRICS = ("acc@1", "acc@5", "hit@5", "hit@10")


def _bars(groups: dict[str, dict], title: str, what: str) -> Block:
    names = list(groups)
    series = {m: [groups[g][m] or 0.0 for g in names] for m in METRICS}
    figure = grouped_bars(
        names,
        series,
        title=title,
        xlabel="share",
        ylabel=what,
        horizontal=True,
        value_format="{:.0%}",
    )
    alt = f"{title}: " + "; ".join(
        f"{g} Acc@1 {groups[g]['acc@1'] or 0:.0%}, Hit@10 {groups[g]['hit@10'] or 0:.0%}"
        for g in names
    )
    data = Table(
        [what, "statements", "queries", *METRICS],
        [
            [
                g,
                groups[g]["statements"],
                groups[g]["queries"],
                *(_share(groups[g][m]) for m in METRICS),
            ]
            for g in names
        ],
    )
    return embed(figure, alt=alt, data=data)


def _share(value: float | None) -> Percent | None:
    return None if value is None else Percent(value)


def _blocks(metrics: dict[str, Any], label: str) -> list[Block]:
    blocks: list[Block] = [
        Stats(
            {
                f"{label}": metrics["statements"],
                "queries": metrics["queries"],
                **{
                    m.replace("acc", "Acc").replace("hit", "Hit"): _share(metrics[m])
                    for m in METRICS
                },
            }
        )
    ]
    if metrics.get("by_answers"):
        blocks.append(_bars(metrics["by_answers"], "Single- vs multi-answer statements", "answers"))
    for key, what in (
        ("by_relation", "relation"),
        ("by_slot", "slot"),
        ("by_template", "template"),
    ):
        if metrics.get(key):
            blocks.append(_bars(metrics[key], f"Accuracy by {what}", what))
    return blocks


@section("memorize", headline=METRICS)
def memorize_section(step_dir: Path, record: dict) -> Section:
    metrics = read_metrics(step_dir)
    title = f"LAMA-TK reciting: {record.get('id', step_dir.name)}"
    if not metrics:
        return Section(title, [Text("The step wrote no metrics.json.", style="error")])
    training = metrics.get("training", {})
    blocks: list[Block] = [
        Text(
            "Acc@K: a query (one masked text) counts if any of its answers is in the model's "
            "top K. Hit@K: each statement counts if its own masked entity is in the top K, so "
            "a query with several answers needs all of them ranked high."
        ),
        *_blocks(metrics, "statements"),
    ]
    if training:
        blocks.append(
            Text(
                f"Model {training.get('preset')}, {training.get('epochs')} epochs, final loss "
                f"{training.get('final_loss')}, time masking k = {training.get('time_masking')} "
                f"over {training.get('duplicates')} copies.",
                style="note",
            )
        )
    if metrics.get("queries"):
        blocks.append(Text("Queries (templates or years not seen in training):"))
        blocks += _blocks(metrics["queries"], "queries rows")
    return Section(title, blocks)
