"""The report sections of LAMA-TK: what a ``memorize`` step trained, and what a ``probe`` step
of the recite view shows the model recalls.

A recite section shows the paper's four numbers, accuracy by relation and by slot, and single-
against multi-answer statements (Zhao et al., 2022, Table 2: conflicts keep Acc@K high but pull
Hit@K down). When a run has several recite steps (the ``experiments/lamatk-*.yaml`` configs),
the first one's section opens with their comparison, keyed on the params of the steps that
trained each model and built its rows: the memorisation curve with and without conflicts
(Fig. 2), single-answer statements beside conflicts or not (Table 3), boundary queries per
time-masking rate (Table 4), and implicit queries per template and start (Table 5).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from chronoprobe.report.blocks import Block, Percent, Section, Stats, Table, Text, with_uncertainty
from chronoprobe.report.plots import embed, error_rows, grouped_bars, line_plot
from chronoprobe.report.rundir import RunInfo, StepInfo
from chronoprobe.report.sections import read_metrics, section

METRICS = ("acc@1", "acc@5", "hit@5", "hit@10")


def _bars(groups: dict[str, dict], title: str, what: str) -> Block:
    names = list(groups)
    series = {m: [groups[g][m] or 0.0 for g in names] for m in METRICS}
    errors = {m: error_rows([(groups[g], m) for g in names]) for m in METRICS}
    figure = grouped_bars(
        names,
        series,
        title=title,
        xlabel="share",
        ylabel=what,
        horizontal=True,
        value_format="{:.0%}",
        errors=errors,
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
                *(with_uncertainty(groups[g], m) for m in METRICS),
            ]
            for g in names
        ],
        caption="In brackets and as error bars: 95% intervals (Wilson).",
    )
    return embed(figure, alt=alt, data=data)


def _multi_share(metrics: dict[str, Any]) -> float | None:
    """The share of the recited rows that are multi-answer (None without a breakdown)."""
    answers = metrics.get("by_answers")
    if not answers or not metrics["statements"]:
        return None
    return (answers.get("multi") or {}).get("statements", 0) / metrics["statements"]


def _blocks(metrics: dict[str, Any], label: str) -> list[Block]:
    multi = _multi_share(metrics)
    blocks: list[Block] = [
        Stats(
            {
                f"{label}": metrics["statements"],
                "queries": metrics["queries"],
                **({} if multi is None else {"multi-answer": Percent(multi)}),
                **{
                    m.replace("acc", "Acc").replace("hit", "Hit"): Percent.of(metrics[m])
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


# ----- experiment-level plots: every memorize step of the run, keyed on its params -----------

CONFLICTS = {True: "with conflicts", False: "without conflicts"}


@dataclass(frozen=True)
class _Step:
    """A finished ``probe`` step of the recite view as the comparisons see it: its first
    model's figures, and what the steps that made its model and its rows say about them."""

    id: str
    task: str  # memorize | boundary | implicit: what the rows recited are
    conflicts: bool
    start: str  # the model it started from: "random tiny", "pretrained (pretrain)", ...
    time_masking: float
    metrics: dict[str, Any]
    dir: Path


def _start(record: dict) -> str:
    params, inputs = record.get("params") or {}, record.get("inputs") or {}
    if inputs.get("pretrained"):
        return f"pretrained ({inputs['pretrained']})"
    if params.get("init"):
        return f"init {Path(str(params['init'])).name}"
    return f"random {params.get('preset', 'tiny')}"


def recite_steps(run: RunInfo, steps: list[StepInfo]) -> list[_Step]:
    """The comparable recite steps: those whose model comes from a step of this run (input
    ``trained``, ``model`` in runs of 0.5); the params of that step and of the rows' step say
    what was trained on what."""
    records = {info.id: info.record for info in run.steps}
    out = []
    for info in steps:
        inputs = info.record.get("inputs") or {}
        models = read_metrics(info.dir).get("models") or {}
        source = inputs.get("trained", inputs.get("model"))
        if source is None or not models:
            continue
        metrics = next(iter(models.values()))
        trained = records.get(source) or {}
        rows = (records.get(inputs.get("data")) or {}).get("params") or {}
        queries = (info.record.get("params") or {}).get("rows") == "queries.jsonl"
        task = rows.get("task", "memorize")
        if queries:
            task = "implicit" if metrics.get("by_template") else task
        elif task != "memorize":
            task = f"{task} training"  # the statements a boundary or implicit model was fed
        out.append(
            _Step(
                info.id,
                task,
                bool(rows.get("conflicts", "multi" in (metrics.get("by_answers") or {}))),
                _start(trained),
                float((trained.get("params") or {}).get("time_masking", 0.0)),
                metrics,
                info.dir,
            )
        )
    return out


