"""`chronoprobe kg ...`: build, inspect and export temporal knowledge graphs."""

from __future__ import annotations

import json
import time
from enum import StrEnum
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from chronoprobe.cli.errors import user_errors

app = typer.Typer(
    help="Build, inspect and export temporal knowledge graphs (KG directories of Parquet files).",
    no_args_is_help=True,
)
console = Console(stderr=True)


class SourceFormat(StrEnum):
    wikidata_json = "wikidata-json"
    wikidata_sparql = "wikidata-sparql"
    cronquestions = "cronquestions"
    jsonl = "jsonl"


class ExportWhat(StrEnum):
    facts = "facts"
    entities = "entities"
    relations = "relations"


def _relation_set(relations: str | None) -> frozenset[str] | None:
    if not relations:
        return None
    return frozenset(r.strip() for r in relations.split(",") if r.strip())


@app.command()
@user_errors
def convert(
    inputs: list[Path] = typer.Argument(
        ...,
        exists=True,
        help="Source files (.json[.gz|.bz2], .txt, .jsonl), or a CronQuestions kg directory.",
    ),
    format: SourceFormat = typer.Option(..., "--format", "-f", help="Format of the inputs."),
    out: Path = typer.Option(..., "--out", "-o", help="KG directory to write."),
    relations: str | None = typer.Option(
        None, help="Comma-separated relation ids to keep, e.g. P39,P54 (default: all)."
    ),
    lang: str = typer.Option("en", help="Language of labels, aliases and descriptions."),
    strict: bool = typer.Option(
        False, "--strict", help="Stop at the first bad record instead of skipping and counting."
    ),
    processes: int = typer.Option(1, min=1, help="Worker processes (Wikidata dumps)."),
    var: list[str] = typer.Option(
        [],
        "--var",
        help="SPARQL results: the variable NAME plays ROLE, as NAME=ROLE (repeatable); roles: "
        "subject, relation, object, start, end, start_precision, end_precision, subject_label, "
        "relation_label, object_label, statement.",
    ),
    constant: list[str] = typer.Option(
        [],
        "--constant",
        help="SPARQL results: a role the query fixed in its text, as ROLE=VALUE (repeatable), "
        "e.g. relation=P39, object=Q11696, start_precision=9.",
    ),
    mapping: Path | None = typer.Option(
        None,
        "--mapping",
        exists=True,
        dir_okay=False,
        help="SPARQL results: a YAML file of 'variables: {NAME: ROLE}' and "
        "'constants: {ROLE: VALUE}'; --var and --constant override it.",
    ),
) -> None:
    """Convert source files into a KG directory.

    Bad records are reported as FILE:LINE: REASON. By default they are skipped and counted by
    reason; with --strict the first one stops the conversion. A conversion that gives no fact
    writes nothing and fails, saying why.

    Example: chronoprobe kg convert latest-all.json.bz2 -f wikidata-json --relations P39,P54 -o kg/
    """
    from chronoprobe.kg.io.options import LoadOptions, get_loader
    from chronoprobe.kg.io.problems import Problems

    problems = Problems(strict=strict)
    options = LoadOptions(
        relations=_relation_set(relations),
        lang=lang,
        processes=processes,
        progress=True,
        sparql=_sparql_mapping(format, var, constant, mapping),
    )
    began = time.perf_counter()
    kg = get_loader(format.value)(inputs, options, problems)
    seconds = time.perf_counter() - began
    for warning in problems.warnings:
        console.print(f"[yellow]warning:[/] {warning}", highlight=False, soft_wrap=True)
    skipped = kg.meta.get("skipped") or {}
    not_facts = ", ".join(f"{k} {v:,}" for k, v in skipped.items() if v)
    if not len(kg):
        _print_problems(problems)
        why = [f"{problems.total:,} bad records (above)"] if problems.total else []
        why += [f"records that are no time-scoped facts: {not_facts}"] if not_facts else []
        raise ValueError(
            f"no facts in {', '.join(map(str, inputs))}; nothing written to {out}"
            + (f" ({'; '.join(why)})" if why else " (no records)")
        )
    kg.meta.setdefault("source", {"format": format.value, "inputs": [str(p) for p in inputs]})
    kg.meta["problems"] = dict(problems.counts)
    if problems.warnings:
        kg.meta["warnings"] = problems.warnings
    kg.name = out.name
    kg.save(out)
    console.print(
        f"[green]wrote[/] {out}: {kg.entities.num_rows:,} entities, "
        f"{kg.relations.num_rows:,} relations, {len(kg):,} facts in {seconds:.1f}s"
    )
    if not_facts:  # valid records that are not facts (no time, deprecated, ...)
        console.print(f"not facts: {not_facts}")
    _print_problems(problems)


def _print_problems(problems) -> None:
    if problems.total:
        console.print(f"[yellow]skipped {problems.total:,} bad records:[/]")
        for line in problems.summary():
            console.print(f"  {line}", highlight=False)


