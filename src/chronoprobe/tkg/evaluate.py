"""Filtered ranking, vectorised: known answers are masked for a whole batch at once on the device.

The filter follows tkbc's protocol: a query (s, r, ?, t) ranks its gold object against every
entity except the other objects known for (s, r, t) anywhere in the data (and the same for
subjects, through reciprocal relations). Ties count against the gold answer, as in tkbc:
rank = 1 + number of unfiltered candidates scoring at least as high.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from chronoprobe.errors import UserError
from chronoprobe.metrics.ranking import filtered_ranks, rank_summary
from chronoprobe.metrics.uncertainty import mean, proportion
from chronoprobe.tkg.data import TKGData, with_reciprocals
from chronoprobe.tkg.models import TKGModel

HITS_AT = (1, 3, 10)


class KnownAnswers:
    """Answers per integer query key, kept sorted on the device for batched lookups."""

    def __init__(self, keys: Tensor, answers: Tensor) -> None:
        order = torch.argsort(keys)
        self.keys = keys[order].contiguous()
        self.answers = answers[order]

    def lookup(self, query_keys: Tensor) -> tuple[Tensor, Tensor]:
        """(row, answer) pairs: every known answer of every query, rows indexing ``query_keys``."""
        lo = torch.searchsorted(self.keys, query_keys)
        counts = torch.searchsorted(self.keys, query_keys, right=True) - lo
        rows = torch.repeat_interleave(torch.arange(len(query_keys), device=lo.device), counts)
        # Position j of the flat list belongs to row rows[j]; its answer sits at lo[row] + the
        # offset of j within that row's run.
        run_starts = torch.cumsum(counts, 0) - counts
        flat = torch.arange(len(rows), device=lo.device) + (lo - run_starts)[rows]
        return rows, self.answers[flat]


def rank_metrics(
    ranks: Tensor, prefix: str = "", clusters=None, group_n: int | None = None
) -> dict[str, float]:
    return rank_summary(ranks, HITS_AT, prefix, clusters=clusters, group_n=group_n)


def _keys(a: Tensor, b: Tensor, c: Tensor, sizes: tuple[int, int]) -> Tensor:
    """One int64 per (a, b, c) triple; a < sizes[0]... is the caller's invariant."""
    return (a * sizes[0] + b) * sizes[1] + c


def _check_key_space(*sizes: int) -> None:
    if np.prod([float(s) for s in sizes]) >= 2.0**63:
        raise UserError(f"a KG of sizes {sizes} is too large for int64 filter keys")


def _ranks(
    queries: Tensor,
    facts: Tensor,
    answer: int,
    sizes: tuple[int, int],
    scores,
    batch_size: int,
) -> Tensor:
    """Filtered ranks of column ``answer`` of each query (s, r, o, t) among ``scores(*query)``,
    the other answers that ``facts`` know for the same three other columns masked."""
    key = [column for column in range(4) if column != answer]
    index = KnownAnswers(_keys(*facts[:, key].unbind(1), sizes), facts[:, answer])
    ranks = []
    for batch in queries.split(batch_size):
        rows, cols = index.lookup(_keys(*batch[:, key].unbind(1), sizes))
        ranks.append(filtered_ranks(scores(*batch.unbind(1)).float(), batch[:, answer], rows, cols))
    return torch.cat(ranks).cpu() if ranks else torch.empty(0, dtype=torch.long)


@torch.inference_mode()
def entity_ranks(
    model: TKGModel,
    test: np.ndarray,
    known: np.ndarray,
    n_relations: int,
    batch_size: int = 1000,
    device: torch.device | str = "cpu",
) -> Tensor:
    """Filtered ranks of the gold object of every test fact, then of every gold subject."""
    sizes = (2 * n_relations, model.sizes["n_times"])
    _check_key_space(model.sizes["n_entities"], *sizes)
    return _ranks(
        torch.from_numpy(with_reciprocals(test, n_relations)).to(device),
        torch.from_numpy(with_reciprocals(known, n_relations)).to(device),
        2,
        sizes,
        lambda s, r, o, t: model.object_scores(s, r, t),
        batch_size,
    )


@torch.inference_mode()
def time_ranks(
    model: TKGModel,
    test: np.ndarray,
    known: np.ndarray,
    batch_size: int = 1000,
    device: torch.device | str = "cpu",
) -> Tensor:
    """Filtered rank of each test fact's year among all years, other known years of the same
    (s, r, o) masked."""
    n_entities = model.sizes["n_entities"]
    sizes = (model.sizes["n_relations"], n_entities)
    _check_key_space(n_entities, *sizes)
    return _ranks(
        torch.from_numpy(test).to(device),
        torch.from_numpy(known).to(device),
        3,
        sizes,
        lambda s, r, o, t: model.time_scores(s, r, o),
        batch_size,
    )


def evaluate(
    model: TKGModel,
    data: TKGData,
    split: str = "test",
    batch_size: int = 1000,
    device: torch.device | str = "cpu",
) -> dict[str, float]:
    """Filtered MRR and Hits@1/3/10 (both directions) of one split's facts at their start
    years, filtered by every split, and for temporal models the time accuracy (gold year
    ranked first) and time MRR; each with its ``_n`` (or the ``n`` of queries) and 95%
    interval ``_ci95``."""
    test, known, n_relations = data.queries(split), data.known, len(data.vocab.relations)
    was_training = model.training
    model.eval()
    ranks = entity_ranks(model, test, known, n_relations, batch_size, device)
    half = len(test)
    # a fact's two queries share its entities: intervals resample whole facts
    facts = np.tile(np.arange(half), 2)
    metrics = {"queries": len(ranks), "n": len(ranks)}
    metrics |= rank_metrics(ranks, clusters=facts, group_n=len(ranks))
    reciprocal = 1.0 / ranks.double().numpy()
    metrics |= mean(reciprocal[:half]).fields("object_mrr")
    metrics |= mean(reciprocal[half:]).fields("subject_mrr")
    if model.has_time:
        years = time_ranks(model, test, known, batch_size, device).numpy()
        metrics |= proportion(years == 1).fields("time_accuracy")
        metrics |= mean(1.0 / years).fields("time_mrr")
        metrics |= proportion(years <= 10).fields("time_hits@10")
    model.train(was_training)
    return metrics
