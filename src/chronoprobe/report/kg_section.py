"""The report section of a ``kg`` step: what is in the KG, over which years, how it is shaped.

Numbers come from :mod:`chronoprobe.kg.stats` (the same ones ``chronoprobe kg info`` prints);
this module only lays them out, and adds the texts of a synthetic world when it has them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from chronoprobe.kg.graph import TemporalKG
from chronoprobe.kg.stats import facts_per_year, kg_statistics
from chronoprobe.report.blocks import DASH, Block, Percent, Section, Stats, Table, Text
from chronoprobe.report.plots import embed, grouped_bars, line_plot
from chronoprobe.report.sections import section, step_id_of

TOP_ENTITIES = 15
BAR_RELATIONS = 20  # relations drawn one bar each; the rest are one "other" bar
AREA_RELATIONS = 6  # relations drawn one band each in facts per year
EXAMPLE_SNIPPETS = 3


def _relation_name(row: dict[str, Any], relation: str) -> str:
    return relation if row["label"] == relation else f"{row['label']} ({relation})"


def relation_shares(stats: dict[str, Any]) -> list[Block]:
    shares = stats["relation_shares"]
    names = [_relation_name(row, rel) for rel, row in shares.items()]
    values = [row["share"] for row in shares.values()]
    if len(names) > BAR_RELATIONS:
        rest = len(names) - BAR_RELATIONS + 1
        names = [*names[: BAR_RELATIONS - 1], f"other ({rest} relations)"]
        values = [*values[: BAR_RELATIONS - 1], sum(values[BAR_RELATIONS - 1 :])]
    figure = grouped_bars(
        names,
        {"share of facts": values},
        title="Relation shares",
        xlabel="share of all facts",
        ylabel="relation",
        horizontal=True,
        value_format="{:.1%}",
    )
    figure.axes[0].xaxis.set_major_formatter(lambda x, _: f"{x:.0%}")
    alt = "Horizontal bar chart of each relation's share of the facts, largest first: " + ", ".join(
        f"{n} {v:.1%}" for n, v in zip(names[:5], values[:5], strict=True)
    )
    return [embed(figure, alt=alt)]


def _yearly(kg: TemporalKG, facts: pa.Table, first: int, last: int, years: range) -> np.ndarray:
    """Facts of ``facts`` holding per year, open bounds clipped to the whole KG's range.

    Filling the open bounds before counting keeps a relation's still-true facts counted up to
    the KG's last year, not only up to that relation's own last bound.
    """
    filled = facts.set_column(
        facts.schema.get_field_index("start_year"),
        "start_year",
        pc.fill_null(facts.column("start_year"), first),
    )
    filled = filled.set_column(
        filled.schema.get_field_index("end_year"),
        "end_year",
        pc.fill_null(filled.column("end_year"), last),
    )
    counts = facts_per_year(TemporalKG(kg.entities, kg.relations, filled))
    return np.array([counts.get(y, 0) for y in years], dtype=np.int64)


# Years apart from the rest by more than GAP empty years, holding under TAIL of all fact-years
# (a Roman consul beside a modern KG), are left off the time axis and noted instead.
GAP = 50
TAIL = 0.05


def bulk_window(per_year: dict[int, int]) -> tuple[int, int]:
    """The years the time axis shows: every year with facts, less outlying clusters."""
    years = sorted(y for y, n in per_year.items() if n)
    clusters = [[years[0]]]
    for year in years[1:]:
        if year - clusters[-1][-1] > GAP:
            clusters.append([])
        clusters[-1].append(year)
    total = sum(per_year[y] for y in years)

    def small(cluster: list[int]) -> bool:
        return sum(per_year[y] for y in cluster) < TAIL * total

    while len(clusters) > 1 and small(clusters[0]):
        clusters.pop(0)
    while len(clusters) > 1 and small(clusters[-1]):
        clusters.pop()
    return clusters[0][0], clusters[-1][-1]


def facts_over_time(kg: TemporalKG, stats: dict[str, Any]) -> list[Block]:
    total = facts_per_year(kg)
    if not total:
        return [Text("No fact has a known start or end year, so none can be placed in time.")]
    first, last = bulk_window(total)
    outside = sum(n for y, n in total.items() if not first <= y <= last)
    years = range(first, last + 1)
    all_counts = np.array([total[y] for y in years], dtype=np.int64)
    top = list(stats["relation_shares"])[:AREA_RELATIONS]
    relation = kg.facts.column("relation")
    bands: dict[str, tuple[list[int], np.ndarray]] = {}
    for rel in top:
        part = kg.facts.filter(pc.equal(relation, rel))
        name = _relation_name(stats["relation_shares"][rel], rel)
        bands[name] = (list(years), _yearly(kg, part, first, last, years))
    rest = all_counts - sum((v for _, v in bands.values()), np.zeros_like(all_counts))
    if len(stats["relation_shares"]) > len(top):
        bands["other"] = (list(years), rest)
    figure = line_plot(
        bands,
        title="Facts holding in each year",
        xlabel="year",
        ylabel="facts holding",
        stacked=True,
    )
    peak = int(np.argmax(all_counts))
    alt = (
        f"Stacked area chart of facts holding per year from {first} to {last}, by relation; "
        f"the most facts ({all_counts[peak]:,}) hold in {first + peak}."
    )
    data = Table(
        ["year", "facts holding", *bands],
        [
            [str(y), int(all_counts[i]), *(int(v[i]) for _, v in bands.values())]
            for i, y in enumerate(years)
        ],
    )
    caption = (
        "A fact counts in every year its interval overlaps; an unknown start counts from the "
        "first year, a missing end (still true) up to the last."
    )
    if outside:
        caption += (
            f" Left off the axis: {outside:,} fact-years ({min(total)} to {max(total)} in all) "
            f"in years more than {GAP} years apart from the rest, under {TAIL:.0%} of the total."
        )
    return [embed(figure, alt=alt, caption=caption, data=data)]


def relation_table(stats: dict[str, Any]) -> list[Block]:
    classes: dict[str, str] = stats["cardinality"]
    shares = stats["relation_shares"]
    by_class: dict[str, list[int]] = {}
    for rel, row in shares.items():
        tally = by_class.setdefault(classes.get(rel, DASH), [0, 0])
        tally[0] += 1
        tally[1] += row["facts"]
    total = max(stats["facts"], 1)
    order = ["1-1", "1-N", "N-1", "N-M"]
    summary = Table(
        ["class", "relations", "facts", "share of facts"],
        [
            [c, by_class[c][0], by_class[c][1], Percent(by_class[c][1] / total)]
            for c in sorted(by_class, key=lambda c: (order.index(c) if c in order else 9, c))
        ],
        caption="Cardinality classes (answers per query among facts that start the same year)",
    )
    relations = Table(
        ["relation", "label", "class", "facts", "share"],
        [
            [rel, row["label"], classes.get(rel, DASH), row["facts"], Percent(row["share"])]
            for rel, row in shares.items()
        ],
        caption="Relations",
    )
    return [summary, relations]


def top_entities(kg: TemporalKG, stats: dict[str, Any]) -> list[Block]:
    rows = stats["top_entities"]
    ids = pa.array([row["id"] for row in rows], type=pa.string())
    known = kg.entities.filter(pc.is_in(kg.entities.column("id"), ids)).select(["id", "type"])
    types = dict(zip(known.column("id").to_pylist(), known.column("type").to_pylist(), strict=True))
    return [
        Table(
            ["rank", "entity", "label", "type", "facts"],
            [
                [i + 1, row["id"], row["label"], types.get(row["id"]), row["facts"]]
                for i, row in enumerate(rows)
            ],
            caption=f"Most popular entities (facts as subject or object, top {len(rows)})",
        )
    ]


def precision_table(stats: dict[str, Any]) -> Table:
    mix = stats["precision"]
    bounds = max(sum(mix.values()), 1)
    return Table(
        ["precision", "bounds", "share"],
        [[name, n, Percent(n / bounds)] for name, n in mix.items()],
        caption="Time bounds (starts and ends) by precision",
    )


def problems_blocks(kg: TemporalKG) -> list[Block]:
    problems = kg.meta.get("problems") or {}
    if not problems:
        return []
    total = sum(problems.values())
    return [
        Text(f"{total:,} source records were skipped while loading; by reason:", style="error"),
        Table(["reason", "records"], [[k, v] for k, v in problems.items()]),
    ]


def _year_column(snippets: pa.Table) -> np.ndarray:
    if "year" in snippets.column_names:
        return snippets.column("year").to_numpy(zero_copy_only=False)
    dates = pc.cast(snippets.column("date"), pa.string())
    return pc.cast(pc.utf8_slice_codeunits(dates, 0, 4), pa.int32()).to_numpy(zero_copy_only=False)


def texts(kg: TemporalKG, step_dir: Path) -> tuple[dict[str, int], list[Block]]:
    """Counts and blocks for the synthetic world's articles and dated snippets, when present."""
    counts: dict[str, int] = {}
    blocks: list[Block] = []
    articles, snippets = step_dir / "articles.parquet", step_dir / "snippets.parquet"
    if articles.is_file():
        counts["articles"] = pq.read_metadata(articles).num_rows
    if not snippets.is_file():
        return counts, blocks
    columns = pq.read_schema(snippets).names
    counts["snippets"] = pq.read_metadata(snippets).num_rows
    if "year" in columns or "date" in columns:
        table = pq.read_table(snippets, columns=["year" if "year" in columns else "date"])
        found, found_n = np.unique(_year_column(table), return_counts=True)
        years = np.arange(found.min(), found.max() + 1) if len(found) else found
        n = np.zeros(len(years), dtype=np.int64)
        n[np.searchsorted(years, found)] = found_n  # years without snippets count as zero
        figure = line_plot(
            {"snippets": (years.tolist(), n.tolist())},
            title="Dated text snippets per year",
            xlabel="year",
            ylabel="snippets",
        )
        alt = f"Line chart of snippets per year, {years.min()} to {years.max()}."
        data = Table(
            ["year", "snippets"], [[str(y), int(c)] for y, c in zip(years, n, strict=True)]
        )
        blocks.append(embed(figure, alt=alt, data=data))
    wanted = [c for c in ("date", "entity", "text") if c in columns]
    if "text" in wanted and counts["snippets"]:
        batch = next(pq.ParquetFile(snippets).iter_batches(EXAMPLE_SNIPPETS, columns=wanted))
        rows = batch.to_pylist()
        for row in rows:
            if "entity" in row:
                row["entity"] = kg.label(row["entity"])
            row["text"] = row["text"] if len(row["text"]) <= 240 else row["text"][:239] + "…"
        blocks.append(
            Table(
                wanted,
                [[str(row[c]) for c in wanted] for row in rows],
                caption="Example snippets (the text corpus models are trained on)",
            )
        )
    return counts, blocks


