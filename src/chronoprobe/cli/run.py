"""`chronoprobe run` and `chronoprobe results`: run an experiment config, query its results."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from chronoprobe.cli.errors import user_errors
from chronoprobe.cli.help_text import reflowed

console = Console(stderr=True)


@reflowed
@user_errors
def run(
    config: Path = typer.Argument(
        ..., help="Experiment config (YAML), e.g. experiments/demo.yaml."
    ),
    out: Path | None = typer.Option(
        None, "--out", "-o", help="Run directory (default: runs/<name>)."
    ),
    overrides: list[str] = typer.Option(
        [], "--set", help="Override a config value: KEY=VALUE, e.g. steps.world.params.facts=5000."
    ),
    no_cache: bool = typer.Option(
        False, "--no-cache", help="Recompute every step (and refresh the shared cache)."
    ),
    trust_plugins: bool = typer.Option(
        False,
        "--trust-plugins",
        help="Import the Python modules the config lists under `plugins:`. They run code with "
        "your rights, so a config's plugins are refused without this flag (modules you name "
        "in CHRONOPROBE_PLUGINS need none).",
    ),
) -> None:
    """Run an experiment: every step in order, reusing cached steps, resuming interrupted ones.

    Outputs go to RUNDIR/steps/<step id>/, with config.yaml, environment.json and run.log beside
    them. Interrupt at any time (Ctrl-C, kill) and run the same command again to resume.
    RUNDIR must be new, empty, or a run directory (it holds .chronoprobe-run): a run never
    writes over a folder it did not make. A config that lists plugins runs only with
    --trust-plugins, e.g. chronoprobe run mine.yaml --trust-plugins.
    """
    from chronoprobe.runs.engine import run_experiment

    try:
        result = run_experiment(
            config,
            out,
            overrides,
            use_cache=not no_cache,
            console=console,
            trust_plugins=trust_plugins,
        )
    except KeyboardInterrupt:
        console.print("[yellow]interrupted[/]: run the same command again to resume")
        raise typer.Exit(130) from None
    console.print(f"run directory: [bold]{escape(str(result.run_dir))}[/]", highlight=False)
    if result.report is not None:
        console.print(f"report: [bold]{escape(str(result.report))}[/]", highlight=False)


def _print_csv(columns: list[str], rows: list[tuple]) -> None:
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)


def _print_json(columns: list[str], rows: list[tuple]) -> None:
    records = [dict(zip(columns, row, strict=True)) for row in rows]
    typer.echo(json.dumps(records, indent=2, default=str))


def _print_table(columns: list[str], rows: list[tuple]) -> None:
    table = Table()
    for column in columns:
        table.add_column(column)
    for row in rows:
        table.add_row(*("" if v is None else str(v) for v in row))
    Console().print(table)


@reflowed
@user_errors
def results(
    run_dir: Path = typer.Argument(..., help="Run directory written by `chronoprobe run`."),
    sql: str | None = typer.Option(
        None, "--sql", help="Query, e.g. \"select * from metrics where metric like 'facts%'\"."
    ),
    as_csv: bool = typer.Option(False, "--csv", help="Print the result as CSV."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as a JSON list."),
) -> None:
    """Query a run's results with SQL (DuckDB); without --sql, list the tables.

    Builds RUNDIR/results.duckdb with one view per Parquet file under steps/, named
    <step id>_<file name>, and a `metrics` table (step_id, kind, metric, value, text) from every
    step's metrics.json. Open it with any DuckDB client for more.
    """
    import duckdb

    from chronoprobe.runs.results import list_tables, open_results

    con = open_results(run_dir)
    try:
        if sql is None:
            columns, rows = ["name", "type"], list_tables(con)
        else:
            try:
                cursor = con.execute(sql)
            except duckdb.Error as err:
                raise ValueError(f"query failed: {err}") from err
            columns = [d[0] for d in cursor.description or []]
            rows = cursor.fetchall()
    finally:
        con.close()
    printer = _print_csv if as_csv else _print_json if as_json else _print_table
    printer(columns, rows)
