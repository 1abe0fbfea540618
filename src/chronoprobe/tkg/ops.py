"""The ``tkg`` and ``tkg-eval`` operations: temporal KG embeddings trained by link prediction
on a KG directory, and a trained checkpoint ranking a split's facts.

``chronoprobe tkg train KG -o OUT`` and a step ``{kind: tkg, inputs: {kg: <kg step>}}`` are the
same operation; its output is a checkpoint directory (safetensors and JSON, see
:mod:`chronoprobe.tkg.checkpoint`) plus ``metrics.json`` with the test split's filtered ranking.
While training, the checkpoint lives in the step's work area, so a killed run resumes at the
last finished epoch. Models are entries of :data:`chronoprobe.tkg.params.TKG_MODELS`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from chronoprobe.errors import UserError
from chronoprobe.step_context import SHARDS_DIR, StepContext
from chronoprobe.steps import Input, checkpoint_continuation, step_kind
from chronoprobe.tkg.params import TKGEvalParams, TKGTrainParams


def _metrics_table(metrics: dict, title: str):
    from rich.table import Table

    from chronoprobe.metrics.uncertainty import with_interval

    table = Table(title=title)
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.caption = "in brackets, 95% intervals"
    for key, value in metrics.items():
        figure = f"{key}_ci95" in metrics  # None where the split has no fact: "-"
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if key.endswith("_n") or not (number or figure):
            continue
        table.add_row(
            key, f"{value:,}" if isinstance(value, int) else with_interval(metrics, key, 4)
        )
    if not metrics.get("n", 1):
        table.caption = "no fact in the split: no figure"
    return table


def show(out: Path):
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    return _metrics_table(metrics, f"{metrics['model']}, {metrics['split']} split")


SPLIT_FROM = Input(
    "split_from",
    "Take the train/valid/test split from this directory: a KG with its own split, or "
    "CronQuestions' train/valid/test fact files. Its split facts must be facts of the KG.",
    required=False,
    option=True,
)


def _tkg_check(params: TKGTrainParams, inputs: frozenset[str]) -> list[str]:
    if params.resplit and SPLIT_FROM.name in inputs:
        return ["resplit: give `resplit` or the input `split_from`, not both"]
    return []


@step_kind(
    "tkg",
    TKGTrainParams,
    inputs=(
        Input("kg", "The KG directory to train on (`kg synth`, `kg convert`, ...)."),
        SPLIT_FROM,
    ),
    check=_tkg_check,
    command=("tkg", "train"),
    show=show,
    continues=("epochs", checkpoint_continuation),
    trains=True,
)
def run_tkg(ctx: StepContext, params: TKGTrainParams, inputs: dict[str, Path]) -> None:
    """Train embeddings on a KG directory and rank its test facts among all its entities.

    A KG with its own split (a released one, such as CronQuestions' through `kg convert`) is
    trained and ranked on that split; so is one given another's with --split-from. Otherwise,
    or with --resplit, the distinct facts are shuffled with the seed and split into test, valid
    and train (the shares given); all years of a fact stay on one side. Either way every
    entity and year of the KG is a candidate, trained on or not. Training scores every entity
    for each (s, r, ?, t) and (o, r⁻¹, ?, t) with a full softmax, Adagrad, N3 and temporal
    smoothness (Lacroix et al., Tensor Decompositions for Temporal Knowledge Base Completion,
    ICLR 2020); after each epoch the checkpoint is replaced atomically, so an interrupted run
    picks up at the last finished epoch.

    Example: chronoprobe tkg train kg/world --arch tcomplex --rank 32 --epochs 3 -o tkg/
    """
    from chronoprobe.tkg.train import train

    if params.seed is None:
        params = params.model_copy(update={"seed": ctx.seed})
    data = _training_data(params, inputs)
    ctx.log.info(data.summary())
    work = ctx.out_dir / SHARDS_DIR / "checkpoint"
    train(data, params, work, progress=ctx.progress or False, log=ctx.log.info)
    for path in work.iterdir():
        os.replace(path, ctx.out_dir / path.name)


def _split_source(directory: Path):
    """The facts of a directory that carry a split: a KG's, or CronQuestions' split files."""
    from chronoprobe.kg.graph import TemporalKG
    from chronoprobe.kg.io import cronquestions
    from chronoprobe.kg.io.options import LoadOptions

    if not (directory / "manifest.json").is_file():
        return cronquestions.split_facts(directory, LoadOptions())
    source = TemporalKG.load(directory)
    if not source.has_split:
        raise UserError(f"{directory}: the KG has no split of its own to take")
    return source.facts


def _training_data(params: TKGTrainParams, inputs: dict[str, Path]):
    from chronoprobe.kg.graph import TemporalKG
    from chronoprobe.kg.splits import adopt_split
    from chronoprobe.tkg.data import TimeMode, check_span, given_split, split_kg

    kg = TemporalKG.load(inputs["kg"])
    check_span(kg, inputs["kg"] / "facts.parquet")
    mode = TimeMode(params.time_mode)
    if SPLIT_FROM.name in inputs:
        source = inputs[SPLIT_FROM.name]
        kg = adopt_split(kg, _split_source(source), str(source))
        return given_split(kg, mode, origin="split-from")
    if kg.has_split and not params.resplit:
        return given_split(kg, mode)
    return split_kg(
        kg,
        valid_fraction=params.valid_fraction,
        test_fraction=params.test_fraction,
        seed=params.seed if params.split_seed is None else params.split_seed,
        mode=mode,
    )


@step_kind(
    "tkg-eval",
    TKGEvalParams,
    inputs=(Input("checkpoint", "A checkpoint directory from `tkg train`."),),
    command=("tkg", "eval"),
    show=show,
    out_optional=True,
)
def run_tkg_eval(ctx: StepContext, params: TKGEvalParams, inputs: dict[str, Path]) -> None:
    """Rank a split's facts with a trained checkpoint (filtered, both directions).

    Each fact is asked as (s, r, ?, t) and (?, r, o, t) at its start year; other answers true
    in that year (in any split) are filtered out before ranking. mrr and hits@1/3/10 average
    both directions; time_accuracy is the share of (s, r, o, ?) whose best-scored year, other
    known years filtered, is the fact's start year. Writes metrics.json.

    Example: chronoprobe tkg eval tkg/ --split valid
    """
    from chronoprobe.atomic import atomic_write_text
    from chronoprobe.core.devices import resolve_device
    from chronoprobe.tkg import checkpoint
    from chronoprobe.tkg.evaluate import evaluate

    device = resolve_device(params.device)
    saved = checkpoint.load(inputs["checkpoint"], device)
    metrics = evaluate(saved.model, saved.data, params.split, params.batch_size, device)
    body = {"model": saved.model.name, "split": params.split, "epoch": saved.epoch, **metrics}
    atomic_write_text(ctx.out_dir / "metrics.json", json.dumps(body, indent=2) + "\n")