@section("kg", headline=("facts", "entities", "relations", "multi_answer_share"))
def kg_section(step_dir: Path, record: dict) -> Section:
    """A KG's counts, its problems, relation shares, facts over time, top entities and
    date precisions."""
    kg = TemporalKG.load(step_dir)
    stats = kg_statistics(kg, top=TOP_ENTITIES)
    first, last = stats["year_range"]
    text_counts, text_blocks = texts(kg, step_dir)
    tiles = {
        "facts": stats["facts"],
        "entities": stats["entities"],
        "relations": stats["relations"],
        "years": f"{first}{DASH}{last}" if first is not None else "none known",
        "multi-answer facts": Percent(stats["multi_answer_share"]),
        "still true (no end)": stats["open_ended_facts"],
        "unknown start": stats["unknown_start_facts"],
        **text_counts,
    }
    blocks: list[Block] = [Stats(tiles), *problems_blocks(kg)]
    if len(kg):
        blocks += [
            *relation_shares(stats),
            *facts_over_time(kg, stats),
            *relation_table(stats),
            *top_entities(kg, stats),
            precision_table(stats),
        ]
    elif dated := kg.entities.num_rows - kg.entities.column("start_year").null_count:
        blocks.append(
            Text(
                f"The KG has no facts, only entities, {dated:,} of them dated: what ECBD "
                "reads (new entities of a dump slice).",
                style="note",
            )
        )
    else:
        blocks.append(Text("The KG has no facts.", style="error"))
    blocks += text_blocks
    step_id = step_id_of(step_dir, record)
    named = f" ({kg.name})" if kg.name and kg.name != step_id else ""
    return Section(f"Knowledge graph: {step_id}{named}", blocks)
