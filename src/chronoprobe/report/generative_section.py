"""Report sections of the asking views: ``generate`` (knowledge categories over a timeline) and
``date-context`` (right dates against wrong ones, by precision and distance)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from chronoprobe.probes.categories import CATEGORIES, MIXED, TIMELINES
from chronoprobe.probes.coverage import coverage_line, form_words, relation_left_out
from chronoprobe.probes.judging import RULES
from chronoprobe.report.blocks import (
    DASH,
    Block,
    Percent,
    Section,
    Stats,
    Table,
    Text,
    with_uncertainty,
)
from chronoprobe.report.plots import embed, error_rows, line_plot
from chronoprobe.report.sections import per_model_section, section


def _shares_chart(
    series: dict,
    errors: dict,
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    alt: str,
    caption: str,
    data: Table,
) -> Block:
    """Lines of shares (0 to 1) with markers and their 95% error bars, embedded with their
    table."""
    fig = line_plot(
        series,
        errors=errors,
        title=title,
        xlabel=xlabel,
        ylabel=ylabel,
        markers=True,
        ylim=(-0.03, 1.03),  # a point at 0 or 1 drawn whole
        colours=CATEGORY_COLOURS,
        dashed=[ACCURACY],
    )
    return embed(fig, alt=alt, caption=caption, data=data)


def _x(periods: list[str]) -> tuple[list[float], str]:
    """Periods as x values: years as numbers, else their order."""
    if all(p.lstrip("-").isdigit() for p in periods):
        return [float(p) for p in periods], "year"
    return [float(i) for i in range(len(periods))], "period (in order: " + ", ".join(periods) + ")"


ACCURACY = "accuracy (first greedy answer)"
CATEGORY_COLOURS = {
    "Correct": "#009E73",  # Okabe-Ito's green, amber and vermillion; the accuracy in black
    "Partial": "#E69F00",
    "Incorrect": "#D55E00",
    ACCURACY: "#000000",
}
EXAMPLES = 8  # example answers shown per model
ANSWER_CHARS = 80  # an answer longer than this is cut in the examples table


def category_timeline(model: str, by_period: dict[str, dict]) -> Block:
    periods = sorted(by_period)
    x, label = _x(periods)
    series = {c: (x, [by_period[p].get(c) or 0.0 for p in periods]) for c in CATEGORIES}
    series[ACCURACY] = (x, [by_period[p]["accuracy"] or 0 for p in periods])
    errors = {c: error_rows([(by_period[p], c) for p in periods]) for c in CATEGORIES}
    errors[ACCURACY] = error_rows([(by_period[p], "accuracy") for p in periods])
    data = Table(
        ["period", "rows", "accuracy", *CATEGORIES],
        [
            [p, by_period[p]["n"], Percent.of(by_period[p]["accuracy"])]
            + [Percent.of(by_period[p].get(c)) for c in CATEGORIES]
            for p in periods
        ],
    )
    return _shares_chart(
        series,
        errors,
        title=f"What {model} knows, period by period",
        xlabel=label,
        ylabel="share of facts",
        alt=f"Share of Correct, Partial and Incorrect facts per period for {model}",
        caption="Correct (green): every greedy answer (one per exemplar set) matches; Partial "
        "(amber): some greedy or sampled answer matches; Incorrect (red): none does "
        "(ChroKnowledge, Park et al., 2024). Dashed: the accuracy of the first greedy answer, "
        "which the Correct line often shares. Bars: 95% intervals (Wilson).",
        data=data,
    )


def _group_table(
    groups: dict[str, dict],
    name: str,
    caption: str,
    left_out: dict[str, str] | None = None,
    rules: Sequence[str] = RULES,
) -> Table:
    """Accuracy by every rule (``rules``: the model judge's too where it judged), the share
    naming another period's answer, the empty answers and the categories; with ``left_out``,
    a column of each group's rows left out and why (a group with none answered is listed too,
    its figures dashes)."""
    extra = ["left out"] if left_out is not None else []
    return Table(
        [name, "rows", *rules, "other period", "empty", *CATEGORIES, *extra],
        [
            [k, g.get("n", 0), *(Percent.of(g.get(f"accuracy_{r}")) for r in rules)]
            + [Percent.of(g.get("other_period")), Percent.of(g.get("empty"))]
            + [Percent.of(g.get(c)) for c in CATEGORIES]
            + ([left_out.get(k) or DASH] if left_out is not None else [])
            for k, g in groups.items()
        ],
        caption=caption,
    )


def _relation_table(metrics: dict) -> Table | None:
    """Per relation, every relation of the rows given: those the figures count, and those
    left out (a relation whose rows were all skipped has its row too, with the reason)."""
    figures = metrics.get("by_relation") or {}
    counts = (metrics.get("coverage") or {}).get("by_relation") or {}
    relations = sorted({*figures, *counts})
    if not relations:
        return None
    labels = relation_labels()

    def named(r: str) -> str:
        return f"{r} {labels[r]}" if r in labels else r

    groups = {named(r): figures.get(r, {"n": 0}) for r in relations}
    left_out = {named(r): relation_left_out(counts.get(r, {})) for r in relations}
    return _group_table(
        groups,
        "relation",
        "Per relation, every relation of the rows given; rows: those the figures count (deleted "
        "rows and skipped rows are left out, as overall, and said in the last column).",
        left_out,
    )


def _form_table(metrics: dict) -> Table | None:
    """The figures per form (the template, the relation's question), where rows were asked
    both ways: a figure over both is a mix of two prompts."""
    by_form = {f: g for f, g in (metrics.get("by_form") or {}).items() if g.get("n")}
    if len(by_form) < 2:
        return None
    words = form_words(metrics.get("coverage") or {})
    named = {words.get(f, f): g for f, g in by_form.items()}
    return _group_table(
        named,
        "asked",
        "Per form: rows asked by the template, and rows asked as their relation's question "
        "(those whose gap comes first, which the template cannot ask, or every row with form "
        "question). The figures above are over both.",
    )


def generate_blocks(model: str, metrics: dict) -> list[Block]:
    overall, rule = metrics["overall"], metrics.get("match")
    coverage = metrics.get("coverage") or {}
    blocks: list[Block] = [
        Text(
            f"{model}: the first greedy answer of each row judged by every rule (exact, alias, "
            "names, token_f1, fuzzy; see the generate view's documentation); the categories "
            f"and the headline accuracy follow the '{rule}' rule. Other period: the answer names "
            "an answer the subject has in another period instead. Empty: the model stopped at "
            "once, and an empty answer is judged wrong."
        ),
        Stats(
            {
                # the model's own headline, with the rows it counts; else the overall figure
                f"accuracy ({rule})": with_uncertainty(
                    metrics if "accuracy" in metrics else overall, "accuracy"
                ),
                "other period": Percent.of(overall.get("other_period")),
                "empty answers": Percent.of(overall.get("empty")),
                **{c: Percent.of(overall[c]) for c in CATEGORIES},
            }
        ),
    ]
    if coverage:
        blocks.append(Text(f"Coverage: {coverage_line(coverage)}.", style="note"))
    blocks += [Text(f"Warning: {w}", style="error") for w in metrics.get("warnings") or ()]
    judged_with = metrics.get("judged_with") or {}
    if judged_with.get("note"):  # a release without aliases: the figures say so
        blocks.append(Text(f"Judged by labels alone: {judged_with['note']}.", style="note"))
    judge = judged_with.get("judge")
    if judge:
        blocks.append(
            Text(
                f"judge: every answer also judged by {judge['model']} (the rule 'judge'; "
                f"replies neither yes nor no, counted incorrect: {judge['unclear_replies']:,}).",
                style="note",
            )
        )
    rules = metrics.get("rules", RULES)
    overall_table = "Every rule side by side, overall."
    blocks.append(_group_table({"all": overall}, "group", overall_table, rules=rules))
    forms = _form_table(metrics)
    if forms is not None:
        blocks.append(forms)
    exemplars = metrics.get("exemplars") or {}
    if exemplars.get("rows_short"):
        blocks.append(
            Text(
                f"{exemplars['rows_short']:,} rows had fewer than {exemplars['shots']} exemplars "
                f"to draw (fewest: {exemplars['fewest']}); their prompts hold fewer shots.",
                style="note",
            )
        )
    if metrics.get("by_period"):
        blocks.append(category_timeline(model, metrics["by_period"]))
    if metrics.get("by_split"):
        caption = "Per split against the previous period."
        blocks.append(_group_table(metrics["by_split"], "split", caption))
    relations = _relation_table(metrics)
    if relations is not None:
        blocks.append(relations)
    timelines = metrics.get("timelines") or {}
    if timelines.get("facts"):
        order = (*TIMELINES, MIXED)
        rows = [["all", *(timelines["overall"][c] for c in order)]]
        rows += [[r, *(c[n] for n in order)] for r, c in timelines["by_relation"].items()]
        blocks.append(
            Table(
                ["relation", *order],
                rows,
                caption=f"{timelines['facts']:,} facts across the periods: known (not Incorrect) "
                "in every period, only before or only after its change (the first period it was "
                "updated), in none, or otherwise.",
            )
        )
    if metrics.get("timeline"):  # timeline questions (build timeline)
        from chronoprobe.report.timeline_section import timeline_blocks

        blocks.extend(timeline_blocks(model, metrics["timeline"]))
    return blocks


def relation_labels() -> dict[str, str]:
    """Relation id -> label, from the drift templates ("P39" -> "position held")."""
    from chronoprobe.templates import load_cloze_templates

    return {r: t.label for r, t in load_cloze_templates("drift").items()}


def _examples(rows: list[dict]) -> list[dict]:
    """A few rows that teach the most: those the rules judge differently first, then one of
    each category, then the rest, each group in the file's order."""
    split = [r for r in rows if len(set((r.get("judged") or {}).values())) > 1]
    chosen = split[:EXAMPLES]
    for category in CATEGORIES:
        first = next((r for r in rows if r.get("category") == category and r not in chosen), None)
        if first is not None and len(chosen) < EXAMPLES:
            chosen.append(first)
    chosen += [r for r in rows if r not in chosen][: EXAMPLES - len(chosen)]
    return sorted(chosen, key=rows.index)


def _cut(text: str | None) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= ANSWER_CHARS else text[: ANSWER_CHARS - 1] + "…"


def example_answers(step_dir: Path, model: str) -> list[Block]:
    """The model's answers to a few questions beside the gold ones, with each rule's verdict."""
    path = step_dir / "predictions.parquet"
    if not path.is_file():
        return []
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    wanted = ["model", "query", "period", "answer_labels", "prediction", "judged", "category"]
    table = pq.read_table(path, columns=[c for c in wanted if c in pq.read_schema(path).names])
    if "judged" not in table.column_names:
        return []
    rows = table.filter(pc.equal(table.column("model"), model)).to_pylist()
    if not rows:
        return []
    shown = _examples(rows)
    return [
        Table(
            ["question", "period", "gold", "answer", *RULES, "category"],
            [
                [
                    r.get("query"),
                    r.get("period"),
                    " | ".join(r.get("answer_labels") or []) or DASH,
                    _cut(r.get("prediction")),
                    *("✓" if (r.get("judged") or {}).get(rule) else "✗" for rule in RULES),
                    r.get("category"),
                ]
                for r in shown
            ],
            caption=f"Example answers of {model} ({len(shown)} of {len(rows):,} rows; rows the "
            "rules judge differently first): the first greedy answer, each rule's verdict "
            "(✓ matches a gold answer), and the row's category.",
        )
    ]


@section("probe:generate", headline=("accuracy",))
def generate_section(step_dir: Path, record: dict) -> Section:
    """Each model's accuracy on generated answers by rule and period, with example answers."""

    def blocks_of(model: str, metrics: dict) -> list[Block]:
        return [*generate_blocks(model, metrics), *example_answers(step_dir, model)]

    return per_model_section(step_dir, record, "Generated answers", blocks_of)


def win_rate_figure(model: str, by_precision_distance: dict[str, dict]) -> Block:
    lines: dict[str, tuple[list[float], list[float]]] = {}
    groups: dict[str, list[dict]] = {}
    rows = []
    for key, value in by_precision_distance.items():
        precision, distance = key.split("/")
        x, y = lines.setdefault(precision, ([], []))
        x.append(float(distance))
        y.append(value["win_rate"])
        groups.setdefault(precision, []).append(value)
        rows.append([precision, int(distance), value["pairs"], Percent.of(value["win_rate"])])
    errors = {p: error_rows([(v, "win_rate") for v in values]) for p, values in groups.items()}
    return _shares_chart(
        lines,
        errors,
        title=f"{model}: right date preferred to a wrong one",
        xlabel="distance of the wrong date (years, months or days)",
        ylabel="share of pairs ordered correctly",
        alt=f"Win rate of right over wrong dates by distance, one line per precision, {model}",
        caption="A (right, wrong) pair is ordered correctly when the answer is more likely "
        "after the right date (TimeStress, Ammar Khodja et al., 2025); 0.5 is chance. Bars: 95% "
        "intervals (bootstrap over facts, a fact's pairs together).",
        data=Table(["precision", "distance", "pairs", "win rate"], rows),
    )


def date_context_blocks(model: str, m: dict) -> list[Block]:
    overall = m["overall"]
    tiles = {
        "model": model,
        "pairs": overall["pairs"],
        "win rate": Percent.of(overall["win_rate"]),
        "robust facts": Percent.of(overall["robust"]),
    }
    blocks: list[Block] = [Stats(tiles)]
    if m.get("by_precision_distance"):
        blocks.append(win_rate_figure(model, m["by_precision_distance"]))
    blocks.append(
        Table(
            ["precision", "pairs", "win rate", "robust"],
            [
                [p, v["pairs"], Percent.of(v["win_rate"]), Percent.of(v["robust"])]
                for p, v in m["by_precision"].items()
            ],
            caption="Robust: every wrong date of a fact at that precision scored below its "
            "right date.",
        )
    )
    return blocks


@section("probe:date-context", headline=("win_rate",))
def date_context_section(step_dir: Path, record: dict) -> Section:
    """Each model's win rate of the right date over a wrong one, by precision and distance."""
    return per_model_section(step_dir, record, "Date-context consistency", date_context_blocks)
