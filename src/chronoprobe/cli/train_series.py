"""`chronoprobe train series`: a series of masked LMs, one per period, each continuing the last."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from chronoprobe.cli.build import GranularityName
from chronoprobe.cli.errors import user_errors

console = Console(stderr=True)


@user_errors
def series(
    kg: Path = typer.Argument(
        ...,
        help="KG directory; its snippets.parquet (from `chronoprobe kg synth`) is the dated text.",
    ),
    out: Path = typer.Option(..., "--out", "-o", help="Directory to write the series into."),
    from_: str = typer.Option("2015", "--from", help="First period, e.g. 2015, 2019-Q1, 2019-07."),
    to: str = typer.Option("2020", "--to", help="Last period (inclusive)."),
    granularity: GranularityName = typer.Option(
        GranularityName.year, help="Period length: one model per year, quarter or month."
    ),
    preset: str = typer.Option("tiny", help="Model size: tiny (CPU), 6L or 12L (RoBERTa width)."),
    epochs: int = typer.Option(3, min=0, help="Passes over each period's text."),
    batch_size: int = typer.Option(64, min=1, help="Sentences per training step."),
    lr: float = typer.Option(1e-3, min=0, help="Peak learning rate (try 1e-4 for 6L and 12L)."),
    seed: int = typer.Option(0, help="Seed of the first model's weights, shuffling and masking."),
    device: str = typer.Option("auto", help="auto (CUDA when there is one), cpu, cuda, cuda:1..."),
    replay: float = typer.Option(
        0.0, min=0, help="Re-read earlier text, this fraction of each period's own size."
    ),
    entity_mask_prob: float = typer.Option(
        0.5, min=0, max=1, help="Chance of each entity mention to be masked whole (words: 0.15)."
    ),
    vocab_size: int = typer.Option(6000, min=300, help="Size of the BPE vocabulary trained."),
    fact_sentences: bool = typer.Option(
        True,
        "--fact-sentences/--snippets-only",
        help="Add each fact holding in a period, said with its drift template, to its text.",
    ),
) -> None:
    """Train one masked LM per period, each starting from the previous period's model.

    Offline stand-in for TimeLMs: model 1 reads all text up to the end of the first period, each
    later model continues from its predecessor on its own period's text, so it knows its
    period's facts and not later ones. Text: the KG's dated snippets, plus (by default) every
    fact holding in the period in the words of the drift probes ("X plays for Y.").

    Writes OUT/<period>/ (a Hugging Face model directory with its tokenizer: give it to
    `chronoprobe probe --model`), OUT/tokenizer/ and OUT/series.json. Rerunning the same
    command skips the finished periods.

    Example: chronoprobe train series world/ --from 2015 --to 2020 -o series/
    """
    from transformers.utils import logging as hf_logging

    from chronoprobe.datasets.drift import periods_between
    from chronoprobe.time import Granularity
    from chronoprobe.train.series import SeriesOptions, train_series

    periods = periods_between(from_, to, Granularity[granularity.name.upper()])
    options = SeriesOptions(
        preset=preset,
        epochs=epochs,
        batch_size=batch_size,
        lr=lr,
        seed=seed,
        vocab_size=vocab_size,
        replay=replay,
        entity_mask_prob=entity_mask_prob,
        fact_sentences=fact_sentences,
    )
    hf_logging.disable_progress_bar()  # transformers' own bars would break through ours
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=True) as progress:
        result = train_series(kg, periods, out, options, device=device, progress=progress)
    table = Table(title=f"model series in {out}")
    for column in ("period", "parent", "sentences", "final loss"):
        table.add_column(column, justify="left" if column in ("period", "parent") else "right")
    for p in result.periods:
        loss = "-" if p.final_loss is None else f"{p.final_loss:.3f}"
        table.add_row(p.period, p.parent or "-", f"{p.examples:,}", loss)
    Console().print(table)
    console.print(f"[green]wrote[/] {len(result.periods)} models and {out / 'series.json'}")
