"""The report section of a ``probe`` step with the ``span-ppl`` view: ECBD span perplexity.

The paper's two readings are what the section puts first: whether a definition helps
(DEFINITION below ORIGINAL) and whether the spans depend on the entity (NO ENT above ORIGINAL,
the span-sensitivity check), per group of entities seen or unseen in the model's training data.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from chronoprobe.probes.coverage import coverage_line
from chronoprobe.report.blocks import Block, Percent, Section, Stats, Table, Text, with_uncertainty
from chronoprobe.report.plots import embed, error_rows, grouped_bars
from chronoprobe.report.sections import answered_nothing, no_metrics, read_metrics, section

RECALL = "recall@10"
HEADLINE = ("ppl_original", "ppl_no-ent", "ppl_random-def", "ppl_definition")
HOW = (
    "Perplexity of the masked span (lower is better): token-normalised negative log-likelihood, "
    "averaged over each entity's examples first, then over entities."
)


def _ppl(summaries: dict[str, Any], condition: str, metric: str = "perplexity") -> float:
    value = (summaries.get(condition) or {}).get(metric)
    return math.nan if value is None else float(value)


def subset_table(
    by_subset: dict[str, dict],
    conditions: list[str],
    label: str,
    metric: str = "perplexity",
    caption: str | None = None,
) -> Table:
    rows = [
        [
            subset,
            max(s.get("n", 0) for s in summaries.values()),
            *(_figure(summaries.get(c) or {}, metric) for c in conditions),
        ]
        for subset, summaries in by_subset.items()
    ]
    note = " In brackets: 95% intervals (a bootstrap over entities)."
    return Table([label, "examples", *conditions], rows, caption=(caption or "") + note)


def _figure(group: dict[str, Any], metric: str) -> str:
    """A figure with its interval ("12.34 [10.20, 14.50]"), or why it has none ("12.34 (n too
    small)": one entity); a share in three digits, a perplexity in two."""
    return with_uncertainty(group, metric, 3 if metric == RECALL else 2)


def group_bars(metrics: dict[str, Any], model: str) -> Block:
    """Conditions side by side per group (popular / seen / unseen, else per year), and overall."""
    conditions = metrics["conditions"]
    subsets = {"all": metrics["overall"], **(metrics.get("by_group") or metrics["by_year"])}
    series = {c: [_ppl(s, c) for s in subsets.values()] for c in conditions}
    errors = {
        c: error_rows([(s.get(c) or {}, "perplexity") for s in subsets.values()])
        for c in conditions
    }
    cutoff = metrics.get("cutoff_year")
    figure = grouped_bars(
        list(subsets),
        series,
        title=f"Span perplexity by group and condition: {model}",
        xlabel="entities" + (f" (seen: originated by {cutoff})" if cutoff is not None else ""),
        ylabel="perplexity (lower is better)",
        errors=errors,
    )
    alt = f"Bar chart of span perplexity of {model} per group and condition: " + "; ".join(
        f"{c} overall {series[c][0]:.2f}" for c in conditions
    )
    return embed(figure, alt=alt, caption=HOW, data=subset_table(subsets, conditions, "entities"))


def sensitivity_table(sensitivity: dict[str, dict]) -> Table:
    rows = [
        [
            subset,
            s["n"],
            _figure(s, "original"),
            _figure(s, "no-ent"),
            _figure(s, "gap"),
            Percent.of(s["median_increase"]),
            Percent.of(s["share_increased"]),
        ]
        for subset, s in sensitivity.items()
    ]
    caption = (
        "Span sensitivity: perplexity when the mention is replaced by \u201cthe entity\u201d "
        "(NO ENT) against ORIGINAL; the median increase per span is the paper's figure "
        "(32.2% for T5 on POPULAR)."
    )
    columns = ["entities", "examples", "original", "no-ent", "gap", "median increase"]
    return Table([*columns, "spans worse"], rows, caption=caption)


def model_blocks(model: str, metrics: dict[str, Any]) -> list[Block]:
    conditions = metrics["conditions"]
    blocks: list[Block] = [group_bars(metrics, model)]
    if metrics.get("coverage"):  # a condition not scored is said below
        blocks.append(Text(f"{model}: {coverage_line(metrics['coverage'])}.", style="note"))
    for condition, why in (metrics.get("skipped_conditions") or {}).items():
        blocks.append(Text(f"{condition} was not scored: {why}.", style="note"))
    if metrics.get("by_group"):
        blocks.append(subset_table(metrics["by_year"], conditions, "year"))
    blocks.append(subset_table(metrics["by_span_type"], conditions, "span type"))
    if metrics.get("sensitivity"):
        blocks.append(sensitivity_table(metrics["sensitivity"]))
    if any(RECALL in s for s in metrics["overall"].values()):
        subsets = {"all": metrics["overall"], **(metrics.get("by_group") or metrics["by_year"])}
        caption = (
            "Recall@10 (higher is better): the share of spans whose gold text is among the ten "
            "best distinct spans beam search fills the gap with (the paper's appendix)."
        )
        blocks.append(subset_table(subsets, conditions, "entities", RECALL, caption))
    return blocks


@section("probe:span-ppl", headline=HEADLINE)
def ecbd_section(step_dir: Path, record: dict) -> Section:
    """Each model's span perplexity on ECBD's masked spans under each condition, by the year
    the entity originated and by span type."""
    metrics = read_metrics(step_dir)
    title = f"ECBD span perplexity: {record.get('id', step_dir.name)}"
    models = metrics.get("models") or {}
    if not models:
        return no_metrics(title)
    first = next(iter(models.values()))
    tiles: dict[str, Any] = {"examples": metrics.get("rows", 0), "models": len(models)}
    for key in HEADLINE:
        if metrics.get(key) is not None:
            tiles[key.removeprefix("ppl_") + " ppl"] = _figure(metrics, key)
    blocks: list[Block] = [Stats(tiles)]
    if len(models) > 1:
        blocks.append(Text("Tiles: mean over the models; each model's figures follow."))
    for model, model_metrics in models.items():
        note = answered_nothing(model, model_metrics)
        blocks.extend([note] if note else model_blocks(model, model_metrics))
    if first.get("cutoff_year") is None:
        blocks.append(
            Text("No cutoff year was given, so years are not grouped into seen and unseen.", "note")
        )
    return Section(title, blocks)
