"""`chronoprobe train ...`: feed LAMA-TK statements into a masked LM, then make it recite them."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from chronoprobe.cli.errors import user_errors

app = typer.Typer(
    help="Train masked LMs on temporal facts and test what they recall.", no_args_is_help=True
)
console = Console(stderr=True)


@app.command()
@user_errors
def memorize(
    statements: Path = typer.Argument(
        ..., help="statements.jsonl from `chronoprobe build lamatk`."
    ),
    out: Path = typer.Option(..., "--out", "-o", help="Run directory for the checkpoints."),
    preset: str = typer.Option("tiny", help="Random model size: tiny (CPU), 6L or 12L (paper)."),
    init: str | None = typer.Option(
        None, help="Start from a Hugging Face masked LM (path or id) instead of a random preset."
    ),
    epochs: int = typer.Option(50, min=1, help="Passes over the statements (paper: 50)."),
    batch_size: int = typer.Option(64, min=1, help="Statements per step."),
    lr: float | None = typer.Option(
        None, help="Peak learning rate (default 1e-3 for random tiny, else 1e-4)."
    ),
    time_masking: float = typer.Option(
        0.0,
        min=0.0,
        max=1.0,
        help="k: chance that a start/end statement loses its other time (paper: 0, 0.1, 1.0).",
    ),
    duplicates: int = typer.Option(
        1, min=1, help="D: masked copies of the data, one per epoch in turn (paper: 10)."
    ),
    seed: int = typer.Option(0, help="Seed for initialisation, order and time masking."),
    kg: Path | None = typer.Option(
        None, help="KG directory to take entity labels from (default: read off the statements)."
    ),
    device: str = typer.Option("auto", help="auto (GPU when present), cpu, cuda, cuda:1, mps."),
) -> None:
    """Feed temporal knowledge into a masked LM whose vocabulary holds every entity and year.

    Each statement's masked slot is one mask token; the model learns to predict it as one
    symbol among all entities and years. With --time-masking k, a start or end statement is
    shown without its other time ("S held the position of O from [MASK].") with probability k,
    in each of the --duplicates copies of the data. A checkpoint (safetensors) is written after
    every epoch; run the same command again to resume an interrupted run.

    Example: chronoprobe train memorize lamatk/statements.jsonl -o runs/mem --epochs 50
    """
    from chronoprobe.train.memorize import TrainOptions, train

    options = TrainOptions(
        preset=preset,
        init=init,
        epochs=epochs,
        batch_size=batch_size,
        lr=lr,
        time_masking=time_masking,
        duplicates=duplicates,
        seed=seed,
    )
    labels = _kg_labels(kg) if kg is not None else None
    try:
        result = train(statements, out, options, device=device, labels=labels)
    except KeyboardInterrupt:
        console.print(f"[yellow]interrupted;[/] run the same command to resume from {out}")
        raise typer.Exit(130) from None
    if result.epochs_run == 0:
        console.print(f"already trained for {options.epochs} epochs: {result.checkpoint}")
        return
    if result.resumed_from:
        console.print(f"resumed from epoch {result.resumed_from}")
    last = result.history[-1]
    console.print(
        f"[green]trained[/] {result.epochs_run} epochs, loss {last['loss']:.4f}, "
        f"{last['statements_per_s']:,.0f} statements/s; checkpoint {result.checkpoint}"
    )


def _kg_labels(kg_dir: Path) -> dict[str, str]:
    from chronoprobe.kg.graph import TemporalKG

    entities = TemporalKG.load(kg_dir).entities
    return dict(
        zip(entities.column("id").to_pylist(), entities.column("label").to_pylist(), strict=True)
    )


def recite(
    model_dir: Path = typer.Argument(
        ..., help="Run directory (its last checkpoint) or checkpoint."
    ),
    statements: Path = typer.Argument(..., help="Statements or queries JSONL to recite."),
    out: Path | None = typer.Option(
        None,
        "--out",
        "-o",
        help="Per-statement predictions (Parquet); default MODEL_DIR/recite-<name>.parquet. "
        "Metrics go beside it as .json.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the metrics as JSON on stdout."),
    batch_size: int = typer.Option(256, min=1, help="Statements per forward pass."),
    device: str = typer.Option("auto", help="auto (GPU when present), cpu, cuda, cuda:1, mps."),
) -> None:
    """Recite: rank every entity and year at each statement's mask and score the top 10.

    Acc@K (K = 1, 5): a query (one masked text) scores 1 if any of its answers is in the top K;
    rows that share a masked text are one query. Hit@K (K = 5, 10): every row scores 1 if its
    own target is in the top K, so multi-answer queries need all their answers ranked high.
    Reported overall and by single/multi answer, relation and slot (and template for the
    implicit-knowledge queries).

    Example: chronoprobe train recite runs/mem lamatk/statements.jsonl --json
    """
    from chronoprobe.atomic import atomic_write_text
    from chronoprobe.train import checkpoint
    from chronoprobe.train.model import resolve_device
    from chronoprobe.train.recite import recite as run_recite
    from chronoprobe.train.statements import load_statements

    dev = resolve_device(device)
    rows = load_statements(statements)
    loaded, _ = checkpoint.load(model_dir, dev)
    if out is None:
        base = model_dir if checkpoint.resolve(model_dir) != model_dir else model_dir.parent
        out = base / f"recite-{statements.stem}.parquet"
    metrics, _ = run_recite(loaded, rows, device=dev, batch_size=batch_size, out=out)
    atomic_write_text(out.with_suffix(".json"), json.dumps(metrics, indent=2) + "\n")
    if as_json:
        typer.echo(json.dumps(metrics, indent=2))
    else:
        _print_metrics(metrics)
    console.print(f"[green]wrote[/] predictions to {out}")


def _print_metrics(metrics: dict) -> None:
    names = [k for k in metrics if k.startswith(("acc@", "hit@"))]
    table = Table(title="reciting")
    for column in ("group", "statements", "queries", *names):
        table.add_column(column, justify="left" if column == "group" else "right")

    def add(label: str, row: dict) -> None:
        values = [f"{row[n]:.4f}" if row[n] is not None else "-" for n in names]
        table.add_row(label, f"{row['statements']:,}", f"{row['queries']:,}", *values)

    add("all", metrics)
    for key, groups in metrics.items():
        if key.startswith("by_"):
            for name, row in groups.items():
                add(f"{key[3:]}: {name}", row)
    Console().print(table)


app.command("recite")(user_errors(recite))
app.command("eval", help="The same as `recite`.")(user_errors(recite))
