"""Rank-based metrics over ranked predictions.

LAMA-TK defines two views of top-K correctness for queries with several correct answers:
Acc@K is query-oriented (any answer in the top K), Hit@K is answer-oriented (the row's own
target in the top K; rows sharing a masked text each count their own target). The drift family
uses P@K and MRR of the best-ranked gold label; the KGQA family Hits@K over answer sets.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def best_rank(ranked: Sequence[str], answers: Sequence[str]) -> int | None:
    """1-based rank of the first prediction that is a correct answer, or None."""
    gold = set(answers)
    for rank, prediction in enumerate(ranked, start=1):
        if prediction in gold:
            return rank
    return None


def acc_at_k(ranked: Sequence[str], answers: Sequence[str], k: int) -> float:
    """1.0 if any correct answer is among the top ``k`` predictions."""
    return float(bool(set(ranked[:k]) & set(answers)))


def hit_at_k(ranked: Sequence[str], target: str, k: int) -> float:
    """1.0 if this row's target is among the top ``k`` predictions."""
    return float(target in ranked[:k])


def precision_at_k(ranks: Sequence[int | None], k: int) -> float:
    """Share of queries whose best gold rank is within ``k`` (P@K as TempLAMA reports it)."""
    if not ranks:
        return 0.0
    return float(np.mean([r is not None and r <= k for r in ranks]))


def mean_reciprocal_rank(ranks: Sequence[int | None]) -> float:
    """Mean of 1/rank; a gold answer outside the ranking counts 0."""
    if not ranks:
        return 0.0
    return float(np.mean([1.0 / r if r else 0.0 for r in ranks]))
