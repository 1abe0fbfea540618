"""The ``ecbd-eval`` step kind: ECBD span perplexity of one or more models, per condition.

Input ``examples``: a ``build`` step of family ``ecbd`` (its ``examples.jsonl``). Params: the
model specs, the conditions, and the last training year of the models' data (one for all, or
per model), which splits the years into seen and unseen groups, and ``recall_beams`` for the
paper's Recall@10 (computed for the T5-style models among them). Each model is one shard of the
step: a killed run resumes at the first model not finished, and inside that model at the
runner's own last finished shard of rows.

Outputs: ``predictions.parquet`` (one row per model, example and condition: ``model``, the
example's ``id``, ``entity``, ``year``, ``span_type``, ``split``, and ``condition``, ``span``,
``n_tokens``, ``logprob``, ``nll``, ``definition_of``; with ``recall_beams``, ``top10`` and
``recall_at_10``, else null) and ``metrics.json`` (per model: the
span-ppl view's metrics; at the top, each condition's overall perplexity averaged over models,
which the summary table shows).
"""

from __future__ import annotations

import gc
import json
import shutil
from pathlib import Path
from typing import Literal

import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field

from chronoprobe.atomic import atomic_write_text
from chronoprobe.probes.span_ppl import CONDITIONS
from chronoprobe.runs.steps import SHARDS_DIR, StepContext, step_kind

Condition = Literal["original", "no-ent", "random-def", "definition"]

SCHEMA = pa.schema(
    [
        ("model", pa.string()),
        ("id", pa.string()),
        ("entity", pa.string()),
        ("year", pa.string()),
        ("span_type", pa.string()),
        ("split", pa.string()),
        ("condition", pa.string()),
        ("span", pa.string()),
        ("n_tokens", pa.int64()),
        ("logprob", pa.float64()),
        ("nll", pa.float64()),
        ("definition_of", pa.string()),
        ("top10", pa.list_(pa.string())),  # with recall_beams: the ten best beam-search spans
        ("recall_at_10", pa.bool_()),
    ]
)


class ECBDEvalParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    models: list[str] = Field(min_length=1)  # model specs (Hugging Face id, directory, smollm2)
    conditions: list[Condition] = Field(default_factory=lambda: list(CONDITIONS), min_length=1)
    cutoff_year: int | None = None  # last year of every model's training data
    cutoff_years: dict[str, int] = Field(default_factory=dict)  # per model spec, overrides it
    batch_size: int = Field(64, ge=1)
    device: str = "auto"
    family: Literal["masked", "causal", "seq2seq"] | None = None  # default: from the config
    seed: int | None = None  # RANDOM DEF's draw; default: the experiment's seed
    recall_beams: int = Field(0, ge=0)  # beams for Recall@10 (T5-style models only; 0: off)


def _fingerprint(params: ECBDEvalParams) -> list | None:
    """Local weights change without their names changing: the probe step keys on their files."""
    from chronoprobe.runs.probe_step import _weights_fingerprint

    return _weights_fingerprint(params)


def _examples(ctx: StepContext, params: ECBDEvalParams, inputs: dict[str, Path]) -> Path:
    if set(inputs) != {"examples"}:
        raise ValueError(
            f"{ctx.step_id}: an ecbd-eval step takes one input, `examples: <ecbd build step id>`"
        )
    if len(set(params.models)) != len(params.models):
        raise ValueError(f"{ctx.step_id}: a model is listed twice in `models`")
    unknown = sorted(set(params.cutoff_years) - set(params.models))
    if unknown:
        raise ValueError(f"{ctx.step_id}: `cutoff_years` names models not in `models`: {unknown}")
    path = inputs["examples"] / "examples.jsonl"
    if not path.is_file():
        raise ValueError(f"{path}: no examples.jsonl; is input `examples` an ecbd build step?")
    return path


def _evaluate(ctx: StepContext, params: ECBDEvalParams, spec: str, data: Path, work: Path) -> None:
    from chronoprobe.models import load_model
    from chronoprobe.models.requests import NO_BEAM_SPANS
    from chronoprobe.probes import ViewOptions, run_probe

    model = load_model(
        spec, family=params.family, device=params.device, batch_size=params.batch_size
    )
    options = ViewOptions(
        conditions=tuple(params.conditions),
        cutoff_year=params.cutoff_years.get(spec, params.cutoff_year),
        seed=ctx.seed if params.seed is None else params.seed,
        recall_beams=params.recall_beams if model.fills_spans else 0,
    )
    if params.recall_beams and not model.fills_spans:
        ctx.log.info(f"{spec}: perplexity only, no Recall@10 ({NO_BEAM_SPANS})")
    try:
        with ctx.progress_task(f"{spec} (span-ppl)") as progress:
            run_probe(data, model, "span-ppl", work, options, progress=progress)
    finally:
        del model
        gc.collect()


@step_kind("ecbd-eval", ECBDEvalParams, fingerprint=_fingerprint)
def run_ecbd_eval(ctx: StepContext, params: ECBDEvalParams, inputs: dict[str, Path]) -> None:
    from chronoprobe.jsonl import read_jsonl

    data = _examples(ctx, params, inputs)
    runs = ctx.out_dir / SHARDS_DIR / "runs"
    for index in ctx.shards("predictions", len(params.models)):
        spec, work = params.models[index], runs / f"{index:05d}"
        _evaluate(ctx, params, spec, data, work)  # writes work/metrics.json, kept for the end
        rows = [{"model": spec, **r} for r in read_jsonl(work / "predictions.jsonl")]
        ctx.write_shard("predictions", index, pa.Table.from_pylist(rows, schema=SCHEMA))
        ctx.log.info(f"{spec}: {len(rows):,} span scores")
    per_model = {
        spec: json.loads((runs / f"{i:05d}" / "metrics.json").read_text(encoding="utf-8"))
        for i, spec in enumerate(params.models)
    }
    ctx.merge_shards("predictions")
    shutil.rmtree(runs, ignore_errors=True)
    summary: dict = {"rows": next(iter(per_model.values()))["rows"], "models": per_model}
    for condition in params.conditions:
        values = [m["overall"].get(condition, {}).get("perplexity") for m in per_model.values()]
        values = [v for v in values if v is not None]
        summary[f"ppl_{condition}"] = sum(values) / len(values) if values else None
    atomic_write_text(ctx.out_dir / "metrics.json", json.dumps(summary, indent=2) + "\n")
