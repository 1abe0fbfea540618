"""Training a QA model on a CronQuestions directory with a TKG checkpoint's embeddings.

The loss is the cross entropy of one softmax over every candidate, entities and years, against
the question's answer set, spread evenly over its answers (a question with three correct holders
pulls all three up); under the answer-type-given protocol the softmax runs over the candidates
of the gold answer type only.
Adam updates the encoder and the heads together; the TKG tables stay frozen, as in CronKGQA.
Every epoch's shuffle and dropout draws depend only on the seed and the epoch number, so a run
resumed from its last checkpoint ends where an uninterrupted one does.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq
import torch
from rich.progress import Progress
from torch import Tensor

from chronoprobe.atomic import atomic_path, atomic_write_text
from chronoprobe.core.devices import resolve_device
from chronoprobe.core.epochs import epoch_progress, run_epoch
from chronoprobe.errors import UserError
from chronoprobe.kg.graph import same_kg
from chronoprobe.kgqa import checkpoint
from chronoprobe.kgqa.data import AnswerVocab, Questions, load_split, questions_kg, read_split
from chronoprobe.kgqa.encoder import build_encoder
from chronoprobe.kgqa.evaluate import evaluate, model_inputs
from chronoprobe.kgqa.models import QAModel, build_qa_model
from chronoprobe.kgqa.oracle import load_tkg, oracle_ranks
from chronoprobe.kgqa.params import KGQATrainParams
from chronoprobe.tkg import checkpoint as tkg_checkpoint


@dataclass
class TrainResult:
    model: QAModel
    vocab: AnswerVocab
    history: list[dict] = field(default_factory=list)
    metrics: dict = field(default_factory=dict)  # on the test split, after training
    epoch: int = 0  # the epoch whose model was tested


def answer_vocab(tkg_dir: Path) -> tuple[AnswerVocab, Tensor, Tensor | None, str, str | None]:
    """The candidates and frozen tables of a TKG checkpoint (no year table for ComplEx), its
    model's name and the fingerprint of the KG it was trained on."""
    saved = tkg_checkpoint.load(tkg_dir)
    vocab = AnswerVocab(saved.vocab.entities, tuple(saved.vocab.years))
    time = saved.model.time.detach() if saved.model.has_time else None
    return vocab, saved.model.entity.detach(), time, saved.model.name, saved.data.kg_fingerprint


def soft_cross_entropy(scores: Tensor, gold: Tensor) -> Tensor:
    """Mean over questions of -mean over their answers of log softmax (masked entries -inf)."""
    log_probs = torch.log_softmax(scores, 1).masked_fill(~gold, 0.0)
    return (-log_probs.sum(1) / gold.sum(1)).mean()


def _batches(order: Tensor, size: int) -> list[Tensor]:
    """Batches of ``order``; a last batch of one joins the one before (batch norm needs two)."""
    batches = list(order.split(size))
    if len(batches) > 1 and len(batches[-1]) == 1:
        batches[-2:] = [torch.cat(batches[-2:])]
    return batches


def _epoch(
    model: QAModel,
    optimizer: torch.optim.Optimizer,
    questions: Questions,
    config: KGQATrainParams,
    epoch: int,
    device: torch.device,
    bar: Progress | None,
) -> dict:
    model.train()
    draw = config.seed * 1_000_003 + epoch
    torch.manual_seed(draw)  # dropout
    trainable = torch.nonzero(questions.answer_counts() > 0).squeeze(1)
    order = trainable[torch.randperm(len(trainable), generator=torch.Generator().manual_seed(draw))]

    def step(index: Tensor) -> tuple[float, int]:
        scores = model(*model_inputs(model, questions, index, device, config.answer_type_given))
        loss = soft_cross_entropy(scores, questions.gold_mask(index, model.n_candidates).to(device))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return loss.item(), len(index)

    # one trainable question in a batch: nothing batch norm can learn from
    batches = [index for index in _batches(order, config.batch_size) if len(index) >= 2]
    return run_epoch(epoch, batches, step, total=len(order), unit="questions", bar=bar)


