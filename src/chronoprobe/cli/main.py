"""The ``chronoprobe`` command. Each command group lives in its own module."""

from __future__ import annotations

import os
import sys

import typer

from chronoprobe import __version__
from chronoprobe.cli import kg, train
from chronoprobe.cli import run as run_commands
from chronoprobe.cli.report import report

app = typer.Typer(
    name="chronoprobe",
    help="Measure and build time-scoped knowledge in language models.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)
app.add_typer(kg.app, name="kg")
app.add_typer(train.app, name="train")
app.command("run")(run_commands.run)
app.command("results")(run_commands.results)
app.command("report")(report)


GROUPS = {
    "tkg": "Temporal KG embeddings: train ComplEx, TComplEx, TNTComplEx or TimePlex on a KG "
    "directory by link prediction, and rank held-out facts (filtered MRR, Hits@k, time "
    "accuracy).",
    "kgqa": "Temporal KG question answering: train CronKGQA, EmbedKGQA or an LM-only baseline "
    "on a CronQuestions directory with the embeddings of a TKG checkpoint, and report Hits@1/10 "
    "as the CronQuestions paper does (simple vs complex, per reasoning type, entity vs time "
    "answers).",
}


def _operations() -> None:
    """Every operation's command, made from its step kind's params."""
    from chronoprobe.cli.operations import add_commands
    from chronoprobe.runs.steps import STEP_KINDS

    groups = {"kg": kg.app, "train": train.app}
    kinds = [STEP_KINDS.get(name) for name in STEP_KINDS.names()]
    add_commands(app, [k for k in kinds if k.command], groups, GROUPS)


_operations()


def _version(value: bool) -> None:
    if value:
        typer.echo(f"chronoprobe {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
    threads: int | None = typer.Option(
        None,
        "--threads",
        min=1,
        envvar="CHRONOPROBE_THREADS",
        help="CPU threads for torch's operations (default: torch's own, one per core). On a "
        "machine other jobs keep busy, 1 is often several times faster: idle threads spin "
        "while they wait for a core.",
    ),
) -> None:
    """chronoprobe: temporal KGs, probe sets, model views and metrics, offline by default."""
    if not sys.stderr.isatty():
        # Hugging Face's own bars (loading weights, downloads) redraw by carriage returns,
        # which a log file or a pipe keeps as one long garbled line per load.
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    if threads is not None:
        import torch

        torch.set_num_threads(threads)
