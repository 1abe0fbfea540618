"""`chronoprobe report`: the self-contained HTML report of a run directory."""

from __future__ import annotations

import webbrowser
from pathlib import Path

import typer
from rich.console import Console

from chronoprobe.cli.errors import user_errors


@user_errors
def report(
    run_dir: Path = typer.Argument(..., help="Run directory written by `chronoprobe run`."),
    out: Path | None = typer.Option(
        None, "--out", "-o", help="Where to write the report (default: RUNDIR/report.html)."
    ),
    open_browser: bool = typer.Option(
        False, "--open", help="Open the report in the default web browser."
    ),
) -> None:
    """Write RUNDIR/report.html: a summary table, then one section per step, with its plots.

    The file is self-contained (plots embedded, no network), so it can be mailed or archived.
    """
    from chronoprobe.report import write_report

    path = write_report(run_dir, out)
    Console(stderr=True).print(f"report: [bold]{path}[/]", highlight=False)
    if open_browser:
        webbrowser.open(path.resolve().as_uri())