def train(
    cronq_dir: Path,
    tkg_dir: Path,
    config: KGQATrainParams,
    out: Path,
    *,
    progress: Progress | bool = True,
    resume: bool = True,
    log: Callable[[str], None] | None = None,
) -> TrainResult:
    """Train (or resume) in ``out``, checkpointing every epoch; then rank the test split and
    write ``metrics.json`` and ``predictions.parquet`` there."""
    say = log or (lambda _message: None)
    if config.seed is None:
        config = config.model_copy(update={"seed": 0})
    device = resolve_device(config.device)
    cronq_dir, out = Path(cronq_dir), Path(out)
    if resume and checkpoint.exists(out):
        saved = checkpoint.load(out, device)
        _check_compatible(saved, config, out)
        model, vocab, history = saved.model, saved.vocab, list(saved.config.get("history", []))
        saved_best = saved.config.get("best_epoch")
        embeddings = saved.config.get("data", {}).get("embeddings")
        kg = saved.config.get("data", {}).get("kg_fingerprint")
        optimizer = torch.optim.Adam(_trainable(model), lr=config.learning_rate)
        optimizer.load_state_dict(saved.optimizer_state)
        say(f"resuming {out} after epoch {saved.epoch}")
    else:
        vocab, entity, time_table, embeddings, kg = answer_vocab(tkg_dir)
        same_kg(questions_kg(cronq_dir), (f"the embeddings ({tkg_dir})", kg), say)
        train_rows, refused = read_split(cronq_dir / "train.jsonl", config.question_input)
        if not train_rows:
            raise UserError(no_question_to_train(cronq_dir / "train.jsonl", refused))
        texts = [row[config.question_input] for row in train_rows]
        encoder = build_encoder(config.encoder, texts, config.seed)
        torch.manual_seed(config.seed)
        model = build_qa_model(
            config.arch, encoder, entity, time_table, vocab.n_times, config.dropout
        ).to(device)
        optimizer = torch.optim.Adam(_trainable(model), lr=config.learning_rate)
        history, saved_best = [], None
        say(
            f"{config.arch} over {embeddings} embeddings ({vocab.n_entities:,} entities, "
            f"{vocab.n_times:,} years), encoder {config.encoder}; "
            f"{describe_input(config.question_input)}; "
            f"{describe_protocol(config.answer_type_given)}"
        )
    splits = {
        name: load_split(cronq_dir, name, vocab, config.question_input)
        for name in ("train", "valid", "test")
    }
    for name, questions in splits.items():
        say(f"{name}: {questions.summary()}")
    data = {
        "cronq": str(cronq_dir),
        "tkg": str(tkg_dir),
        "embeddings": embeddings,
        "kg_fingerprint": kg,
    }
    best = saved_best  # the epoch whose weights best.safetensors holds
    best_hits = history[best - 1]["valid"]["hits@1"] if best else -1.0
    own = epoch_progress("questions") if progress is True else None
    bar = own if own is not None else (progress if isinstance(progress, Progress) else None)
    with own if own is not None else nullcontext():
        for epoch in range(len(history) + 1, config.epochs + 1):  # history: a row per epoch
            row = _epoch(model, optimizer, splits["train"], config, epoch, device, bar)
            if len(splits["valid"]):
                valid, _ = evaluate(
                    model,
                    splits["valid"],
                    vocab,
                    config.eval_batch_size,
                    device,
                    answer_type_given=config.answer_type_given,
                )
                row["valid"] = {k: valid[k] for k in ("hits@1", "hits@10", "mrr")}
            history.append(row)
            say(describe_epoch(row))
            if "valid" in row and row["valid"]["hits@1"] > best_hits:  # earliest of equals
                best, best_hits = epoch, row["valid"]["hits@1"]
                checkpoint.save_best(out, model, epoch)  # before config.json names it
            body = {
                "epoch": epoch,
                "train": config.model_dump(mode="json"),
                "data": data,
                "history": history,
                "best_epoch": best,
            }
            checkpoint.save(out, model, optimizer, vocab, body)
        if not history:  # --epochs 0: keep the untrained model evaluable
            body = {
                "epoch": 0,
                "train": config.model_dump(mode="json"),
                "data": data,
                "history": [],
            }
            checkpoint.save(out, model, optimizer, vocab, body)
        tested = len(history)
        if config.select == "best-valid" and best is not None and best != tested:
            checkpoint.load_best(out, model, best)
            tested = best
            say(f"testing the model of epoch {best}, the best on the valid split")
        metrics, predictions = evaluate(
            model,
            splits["test"],
            vocab,
            config.eval_batch_size,
            device,
            bar,
            config.answer_type_given,
        )
    if model.scores_with_tkg:
        tkg, relations = load_tkg(tkg_dir, vocab, device)
        ranked = oracle_ranks(tkg, relations, splits["test"], device=device)
        metrics["oracle_relation"] = ranked.metrics(splits["test"])
    metrics = {**with_departures(protocol_of(config.model_dump(mode="json"))), **metrics}
    header = {"model": config.arch, "embeddings": embeddings, "split": "test", "epoch": tested}
    write_results(out, {**header, **metrics}, predictions)
    say(f"test: {describe_metrics(metrics)}")
    return TrainResult(model, vocab, history, metrics, tested)


