"""What the ``series``, ``pretrain`` and ``memorize`` steps take: the masked-LM recipe, the
model series' periods, and LAMA-TK training.

Declarations only, so that the trainers and the steps can all read them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from chronoprobe.datasets.lamatk import LamaTKSet
from chronoprobe.params import DeviceParams, PeriodRange, seed_field


class MLMTrainingParams(DeviceParams):
    """The masked-LM recipe both operations train with."""

    preset: Literal["tiny", "6L", "12L"] = Field(
        "tiny",
        description="Model size: tiny (2 layers, width 128; CPU), 6L or 12L (RoBERTa width).",
    )
    epochs: int = Field(3, ge=0, description="Passes over the text.")
    batch_size: int = Field(64, ge=1, description="Sentences per training step.")
    learning_rate: float = Field(
        1e-3, gt=0, description="Peak learning rate (try 1e-4 for 6L and 12L)."
    )
    vocab_size: int = Field(6000, ge=300, description="Size of the BPE vocabulary trained.")
    mask_prob: float = Field(0.15, gt=0, lt=1, description="Chance of each word to be masked.")
    entity_mask_prob: float = Field(
        0.5, ge=0, le=1, description="Chance of each entity mention to be masked whole."
    )
    max_length: int = Field(64, ge=16, description="Tokens per line; longer lines are cut.")
    seed: int | None = seed_field("the weights, shuffles and masking")


class SeriesParams(PeriodRange, MLMTrainingParams):
    replay: float = Field(
        0.0, ge=0, description="Re-read earlier text, this fraction of each period's own size."
    )
    fact_sentences: bool = Field(
        True,
        description="Add each fact holding in a period, said with its drift template, to its "
        "text (off: the snippets only).",
    )

    def recipe(self) -> dict:
        """What decides the weights, checked when a series resumes (the periods are checked
        period by period, and the device does not matter)."""
        return self.model_dump(exclude={"first", "last", "granularity", "device"})


class PretrainParams(MLMTrainingParams):
    sources: list[Literal["articles", "snippets"]] = Field(
        ["articles"], min_length=1, description="Which of the KG's texts to pretrain on."
    )
    epochs: int = Field(10, ge=1, description="Passes over the text.")
    batch_size: int = Field(32, ge=1, description="Lines per training step.")
    max_length: int = Field(128, ge=16, description="Tokens per line; also the model's positions.")


class MemorizeParams(LamaTKSet, DeviceParams):
    """Training on LAMA-TK statements; with input ``kg`` the statements are built first with
    the ``build lamatk`` params (task, conflicts, sample)."""

    rows: str | None = Field(
        None,
        description="Which file of the statements directory to train on (default: "
        "statements.jsonl).",
    )
    preset: Literal["tiny", "6L", "12L"] = Field(
        "tiny", description="Random model size: tiny (CPU), 6L or 12L (the paper's)."
    )
    init: str | None = Field(
        None,
        description="Start from a Hugging Face masked LM (path or id) instead of a random "
        "preset; or give the input `pretrained` (e.g. a `train pretrain` step).",
    )
    epochs: int = Field(50, ge=1, description="Passes over the statements (paper: 50).")
    batch_size: int = Field(64, ge=1, description="Statements per step.")
    learning_rate: float | None = Field(
        None, gt=0, description="Peak learning rate (default 1e-3 for random tiny, else 1e-4)."
    )
    time_masking: float = Field(
        0.0,
        ge=0.0,
        le=1.0,
        description="k: chance that a start/end statement loses its other time (paper: 0, "
        "0.1, 1.0).",
    )
    duplicates: int = Field(
        1, ge=1, description="D: masked copies of the data, one per epoch in turn (paper: 10)."
    )
    seed: int | None = seed_field("initialisation, order and time masking")
