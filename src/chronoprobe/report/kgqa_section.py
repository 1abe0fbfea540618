"""The report section of a ``kgqa`` step: how well a QA model answers temporal questions.

Hits@1 per question group as the CronQuestions paper's Tables 5 and 6 break it down (overall,
simple vs complex, each reasoning type, entity vs time answers). The first ``kgqa`` step of a
run compares every ``kgqa`` step of the run in one chart, so CronKGQA over TComplEx against
CronKGQA over ComplEx, EmbedKGQA and the LM baseline reads at a glance; later ones show their own
bars only. Beside the models, the oracle relation's rows (the TKG embeddings scoring the simple
questions with the true relation) show what the embeddings allow; a model trained with the
answer type given, not the paper's protocol, says so in its label. Over timeline questions the
section adds their complexity x capability grid and the kinds the model could not answer.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from chronoprobe.datasets.cronq import QUESTION_TYPES
from chronoprobe.report.blocks import Block, Percent, Section, Stats, Table, Text, with_uncertainty
from chronoprobe.report.plots import embed, error_rows, grouped_bars
from chronoprobe.report.sections import read_metrics, section, side_by_side
from chronoprobe.report.tkg_section import bar_value, loss_curve

GROUPS = ("overall", "simple", "complex", *QUESTION_TYPES, "entity answers", "time answers")


def group_metrics(metrics: dict[str, Any], group: str) -> dict[str, Any]:
    """The sub-dict of metrics.json for a group name of :data:`GROUPS` ({} when absent)."""
    if group == "overall":
        return metrics
    if group in ("simple", "complex"):
        return metrics.get(group) or {}
    if group in QUESTION_TYPES:
        return (metrics.get("types") or {}).get(group) or {}
    return (metrics.get("answer_types") or {}).get(group.split()[0]) or {}


ORACLE_GROUPS = ("simple", "simple_entity", "simple_time")


def oracle_group(oracle: dict[str, Any], group: str) -> dict[str, Any]:
    """The oracle relation's metrics for a group of :data:`GROUPS` ({} where it has none: it
    answers simple questions only)."""
    if group == "simple":
        return oracle
    if group not in ORACLE_GROUPS:
        return {}
    return (oracle.get("types") or {}).get(group) or {}


def answer_type_given(metrics: dict[str, Any]) -> bool:
    """Whether the model was told the gold answer type (metrics.json written before the option
    existed: it was)."""
    return bool(metrics.get("answer_type_given", True))


def _model(metrics: dict[str, Any]) -> str:
    model = metrics.get("model", "?")
    if model != "lm" and metrics.get("embeddings"):
        model = f"{model} + {metrics['embeddings']}"
    if answer_type_given(metrics):
        model += ", answer type given"
    if reads_templates(metrics):
        model += ", reads templates"
    return model


def reads_templates(metrics: dict[str, Any]) -> bool:
    """Whether the encoder read the question templates (not the paper's protocol)."""
    return metrics.get("question_input") == "template"


def _label(step_id: str, metrics: dict[str, Any]) -> str:
    return f"{step_id} ({_model(metrics)})"


def _oracle_label(step_id: str, metrics: dict[str, Any]) -> str:
    return f"oracle relation (TKG ceiling, {metrics.get('embeddings')} of {step_id})"


def _with_oracles(
    steps: list[tuple[str, dict[str, Any]]],
) -> list[tuple[str, dict[str, Any], Any]]:
    """(label, metrics, group lookup) per model, each followed by its TKG's oracle relation
    when that ceiling was not shown already (steps over one TKG share it)."""
    rows, shown = [], []
    for step_id, m in steps:
        rows.append((_label(step_id, m), m, group_metrics))
        oracle = m.get("oracle_relation")
        if oracle and oracle not in shown:
            shown.append(oracle)
            rows.append((_oracle_label(step_id, m), oracle, oracle_group))
    return rows


def hits_bars(steps: list[tuple[str, dict[str, Any]]]) -> Block:
    labelled = _with_oracles(steps)
    series = {
        label: [bar_value(lookup(m, g).get("hits@1")) for g in GROUPS]
        for label, m, lookup in labelled
    }
    errors = {
        label: error_rows([(lookup(m, g), "hits@1") for g in GROUPS])
        for label, m, lookup in labelled
    }
    figure = grouped_bars(
        list(GROUPS),
        series,
        title="Hits@1 by question type",
        xlabel="Hits@1 (higher is better)",
        ylabel="questions",
        horizontal=True,
        value_format="{:.0%}",
        value_limits=(0, 1.1),
        errors=errors,
    )
    alt = "Bar chart of Hits@1 per question group: " + "; ".join(
        f"{name} "
        + ", ".join(
            f"{g} {v:.0%}" for g, v in zip(GROUPS[:3], values, strict=False) if not math.isnan(v)
        )
        for name, values in series.items()
    )
    rows = []
    for label, m, lookup in labelled:
        for g in GROUPS:
            values = lookup(m, g)
            if values:
                hits = [with_uncertainty(values, f"hits@{k}") for k in (1, 10)]
                rows.append([label, g, values["questions"], *hits])
    data = Table(["model", "group", "questions", "Hits@1", "Hits@10"], rows)
    caption = (
        "Simple: simple_entity and simple_time; complex: before_after, first_last and time_join. "
        "A question is answered at k when any of its answers is among the k best candidates: "
        "entities and years ranked together, the encoder reading the question text, as in the "
        "paper, unless the label says the answer type was given or the encoder read templates "
        "(which show which slot of the fact each entity fills). The oracle relation scores the "
        "simple questions with the TKG's own tables and the true relation in the question's "
        "place, among the candidates of the answer type: the embeddings' ceiling. Missing "
        "bars: no test question of that group. "
        "Error bars: Wilson 95% intervals, or ± one sd over seeds for a step repeated over "
        "them; the table gives the same for each row: its interval, or its mean ± sd."
    )
    return embed(figure, alt=alt, caption=caption, data=data)


@section(
    "kgqa",
    headline=("hits@1", "hits@10", "simple.hits@1", "complex.hits@1"),
    compare=side_by_side("QA models", hits_bars),
)
def kgqa_section(step_dir: Path, record: dict) -> Section:
    """A QA model's Hits@1 and Hits@10, overall, simple and complex, and by question type
    beside the oracle relation's."""
    metrics = read_metrics(step_dir)
    step_id = str(record.get("id", step_dir.name))
    title = f"Temporal KG question answering: {step_id}"
    if not metrics:
        return Section(title, [Text("The step wrote no metrics.json.", style="error")])
    params = record.get("params") or {}
    given = answer_type_given(metrics)
    tiles: dict[str, Any] = {
        "model": _model(metrics),
        "encoder": params.get("encoder", "tiny"),
        "encoder reads": (
            "the templates (not the paper's protocol)"
            if reads_templates(metrics)
            else "the question text (the paper's protocol)"
        ),
        "answer type": (
            "given (softmax per type; not the paper's protocol)"
            if given
            else "not given (one softmax)"
        ),
        "test questions": metrics.get("questions", 0),
        "Hits@1": Percent.of(metrics["hits@1"]),
        "Hits@10": Percent.of(metrics["hits@10"]),
        "simple Hits@1": Percent.of(metrics["simple"]["hits@1"]),
        "complex Hits@1": Percent.of(metrics["complex"]["hits@1"]),
    }
    oracle = oracle_group(metrics.get("oracle_relation") or {}, "simple_entity")
    if oracle:
        simple = group_metrics(metrics, "simple_entity").get("hits@1")
        tiles["simple_entity Hits@1"] = Percent.of(simple)
        tiles["simple_entity Hits@1, oracle relation"] = Percent.of(oracle["hits@1"])
    if "epoch" in metrics:  # the model tested: the best on valid, or the last
        tiles["epoch tested"] = metrics["epoch"]
    blocks: list[Block] = [Stats(tiles), hits_bars([(step_id, metrics)])]
    if metrics.get("timeline"):  # timeline questions: the grid, and the kinds not answered
        from chronoprobe.report.timeline_section import not_answered_blocks

        blocks += not_answered_blocks(_model(metrics), metrics["timeline"], metrics["questions"])
    return Section(title, [*blocks, *loss_curve(step_dir, "cross entropy")])