def no_question_to_train(path: Path, refused: dict[str, dict]) -> str:
    """The error of a training file without a question the QA models can answer."""
    if not refused:
        return f"{path}: no question to train on"
    from chronoprobe.kgqa.timeline_questions import describe

    return (
        f"{path}: no question the KGQA models can answer; {describe(refused, 0)}. Build "
        "questions with entity or year answers (`chronoprobe build timeline --kinds "
        "at_time,start,end,during_fact,ranking`)"
    )


def protocol_of(train_options: dict) -> dict:
    """How a model was trained (config.json's ``train``), as metrics.json reports it and `kgqa
    eval` asks it. Checkpoints written before these options existed were trained with the
    answer type given, on the question text."""
    return {
        "answer_type_given": bool(train_options.get("answer_type_given", True)),
        "question_input": str(train_options.get("question_input", "question")),
    }


def with_departures(protocol: dict) -> dict:
    """``protocol`` with ``departures``: each way it departs from the paper's protocol, in
    words ([] under the paper's), as metrics.json, the printed table and the report say it."""
    departures = []
    if protocol["question_input"] == "template":
        departures.append(describe_input("template"))
    if protocol["answer_type_given"]:
        departures.append(describe_protocol(True))
    return {**protocol, "departures": departures}


def describe_protocol(answer_type_given: bool) -> str:
    if answer_type_given:
        return (
            "answer type given: the softmax runs over the gold answer type's candidates only, "
            "not the paper's protocol"
        )
    return "one softmax over entities and years, as the paper"


def describe_input(question_input: str) -> str:
    """What the encoder read, and whether that is the paper's protocol."""
    if question_input == "template":
        return (
            "the encoder read the question templates, which show which slot of the fact each "
            "entity fills: not the paper's protocol, which gives that with training questions only"
        )
    return "the encoder read the question text, as the paper"


def _trainable(model: QAModel) -> list[torch.nn.Parameter]:
    return [p for p in model.parameters() if p.requires_grad]


def _check_compatible(saved: checkpoint.Checkpoint, config: KGQATrainParams, out: Path) -> None:
    train = saved.config.get("train", {})
    # a checkpoint of 0.5 names the architecture `model`
    before = {"arch": train.get("model"), **train, **protocol_of(train)}
    keys = ("arch", "encoder", "answer_type_given", "question_input")
    differ = [k for k in keys if before.get(k) != getattr(config, k)]
    if differ:
        held = ", ".join(f"{k} {before.get(k)!r}" for k in keys)
        raise UserError(
            f"{out}: holds a checkpoint with {held}; it differs in {', '.join(differ)}; pass "
            "another --out, or --no-resume to overwrite it"
        )


def write_results(directory: Path, metrics: dict, predictions) -> None:
    atomic_write_text(directory / "metrics.json", json.dumps(metrics, indent=2) + "\n")
    with atomic_path(directory / "predictions.parquet") as tmp:
        pq.write_table(predictions, tmp)


def _share(value: float | None) -> str:
    """A Hits@k as the log writes it; "-" for a group without a question (no figure)."""
    return "-" if value is None else f"{value:.3f}"


def describe_metrics(metrics: dict) -> str:
    """The log line of a split's figures ("no question" where it has none to answer)."""
    if not metrics["questions"]:
        parts = ["no question"]
    else:
        parts = [f"Hits@1 {_share(metrics['hits@1'])}", f"Hits@10 {_share(metrics['hits@10'])}"]
        for group in ("simple", "complex"):
            parts.append(f"{group} Hits@1 {_share(metrics[group]['hits@1'])}")
    for kind, values in metrics.get("answer_types", {}).items():
        parts.append(f"{kind} answers Hits@1 {_share(values['hits@1'])}")
    refused = metrics.get("timeline", {}).get("not_answered")
    if refused:
        from chronoprobe.kgqa.timeline_questions import describe

        parts.append(describe(refused, metrics["questions"]))
    for kind, values in metrics.get("oracle_relation", {}).get("types", {}).items():
        ours = metrics.get("types", {}).get(kind, {}).get("hits@1")
        parts.append(
            f"{kind} Hits@1 {_share(ours)} against the oracle relation's {_share(values['hits@1'])}"
        )
    return ", ".join(parts)


def describe_epoch(row: dict) -> str:
    text = f"epoch {row['epoch']}: loss {row['loss']:.4f}, {row['seconds']:.1f} s"
    if "valid" in row:
        text += (
            f"; valid Hits@1 {row['valid']['hits@1']:.3f}, Hits@10 {row['valid']['hits@10']:.3f}"
        )
    return text
