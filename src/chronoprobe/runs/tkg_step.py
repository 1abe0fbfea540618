"""The ``tkg`` step kind: temporal KG embeddings trained on the KG of an earlier ``kg`` step.

Its output directory is a checkpoint directory (``chronoprobe tkg eval`` reads it) plus
``metrics.json`` with the test split's filtered ranking. While training, the checkpoint lives
under the step's shard folder, which the run engine keeps when a run is killed, so a re-run
resumes at the last finished epoch.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from chronoprobe.runs.steps import SHARDS_DIR, StepContext, step_kind


class TKGParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: Literal["complex", "tcomplex", "tntcomplex", "timeplex"] = "tcomplex"
    rank: int = Field(64, ge=1)
    epochs: int = Field(10, ge=0)
    batch_size: int = Field(1000, ge=1)
    learning_rate: float = Field(0.1, gt=0)
    n3: float = Field(1e-2, ge=0)
    smoothness: float = Field(1e-2, ge=0)
    time_loss: float = Field(0.0, ge=0)
    time_mode: Literal["every-year", "start", "sampled"] = "every-year"
    valid_fraction: float = Field(0.05, ge=0, lt=1)
    test_fraction: float = Field(0.05, gt=0, lt=1)
    seed: int | None = None  # default: the experiment's seed
    device: str = "auto"


@step_kind("tkg", TKGParams)
def run_tkg(ctx: StepContext, params: TKGParams, inputs: dict[str, Path]) -> None:
    from chronoprobe.kg.graph import TemporalKG
    from chronoprobe.tkg.data import TimeMode, split_kg
    from chronoprobe.tkg.train import TrainConfig, train

    if set(inputs) != {"kg"}:
        raise ValueError(f"{ctx.step_id}: a tkg step takes one input, `kg: <kg step id>`")
    seed = ctx.seed if params.seed is None else params.seed
    data = split_kg(
        TemporalKG.load(inputs["kg"]),
        valid_fraction=params.valid_fraction,
        test_fraction=params.test_fraction,
        seed=seed,
        mode=TimeMode(params.time_mode),
    )
    ctx.log.info(data.summary())
    options = params.model_dump(include={"valid_fraction", "test_fraction", "time_mode"})
    config = TrainConfig(
        **params.model_dump(exclude={"valid_fraction", "test_fraction", "time_mode", "seed"}),
        seed=seed,
    )
    work = ctx.out_dir / SHARDS_DIR / "checkpoint"
    train(
        data,
        config,
        work,
        data_options={**options, "seed": seed},
        progress=ctx.progress if ctx.progress is not None else False,
        log=ctx.log.info,
    )
    for path in work.iterdir():
        os.replace(path, ctx.out_dir / path.name)
