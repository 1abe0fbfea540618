"""`chronoprobe tkg ...`: train and evaluate temporal KG embeddings (ComplEx, TComplEx, ...)."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from chronoprobe.cli.errors import user_errors
from chronoprobe.tkg.data import TimeMode

app = typer.Typer(
    help=(
        "Temporal KG embeddings: train ComplEx, TComplEx, TNTComplEx or TimePlex on a KG "
        "directory by link prediction, and rank held-out facts (filtered MRR, Hits@k, time "
        "accuracy)."
    ),
    no_args_is_help=True,
)
console = Console(stderr=True)


class ModelName(StrEnum):
    complex = "complex"
    tcomplex = "tcomplex"
    tntcomplex = "tntcomplex"
    timeplex = "timeplex"


class Split(StrEnum):
    train = "train"
    valid = "valid"
    test = "test"


@app.command()
@user_errors
def train(
    kg_dir: Path = typer.Argument(..., help="KG directory (from `chronoprobe kg synth|convert`)."),
    out: Path = typer.Option(..., "--out", "-o", help="Checkpoint directory to write (or resume)."),
    model: ModelName = typer.Option(ModelName.tcomplex, help="Embedding model."),
    rank: int = typer.Option(64, min=1, help="Complex dimensions (tables are 2 x rank wide)."),
    epochs: int = typer.Option(10, min=0, help="Epochs in total, resumed ones included."),
    batch_size: int = typer.Option(1000, min=1, help="Training examples per step."),
    lr: float = typer.Option(0.1, help="Adagrad learning rate."),
    n3: float = typer.Option(1e-2, help="Weight of the N3 penalty."),
    smoothness: float = typer.Option(1e-2, help="Weight of the temporal smoothness penalty."),
    time_loss: float = typer.Option(
        0.0, help="Weight of a softmax over years of (s, r, o, ?) added to the loss (0: off)."
    ),
    time_mode: TimeMode = typer.Option(
        TimeMode.every_year,
        help="Training quadruples per fact: one per year it holds, its start year only, or "
        "one year sampled anew each epoch.",
    ),
    valid_fraction: float = typer.Option(0.05, help="Share of facts held out for validation."),
    test_fraction: float = typer.Option(0.05, help="Share of facts held out for testing."),
    seed: int = typer.Option(0, help="Seed of the split, the initialisation and the shuffles."),
    device: str = typer.Option("auto", help="auto (CUDA when present), cpu, cuda, cuda:N, mps."),
    eval_every: int = typer.Option(0, min=0, help="Rank the valid split every N epochs (0: off)."),
    resume: bool = typer.Option(
        True, "--resume/--no-resume", help="Continue from the checkpoint in --out if there is one."
    ),
) -> None:
    """Train embeddings on a KG directory and rank its test facts.

    The distinct facts are shuffled with --seed and split into test, valid and train (the shares
    given); all years of a fact stay on one side. Training scores every entity for each
    (s, r, ?, t) and (o, r⁻¹, ?, t) with a full softmax; after each epoch the checkpoint in --out
    is replaced atomically, so an interrupted run picks up at the last finished epoch when run
    again (raise --epochs to train further).

    Example: chronoprobe tkg train kg/ --model tcomplex --rank 64 --epochs 10 --out emb/
    """
    from chronoprobe.kg.graph import TemporalKG
    from chronoprobe.tkg.data import split_kg
    from chronoprobe.tkg.train import TrainConfig
    from chronoprobe.tkg.train import train as train_model

    config = TrainConfig(
        model=model.value,
        rank=rank,
        epochs=epochs,
        batch_size=batch_size,
        learning_rate=lr,
        n3=n3,
        smoothness=smoothness,
        time_loss=time_loss,
        seed=seed,
        device=device,
        eval_every=eval_every,
    )
    kg = TemporalKG.load(kg_dir)
    options = {
        "kg": str(kg_dir),
        "valid_fraction": valid_fraction,
        "test_fraction": test_fraction,
        "seed": seed,
        "time_mode": time_mode.value,
    }
    data = split_kg(
        kg,
        valid_fraction=valid_fraction,
        test_fraction=test_fraction,
        seed=seed,
        mode=time_mode,
    )
    console.print(data.summary(), highlight=False)
    result = train_model(data, config, out, data_options=options, resume=resume, log=_say)
    console.print(f"[green]wrote[/] {out}")
    _print_metrics(result.metrics, f"{model.value}, test split")


def _say(message: str) -> None:
    console.print(message, highlight=False)


def _print_metrics(metrics: dict, title: str) -> None:
    table = Table(title=title)
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key, value in metrics.items():
        table.add_row(key, f"{value:,}" if isinstance(value, int) else f"{value:.4f}")
    Console().print(table)


@app.command("eval")
@user_errors
def evaluate(
    checkpoint_dir: Path = typer.Argument(..., help="Checkpoint directory from `tkg train`."),
    split: Split = typer.Option(Split.test, help="Which held-out facts to rank."),
    as_json: bool = typer.Option(False, "--json", help="Print the metrics as JSON."),
    batch_size: int = typer.Option(1000, min=1, help="Queries scored at once."),
    device: str = typer.Option("auto", help="auto (CUDA when present), cpu, cuda, cuda:N, mps."),
) -> None:
    """Rank a split's facts with a trained checkpoint (filtered, both directions).

    Each fact is asked as (s, r, ?, t) and (?, r, o, t) at its start year; other answers true
    in that year (in any split) are filtered out before ranking. mrr and hits@1/3/10 average
    both directions; time_accuracy is the share of (s, r, o, ?) whose best-scored year, other
    known years filtered, is the fact's start year.

    Example: chronoprobe tkg eval emb/ --split valid --json
    """
    from chronoprobe.tkg import checkpoint
    from chronoprobe.tkg.evaluate import evaluate_split
    from chronoprobe.tkg.train import resolve_device

    target = resolve_device(device)
    saved = checkpoint.load(checkpoint_dir, target)
    metrics = evaluate_split(saved.model, saved.data, split.value, batch_size, target)
    if as_json:
        typer.echo(json.dumps({"model": saved.model.name, "split": split.value, **metrics}))
    else:
        _print_metrics(metrics, f"{saved.model.name}, {split.value} split, epoch {saved.epoch}")
