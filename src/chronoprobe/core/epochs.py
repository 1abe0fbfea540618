"""One epoch of any trainer: its batches through a step function, timed, its loss averaged,
and a progress bar that says the epoch, the running loss and the rate.

A trainer gives the batches (already in the epoch's seeded order) and ``step(batch) -> (loss,
n)``, which makes one optimizer step and returns the batch's loss (the figure to average) and
how many examples it held; :func:`run_epoch` returns the epoch's record. The loss may be a float
or a detached 0-d tensor: a tensor's sum stays on its device, so a GPU is not made to wait for
every step; the bar reads it at most once a second, the record once at the end.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

import torch
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

from chronoprobe.core.progress import live_progress

REFRESH_S = 1.0  # the least time between two readings of the running loss


def epoch_progress(unit: str) -> Progress:
    """A transient bar on stderr for a trainer run outside a run (a run brings its own)."""
    return live_progress(
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        TextColumn(f"{{task.completed:,}}/{{task.total:,}} {unit}"),
        TimeRemainingColumn(),
        console=Console(stderr=True, emoji=False),
    )


def run_epoch(
    epoch: int,
    batches: Iterable[Any],
    step: Callable[[Any], tuple[float | torch.Tensor, int]],
    *,
    total: int,
    unit: str,
    bar: Progress | None = None,
    title: str | None = None,
) -> dict:
    """``{"epoch", "loss" (mean per example), "seconds", "<unit>_per_s"}`` of one epoch.

    ``title`` begins the bar's description (default "epoch N").
    """
    title = title or f"epoch {epoch}"
    task = bar.add_task(title, total=total) if bar is not None else None
    began = shown = time.perf_counter()
    loss_sum: float | torch.Tensor = 0.0
    seen = 0
    for batch in batches:
        loss, n = step(batch)
        loss_sum = loss_sum + loss * n
        seen += n
        if task is not None:
            now, text = time.perf_counter(), None
            if now - shown >= REFRESH_S:
                rate = seen / (now - began)
                text = f"{title} · loss {float(loss_sum) / seen:.3f} · {rate:,.0f} {unit}/s"
                shown = now
            bar.update(task, advance=n, description=text)
    if task is not None:
        bar.remove_task(task)
    seconds = time.perf_counter() - began
    return {
        "epoch": epoch,
        "loss": float(loss_sum) / max(seen, 1),
        "seconds": round(seconds, 3),
        f"{unit}_per_s": round(seen / seconds, 1) if seconds else 0.0,
    }