def _labelled(steps: list[_Step], label: Callable[[_Step], str]) -> dict[str, _Step]:
    """``label(step)`` per step; a label shared by two steps gets the step id added."""
    labels = [label(s) for s in steps]
    return {
        (f"{text} ({s.id})" if labels.count(text) > 1 else text): s
        for text, s in zip(labels, steps, strict=True)
    }


def _with_model(steps: list[_Step], text: str, step: _Step) -> str:
    return text if len({s.start for s in steps}) == 1 else f"{text}, {step.start}"


def _metric_row(step: _Step, metrics: dict[str, Any]) -> list[Any]:
    return [step.id, metrics["statements"], *(Percent.of(metrics.get(m)) for m in METRICS)]


def capacity_curve(steps: list[_Step]) -> Block | None:
    """Fig. 2: Acc@1 against the number of statements fed, with and without conflicts."""
    chosen = sorted(
        (s for s in steps if s.task == "memorize"), key=lambda s: s.metrics["statements"]
    )
    if len(chosen) < 2:
        return None
    series: dict[str, tuple[list[float], list[float]]] = {}
    groups: dict[str, list[dict]] = {}
    # with conflicts first, as in the 1-1 bars (their colours match)
    for step in sorted(chosen, key=lambda s: not s.conflicts):
        name = _with_model(chosen, CONFLICTS[step.conflicts], step)
        xs, ys = series.setdefault(name, ([], []))
        xs.append(step.metrics["statements"])
        ys.append(step.metrics["acc@1"] or 0.0)
        groups.setdefault(name, []).append(step.metrics)
    figure = line_plot(
        series,
        title="Memorisation: Acc@1 against statements fed",
        xlabel="statements",
        ylabel="Acc@1",
        markers=True,
        ylim=(0, 1.02),
        errors={name: error_rows([(m, "acc@1") for m in ms]) for name, ms in groups.items()},
    )
    alt = "Line plot of Acc@1 against statements: " + "; ".join(
        f"{name}: " + ", ".join(f"{x:,.0f} → {y:.0%}" for x, y in zip(*xy, strict=True))
        for name, xy in series.items()
    )
    data = Table(
        ["step", "statements", *METRICS, "multi-answer", "conflicts", "start"],
        [
            [*_metric_row(s, s.metrics), Percent.of(_multi_share(s.metrics)), s.conflicts, s.start]
            for s in chosen
        ],
    )
    caption = (
        "Each point is one memorize step reciting the statements it was fed; multi-answer is "
        "their share measured on those statements. A sampled set without conflicts is its "
        "twin's draw with the multi-answer statements removed, so it sits left of it. The "
        "paper (Fig. 2) finds accuracy falling as statements grow, and lower with conflicts. "
        "Bars: 95% intervals (Wilson), or ± one sd over seeds where the step ran with several."
    )
    return embed(figure, alt=alt, caption=caption, data=data)


def one_to_one_bars(steps: list[_Step]) -> Block | None:
    """Table 3: single-answer (1-1) statements recited after training beside conflicts or not.

    A run with conflicts and one without are paired when they recite as many single-answer
    statements (and started alike): the non-conflict set is the conflict set with its
    multi-answer statements removed, so with the same draw both hold the same 1-1 statements.
    """
    pairs: dict[tuple[int, str], dict[bool, _Step]] = {}
    for step in steps:
        single = (step.metrics.get("by_answers") or {}).get("single")
        if step.task == "memorize" and single:
            pairs.setdefault((single["statements"], step.start), {})[step.conflicts] = step
    pairs = {key: both for key, both in sorted(pairs.items()) if len(both) == 2}
    if not pairs:
        return None
    several = len({start for _, start in pairs}) > 1
    names = [f"{size:,}" + (f" · {start}" if several else "") for size, start in pairs]
    series = {
        f"1-1 statements, trained {CONFLICTS[flag]}": [
            both[flag].metrics["by_answers"]["single"]["acc@1"] or 0.0 for both in pairs.values()
        ]
        for flag in (True, False)  # the order (and colours) of the memorisation curve
    }
    errors = {
        f"1-1 statements, trained {CONFLICTS[flag]}": error_rows(
            [(both[flag].metrics["by_answers"]["single"], "acc@1") for both in pairs.values()]
        )
        for flag in (True, False)
    }
    figure = grouped_bars(
        names,
        series,
        title="Single-answer statements: Acc@1 beside conflicts or not",
        xlabel="single-answer statements fed",
        ylabel="Acc@1 (single-answer)",
        value_format="{:.0%}",
        value_limits=(0, 1.1),
        errors=errors,
    )
    alt = "Bar chart of single-answer Acc@1: " + "; ".join(
        f"{name}: with {a:.0%}, without {b:.0%}"
        for name, a, b in zip(names, *series.values(), strict=True)
    )
    rows = []
    for both in pairs.values():
        only = _right_only_here(both)
        for flag in (True, False):
            single = both[flag].metrics["by_answers"]["single"]
            rows.append(
                [both[flag].id, CONFLICTS[flag], *_metric_row(both[flag], single)[1:], only[flag]]
            )
    columns = ["step", "trained", "single-answer statements", *METRICS, "right only here"]
    caption = (
        "Acc@1 of the single-answer statements only, in pairs of runs fed the same number of "
        "them with the multi-answer statements of their draw or without. Right only here: the "
        "single-answer statements this run recites at Acc@1 and its twin does not (when both "
        "recited the very same statements, by id). The paper (Table 3) finds conflicting "
        "statements in training pull down the memorisation of unrelated 1-1 ones."
    )
    data = Table(columns, rows)
    return embed(figure, alt=alt, caption=caption, data=data)