def _sparql_mapping(format: SourceFormat, var: list[str], constant: list[str], path: Path | None):
    """The SPARQL variable mapping the options give; None for the defaults."""
    from chronoprobe.kg.io.sparql_mapping import VariableMapping, parse_pairs

    if not (var or constant or path):
        return None
    if format != SourceFormat.wikidata_sparql:
        raise ValueError("--var, --constant and --mapping apply to --format wikidata-sparql only")
    variables, constants = parse_pairs(var, "--var"), parse_pairs(constant, "--constant")
    if path is not None:
        return VariableMapping.from_file(path, variables, constants)
    return VariableMapping.build(variables, constants)


@app.command()
@user_errors
def export(
    kg_dir: Path = typer.Argument(..., help="KG directory."),
    out: Path = typer.Option(..., "--out", "-o", help="JSONL file to write."),
    what: ExportWhat = typer.Option(ExportWhat.facts, help="Which table to export."),
) -> None:
    """Export facts, entities or relations as JSONL (times as ISO strings at their precision).

    Facts: {"subject","relation","object","start","end"}; entities:
    {"id","label","aliases","description","start","end"}. The files load back with
    `kg convert --format jsonl`.
    """
    from chronoprobe.kg.graph import TemporalKG
    from chronoprobe.kg.io.jsonl import export_jsonl

    rows = export_jsonl(TemporalKG.load(kg_dir), out, what.value)
    console.print(f"[green]wrote[/] {rows:,} {what.value} rows to {out}")


@app.command()
@user_errors
def info(
    kg_dir: Path = typer.Argument(..., help="KG directory."),
    as_json: bool = typer.Option(False, "--json", help="Print the statistics as JSON."),
    top: int = typer.Option(10, help="How many of the most popular entities to list."),
) -> None:
    """Show a KG's size, relation shares, cardinality classes, multi-answer share and time range."""
    from chronoprobe.kg.graph import TemporalKG
    from chronoprobe.kg.stats import kg_statistics

    stats = kg_statistics(TemporalKG.load(kg_dir), top=top)
    if as_json:
        typer.echo(json.dumps(stats, indent=2))
        return
    _print_statistics(stats)


def _print_statistics(stats: dict) -> None:
    out = Console()
    first, last = stats["year_range"]
    out.print(
        f"[bold]{stats['name']}[/]: {stats['entities']:,} entities, {stats['relations']:,} "
        f"relations, {stats['facts']:,} facts, years {first} to {last}"
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
        table.add_row(
            rel, row["label"], f"{row['facts']:,}", f"{row['share']:.1%}", stats["cardinality"][rel]
        )
    out.print(table)
    popular = Table(title="most popular entities")
    for column in ("entity", "label", "facts"):
        popular.add_column(column, justify="right" if column == "facts" else "left")
    for row in stats["top_entities"]:
        popular.add_row(row["id"], row["label"], f"{row['facts']:,}")
    out.print(popular)


@app.command()
@user_errors
def synth(
    out: Path = typer.Option(..., "--out", "-o", help="KG directory to write."),
    seed: int = typer.Option(0, help="Random seed: the same seed gives the same world."),
    facts: int | None = typer.Option(
        None, help="Approximate number of facts (default: a world of about 20,000 facts)."
    ),
    people: int | None = typer.Option(None, help="Number of people, instead of --facts."),
    start_year: int = typer.Option(1950, help="First year of the world's history."),
    end_year: int = typer.Option(2024, help="Last year of the world's history."),
    text: bool = typer.Option(True, help="Also write articles and dated snippets."),
) -> None:
    """Generate the synthetic world: a seeded KG with real-world structure, plus its texts.

    People, teams, companies, universities, offices, awards, countries and events, with careers,
    conflicts, repeated terms and Zipfian popularity. Writes the KG and, with --text,
    articles.parquet and snippets.parquet (dated text about the facts of each period).
    """
    from chronoprobe.kg.synth import SynthConfig, synthesize

    if facts is None and people is None:
        facts = 20_000
    config = SynthConfig(
        seed=seed,
        facts=facts,
        people=people,
        start_year=start_year,
        end_year=end_year,
        text=text,
    )
    began = time.perf_counter()
    with console.status("generating the synthetic world"):
        world = synthesize(config)
        world.kg.name = out.name
        world.save(out)
    console.print(
        f"[green]wrote[/] {out}: {len(world.kg):,} facts, {world.kg.entities.num_rows:,} "
        f"entities in {time.perf_counter() - began:.1f}s"
    )


@app.command()
@user_errors
def sample(out: Path = typer.Option(..., "--out", "-o", help="KG directory to write.")) -> None:
    """Write the small real sample KG shipped with chronoprobe (hand-curated Wikidata facts).

    A stand-in to try things offline: replace it with real dumps via `kg convert`.
    """
    from chronoprobe.kg.samples import load_sample

    kg = load_sample()
    kg.name = out.name
    kg.save(out)
    console.print(f"[green]wrote[/] {out}: {len(kg):,} facts, {kg.entities.num_rows:,} entities")
