"""The report section of a doc-cutoff probe: each model's perplexity by period with its
effective cutoff (the period of lowest perplexity) marked, each family's curve beside the
others, and the estimates with what they rest on."""

from __future__ import annotations

from pathlib import Path

from chronoprobe.report.blocks import Block, Section, Table, Text, with_uncertainty
from chronoprobe.report.plots import embed, line_plot
from chronoprobe.report.sections import per_model_section, section

MAX_FAMILIES_DRAWN = 12  # families drawn in one figure, the most documented first


def estimate_text(group: dict) -> str:
    """The estimate as a table cell: the period and its 95% interval, or why there is none."""
    if group.get("cutoff") is None:
        return group.get("why") or "none"
    interval = group.get("cutoff_ci95")
    return f"{group['cutoff']} [{interval[0]}, {interval[1]}]" if interval else group["cutoff"]


def _around(low: float, high: float) -> tuple[float, float]:
    """Axis limits a little beyond ``low`` and ``high``: perplexities that differ by a few
    per cent between periods are what the figure is about, so the axis does not start at 0."""
    pad = (high - low) * 0.1 or abs(high) * 0.01 or 1.0
    return low - pad, high + pad


def _ticks(periods: list[str]) -> list[str]:
    every = -(-len(periods) // 12)  # at most a dozen labels on the axis
    return [p if i % every == 0 else "" for i, p in enumerate(periods)]


def _overall_figure(name: str, overall: dict) -> Block:
    """The model's perplexity by period over every family, with intervals, and the period of
    lowest perplexity marked."""
    curve = overall["curve"]
    periods = [point["period"] for point in curve]
    values = [point["perplexity"] for point in curve]
    below, above = [], []
    for value, point in zip(values, curve, strict=True):
        low, high = point["perplexity_ci95"] or (value, value)
        below.append(value - low)
        above.append(high - value)
    x = list(range(len(periods)))
    limits = _around(
        min(v - b for v, b in zip(values, below, strict=True)),
        max(v + a for v, a in zip(values, above, strict=True)),
    )
    series = {name: (x, values)}
    marked = f"lowest: {overall['cutoff']}"
    at = periods.index(overall["cutoff"])
    series[marked] = ([at, at], list(limits))
    figure = line_plot(
        series,
        title=f"{name}: perplexity of the texts of each period",
        xlabel="period of the texts",
        ylabel="perplexity",
        markers=True,
        ylim=limits,
        categories=_ticks(periods),
        errors={name: [below, above]},
        dashed=[marked],
    )
    data = Table(
        ["period", "perplexity [95% interval]", "documents", "tokens"],
        [
            [
                p["period"],
                with_uncertainty({"v": p["perplexity"], "v_ci95": p["perplexity_ci95"]}, "v", 2),
                p["documents"],
                p["tokens"],
            ]
            for p in curve
        ],
    )
    return embed(
        figure,
        alt=f"{name}'s perplexity by period of the texts, the period of lowest marked",
        caption=f"Effective cutoff (lowest perplexity): {estimate_text(overall)}; 95% interval "
        "over resamples of each period's documents.",
        data=data,
    )


def _families_figure(name: str, by_family: dict[str, dict], periods: list[str]) -> Block:
    """Each family's perplexity relative to its own lowest (1 at its estimate), so families
    of different difficulty share one axis, as Dated Data draws its resources."""
    ranked = sorted(by_family, key=lambda f: -by_family[f].get("documents", 0))
    drawn = [f for f in ranked if by_family[f].get("curve")][:MAX_FAMILIES_DRAWN]
    place = {p: i for i, p in enumerate(periods)}
    series = {}
    for family in drawn:
        curve = by_family[family]["curve"]
        lowest = min(point["perplexity"] for point in curve)
        series[family] = (
            [place[point["period"]] for point in curve],
            [point["perplexity"] / lowest for point in curve],
        )
    figure = line_plot(
        series,
        title=f"{name}: perplexity by family, relative to each family's lowest",
        xlabel="period of the texts",
        ylabel="perplexity / the family's lowest",
        markers=True,
        ylim=_around(1.0, max((max(y) for _, y in series.values()), default=1.0)),
        categories=_ticks(periods),
    )
    left = len(ranked) - len(drawn)
    caption = "Each family's estimate is the period where its curve reaches 1."
    if left:
        caption += f" The {left} families with the fewest documents are not drawn."
    return embed(
        figure, alt=f"{name}'s perplexity by period for each family of texts", caption=caption
    )


def model_blocks(name: str, metrics: dict) -> list[Block]:
    """One model's figures, its estimates per family and overall, and how they were made."""
    overall, by_family = metrics["overall"], metrics.get("by_family") or {}
    blocks: list[Block] = []
    if overall.get("cutoff") is not None:
        blocks.append(_overall_figure(name, overall))
    if len(by_family) > 1:
        blocks.append(_families_figure(name, by_family, metrics["periods"]))
    rows = []
    for family, group in {**by_family, "all": overall}.items():
        share = group.get("cutoff_share")
        rows.append(
            [
                family,
                estimate_text(group),
                "-" if share is None else f"{share:.0%}",
                group.get("documents"),
            ]
        )
    column = metrics.get("family_by") or "family"
    blocks.append(
        Table(
            [column, "effective cutoff [95% interval]", "resamples agreeing", "documents"],
            rows,
            caption=f"{name}: the period whose texts it finds least perplexing (Cheng et al., "
            "2024, Dated Data); the interval and the share of resamples that agree come from "
            "resampling each period's documents.",
        )
    )
    said = f"A period's perplexity: {metrics.get('perplexity_of_a_period')}."
    departures = metrics.get("departures") or []
    if departures:
        said += f" Departures from Dated Data: {'; '.join(departures)}."
    blocks.append(Text(said, style="note"))
    return blocks


@section("probe:doc-cutoff", headline=("view", "rows", "model_count"))
def doc_cutoff_section(step_dir: Path, record: dict) -> Section:
    """Each model's effective cutoff from its perplexity on dated texts, overall and per
    family."""
    return per_model_section(step_dir, record, "Effective cutoff, the documents' way", model_blocks)
