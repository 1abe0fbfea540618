"""The ``kgqa`` and ``kgqa-eval`` operations: a QA model trained on CronQuestions-style questions
with a TKG checkpoint's embeddings, and a trained model answering a split's questions.

``chronoprobe kgqa train QUESTIONS --tkg TKG -o OUT`` and a step ``{kind: kgqa, inputs:
{questions: <build step>, tkg: <tkg step>}}`` are the same operation; its output is a KGQA
checkpoint with ``metrics.json`` (Hits@1/10 as Saxena et al., Question Answering Over Temporal
Knowledge Graphs, ACL 2021, report them: simple vs complex, per reasoning and answer type, and
the oracle-relation ceiling of the embeddings) and ``predictions.parquet``. Models are entries
of :data:`chronoprobe.kgqa.params.QA_MODELS`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from chronoprobe.errors import UserError
from chronoprobe.kgqa.params import KGQAEvalParams, KGQATrainParams
from chronoprobe.step_context import SHARDS_DIR, StepContext
from chronoprobe.steps import Input, checkpoint_continuation, step_kind

QUESTIONS = Input(
    "questions",
    "A question directory with train/valid/test.jsonl (`build cronq`, `import`, or `build "
    "timeline`: its entity and year questions are answered, the other kinds listed as not).",
)


def show(out: Path):
    from chronoprobe.kgqa.report import metrics_table

    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    return metrics_table(
        metrics, f"{metrics['model']}, {metrics['split']} split, epoch {metrics['epoch']}"
    )


@step_kind(
    "kgqa",
    KGQATrainParams,
    inputs=(QUESTIONS, Input("tkg", "A TKG checkpoint of the same KG (`tkg train`).", option=True)),
    command=("kgqa", "train"),
    show=show,
    continues=("epochs", checkpoint_continuation),
    trains=True,
)
def run_kgqa(ctx: StepContext, params: KGQATrainParams, inputs: dict[str, Path]) -> None:
    """Train a QA model, checkpoint it every epoch, and rank the test questions' answers.

    Entity linking is perfect, as in the paper: each question's annotated entities and time
    give the head, tail and time the model scores with, and one softmax runs over every entity
    and year. The TKG tables stay frozen. The output holds the checkpoint, metrics.json (with
    the oracle-relation ceiling of the TKG on the simple questions) and predictions.parquet
    (top 10 per test question). An interrupted run continues after its last finished epoch.

    Example: chronoprobe kgqa train cronq/ --tkg tkg/ --arch cronkgqa --epochs 5 -o qa/
    """
    from chronoprobe.kgqa.train import train

    if not (inputs["questions"] / "train.jsonl").is_file():
        raise UserError(
            f"{inputs['questions']}: no train.jsonl; input `questions` must be a question "
            "directory (`build cronq`)"
        )
    if params.seed is None:
        params = params.model_copy(update={"seed": ctx.seed})
    work = ctx.out_dir / SHARDS_DIR / "checkpoint"
    train(
        inputs["questions"],
        inputs["tkg"],
        params,
        work,
        progress=ctx.progress or False,
        log=ctx.log.info,
    )
    for path in work.iterdir():
        os.replace(path, ctx.out_dir / path.name)


@step_kind(
    "kgqa-eval",
    KGQAEvalParams,
    inputs=(
        Input("checkpoint", "A KGQA checkpoint directory (`kgqa train`)."),
        QUESTIONS,
        Input(
            "tkg",
            "The TKG checkpoint for the oracle relation (default: the one the model was trained "
            "over, as its config.json records it).",
            required=False,
            option=True,
        ),
    ),
    command=("kgqa", "eval"),
    show=show,
    out_optional=True,
)
def run_kgqa_eval(ctx: StepContext, params: KGQAEvalParams, inputs: dict[str, Path]) -> None:
    """Answer a split's questions with a trained model: Hits@1/10 and MRR, overall, simple
    (simple_entity, simple_time) vs complex (before_after, first_last, time_join), per type and
    per answer type. A question counts as hit when any of its answers is in the top k. Writes
    metrics.json and predictions.parquet (each question's top 10 answers and rank).

    Example: chronoprobe kgqa eval qa/ cronq/ --split valid -o qa-valid/
    """
    from chronoprobe.core.devices import resolve_device
    from chronoprobe.kg.graph import same_kg
    from chronoprobe.kgqa import checkpoint
    from chronoprobe.kgqa.data import load_split, questions_kg
    from chronoprobe.kgqa.evaluate import evaluate
    from chronoprobe.kgqa.oracle import load_tkg, oracle_ranks
    from chronoprobe.kgqa.train import protocol_of, with_departures, write_results

    device = resolve_device(params.device)
    saved = checkpoint.load(inputs["checkpoint"], device, selected=True)
    embeddings_kg = saved.config.get("data", {}).get("kg_fingerprint")
    where = f"the embeddings of {inputs['checkpoint']}"
    same_kg(questions_kg(inputs["questions"]), (where, embeddings_kg), ctx.log.warning)
    protocol = protocol_of(saved.config.get("train", {}))
    if params.answer_type_given is not None:
        protocol["answer_type_given"] = params.answer_type_given
    questions = load_split(
        inputs["questions"], params.split, saved.vocab, protocol["question_input"], params.sample
    )
    ctx.log.info(f"{params.split}: {questions.summary()}")
    metrics, table = evaluate(
        saved.model,
        questions,
        saved.vocab,
        params.batch_size,
        device,
        answer_type_given=protocol["answer_type_given"],
    )
    if params.oracle_relation:
        tkg_dir = inputs.get("tkg") or saved.config.get("data", {}).get("tkg")
        if tkg_dir is None:
            raise UserError(f"{inputs['checkpoint']}: records no TKG checkpoint; give `tkg`")
        model, relations = load_tkg(Path(tkg_dir), saved.vocab, device)
        ranked = oracle_ranks(model, relations, questions, params.batch_size, device)
        metrics["oracle_relation"] = ranked.metrics(questions)
    header = {
        "model": saved.model.name,
        "embeddings": saved.config.get("data", {}).get("embeddings"),
        "split": params.split,
        "epoch": checkpoint.selected_epoch(saved.config),
    }
    write_results(ctx.out_dir, {**header, **with_departures(protocol), **metrics}, table)
