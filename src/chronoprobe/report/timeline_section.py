"""Timeline questions in the report: the complexity x capability grid and accuracy by answer type.

A ``probe generate`` step over ``build timeline`` rows carries ``timeline`` figures per model
(:func:`chronoprobe.probes.timeline_judging.timeline_metrics`); a ``build timeline-oracle`` step
carries the same groups for the symbolic oracle. Both are shown here the same way, and so is a
``kgqa`` step over timeline questions (its section adds :func:`not_answered_blocks`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chronoprobe.datasets.timeline import ANSWER_TYPES, CAPABILITIES, COMPLEXITIES
from chronoprobe.report.blocks import Block, Section, Stats, Table, Text, with_uncertainty
from chronoprobe.report.plots import embed, heatmap
from chronoprobe.report.sections import read_metrics, section


def _known_first(found: Any, known: tuple[str, ...]) -> list[str]:
    """The labels found, in the builder's order, then any other (a user's own) sorted."""
    return [k for k in known if k in found] + sorted(set(found) - set(known))


def grid_figure(who: str, grid: dict[str, dict]) -> Block:
    """A heatmap of accuracy, complexity down and capability across, each cell with its n;
    the numbers with their 95% intervals in the table under it."""
    cells = {tuple(key.split(" x ", 1)): group for key, group in grid.items()}
    rows = _known_first({r for r, _ in cells}, COMPLEXITIES)
    columns = _known_first({c for _, c in cells}, CAPABILITIES)
    values = [[_value(cells.get((r, c))) for c in columns] for r in rows]
    counts = [[(cells.get((r, c)) or {}).get("n", 0) for c in columns] for r in rows]
    figure = heatmap(
        values,
        rows,
        [c.replace(" ", "\n") for c in columns],  # two-word labels on two lines
        title=f"{who}: timeline accuracy",
        xlabel="capability",
        ylabel="complexity",
        value_label="accuracy",
        vmin=0.0,
        vmax=1.0,
        counts=counts,
    )
    data = Table(
        ["complexity", "capability", "questions", "accuracy [95% interval]"],
        [[r, c, g["n"], with_uncertainty(g, "accuracy")] for (r, c), g in cells.items()],
    )
    return embed(
        figure,
        alt=f"Accuracy of {who} on timeline questions by complexity and capability",
        caption="Timeline questions (TimelineKGQA, Sun et al., 2025) by complexity (facts read: "
        "one, two, three or more) and capability; blank: no question of that cell; faded: few "
        "questions.",
        data=data,
    )


def _value(group: dict | None) -> float:
    value = (group or {}).get("accuracy")
    return float("nan") if value is None else float(value)


def group_table(groups: dict[str, dict], name: str, known: tuple[str, ...], caption: str) -> Table:
    return Table(
        [name, "questions", "accuracy [95% interval]"],
        [
            [k, groups[k]["n"], with_uncertainty(groups[k], "accuracy")]
            for k in _known_first(groups, known)
        ],
        caption=caption,
    )


def timeline_blocks(who: str, timeline: dict[str, Any]) -> list[Block]:
    """The grid and accuracy by answer type of one model's (or the oracle's) timeline figures."""
    blocks: list[Block] = []
    if timeline.get("grid"):
        blocks.append(grid_figure(who, timeline["grid"]))
    if timeline.get("by_answer_type"):
        caption = "By answer type."
        if "duration_tolerance" in timeline:
            lenient = timeline.get("lenient") or {}
            caption += (
                f" Leniently (durations {timeline['duration_tolerance']}; ranked lists in any "
                f"order): {with_uncertainty(lenient, 'accuracy')} over all questions."
            )
        blocks.append(group_table(timeline["by_answer_type"], "answer type", ANSWER_TYPES, caption))
    return blocks


def not_answered_blocks(who: str, timeline: dict[str, Any], answered: int) -> list[Block]:
    """The timeline figures of a model that answers some kinds only (the KGQA models): its
    grid over the questions it answers, then the kinds it leaves, their counts and why."""
    blocks = timeline_blocks(who, timeline)
    refused = timeline.get("not_answered") or {}
    if refused:
        total = sum(entry["questions"] for entry in refused.values())
        blocks.append(
            Text(
                f"{who} answers {answered:,} of the split's {answered + total:,} timeline "
                f"questions (accuracy: Hits@1); {total:,} are outside its answer space."
            )
        )
        blocks.append(
            Table(
                ["not answered", "answer type", "questions", "why"],
                [[k, e["answer_type"], e["questions"], e["reason"]] for k, e in refused.items()],
            )
        )
    return blocks


@section("build:timeline-oracle", headline=("accuracy", "unanswered"))
def oracle_section(step_dir: Path, record: dict) -> Section:
    """What the symbolic oracle answers from its KG: all of it on the questions' own KG, and
    what is lost with the facts it was not given."""
    metrics = read_metrics(step_dir)
    title = f"Timeline oracle: {record.get('id', step_dir.name)}"
    if "grid" not in metrics:
        return Section(title, [Text("The step wrote no metrics.json.", style="error")])
    params = record.get("params") or {}
    dropped = metrics.get("facts_dropped", 0)
    blocks: list[Block] = [
        Text(
            "Each question answered again from the facts it names, looked up in the KG"
            + (
                f" less {dropped:,} of its {metrics['facts']:,} facts (drop "
                f"{params.get('drop')}, seed {params.get('seed')})"
                if dropped
                else " (every fact: each answer should be right, a test of the generator)"
            )
            + "; a question whose facts are missing is unanswered."
        ),
        Stats(
            {
                "accuracy": with_uncertainty(metrics, "accuracy"),
                "questions": metrics["n"],
                "unanswered": metrics.get("unanswered", 0),
            }
        ),
        *timeline_blocks("the oracle", metrics),
    ]
    return Section(title, blocks)
