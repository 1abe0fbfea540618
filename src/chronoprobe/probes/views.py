"""The three evaluation views of the drift family, written against the adapter requests only.

A view turns probe rows into requests, hands the whole list to the adapter (which sorts and
batches it), and turns the answers into one prediction row per probe row. ``summarize`` is the
view's metric over any group of its prediction rows (a period, a split, everything).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from chronoprobe.metrics.ranking import mean_reciprocal_rank, precision_at_k
from chronoprobe.metrics.text import exact_match, rouge_l, token_f1
from chronoprobe.models.requests import GenerateRequest, RankRequest, ScoreRequest
from chronoprobe.probes.rows import ProbeRow
from chronoprobe.probes.span_ppl import (
    CONDITIONS,
    predict_span_ppl,
    read_examples,
    span_ppl_metrics,
    summarize_span_ppl,
)

Progress = Callable[[int, int], None] | None
P_AT = (1, 10, 50, 100)


@dataclass(frozen=True)
class ViewOptions:
    top_k: int = 10  # predictions listed per single-token row (ranks are over the whole vocab)
    max_tokens: int = 5  # M of the multi-token view
    conditions: tuple[str, ...] = CONDITIONS  # span-ppl: ECBD input conditions scored
    cutoff_year: int | None = None  # span-ppl: last year of the model's training data
    seed: int = 0  # span-ppl: which random definition RANDOM DEF prepends
    recall_beams: int = 0  # span-ppl: beams for Recall@10 (T5-style models; 0: not computed)


@dataclass(frozen=True)
class View:
    name: str
    predict: Callable[..., list[dict]]  # (model, rows, options, progress) -> prediction rows
    summarize: Callable[[Sequence[dict]], dict[str, float | None]]
    description: str
    # views over other probe files (ECBD): their row reader and metrics (default: drift rows
    # and metrics per period and split)
    read: Callable[[Path], Sequence] | None = None
    metrics: Callable[[Sequence[dict], ViewOptions], dict] | None = None


def _mean(values: Sequence[float]) -> float | None:
    """None for an empty group, so metrics.json stays valid JSON (no NaN)."""
    return float(sum(values) / len(values)) if values else None


def single_token(model, rows: Sequence[ProbeRow], options: ViewOptions, progress: Progress):
    """Rows with at least one single-token label: top-k at the gap and the best gold rank."""
    requests = [ScoreRequest(r.cloze, label) for r in rows for label in r.labels]
    label_ids = iter(model.label_token_ids(requests))
    kept: list[ProbeRow] = []
    ranking_requests: list[RankRequest] = []
    for row in rows:
        ids = [next(label_ids) for _ in row.labels]
        single = tuple(sorted({t[0] for t in ids if len(t) == 1}))
        if single:
            kept.append(row)
            ranking_requests.append(RankRequest(row.cloze, single))
    rankings = model.rank(ranking_requests, top_k=options.top_k, progress=progress)
    return [
        {
            **row.key(),
            "predictions": [model.token_text(t) for t in ranking.token_ids],
            "gold_rank": min(ranking.candidate_ranks, default=None),
        }
        for row, ranking in zip(kept, rankings, strict=True)
    ]


def summarize_single_token(predictions: Sequence[dict]) -> dict[str, float | None]:
    ranks = [p["gold_rank"] for p in predictions]
    out: dict[str, float | None] = {"n": len(ranks)}
    out.update({f"P@{k}": precision_at_k(ranks, k) for k in P_AT})
    out["MRR"] = mean_reciprocal_rank(ranks)
    return out


def multi_token(model, rows: Sequence[ProbeRow], options: ViewOptions, progress: Progress):
    """Greedy fillings of 1..M tokens; the best summed log-probability is the prediction."""
    requests = [GenerateRequest(r.cloze, options.max_tokens) for r in rows]
    out = []
    for row, candidates in zip(rows, model.generate(requests, progress=progress), strict=True):
        best = max(candidates, key=lambda c: c.logprob)
        out.append(
            {
                **row.key(),
                "prediction": best.text,
                "candidates": [{"text": c.text, "logprob": c.logprob} for c in candidates],
                "exact_match": exact_match(best.text, row.labels),
                "f1": token_f1(best.text, row.labels),
                "rouge_l": rouge_l(best.text, row.labels),
            }
        )
    return out


def summarize_multi_token(predictions: Sequence[dict]) -> dict[str, float | None]:
    out: dict[str, float | None] = {"n": len(predictions)}
    for metric in ("exact_match", "f1", "rouge_l"):
        out[metric] = _mean([p[metric] for p in predictions])
    return out


def pll(model, rows: Sequence[ProbeRow], options: ViewOptions, progress: Progress):
    """Every gold label's score in context, all rows' requests answered in one pool."""
    labels = [list(dict.fromkeys(r.labels)) for r in rows]
    requests = [
        ScoreRequest(r.cloze, label) for r, ls in zip(rows, labels, strict=True) for label in ls
    ]
    scores = iter(model.score(requests, progress=progress))
    out = []
    for row, ls in zip(rows, labels, strict=True):
        got = [next(scores) for _ in ls]
        out.append(
            {
                **row.key(),
                "label_scores": {label: s.logprob for label, s in zip(ls, got, strict=True)},
                "label_tokens": {label: s.n_tokens for label, s in zip(ls, got, strict=True)},
            }
        )
    return out


def summarize_pll(predictions: Sequence[dict]) -> dict[str, float | None]:
    """Mean summed log-probability per label, and the per-token perplexity over all labels."""
    logprobs = [v for p in predictions for v in p["label_scores"].values()]
    tokens = sum(n for p in predictions for n in p["label_tokens"].values())
    return {
        "n": len(predictions),
        "labels": len(logprobs),
        "mean_label_logprob": _mean(logprobs),
        "token_perplexity": math.exp(-sum(logprobs) / tokens) if tokens else None,
    }


VIEWS: dict[str, View] = {
    view.name: view
    for view in (
        View(
            "single-token",
            single_token,
            summarize_single_token,
            "rank the vocabulary at the gap; P@1/10/50/100 and MRR of the best gold label",
        ),
        View(
            "multi-token",
            multi_token,
            summarize_multi_token,
            "fill 1..M tokens greedily, keep the most likely; EM, token F1, ROUGE-L",
        ),
        View(
            "pll",
            pll,
            summarize_pll,
            "score every gold label in context (masked: pseudo-log-likelihood)",
        ),
        View(
            "span-ppl",
            predict_span_ppl,
            summarize_span_ppl,
            "ECBD span perplexity under the input conditions, averaged per entity first",
            read_examples,
            span_ppl_metrics,
        ),
    )
}
