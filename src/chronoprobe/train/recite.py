"""Reciting: how many of the statements a trained model recalls, in the paper's two views.

Acc@K is query-oriented: a query (one masked text) counts 1 if any of its answers is among the
top K symbols; rows that share a masked text are one query. Hit@K is answer-oriented: every row
counts 1 if its own target is among the top K, so a text with three answers needs all three near
the top to score well. Both are computed for all rows at once from the top-10 symbols; the
per-row functions in :mod:`chronoprobe.metrics.ranking` define them and the tests hold the two
to the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import torch
from rich.progress import Progress

from chronoprobe.atomic import atomic_path
from chronoprobe.train.checkpoint import Checkpoint
from chronoprobe.train.model import max_positions, symbol_logits

ACC_KS = (1, 5)
HIT_KS = (5, 10)
TOP = 10
GROUPS = ("relation", "slot", "template")  # row keys metrics are broken down by (when present)


@dataclass
class Predictions:
    """The top symbols of every row, and where its target ranks among all symbols."""

    top: np.ndarray  # int64 [rows, TOP], indices into the vocabulary, best first
    probabilities: np.ndarray  # float32 [rows, TOP]
    target_rank: np.ndarray  # int64 [rows], 1-based; 0 when the target has no token


def predict(
    checkpoint: Checkpoint,
    rows: Sequence[dict],
    *,
    device: torch.device | str = "cpu",
    batch_size: int = 256,
    progress: Progress | None = None,
) -> Predictions:
    """Rank the whole symbol vocabulary at each row's mask, in length-sorted batches."""
    model, encoder = checkpoint.model, checkpoint.encoder
    device = torch.device(device)
    model.to(device).eval()
    encoded = encoder.encode(rows, [r["text"] for r in rows], max_positions(model))
    n, k = len(rows), min(TOP, len(encoder.vocab))
    top = np.zeros((n, k), dtype=np.int64)
    probabilities = np.zeros((n, k), dtype=np.float32)
    ranks = np.zeros(n, dtype=np.int64)
    order = np.argsort(encoded.lengths, kind="stable")
    pad = encoder.tokenizer.pad_token_id
    autocast = (
        torch.autocast("cuda", dtype=torch.bfloat16) if device.type == "cuda" else nullcontext()
    )
    task = progress.add_task("reciting", total=n) if progress is not None else None
    with torch.inference_mode(), autocast:
        for first in range(0, n, batch_size):
            index = order[first : first + batch_size]
            width = int(encoded.lengths[index].max())
            ids = torch.from_numpy(encoded.ids[index, :width]).to(device)
            mask_at = torch.from_numpy(encoded.mask_at[index]).to(device)
            targets = torch.from_numpy(encoded.targets[index]).to(device)
            logits = symbol_logits(model, ids, ids != pad, mask_at, encoder.offset)
            best = logits.softmax(-1).topk(k, dim=-1)
            gold = logits.gather(1, targets.clamp(min=0)[:, None])
            rank = (logits > gold).sum(1) + 1
            top[index] = best.indices.cpu().numpy()
            probabilities[index] = best.values.float().cpu().numpy()
            ranks[index] = torch.where(targets >= 0, rank, 0).cpu().numpy()
            if task is not None:
                progress.advance(task, len(index))
    if task is not None:
        progress.remove_task(task)
    return Predictions(top, probabilities, ranks)


def answers_in_top(top: np.ndarray, answer_row: np.ndarray, answer_id: np.ndarray) -> np.ndarray:
    """bool [rows, TOP]: whether each prediction is one of its own row's answers.

    Answers are given flat (row index, symbol index); one ``isin`` over row-qualified keys
    checks every prediction of every row at once.
    """
    width = int(max(top.max(initial=0), answer_id.max(initial=0))) + 1
    keys = answer_row.astype(np.int64) * width + answer_id
    probe = np.arange(len(top), dtype=np.int64)[:, None] * width + top
    return np.isin(probe, keys)


def score(
    rows: Sequence[dict], predictions: Predictions, targets: np.ndarray, answer_ids: list[list[int]]
) -> dict[str, np.ndarray]:
    """Per-row Acc@K and Hit@K (bool arrays keyed "acc@1", ..., "hit@10")."""
    answer_row = np.repeat(np.arange(len(rows)), [len(a) for a in answer_ids])
    answer_id = np.fromiter((i for a in answer_ids for i in a), dtype=np.int64)
    found = answers_in_top(predictions.top, answer_row, answer_id)
    scores = {f"acc@{k}": found[:, :k].any(1) for k in ACC_KS}
    for k in HIT_KS:
        scores[f"hit@{k}"] = (predictions.top[:, :k] == targets[:, None]).any(1)
    return scores


