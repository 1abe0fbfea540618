"""One epoch of any trainer: its batches through a step function, timed, its loss averaged,
and a progress bar that says the epoch, the running loss and the rate.

A trainer gives the batches (already in the epoch's seeded order) and ``step(batch) -> (loss,
n)``, which makes one optimizer step and returns the batch's loss (a float: the figure to
average) and how many examples it held; :func:`run_epoch` returns the epoch's record.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn


def epoch_progress(unit: str) -> Progress:
    """A transient bar for a trainer run outside a run (a run brings its own)."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn(f"{{task.completed:,}}/{{task.total:,}} {unit}"),
        TimeRemainingColumn(),
        transient=True,
    )


def run_epoch(
    epoch: int,
    batches: Iterable[Any],
    step: Callable[[Any], tuple[float, int]],
    *,
    total: int,
    unit: str,
    bar: Progress | None = None,
) -> dict:
    """``{"epoch", "loss" (mean per example), "seconds", "<unit>_per_s"}`` of one epoch."""
    task = bar.add_task(f"epoch {epoch}", total=total) if bar is not None else None
    began, loss_sum, seen = time.perf_counter(), 0.0, 0
    for batch in batches:
        loss, n = step(batch)
        loss_sum += loss * n
        seen += n
        if task is not None:
            rate = seen / max(time.perf_counter() - began, 1e-9)
            text = f"epoch {epoch} · loss {loss_sum / seen:.3f} · {rate:,.0f} {unit}/s"
            bar.update(task, advance=n, description=text)
    if task is not None:
        bar.remove_task(task)
    seconds = time.perf_counter() - began
    return {
        "epoch": epoch,
        "loss": loss_sum / max(seen, 1),
        "seconds": round(seconds, 3),
        f"{unit}_per_s": round(seen / seconds, 1) if seconds else 0.0,
    }
