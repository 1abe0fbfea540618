"""run_epoch: the per-example mean loss, from floats or device tensors, and a throttled bar."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from chronoprobe.core import epochs


class RecordingBar:
    """The part of rich's Progress that run_epoch uses, remembering what it was told."""

    def __init__(self) -> None:
        self.totals: list[int] = []
        self.advanced = 0
        self.descriptions: list[str] = []
        self.removed: list[int] = []

    def add_task(self, description: str, total: int) -> int:
        self.totals.append(total)
        self.descriptions.append(description)
        return 7

    def update(self, task: int, advance: int, description: str | None) -> None:
        self.advanced += advance
        if description is not None:
            self.descriptions.append(description)

    def remove_task(self, task: int) -> None:
        self.removed.append(task)


@pytest.mark.parametrize("as_tensor", [False, True])
def test_loss_is_the_mean_per_example_and_the_bar_reads_it_once_a_second(monkeypatch, as_tensor):
    clock = iter([0.0, 0.5, 1.0, 1.5, 2.0, 2.6, 3.0])  # the start, after each batch, the end
    monkeypatch.setattr(epochs, "time", SimpleNamespace(perf_counter=lambda: next(clock)))
    bar = RecordingBar()

    def step(loss: float) -> tuple[float | torch.Tensor, int]:
        return (torch.tensor(loss) if as_tensor else loss), 2

    record = epochs.run_epoch(3, [1.0, 2.0, 3.0, 4.0, 5.0], step, total=10, unit="lines", bar=bar)
    assert record == {"epoch": 3, "loss": 3.0, "seconds": 3.0, "lines_per_s": 3.3}
    assert type(record["loss"]) is float
    assert bar.totals == [10] and bar.advanced == 10 and bar.removed == [7]
    assert bar.descriptions == [
        "epoch 3",
        "epoch 3 · loss 1.500 · 4 lines/s",  # at 1.0 s, after two batches
        "epoch 3 · loss 2.500 · 4 lines/s",  # at 2.0 s; 2.6 s is too soon after
    ]


def test_a_title_replaces_the_epoch_in_the_description(monkeypatch):
    clock = iter([0.0, 1.0, 2.0])
    monkeypatch.setattr(epochs, "time", SimpleNamespace(perf_counter=lambda: next(clock)))
    bar = RecordingBar()
    record = epochs.run_epoch(
        1, [0.25], lambda loss: (loss, 4), total=4, unit="rows", bar=bar, title="feeding 1/5"
    )
    assert bar.descriptions == ["feeding 1/5", "feeding 1/5 · loss 0.250 · 4 rows/s"]
    assert record == {"epoch": 1, "loss": 0.25, "seconds": 2.0, "rows_per_s": 2.0}
