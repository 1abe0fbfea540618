"""`chronoprobe kg ...`: build, inspect and export temporal knowledge graphs."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from chronoprobe.cli.errors import user_errors
from chronoprobe.cli.help_text import Command, Group, reflowed
from chronoprobe.cli.threads import threads_option, use_threads
from chronoprobe.errors import UserError

app = typer.Typer(
    cls=Group,
    help="Build, inspect and export temporal knowledge graphs (KG directories of Parquet files).",
    no_args_is_help=True,
)
console = Console(stderr=True, emoji=False)


class ExportWhat(StrEnum):
    facts = "facts"
    entities = "entities"
    relations = "relations"


@app.command(cls=Command)
@reflowed
@user_errors
def export(
    kg_dir: Path = typer.Argument(..., help="KG directory.", metavar="KG"),
    out: Path = typer.Option(..., "--out", "-o", help="JSONL file to write."),
    what: ExportWhat = typer.Option(ExportWhat.facts, help="Which table to export."),
    force: bool = typer.Option(
        False, "--force", help="Replace --out if it exists (a file cannot say who wrote it)."
    ),
    threads: int | None = threads_option(),
) -> None:
    """Export facts, entities or relations as JSONL (times as ISO strings at their precision).

    Facts: {"subject","relation","object","start","end"}; entities:
    {"id","label","aliases","description","start","end"}. The files load back with
    `kg convert --format jsonl`.

    Example: chronoprobe kg export kg/world --out facts.jsonl --what facts
    """
    from chronoprobe.kg.graph import TemporalKG
    from chronoprobe.kg.io.jsonl import export_jsonl

    use_threads(threads)
    if out.resolve().is_relative_to(kg_dir.resolve()):
        raise UserError(f"--out {out} is inside the KG directory {kg_dir}: write it elsewhere")
    if (out.exists() or out.is_symlink()) and not out.is_dir() and not force:
        raise UserError(f"--out {out} exists; pass --force to replace it")
    rows = export_jsonl(TemporalKG.load(kg_dir), out, what.value)
    console.print(f"[green]wrote[/] {rows:,} {what.value} rows to {escape(str(out))}")


@app.command(cls=Command)
@reflowed
@user_errors
def info(
    kg_dir: Path = typer.Argument(..., help="KG directory.", metavar="KG"),
    as_json: bool = typer.Option(False, "--json", help="Print the statistics as JSON."),
    top: int = typer.Option(10, help="How many of the most popular entities to list."),
    threads: int | None = threads_option(),
) -> None:
    """Show a KG's size, relation shares, cardinality classes, multi-answer share and time range.

    Example: chronoprobe kg info kg/world --top 5
    """
    from chronoprobe.kg.graph import TemporalKG
    from chronoprobe.kg.stats import kg_statistics

    use_threads(threads)
    stats = kg_statistics(TemporalKG.load(kg_dir), top=top)
    if as_json:
        typer.echo(json.dumps(stats, indent=2))
        return
    _print_statistics(stats)


def _print_statistics(stats: dict) -> None:
    out = Console(emoji=False)
    first, last = stats["year_range"]
    out.print(
        f"[bold]{escape(str(stats['name']))}[/]: {stats['entities']:,} entities, "
        f"{stats['relations']:,} relations, {stats['facts']:,} facts, years {first} to {last}"
    )
    out.print(
        f"multi-answer share of masked statements: [bold]{stats['multi_answer_share']:.1%}[/]; "
        f"open-ended facts: {stats['open_ended_facts']:,}; "
        f"unknown start: {stats['unknown_start_facts']:,}"
    )
    precision = stats["precision"]
    out.print(
        "time bounds by precision: "
        + ", ".join(f"{key} {value:,}" for key, value in precision.items())
    )
    table = Table(title="relations")
    for column in ("relation", "label", "facts", "share", "cardinality"):
        table.add_column(column, justify="right" if column in ("facts", "share") else "left")
    for rel, row in stats["relation_shares"].items():
        table.add_row(  # ids and labels as Text: a label may hold brackets, never markup
            Text(rel),
            Text(row["label"]),
            f"{row['facts']:,}",
            f"{row['share']:.1%}",
            stats["cardinality"][rel],
        )
    out.print(table)
    popular = Table(title="most popular entities")
    for column in ("entity", "label", "facts"):
        popular.add_column(column, justify="right" if column == "facts" else "left")
    for row in stats["top_entities"]:
        popular.add_row(Text(row["id"]), Text(row["label"]), f"{row['facts']:,}")
    out.print(popular)
