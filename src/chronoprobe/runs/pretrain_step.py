"""The ``pretrain`` step kind: a masked LM trained on a world's text, as a stand-in for RoBERTa.

The LAMA-TK paper compares a randomly initialised model with one pretrained on natural text
(Table 5). Offline there is no roberta-base to start from, so this step pretrains one on the
``kg`` step's own text: its articles (``articles.parquet``, one line per paragraph) and, if
asked, its dated snippets. Training is :mod:`chronoprobe.train.mlm`'s whole-word and salient
span masking, run by :func:`chronoprobe.train.series.train_period` with a fresh byte-level BPE
tokenizer trained on the same text.

Output: ``model/`` in Hugging Face ``save_pretrained`` layout with its tokenizer, which a
``memorize`` step takes as ``inputs: {init: <this step>}`` (or ``init: <path>/model``), and
``metrics.json`` (lines, epochs, loss per epoch, seconds).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Literal

import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict, Field

from chronoprobe.atomic import atomic_write_text
from chronoprobe.runs.steps import StepContext, step_kind

MODEL_DIR = "model"
TEXT_FILES = {"articles": "articles.parquet", "snippets": "snippets.parquet"}


class PretrainParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sources: list[Literal["articles", "snippets"]] = Field(["articles"], min_length=1)
    preset: Literal["tiny", "6L", "12L"] = "tiny"
    epochs: int = Field(10, ge=1)
    batch_size: int = Field(32, ge=1)
    lr: float = Field(1e-3, gt=0)
    vocab_size: int = Field(6000, ge=300)
    mask_prob: float = Field(0.15, gt=0, lt=1)
    entity_mask_prob: float = Field(0.5, ge=0, le=1)
    max_length: int = Field(128, ge=16)  # tokens per line; also the model's positions
    seed: int | None = None  # default: the experiment's seed
    device: str = "auto"


def text_lines(kg_dir: Path, sources: list[str]) -> list[str]:
    """The non-empty lines of each source's ``text`` column, in file order.

    Articles are split at line breaks (one paragraph a line) so that a line fits the model.
    """
    lines: list[str] = []
    for source in sources:
        path = kg_dir / TEXT_FILES[source]
        if not path.is_file():
            raise ValueError(
                f"{kg_dir}: no {path.name}; pretraining on {source} needs a kg step that writes "
                "text (source: synth with text: true)"
            )
        schema = pq.read_schema(path)
        if "text" not in schema.names:
            raise ValueError(f"{path}: has no column 'text' (columns: {', '.join(schema.names)})")
        for text in pq.read_table(path, columns=["text"]).column("text").to_pylist():
            lines.extend(line.strip() for line in (text or "").splitlines() if line.strip())
    if not lines:
        raise ValueError(f"{kg_dir}: the {' and '.join(sources)} hold no text to pretrain on")
    return lines


@step_kind("pretrain", PretrainParams)
def run_pretrain(ctx: StepContext, params: PretrainParams, inputs: dict[str, Path]) -> None:
    from chronoprobe.kg.graph import TemporalKG
    from chronoprobe.train.mlm import MentionFinder
    from chronoprobe.train.model import resolve_device
    from chronoprobe.train.series import SeriesOptions, start_model, train_period
    from chronoprobe.train.tokenizer import train_bpe_tokenizer

    if "kg" not in inputs:
        raise ValueError(
            f"{ctx.step_id}: a pretrain step needs the input `kg`, a kg step with text "
            "(e.g. inputs: {kg: world})"
        )
    seed = ctx.seed if params.seed is None else params.seed
    lines = text_lines(inputs["kg"], params.sources)
    options = SeriesOptions(
        preset=params.preset,
        epochs=params.epochs,
        batch_size=params.batch_size,
        lr=params.lr,
        seed=seed,
        vocab_size=params.vocab_size,
        mask_prob=params.mask_prob,
        entity_mask_prob=params.entity_mask_prob,
        max_length=params.max_length,
    )
    began = time.perf_counter()
    tokenizer = train_bpe_tokenizer(lines, vocab_size=params.vocab_size)
    labels = TemporalKG.load(inputs["kg"]).entities.column("label").to_pylist()
    model = start_model(None, tokenizer, options)
    losses = train_period(
        model,
        tokenizer,
        lines,
        options,
        seed,
        resolve_device(params.device),
        progress=ctx.progress,
        label=ctx.step_id,
        mentions=MentionFinder(tokenizer, labels),
    )
    target = ctx.out_dir / MODEL_DIR
    model.save_pretrained(target)
    tokenizer.save_pretrained(target)
    metrics = {
        "lines": len(lines),
        "sources": params.sources,
        "preset": params.preset,
        "parameters": sum(p.numel() for p in model.parameters()),
        "word_vocab": len(tokenizer),
        "epochs": len(losses),
        "losses": [round(loss, 6) for loss in losses],
        "final_loss": round(losses[-1], 6) if losses else None,
        "seconds": round(time.perf_counter() - began, 3),
    }
    atomic_write_text(ctx.out_dir / "metrics.json", json.dumps(metrics, indent=2) + "\n")
    ctx.log.info(f"pretrained on {len(lines)} lines, final loss {metrics['final_loss']}")
