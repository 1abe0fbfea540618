"""`chronoprobe run` and `chronoprobe results`: run an experiment config, query its results."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

import typer
from rich.console import Console
from rich.markup import escape

from chronoprobe.cli.errors import user_errors
from chronoprobe.cli.help_text import reflowed
from chronoprobe.cli.threads import threads_option, use_threads

if TYPE_CHECKING:
    from chronoprobe.core.tables import ResultTable

console = Console(stderr=True)


@reflowed
@user_errors
def run(
    config: Path = typer.Argument(
        ..., help="Experiment config (YAML), e.g. experiments/demo.yaml.", metavar="CONFIG"
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
    threads: int | None = threads_option(),
) -> None:
    """Run an experiment: every step in order, reusing cached steps, resuming interrupted ones.

    Outputs go to RUNDIR/steps/<step id>/, with config.yaml, environment.json and run.log beside
    them. Interrupt at any time (Ctrl-C, kill) and run the same command again to resume.
    RUNDIR must be new, empty, or a run directory (it holds .chronoprobe-run): a run never
    writes over a folder it did not make. A config that lists plugins runs only with
    --trust-plugins, e.g. chronoprobe run mine.yaml --trust-plugins.

    Example: chronoprobe run experiments/demo.yaml --out runs/demo
    """
    from chronoprobe.runs.engine import run_experiment

    use_threads(threads)
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


def _result_table(columns: list[str], rows: list[tuple]) -> ResultTable:
    from chronoprobe.core.tables import ResultTable

    return ResultTable(columns, [list(row) for row in rows])


@reflowed
@user_errors
def results(
    run_dir: Path = typer.Argument(
        ...,
        help="A run directory (`chronoprobe run`), one command's --out folder, or a folder "
        "holding several of either.",
        metavar="FOLDER",
    ),
    sql: str | None = typer.Option(
        None, "--sql", help="Query, e.g. \"select * from metrics where metric like 'facts%'\"."
    ),
    fmt: Literal["table", "markdown", "latex", "csv", "json"] = typer.Option(
        "table",
        "--format",
        help="table: fitted to the terminal; markdown or latex (a booktabs tabular, special "
        "characters escaped) to paste into a paper, figures rounded and written with their "
        "95% interval, 0.412 [0.380, 0.440]; csv or json: every value whole, for a program. "
        "E.g. --format latex.",
    ),
    as_csv: bool = typer.Option(False, "--csv", hidden=True, help="Same as --format csv."),
    as_json: bool = typer.Option(False, "--json", hidden=True, help="Same as --format json."),
    threads: int | None = threads_option(),
) -> None:
    """Query results with SQL (DuckDB); without --sql, list the tables.

    FOLDER is a run directory, one command's output, or a folder holding several (found down
    to four levels; each is a step named by its path there, e.g. probes/smollm2). For a run,
    builds RUNDIR/results.duckdb; for any other folder, the same database in memory. It has
    one view per Parquet file, named <step id>_<file name> (probes/smollm2's predictions:
    probes_smollm2_predictions), and a `metrics` table (step_id, kind, metric, value, text)
    from every step's metrics.json. Open it with any DuckDB client for more.

    Example: chronoprobe results runs/demo --sql "select step_id, metric, value from metrics"
    """
    use_threads(threads)
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
    fmt = "csv" if as_csv else "json" if as_json else fmt
    table = _result_table(columns, rows)
    if fmt == "table":
        Console().print(table)
    else:
        typer.echo(table.render(fmt), nl=False)
