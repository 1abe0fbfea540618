"""The ``kgqa`` step kind: a QA model trained on a ``build`` step's CronQuestions split with a
``tkg`` step's embeddings.

Its output directory is a KGQA checkpoint (``chronoprobe kgqa eval`` reads it) with
``metrics.json`` (the test split's Hits@1/10, simple vs complex, per reasoning and answer type,
the protocol, and the oracle-relation ceiling of the TKG) and ``predictions.parquet``. While
training, the checkpoint lives under the step's shard folder, which the run engine keeps when a
run is killed, so a re-run resumes at the last finished epoch.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from chronoprobe.runs.steps import SHARDS_DIR, StepContext, step_kind


class KGQAParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: Literal["cronkgqa", "embedkgqa", "lm"] = "cronkgqa"
    encoder: str = "tiny"  # or a Hugging Face id / local path
    epochs: int = Field(10, ge=0)
    batch_size: int = Field(128, ge=2)
    learning_rate: float = Field(1e-3, gt=0)
    dropout: float = Field(0.1, ge=0, le=1)
    seed: int | None = None  # default: the experiment's seed
    device: str = "auto"
    select: Literal["best-valid", "last"] = "best-valid"  # the epoch tested
    answer_type_given: bool = False  # True: not the paper's protocol (softmax over one type)
    question_input: Literal["auto", "template", "question"] = "auto"


@step_kind("kgqa", KGQAParams)
def run_kgqa(ctx: StepContext, params: KGQAParams, inputs: dict[str, Path]) -> None:
    from chronoprobe.kgqa.train import TrainConfig, train

    if set(inputs) != {"questions", "tkg"}:
        raise ValueError(
            f"{ctx.step_id}: a kgqa step takes two inputs, `questions: <build step with family "
            "cronq>` and `tkg: <tkg step>`"
        )
    if not (inputs["questions"] / "train.jsonl").is_file():
        raise ValueError(
            f"{ctx.step_id}: input `questions` ({inputs['questions']}) has no train.jsonl; "
            "give it a build step with `family: cronq`"
        )
    seed = ctx.seed if params.seed is None else params.seed
    config = TrainConfig(**params.model_dump(exclude={"seed"}), seed=seed)
    work = ctx.out_dir / SHARDS_DIR / "checkpoint"
    train(
        inputs["questions"],
        inputs["tkg"],
        config,
        work,
        progress=ctx.progress if ctx.progress is not None else False,
        log=ctx.log.info,
    )
    for path in work.iterdir():
        os.replace(path, ctx.out_dir / path.name)
