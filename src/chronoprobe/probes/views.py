"""The three evaluation views of the drift family, written against the adapter requests only.

A view turns probe rows into requests, hands the whole list to the adapter (which sorts and
batches it), and turns the answers into one prediction row per probe row. A row the view cannot
answer comes back as ``{**key, "skipped": reason}`` instead, so that the runner can count why.
``summarize`` is the view's metric over any group of its prediction rows (a period, a split,
everything).
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
    selection: str | None = None  # how the view picks its prediction, written to metrics.json


def _mean(values: Sequence[float]) -> float | None:
    """None for an empty group, so metrics.json stays valid JSON (no NaN)."""
    return float(sum(values) / len(values)) if values else None


SKIPPED = "skipped"  # the field of a row a view did not answer; its value says why
GAP_FIRST = (
    "the gap comes first: a causal model ranks and generates from the left context only, "
    "so its answer would not depend on the question"
)
NO_SINGLE_TOKEN = "no single-token gold label"


def too_long(max_tokens: int) -> str:
    return f"every gold label is longer than M = {max_tokens} tokens"


def gap_first(model, row: ProbeRow) -> bool:
    """Does ``model`` see nothing of ``row``'s question when it ranks or generates?"""
    return model.reads_left_only and not row.cloze.left.strip()


def gap_first_warnings(model, rows: Sequence[ProbeRow], view: str) -> list[str]:
    """What a user should know when a drift ``view`` runs a causal model on gap-first rows."""
    count = sum(gap_first(model, row) for row in rows)
    if not count:
        return []
    what = (
        "scores the label together with the right context after it, log p(label + right | "
        "start), so the question is read"
        if view == "pll"
        else "skips them: from an empty prefix its answer would not depend on the question"
    )
    return [
        f"{count:,} of {len(rows):,} rows put the gap first ({model.name} is causal and sees no "
        f"left context there); the {view} view {what}"
    ]


def _label_tokens(model, rows: Sequence[ProbeRow]) -> list[list[list[int]]]:
    """Each row's labels as the token ids the model scores them as."""
    requests = [ScoreRequest(r.cloze, label) for r in rows for label in r.labels]
    ids = iter(model.label_token_ids(requests))
    return [[next(ids) for _ in row.labels] for row in rows]


def _answer_or_skip(
    rows: Sequence[ProbeRow],
    reasons: Sequence[str | None],
    answer: Callable[[list[int]], list[dict]],
) -> list[dict]:
    """``answer(indices)`` for the rows without a reason to skip them, in row order with the
    skipped rows (``{**key, "skipped": reason}``)."""
    answered = iter(answer([i for i, why in enumerate(reasons) if why is None]))
    return [
        next(answered) if why is None else {**row.key(), SKIPPED: why}
        for row, why in zip(rows, reasons, strict=True)
    ]


def single_token(model, rows: Sequence[ProbeRow], options: ViewOptions, progress: Progress):
    """Rows with at least one single-token label: top-k at the gap and the best gold rank."""
    singles = [
        tuple(sorted({t[0] for t in ids if len(t) == 1})) for ids in _label_tokens(model, rows)
    ]
    reasons = [
        GAP_FIRST if gap_first(model, row) else None if single else NO_SINGLE_TOKEN
        for row, single in zip(rows, singles, strict=True)
    ]

    def answer(kept: list[int]) -> list[dict]:
        requests = [RankRequest(rows[i].cloze, singles[i]) for i in kept]
        rankings = model.rank(requests, top_k=options.top_k, progress=progress)
        return [
            {
                **rows[i].key(),
                "predictions": [model.token_text(t) for t in ranking.token_ids],
                "gold_rank": min(ranking.candidate_ranks, default=None),
            }
            for i, ranking in zip(kept, rankings, strict=True)
        ]

    return _answer_or_skip(rows, reasons, answer)


def summarize_single_token(predictions: Sequence[dict]) -> dict[str, float | None]:
    ranks = [p["gold_rank"] for p in predictions]
    out: dict[str, float | None] = {"n": len(ranks)}
    out.update({f"P@{k}": precision_at_k(ranks, k) for k in P_AT})
    out["MRR"] = mean_reciprocal_rank(ranks)
    return out


def multi_token(model, rows: Sequence[ProbeRow], options: ViewOptions, progress: Progress):
    """Greedy fillings of 1..M tokens; the best log-probability per token is the prediction.

    As in the paper, gold labels longer than M tokens are left out (no filling could be them),
    and a row none of whose labels is left is skipped. The per-token mean keeps a one-token
    filling from winning by having fewer terms in its sum.
    """
    limit = options.max_tokens
    gold = [
        [label for label, t in zip(row.labels, ids, strict=True) if len(t) <= limit]
        for row, ids in zip(rows, _label_tokens(model, rows), strict=True)
    ]
    reasons = [
        GAP_FIRST if gap_first(model, row) else None if labels else too_long(limit)
        for row, labels in zip(rows, gold, strict=True)
    ]

    def answer(kept: list[int]) -> list[dict]:
        requests = [GenerateRequest(rows[i].cloze, limit) for i in kept]
        out = []
        for i, candidates in zip(kept, model.generate(requests, progress=progress), strict=True):
            best = max(candidates, key=lambda c: c.mean_logprob)
            out.append(
                {
                    **rows[i].key(),
                    "prediction": best.text,
                    "candidates": [
                        {"text": c.text, "logprob": c.logprob, "mean_logprob": c.mean_logprob}
                        for c in candidates
                    ],
                    "exact_match": exact_match(best.text, gold[i]),
                    "f1": token_f1(best.text, gold[i]),
                    "rouge_l": rouge_l(best.text, gold[i]),
                }
            )
        return out

    return _answer_or_skip(rows, reasons, answer)


def summarize_multi_token(predictions: Sequence[dict]) -> dict[str, float | None]:
    out: dict[str, float | None] = {"n": len(predictions)}
    for metric in ("exact_match", "f1", "rouge_l"):
        out[metric] = _mean([p[metric] for p in predictions])
    return out


def pll(model, rows: Sequence[ProbeRow], options: ViewOptions, progress: Progress):
    """Every gold label's score in its sentence, all rows' requests answered in one pool.

    A causal model scores the label and the right context after it (log p(label + right |
    left)), so the question is read wherever the gap stands; the other families read the
    whole sentence anyway and score the label's tokens.
    """
    labels = [list(dict.fromkeys(r.labels)) for r in rows]
    requests = [
        ScoreRequest(r.cloze, label, right_context=True)
        for r, ls in zip(rows, labels, strict=True)
        for label in ls
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
            "fill 1..M tokens greedily, keep the most likely per token; EM, token F1, ROUGE-L",
            selection="mean_logprob: of the greedy fillings of 1..M tokens, the one with the "
            "highest log-probability per scored token (decoders: the filling and its closing)",
        ),
        View(
            "pll",
            pll,
            summarize_pll,
            "score every gold label in its sentence (masked: pseudo-log-likelihood; causal: "
            "the label and the right context after it)",
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
