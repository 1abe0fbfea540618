"""`chronoprobe report`: the self-contained HTML report of a run directory."""

from __future__ import annotations

import logging
import webbrowser
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from chronoprobe.cli.errors import user_errors
from chronoprobe.cli.help_text import reflowed


class _Warnings(logging.Handler):
    """Prints the report's warnings (a section that could not be built) as they come."""

    def __init__(self, console: Console) -> None:
        super().__init__(logging.WARNING)
        self.console = console

    def emit(self, record: logging.LogRecord) -> None:
        self.console.print(
            f"[yellow]warning:[/] {record.getMessage()}", highlight=False, soft_wrap=True
        )


@reflowed
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
    A step whose section cannot be built shows the error in its place and is named in a warning;
    the rest of the report is still written.
    """
    from chronoprobe.report import write_report

    console = Console(stderr=True)
    warnings = _Warnings(console)
    logger = logging.getLogger("chronoprobe.report")
    logger.addHandler(warnings)
    try:
        path = write_report(run_dir, out)
    finally:
        logger.removeHandler(warnings)
    console.print(f"report: [bold]{escape(str(path))}[/]", highlight=False)
    if open_browser:
        webbrowser.open(path.resolve().as_uri())
