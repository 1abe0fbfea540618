"""`chronoprobe report`: the self-contained HTML report of a run or any folder of outputs."""

from __future__ import annotations

import logging
import webbrowser
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from chronoprobe.cli.errors import user_errors
from chronoprobe.cli.help_text import reflowed
from chronoprobe.cli.run import outputs_argument
from chronoprobe.cli.threads import threads_option, use_threads


class _Warnings(logging.Handler):
    """Prints the report's warnings (a section that could not be built) as they come."""

    def __init__(self, console: Console) -> None:
        super().__init__(logging.WARNING)
        self.console = console

    def emit(self, record: logging.LogRecord) -> None:
        self.console.print(
            f"[yellow]warning:[/] {escape(record.getMessage())}", highlight=False, soft_wrap=True
        )


@reflowed
@user_errors
def report(
    run_dir: Path = outputs_argument(),
    out: Path | None = typer.Option(
        None,
        "--out",
        "-o",
        help="Where to write the report (default: FOLDER/report.html for a run; for one "
        "command's output, OUT-report.html beside it; a folder of several needs it).",
    ),
    open_browser: bool = typer.Option(
        False, "--open", help="Open the report in the default web browser."
    ),
    threads: int | None = threads_option(),
) -> None:
    """Write FOLDER/report.html: a summary table, then one section per step, with its plots.

    FOLDER is a run directory, one command's output (a probe, a build, a training...; its
    report goes beside it, OUT-report.html), or a folder holding several: outputs and run
    directories are found in it down to four levels, and each is a step named by its path
    there, e.g. chronoprobe report outputs/ --out outputs.html gives the steps probes/smollm2
    and demo/world (such a folder is yours: its report goes to the file you name). A folder
    inside a run (RUN/steps) is refused: report the run. The file is self-contained (plots
    embedded, no network), so it can be mailed or archived.
    A step whose section cannot be built shows the error in its place and is named in a warning;
    the rest of the report is still written. A plugin's steps get the plugin's own sections:
    the plugins a run used are imported where the very file the run used is found here (on
    the Python path or in the current directory; one warning line for each that is not), as
    are those you chose (CHRONOPROBE_PLUGINS, chronoprobe plugins allow); without them, such
    a step shows its metrics.

    Example: chronoprobe report runs/demo --open
    """
    from chronoprobe.cli.plugins import import_run_plugins, import_user_plugins
    from chronoprobe.report import write_report

    import_user_plugins()  # the report sections of their builders and views
    use_threads(threads)
    console = Console(stderr=True, emoji=False)
    for line in import_run_plugins(run_dir):  # and those the runs recorded, where found
        console.print(f"[yellow]warning:[/] {escape(line)}", highlight=False, soft_wrap=True)
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
