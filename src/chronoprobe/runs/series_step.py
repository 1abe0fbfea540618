"""The ``series`` step kind: a model series trained on a ``kg`` step's world, one model per period.

Outputs: ``<period>/`` model directories (each a local model spec for the probe steps),
``tokenizer/``, ``series.json`` and ``metrics.json`` (final training loss and sentences per
period). Training runs inside the step's shard area, which survives a killed run, so a rerun
resumes after the last finished period instead of starting over; the finished series is moved
to the top of the step's directory at the end.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from chronoprobe.atomic import atomic_write_text
from chronoprobe.runs.steps import SHARDS_DIR, StepContext, step_kind


class SeriesParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    first: str = "2015"  # first period, e.g. 2015, 2019-Q1, 2019-07
    last: str = "2020"  # last period (inclusive)
    granularity: Literal["year", "quarter", "month"] = "year"
    preset: str = "tiny"  # tiny, 6L or 12L (chronoprobe.train.model.PRESETS)
    epochs: int = Field(3, ge=0)  # per period
    batch_size: int = Field(64, ge=1)
    lr: float = Field(1e-3, ge=0)
    seed: int | None = None  # default: the experiment's seed
    device: str = "auto"
    replay: float = Field(0.0, ge=0)  # re-read earlier text, this fraction of a period's size
    entity_mask_prob: float = Field(0.5, ge=0, le=1)  # entity mentions masked whole
    vocab_size: int = Field(6000, ge=300)
    fact_sentences: bool = True  # add the facts holding in a period, in drift-template words


@step_kind("series", SeriesParams)
def run_series(ctx: StepContext, params: SeriesParams, inputs: dict[str, Path]) -> None:
    from chronoprobe.datasets.drift import periods_between
    from chronoprobe.time import Granularity
    from chronoprobe.train.series import SeriesOptions, train_series

    if "kg" not in inputs:
        raise ValueError(
            f"{ctx.step_id}: a series step needs the input `kg`, a kg step with text "
            "(e.g. inputs: {kg: world})"
        )
    periods = periods_between(params.first, params.last, Granularity[params.granularity.upper()])
    options = SeriesOptions(
        preset=params.preset,
        epochs=params.epochs,
        batch_size=params.batch_size,
        lr=params.lr,
        seed=ctx.seed if params.seed is None else params.seed,
        vocab_size=params.vocab_size,
        replay=params.replay,
        entity_mask_prob=params.entity_mask_prob,
        fact_sentences=params.fact_sentences,
    )
    work = ctx.out_dir / SHARDS_DIR / "series"
    result = train_series(
        inputs["kg"], periods, work, options, device=params.device, progress=ctx.progress
    )
    for entry in sorted(work.iterdir()):
        if not entry.name.startswith("."):
            os.replace(entry, ctx.out_dir / entry.name)
    metrics = {
        "final_loss": {p.period: p.final_loss for p in result.periods},
        "sentences": {p.period: p.examples for p in result.periods},
    }
    atomic_write_text(ctx.out_dir / "metrics.json", json.dumps(metrics, indent=2) + "\n")
    ctx.log.info(f"trained {len(result.periods)} models: {', '.join(metrics['final_loss'])}")
