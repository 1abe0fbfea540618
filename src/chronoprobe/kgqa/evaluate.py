"""Ranking questions' answers and the paper's breakdown of Hits@k (Tables 5 and 6).

A question's rank is that of its best-scored gold answer among all candidates, entities and
years together as the paper ranks them (among the candidates of its answer type only under the
answer-type-given protocol), with its other gold answers set aside and ties counted against it:
rank = 1 + the non-gold candidates scoring at least as high. Hits@k is then "some answer in the
top k", the paper's measure, and it does not depend on how a sort breaks ties.
"""

from __future__ import annotations

import time as clock
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import torch
from rich.progress import Progress
from torch import Tensor

from chronoprobe.datasets.cronq import QUESTION_TYPES, SIMPLE_TYPES
from chronoprobe.kgqa import timeline_questions
from chronoprobe.kgqa.data import AnswerVocab, Questions
from chronoprobe.kgqa.models import QAModel
from chronoprobe.metrics.ranking import gold_ranks, rank_summary

HITS_AT = (1, 10)
TOP = 10  # predictions kept per question in the predictions table


def _group(ranks: np.ndarray) -> dict:
    """A group's MRR and Hits@k with 95% intervals; ``n`` (= ``questions``) is what they count."""
    n = len(ranks)
    return {"questions": n, "n": n, **rank_summary(ranks, HITS_AT, group_n=n)}


def breakdown(ranks: np.ndarray, types: Sequence[str], answer_types: Sequence[str]) -> dict:
    """Overall, simple vs complex, per reasoning type and per answer type (types with none of
    the questions are left out)."""
    kinds = np.array(types, dtype=object)
    answers = np.array(answer_types, dtype=object)
    simple = np.isin(kinds, SIMPLE_TYPES)
    return {
        **_group(ranks),
        "simple": _group(ranks[simple]),
        "complex": _group(ranks[~simple]),
        "types": {t: _group(ranks[kinds == t]) for t in QUESTION_TYPES if (kinds == t).any()},
        "answer_types": {
            a: _group(ranks[answers == a]) for a in ("entity", "time") if (answers == a).any()
        },
    }


def model_inputs(
    model: QAModel,
    questions: Questions,
    index: Tensor,
    device: torch.device,
    answer_type_given: bool,
) -> tuple:
    """The arguments of ``model(...)`` for the questions at ``index``; the gold answer types
    only under the answer-type-given protocol."""
    tokens = model.encoder.tokenize([questions.inputs[i] for i in index], device)
    annotations = tuple(getattr(questions, f)[index].to(device) for f in ("head", "tail", "time"))
    is_time = questions.is_time[index].to(device) if answer_type_given else None
    return (tokens, *annotations, is_time)


@torch.no_grad()
def evaluate(
    model: QAModel,
    questions: Questions,
    vocab: AnswerVocab,
    batch_size: int = 256,
    device: torch.device | str = "cpu",
    progress: Progress | None = None,
    answer_type_given: bool = False,
) -> tuple[dict, pa.Table]:
    """Every question's gold rank and top candidates: the metrics of :func:`breakdown` (plus
    throughput) and one prediction row per question."""
    model.eval()
    device = torch.device(device)
    began = clock.perf_counter()
    rank_batches: list[Tensor] = []
    top_batches: list[Tensor] = []
    task = progress.add_task("answering", total=len(questions)) if progress else None
    for begin in range(0, len(questions), batch_size):
        index = torch.arange(begin, min(begin + batch_size, len(questions)))
        scores = model(*model_inputs(model, questions, index, device, answer_type_given))
        gold = questions.gold_mask(index, model.n_candidates).to(device)
        rank_batches.append(gold_ranks(scores, gold).cpu())
        top = scores.topk(min(TOP, scores.shape[1]), 1)
        # Fewer than TOP candidates of the answer type: the masked rest are no predictions.
        top_batches.append(top.indices.masked_fill(top.values == -torch.inf, -1).cpu())
        if task is not None:
            progress.advance(task, len(index))
    if task is not None:
        progress.remove_task(task)
    seconds = clock.perf_counter() - began
    ranks = torch.cat(rank_batches).numpy() if rank_batches else np.zeros(0, np.int64)
    tops = torch.cat(top_batches).numpy() if top_batches else np.zeros((0, TOP), np.int64)
    metrics = breakdown(ranks, questions.types, questions.answer_types)
    metrics["questions_per_s"] = round(len(questions) / seconds, 1) if seconds else 0.0
    timeline = timeline_questions.figures(ranks, questions.timeline)
    if timeline or questions.not_answered:
        metrics["timeline"] = {**timeline, "not_answered": questions.not_answered}
    return metrics, _predictions(questions, vocab, ranks, tops, answer_type_given, timeline)


def _predictions(
    questions: Questions,
    vocab: AnswerVocab,
    ranks: np.ndarray,
    tops: np.ndarray,
    answer_type_given: bool,
    timeline: dict,
) -> pa.Table:
    """One row per question: its gold answers, top predictions, rank and hits (and its
    timeline kind where the questions came from a timeline)."""
    kinds = {"timeline_kind": [(t or {}).get("kind") for t in questions.timeline]}
    return pa.table(
        {
            "id": questions.ids,
            "question": questions.texts,
            "type": questions.types,
            "answer_type": questions.answer_types,
            **(kinds if timeline else {}),
            "answers": [
                [vocab.label(int(c)) for c in questions.answer_flat[a:b]]
                for a, b in zip(
                    questions.answer_offsets[:-1].tolist(),
                    questions.answer_offsets[1:].tolist(),
                    strict=True,
                )
            ],
            "predictions": [[vocab.label(int(c)) for c in row if c >= 0] for row in tops],
            "rank": pa.array(
                [None if r == np.iinfo(np.int64).max else int(r) for r in ranks], pa.int64()
            ),
            **{f"hit@{k}": ranks <= k for k in HITS_AT},
            "answer_type_given": pa.repeat(answer_type_given, len(ranks)),
        }
    )