def _single_hits(step: _Step) -> dict[str, bool] | None:
    """Acc@1 of each single-answer statement the step recited, by id (None: no predictions)."""
    path = step.dir / "predictions.parquet"
    if not path.is_file():
        return None
    table = pq.read_table(path, columns=["id", "multi_answer", "acc_at_1"]).to_pydict()  # one model
    rows = zip(table["id"], table["multi_answer"], table["acc_at_1"], strict=True)
    return {row_id: hit for row_id, multi, hit in rows if not multi}


def _right_only_here(both: dict[bool, _Step]) -> dict[bool, int | None]:
    """For each run of a pair, the single-answer statements it recites at Acc@1 and the other
    does not; None unless both recited the very same statements."""
    hits = {flag: _single_hits(step) for flag, step in both.items()}
    mine, theirs = hits[True], hits[False]
    if mine is None or theirs is None or mine.keys() != theirs.keys():
        return {True: None, False: None}
    return {
        True: sum(mine[i] and not theirs[i] for i in mine),
        False: sum(theirs[i] and not mine[i] for i in mine),
    }


def _query_bars(
    chosen: dict[str, _Step],
    categories: list[tuple[str, str, str | None]],
    title: str,
    caption: str,
) -> Block:
    """Bars of query metrics per step; ``categories`` are (name, metric, template or None)."""

    def value(step: _Step, metric: str, template: str | None) -> float:
        return group(step, template).get(metric) or 0.0

    def group(step: _Step, template: str | None) -> dict:
        queries = step.metrics
        return queries if template is None else queries["by_template"].get(template) or {}

    series = {
        label: [value(step, metric, template) for _, metric, template in categories]
        for label, step in chosen.items()
    }
    errors = {
        label: error_rows([(group(step, template), metric) for _, metric, template in categories])
        for label, step in chosen.items()
    }
    names = [name for name, _, _ in categories]
    figure = grouped_bars(
        names,
        series,
        title=title,
        xlabel="metric",
        ylabel="share of queries",
        value_format="{:.0%}",
        value_limits=(0, 1.1),
        errors=errors,
    )
    alt = f"Bar chart, {title}: " + "; ".join(
        f"{label}: " + ", ".join(f"{n} {v:.0%}" for n, v in zip(names, values, strict=True))
        for label, values in series.items()
    )
    data = Table(
        ["series", "step", *names],
        [[label, step.id, *(Percent(v) for v in series[label])] for label, step in chosen.items()],
    )
    return embed(figure, alt=alt, caption=caption, data=data)


def boundary_bars(steps: list[_Step]) -> Block | None:
    """Table 4: zero-shot boundary queries per time-masking rate."""
    chosen = sorted((s for s in steps if s.task == "boundary"), key=lambda s: s.time_masking)
    if len(chosen) < 2:
        return None
    labelled = _labelled(
        chosen, lambda s: _with_model(chosen, f"time masking {s.time_masking:.0%}", s)
    )
    return _query_bars(
        labelled,
        [(m.replace("acc", "Acc").replace("hit", "Hit"), m, None) for m in METRICS],
        'Boundary queries ("elected … in", "resigned from … in")',
        "Start and end years asked in templates never seen in training. The paper (Table 4) "
        "finds dynamic time masking (10%, 100%) lifts these well above original masking (0%).",
    )


