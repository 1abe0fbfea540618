"""The ``chronoprobe`` command. Each command group lives in its own module."""

from __future__ import annotations

import os
import sys

import typer

from chronoprobe.cli import run as run_commands
from chronoprobe.cli.help_text import Command, Group
from chronoprobe.cli.listing import list_entries
from chronoprobe.cli.models import app as models_app
from chronoprobe.cli.plugins import plugins_app
from chronoprobe.cli.record_limit import max_record_option, use_max_record
from chronoprobe.cli.report import report
from chronoprobe.cli.threads import threads_option
from chronoprobe.core.threads import configure_threads
from chronoprobe.inputs import MAX_RECORD_ENV
from chronoprobe.steps import COMMAND_GROUPS
from chronoprobe.version import __version__

START_HERE = """Measure and build time-scoped knowledge in language models.

Start here, offline (a real KG of 338 facts, a drift probe set from it, SmolLM2-135M scoring
it; about two minutes on a laptop):

  chronoprobe kg sample --out kg/real
  chronoprobe build drift kg/real --first 2010 --last 2020 --out real-drift/
  chronoprobe probe pll real-drift/ -m package:smollm2 --out real-smol/

Then `chronoprobe report real-smol/` for its HTML report, or run a whole experiment:
`chronoprobe run experiments/demo.yaml --out runs/demo`. Every command's --help explains its
options, with an example; `chronoprobe list` names the families and what each offers."""

app = typer.Typer(
    name="chronoprobe",
    help=START_HERE,
    cls=Group,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command("run", cls=Command)(run_commands.run)
app.command("demo", cls=Command)(run_commands.demo)
app.command("results", cls=Command)(run_commands.results)
app.command("report", cls=Command)(report)
app.command("list", cls=Command)(list_entries)
app.add_typer(plugins_app, name="plugins")
app.add_typer(models_app, name="models")


def _group(name: str) -> typer.Typer:
    """The commands of one group: its operations (and, for kg, the read-only tools)."""
    from chronoprobe.cli.operations import group_commands
    from chronoprobe.cli.plugins import import_user_plugins
    from chronoprobe.steps import STEP_KINDS

    import_user_plugins()  # their views, builders, models... and so their commands and choices

    if name == "kg":
        from chronoprobe.cli.kg import app as group
    else:
        group = typer.Typer(cls=Group)
        # a group of one command stays a group (typer would make it that command)
        group.callback()(lambda: None)
    kinds = [STEP_KINDS.get(kind) for kind in STEP_KINDS.names()]
    for command, function in group_commands(kinds, name):
        group.command(command, cls=Command)(function)
    return group


def _add_groups() -> None:
    from chronoprobe.cli.lazy import lazy_group

    for name, help_text in COMMAND_GROUPS.items():
        load = lambda name=name: _group(name)  # noqa: E731
        app.add_typer(
            typer.Typer(), name=name, help=help_text, cls=lazy_group(load), no_args_is_help=True
        )


_add_groups()


def _version(value: bool) -> None:
    if value:
        typer.echo(f"chronoprobe {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
    threads: int | None = threads_option(envvar="CHRONOPROBE_THREADS"),
    max_record_bytes: str | None = max_record_option(envvar=MAX_RECORD_ENV),
) -> None:
    """chronoprobe: temporal KGs, probe sets, model views and metrics, offline by default."""
    configure_threads(threads)  # first: before anything imports torch
    use_max_record(max_record_bytes)
    if not sys.stderr.isatty():
        # Hugging Face's own bars (loading weights, downloads) redraw by carriage returns,
        # which a log file or a pipe keeps as one long garbled line per load.
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
