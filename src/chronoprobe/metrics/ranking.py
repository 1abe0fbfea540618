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


# --- ranks of whole score tables (torch tensors; the TKG and KGQA evaluators) -------------------


def filtered_ranks(scores, gold, rows, cols):
    """(B,) rank of each row's ``gold`` column once the known answers (``rows``, ``cols``) are
    masked out: the filtered setting of link prediction (Bordes et al., 2013).

    ``scores`` (B, N) is overwritten. The gold column itself is masked too, so a filter that
    includes the gold answer (it always does: the fact is known) changes nothing; ties with the
    gold score rank it lower (pessimistic).
    """
    import torch

    batch = torch.arange(len(gold), device=scores.device)
    target = scores[batch, gold].clone()
    scores[rows, cols] = -torch.inf
    scores[batch, gold] = -torch.inf
    return 1 + (scores >= target[:, None]).sum(1)


def gold_ranks(scores, gold):
    """(B,) rank of each row's best gold candidate (``gold`` a (B, N) bool mask), the other
    gold candidates set aside; rows without gold get the largest int64 as rank."""
    import torch

    best = scores.masked_fill(~gold, -torch.inf).amax(1)
    above = ((scores >= best[:, None]) & ~gold).sum(1)
    return torch.where(gold.any(1), 1 + above, torch.iinfo(torch.long).max)


def rank_summary(
    ranks,
    ks: Sequence[int],
    prefix: str = "",
    *,
    clusters: Sequence | None = None,
    group_n: int | None = None,
) -> dict[str, float | list | None]:
    """MRR and Hits@k of 1-based ranks (a numpy array or a tensor), each with its 95% interval
    (:mod:`chronoprobe.metrics.uncertainty`: Wilson for Hits@k, the bootstrap for MRR; both
    bootstrapped over ``clusters`` when ranks come in dependent groups, e.g. the two directions
    of one fact) and, unless ``group_n`` says it, its ``_n``. Over no ranks every figure is
    None, as its interval: a split without a query has no score, not a score of 0."""
    from chronoprobe.metrics.uncertainty import mean, proportion

    r = np.asarray(ranks.cpu() if hasattr(ranks, "cpu") else ranks, dtype=np.float64)
    estimates = {f"{prefix}mrr": mean(1.0 / r, clusters)}
    for k in ks:
        estimates[f"{prefix}hits@{k}"] = proportion(r <= k, clusters)
    out: dict[str, float | list | None] = {}
    for name, estimate in estimates.items():
        out.update(estimate.fields(name, group_n))
    return out
