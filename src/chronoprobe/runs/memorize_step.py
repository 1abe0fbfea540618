"""The ``memorize`` step kind: feed LAMA-TK statements into a masked LM, then recite them.

Input ``statements``: a directory holding statements.jsonl (and, for the boundary and implicit
sets, queries.jsonl); or input ``kg``: a KG directory, built here into statements with the
builder params. Outputs: ``model/`` (the final checkpoint), ``predictions.parquet`` (and
``queries-predictions.parquet``), and ``metrics.json`` with the reciting metrics (the queries'
under ``query_set``; how a sampled set was drawn, copied from its ``stats.json``, under
``sample``). Training checkpoints live in the step's shard area, so a killed run resumes from
its last finished epoch.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from chronoprobe.atomic import atomic_write_text
from chronoprobe.runs.steps import SHARDS_DIR, StepContext, step_kind


class MemorizeParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # building (only with a ``kg`` input)
    task: Literal["memorize", "boundary", "implicit"] = "memorize"
    conflicts: bool = True
    sample: int | None = Field(None, ge=1)
    # training
    preset: Literal["tiny", "6L", "12L"] = "tiny"
    init: str | None = None
    epochs: int = Field(50, ge=1)
    batch_size: int = Field(64, ge=1)
    lr: float | None = Field(None, gt=0)
    time_masking: float = Field(0.0, ge=0.0, le=1.0)
    duplicates: int = Field(1, ge=1)
    seed: int | None = None  # default: the experiment's seed
    device: str = "auto"
    recite_batch_size: int = Field(256, ge=1)


def _statements(ctx: StepContext, params: MemorizeParams, inputs: dict[str, Path]) -> Path:
    """The directory with statements.jsonl: the ``statements`` input, or built from ``kg``."""
    if "statements" in inputs:
        if not (inputs["statements"] / "statements.jsonl").is_file():
            raise ValueError(f"{ctx.step_id}: input 'statements' has no statements.jsonl")
        return inputs["statements"]
    if "kg" not in inputs:
        raise ValueError(f"{ctx.step_id}: give an input 'statements' (a build step) or 'kg'")
    from chronoprobe.datasets.writers import write_lamatk
    from chronoprobe.kg.graph import TemporalKG

    seed = ctx.seed if params.seed is None else params.seed
    stats = write_lamatk(
        TemporalKG.load(inputs["kg"]),
        ctx.out_dir,
        task=params.task,
        conflicts=params.conflicts,
        sample=params.sample,
        seed=seed,
    )
    if not stats["statements"]["statements"]:
        raise ValueError(f"{ctx.step_id}: the KG gives no LAMA-TK statements for {params.task}")
    return ctx.out_dir


def _init(ctx: StepContext, params: MemorizeParams, inputs: dict[str, Path]) -> str | None:
    """The model to start from: param ``init``, or input ``init`` (a step whose ``model/``, or
    the step directory itself, is a Hugging Face masked LM, e.g. a ``pretrain`` step)."""
    if "init" not in inputs:
        return params.init
    if params.init is not None:
        raise ValueError(f"{ctx.step_id}: give `init` as a param or as an input, not both")
    model = inputs["init"] / "model"
    return str(model if model.is_dir() else inputs["init"])


@step_kind("memorize", MemorizeParams)
def run_memorize(ctx: StepContext, params: MemorizeParams, inputs: dict[str, Path]) -> None:
    from chronoprobe.train import checkpoint
    from chronoprobe.train.memorize import TrainOptions, train
    from chronoprobe.train.model import resolve_device
    from chronoprobe.train.recite import recite
    from chronoprobe.train.statements import load_statements

    source = _statements(ctx, params, inputs)
    init = _init(ctx, params, inputs)
    options = TrainOptions(
        preset=params.preset,
        init=init,
        epochs=params.epochs,
        batch_size=params.batch_size,
        lr=params.lr,
        time_masking=params.time_masking,
        duplicates=params.duplicates,
        seed=ctx.seed if params.seed is None else params.seed,
    )
    runs = ctx.out_dir / SHARDS_DIR / "train"
    result = train(
        source / "statements.jsonl", runs, options, device=params.device, progress=ctx.progress
    )
    ctx.log.info(f"trained {result.epochs_run} epochs (resumed from {result.resumed_from})")
    model_dir = ctx.out_dir / "model"
    shutil.copytree(result.checkpoint, model_dir)
    device = resolve_device(params.device)
    loaded, _ = checkpoint.load(model_dir, device)
    metrics, _ = recite(
        loaded,
        load_statements(source / "statements.jsonl"),
        device=device,
        batch_size=params.recite_batch_size,
        out=ctx.out_dir / "predictions.parquet",
        progress=ctx.progress,
    )
    stats_file = source / "stats.json"
    if stats_file.is_file() and "sample" in (stats := json.loads(stats_file.read_text())):
        metrics["sample"] = stats["sample"]
    history = loaded.state.get("history", [])
    metrics["training"] = {
        "epochs": len(history),
        "final_loss": history[-1]["loss"] if history else None,
        "statements_per_s": history[-1]["statements_per_s"] if history else None,
        "time_masking": params.time_masking,
        "duplicates": params.duplicates,
        "preset": params.preset if init is None else init,
    }
    if (source / "queries.jsonl").is_file():
        metrics["query_set"], _ = recite(
            loaded,
            load_statements(source / "queries.jsonl"),
            device=device,
            batch_size=params.recite_batch_size,
            out=ctx.out_dir / "queries-predictions.parquet",
            progress=ctx.progress,
        )
    atomic_write_text(ctx.out_dir / "metrics.json", json.dumps(metrics, indent=2) + "\n")