def implicit_bars(steps: list[_Step]) -> Block | None:
    """Table 5: implicit in-year queries, training template against a new one, per start."""
    chosen = [s for s in steps if s.task == "implicit"]
    if len(chosen) < 2:
        return None
    labelled = _labelled(chosen, lambda s: s.start)
    categories = [
        (f"{name} {template}", metric, template)
        for metric, name in (("acc@1", "Acc@1"), ("hit@10", "Hit@10"))
        for template in ("original", "new")
    ]
    return _query_bars(
        labelled,
        categories,
        "Implicit queries: a year inside the interval",
        '"S held the position of [MASK] in T" (original, the training template) and "S served '
        'as [MASK] in T" (new, never seen). The paper (Table 5) finds a pretrained start keeps '
        "most of its accuracy on the new template where a random one collapses. Here the "
        "pretrained start is a model of the same size trained on the world's own article text "
        '(offline there is no RoBERTa), which never uses the words "served as".',
    )


def compare_recite_steps(run: RunInfo, infos: list[StepInfo]) -> list[Block]:
    """The run-wide comparisons of the recite steps of one experiment (two or more)."""
    steps = recite_steps(run, infos)
    if len(steps) < 2:
        return []
    blocks = [
        block
        for block in (
            capacity_curve(steps),
            one_to_one_bars(steps),
            boundary_bars(steps),
            implicit_bars(steps),
        )
        if block is not None
    ]
    if blocks:
        ids = ", ".join(s.id for s in steps)
        blocks.insert(0, Text(f"The experiment: {len(steps)} recite steps of this run ({ids})."))
    return blocks


def sample_note(sample: dict[str, Any], fed: int) -> str:
    """How a sampled set was drawn (its ``stats.json`` "sample"), and how many multi-answer
    statements were then left out of the ``fed`` ones."""
    text = (
        f"Sampled (seed {sample['seed']}): {sample['queries']:,} whole queries, "
        f"{sample['statements']:,} of {sample['from_statements']:,} statements for "
        f"{sample['requested']:,} asked; {sample['multi_answer_share']:.1%} of them "
        "multi-answer, measured within the sample."
    )
    removed = sample["statements"] - fed
    if removed:
        text += f" Fed without conflicts: the {removed:,} multi-answer statements were removed."
    return text


@section("probe:recite", headline=METRICS, compare=compare_recite_steps)
def recite_section(step_dir: Path, record: dict) -> Section:
    """Each model's Acc@K and Hit@K at reciting its statements (or queries)."""
    metrics = read_metrics(step_dir)
    step_id = record.get("id", step_dir.name)
    title = f"LAMA-TK reciting: {step_id}"
    models = metrics.get("models") or {}
    if not models:
        return Section(title, [Text("The step wrote no model's metrics.", style="error")])
    queries = (record.get("params") or {}).get("rows") == "queries.jsonl"
    what = "queries rows" if queries else "statements"
    blocks: list[Block] = [
        Text(
            "Acc@K: a query (one masked text) counts if any of its answers is in the model's "
            "top K. Hit@K: each statement counts if its own masked entity is in the top K, so "
            "a query with several answers needs all of them ranked high."
            + (" These are queries: templates or years not seen in training." if queries else "")
        )
    ]
    for name, figures in models.items():
        if len(models) > 1:
            blocks.append(Text(f"Model {name}:"))
        blocks += _blocks(figures, what)
    return Section(title, blocks)


@section("memorize", headline=("epochs", "final_loss"))
def memorize_section(step_dir: Path, record: dict) -> Section:
    """What a memorize step trained: its model, epochs and loss (its recite steps show what
    the model recalls)."""
    training = read_metrics(step_dir)
    title = f"LAMA-TK training: {record.get('id', step_dir.name)}"
    if "epochs" not in training:
        return Section(title, [Text("The step wrote no training record.", style="error")])
    blocks: list[Block] = [
        Stats(
            {
                "statements": training["statements"],
                "epochs": training["epochs"],
                "final loss": training["final_loss"],
                "statements/s": training["statements_per_s"],
            }
        ),
        Text(
            f"Model {training.get('preset')}, time masking k = {training.get('time_masking')} "
            f"over {training.get('duplicates')} copies. Recite it with a `probe` step of the "
            "recite view (input `trained`).",
            style="note",
        ),
    ]
    if "sample" in training:
        blocks.append(Text(sample_note(training["sample"], training["statements"]), style="note"))
    return Section(title, blocks)