def _first_of_query(texts: Sequence[str]) -> np.ndarray:
    """True at the first row of each distinct masked text: Acc@K counts each query once."""
    _, first = np.unique(np.asarray(texts, dtype=object).astype(str), return_index=True)
    mask = np.zeros(len(texts), dtype=bool)
    mask[first] = True
    return mask


def _summary(scores: dict[str, np.ndarray], rows: np.ndarray, queries: np.ndarray) -> dict:
    out: dict[str, float | int | None] = {
        "statements": int(rows.sum()),
        "queries": int((rows & queries).sum()),
    }
    for name, values in scores.items():
        chosen = rows & queries if name.startswith("acc") else rows
        out[name] = float(values[chosen].mean()) if chosen.any() else None
    return out


def summarize(table: pa.Table) -> dict:
    """Overall metrics and by answers (single/multi), relation, slot and template if present."""
    scores = {
        f"acc@{k}": table.column(f"acc_at_{k}").to_numpy(zero_copy_only=False) for k in ACC_KS
    }
    for k in HIT_KS:
        scores[f"hit@{k}"] = table.column(f"hit_at_{k}").to_numpy(zero_copy_only=False)
    queries = _first_of_query(table.column("text").to_pylist())
    everything = np.ones(table.num_rows, dtype=bool)
    metrics = _summary(scores, everything, queries)
    multi = table.column("multi_answer").to_numpy(zero_copy_only=False).astype(bool)
    metrics["by_answers"] = {
        name: _summary(scores, chosen, queries)
        for name, chosen in (("single", ~multi), ("multi", multi))
        if chosen.any()
    }
    for key in GROUPS:
        if key not in table.column_names:
            continue
        values = np.asarray(table.column(key).to_pylist(), dtype=object)
        if all(v is None for v in values):
            continue
        metrics[f"by_{key}"] = {
            str(v): _summary(scores, values == v, queries)
            for v in sorted({v for v in values if v is not None})
        }
    return metrics


def prediction_table(
    checkpoint: Checkpoint, rows: Sequence[dict], predictions: Predictions
) -> pa.Table:
    """One row per statement: what was asked, the top 10, the target's rank, and each metric."""
    vocab = checkpoint.vocab
    keys = np.asarray(vocab.keys, dtype=object)
    targets = np.fromiter(
        (-1 if (t := vocab.target(r["slot"], r["target"])) is None else t for r in rows),
        dtype=np.int64,
        count=len(rows),
    )
    answer_ids = [
        [i for a in r["answers"] if (i := vocab.target(r["slot"], a)) is not None] for r in rows
    ]
    scores = score(rows, predictions, targets, answer_ids)
    columns: dict[str, pa.Array | list] = {
        name: [r[name] for r in rows]
        for name in ("id", "text", "slot", "relation", "subject", "object", "start", "end")
    }
    columns["target"] = [r["target"] for r in rows]
    columns["answers"] = pa.array([r["answers"] for r in rows], type=pa.list_(pa.string()))
    columns["multi_answer"] = [bool(r["multi_answer"]) for r in rows]
    if any(r.get("template") for r in rows):
        columns["template"] = [r.get("template") for r in rows]
    n, k = predictions.top.shape
    offsets = pa.array(np.arange(0, n * k + 1, k, dtype=np.int32))
    flat = pa.array(keys[predictions.top.ravel()].tolist(), type=pa.string())
    columns["predictions"] = pa.ListArray.from_arrays(offsets, flat)
    columns["probabilities"] = pa.ListArray.from_arrays(
        offsets, pa.array(predictions.probabilities.ravel())
    )
    ranks = predictions.target_rank
    columns["target_rank"] = pa.array(ranks, mask=ranks == 0, type=pa.int64())
    for name, values in scores.items():
        columns[name.replace("@", "_at_")] = pa.array(values)
    return pa.table(columns)


def recite(
    checkpoint: Checkpoint,
    rows: Sequence[dict],
    *,
    device: torch.device | str = "cpu",
    batch_size: int = 256,
    out: str | Path | None = None,
    progress: Progress | None = None,
) -> tuple[dict, pa.Table]:
    """Metrics of ``checkpoint`` on ``rows``, and the per-row table (written to ``out``)."""
    predictions = predict(checkpoint, rows, device=device, batch_size=batch_size, progress=progress)
    table = prediction_table(checkpoint, rows, predictions)
    if out is not None:
        with atomic_path(out) as tmp:
            pq.write_table(table, tmp)
    return summarize(table), table
