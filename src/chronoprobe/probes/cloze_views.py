"""The views over cloze probe rows (drift, TempLAMA, any ``[MASK]`` query with answer labels).

- ``single-token`` ranks the vocabulary at the gap: P@1/10/50/100 and MRR of the best gold label
  (Margatina et al., 2023, the single-token view);
- ``multi-token`` fills 1..M tokens greedily and keeps one filling: the most likely per token
  (``selection: mean``, the default) or in sum (``sum``); exact match, token F1, ROUGE-L under
  both rules (their multi-token view; labels longer than M are left out). The paper does not
  say how one of the M fillings is chosen;
- ``pll`` scores every gold label in its sentence (masked LMs: pseudo-log-likelihood, Salazar et
  al., 2020; causal: the label and the right context after it; seq2seq: decoder scoring).

Their metrics are given overall, per period, per split and per period and split, each with its
``n`` and 95% interval (``<metric>_ci95``: Wilson for P@k and exact match, a bootstrap over rows
for MRR, F1, ROUGE-L and the PLL figures; :mod:`chronoprobe.metrics.uncertainty`); deleted rows
(the previous period's answers) count in their own split only unless ``include_deleted``. A row
longer than the model's positions is read with its context cut (see ``models.base``); a row
whose gap or label does not fit even so is skipped with that reason.

The paper probes masked LMs only. A causal model reads only the text before the gap, which a
gap-first row ("[MASK] is the head coach of X.") does not have: the single-token and
multi-token views ask such a row as a question whose prompt ends where the answer starts
(:func:`as_question`), or skip it with ``gap_first: skip``. A label that ends with its own stop
("F.C.") takes the place of the full stop after the gap, as the templates write it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
from pydantic import Field

from chronoprobe.core.tables import FIGURE_PARTS
from chronoprobe.errors import UserError
from chronoprobe.metrics.text import exact_match, rouge_l, token_f1
from chronoprobe.metrics.uncertainty import (
    RESAMPLES,
    Estimate,
    estimate,
    proportion,
    summary,
)
from chronoprobe.metrics.uncertainty import mean as mean_estimate
from chronoprobe.metrics.uncertainty import median as median_estimate
from chronoprobe.models.requests import (
    Candidate,
    Cloze,
    GenerateRequest,
    RankRequest,
    ScoreRequest,
)
from chronoprobe.probes.coverage import answered_part, one_model_figures, splits_left_out
from chronoprobe.probes.rows import ProbeRow
from chronoprobe.probes.series_matrix import with_temporal_ranks
from chronoprobe.probes.view import SKIPPED, DriftMatrix, ProbeParams, Progress, View
from chronoprobe.templates import followed_by

P_AT = (1, 10, 50, 100)
GAP_FIRST = (
    "the gap comes first: a causal model ranks and generates from the left context only, "
    "so its answer would not depend on the question (left out by `gap_first: skip`)"
)
NO_TEMPORAL_RANK = (
    "no temporal rank: no other period of the query has another label to rank against"
)
BLANK = "___"
QUESTION = "Fill in the blank: {statement}\nAnswer: "  # the answer follows, then a newline
SELECTIONS = {
    "mean": "the highest log-probability per scored token",
    "sum": "the highest summed log-probability",
}
NO_SINGLE_TOKEN = "no single-token gold label"
# the fields of a cloze row every prediction row repeats (besides the model)
KEYS = ("id", "period", "split", "relation", "subject", "query", "answer_labels")


class ClozeParams(ProbeParams):
    include_deleted: bool = Field(
        False,
        description="Count deleted rows (they carry the previous period's answers) in the "
        "overall, per-period and 'all' figures too; by default they count in their own split "
        "only.",
    )


class AskedParams(ClozeParams):
    gap_first: Literal["question", "skip"] = Field(
        "question",
        description='Rows whose gap comes first ("[MASK] is the head coach of X.") for a '
        "causal model, which reads only the text before the gap: question (ask 'Fill in the "
        "blank: ___ is the head coach of X.' then 'Answer:'; counted as asked_as_question) or "
        "skip (leave them out, counted in skipped). Masked and seq2seq models read the whole "
        "statement either way (Margatina et al., 2023, probe masked LMs only).",
    )


class SingleTokenParams(AskedParams):
    top_k: int = Field(
        10, ge=1, description="Predictions listed per row (ranks are over the whole vocabulary)."
    )


class MultiTokenParams(AskedParams):
    max_tokens: int = Field(5, ge=1, description="M: the longest filling tried, in tokens.")
    selection: Literal["mean", "sum"] = Field(
        "mean",
        description="Which of the 1..M fillings is the prediction (Margatina et al., 2023, do "
        "not say): mean (the highest log-probability per scored token) or sum (the highest "
        "summed log-probability, which favours short fillings). metrics.json gives both.",
    )


class PllParams(ClozeParams):
    pass


def gap_first(model, row: ProbeRow) -> bool:
    """Does ``model`` see nothing of ``row``'s question when it ranks or generates?"""
    return model.reads_left_only and not row.cloze.left.strip()


def as_question(cloze: Cloze) -> Cloze:
    """The statement, its gap a blank, asked so that the prompt ends where the answer starts:
    "[MASK] is the head coach of X." becomes "Fill in the blank: ___ is the head coach of
    X.\nAnswer: " + answer + "\n". The statement is kept word for word, so no grammar is
    guessed (who or what, an abbreviation's stop), and the answer line ends at the newline."""
    statement = " ".join(cloze.filled(BLANK).split())
    return Cloze(QUESTION.format(statement=statement), "\n")


def asked(model, rows: Sequence[ProbeRow], params: AskedParams) -> list[Cloze | None]:
    """Each row's cloze as the model is asked it: as it is, as a question (a gap-first row for
    a causal model), or None (such a row, with ``gap_first: skip``)."""
    if params.gap_first == "skip":
        return [None if gap_first(model, r) else r.cloze for r in rows]
    return [as_question(r.cloze) if gap_first(model, r) else r.cloze for r in rows]


def _form(row: ProbeRow, cloze: Cloze) -> str:
    return "cloze" if cloze is row.cloze else "question"


def in_gap(cloze: Cloze, label: str) -> Cloze:
    """``cloze`` as ``label`` fills it: a label with its own stop takes the full stop after the
    gap ("... Manchester United F.C." rather than "F.C.."), as the templates write statements."""
    return Cloze(cloze.left, followed_by(label, cloze.right))


# what a view does with a causal model's gap-first rows, as its warning says
ASKS_AS_QUESTION = (
    "asks them as questions ('Fill in the blank: ___ ...' then 'Answer:'; asked_as_question in "
    "metrics.json), or, with `gap_first: skip`, leaves them out"
)
SCORES_WITH_RIGHT = (
    "scores the label together with the right context after it, log p(label + right | start), "
    "so the question is read wherever the gap stands"
)


def gap_first_warnings(view: str, what: str = ASKS_AS_QUESTION) -> Callable:
    """What a user should know when ``view`` runs a causal model on gap-first rows: ``what``
    the view does with them."""

    def warnings(model, rows: Sequence[ProbeRow], params=None) -> list[str]:
        count = sum(gap_first(model, row) for row in rows)
        if not count:
            return []
        return [
            f"{count:,} of {len(rows):,} rows put the gap first ({model.name} is causal and sees "
            f"no left context there); the {view} view {what}"
        ]

    return warnings


def too_long(max_tokens: int) -> str:
    return f"every gold label is longer than M = {max_tokens} tokens"


def _label_tokens(
    model, rows: Sequence[ProbeRow], clozes: Sequence[Cloze | None]
) -> list[list[list[int]] | None]:
    """Each row's labels as the token ids the model scores them as in its asked cloze (None
    for a row not asked)."""
    requests = [
        ScoreRequest(in_gap(cloze, label), label)
        for row, cloze in zip(rows, clozes, strict=True)
        if cloze is not None
        for label in row.labels
    ]
    ids = iter(model.label_token_ids(requests))
    return [
        [next(ids) for _ in row.labels] if cloze is not None else None
        for row, cloze in zip(rows, clozes, strict=True)
    ]


def _answer_or_skip(
    rows: Sequence[ProbeRow],
    reasons: Sequence[str | None],
    answer: Callable[[list[int]], list[dict]],
) -> list[dict]:
    """``answer(indices)`` for the rows without a reason to skip them, in row order with the
    skipped rows (``{**key, "skipped": reason}``); ``answer`` may skip rows too (a row that
    does not fit the model)."""
    answered = iter(answer([i for i, why in enumerate(reasons) if why is None]))
    return [
        next(answered) if why is None else {**row.key(), SKIPPED: why}
        for row, why in zip(rows, reasons, strict=True)
    ]


def single_token(model, rows: Sequence[ProbeRow], params: SingleTokenParams, progress: Progress):
    """Rows with at least one single-token label: top-k at the gap and the best gold rank."""
    clozes = asked(model, rows, params)
    singles = [
        tuple(sorted({t[0] for t in ids if len(t) == 1})) if ids is not None else ()
        for ids in _label_tokens(model, rows, clozes)
    ]
    reasons = [
        GAP_FIRST if cloze is None else None if single else NO_SINGLE_TOKEN
        for cloze, single in zip(clozes, singles, strict=True)
    ]

    def answer(kept: list[int]) -> list[dict]:
        requests = [RankRequest(clozes[i], singles[i]) for i in kept]
        rankings = model.rank(requests, top_k=params.top_k, progress=progress)
        return [
            {**rows[i].key(), SKIPPED: model.unfit_reason}
            if ranking is None
            else {
                **rows[i].key(),
                "form": _form(rows[i], clozes[i]),
                "predictions": [model.token_text(t) for t in ranking.token_ids],
                "gold_rank": min(ranking.candidate_ranks, default=None),
            }
            for i, ranking in zip(kept, rankings, strict=True)
        ]

    return _answer_or_skip(rows, reasons, answer)


def summarize_single_token(predictions: Sequence[dict], resamples: int = RESAMPLES) -> dict:
    """P@k (Wilson intervals) and MRR (bootstrap over rows; ``resamples`` 0: no interval) of
    the best gold label's rank."""
    ranks = [p["gold_rank"] for p in predictions]
    estimates = {f"P@{k}": proportion([r is not None and r <= k for r in ranks]) for k in P_AT}
    reciprocal = [1.0 / r if r else 0.0 for r in ranks]
    estimates["MRR"] = mean_estimate(reciprocal, resamples=resamples)
    return summary(len(ranks), estimates)


def select(candidates: Sequence[dict], rule: str) -> dict:
    """The filling ``rule`` picks: mean (best log-probability per scored token; the first of
    a tie) or sum (best summed log-probability)."""
    key = "mean_logprob" if rule == "mean" else "logprob"
    return max(candidates, key=lambda c: c[key])


def filling_scores(text: str, gold: Sequence[str]) -> dict[str, float]:
    return {
        "exact_match": exact_match(text, gold),
        "f1": token_f1(text, gold),
        "rouge_l": rouge_l(text, gold),
    }


def _candidate(c: Candidate) -> dict:
    return {"text": c.text, "logprob": c.logprob, "mean_logprob": c.mean_logprob}


def multi_token(model, rows: Sequence[ProbeRow], params: MultiTokenParams, progress: Progress):
    """Greedy fillings of 1..M tokens; the one ``params.selection`` picks is the prediction.

    As in the paper, gold labels longer than M tokens are left out (no filling could be them),
    and a row none of whose labels is left is skipped; ``gold_labels`` keeps the labels scored
    against, so the other selection's figures come from the row alone. The per-token mean
    keeps a one-token filling from winning by having fewer terms in its sum.
    """
    limit = params.max_tokens
    clozes = asked(model, rows, params)
    gold = [
        [label for label, t in zip(row.labels, ids, strict=True) if len(t) <= limit]
        if ids is not None
        else []
        for row, ids in zip(rows, _label_tokens(model, rows, clozes), strict=True)
    ]
    reasons = [
        GAP_FIRST if cloze is None else None if labels else too_long(limit)
        for cloze, labels in zip(clozes, gold, strict=True)
    ]

    def answer(kept: list[int]) -> list[dict]:
        requests = [GenerateRequest(clozes[i], limit) for i in kept]
        out = []
        for i, candidates in zip(kept, model.generate(requests, progress=progress), strict=True):
            if candidates is None:
                out.append({**rows[i].key(), SKIPPED: model.unfit_reason})
                continue
            filled = [_candidate(c) for c in candidates]
            best = select(filled, params.selection)["text"]
            out.append(
                {
                    **rows[i].key(),
                    "form": _form(rows[i], clozes[i]),
                    "prediction": best,
                    "candidates": filled,
                    "gold_labels": gold[i],
                    **filling_scores(best, gold[i]),
                }
            )
        return out

    return _answer_or_skip(rows, reasons, answer)


def summarize_multi_token(predictions: Sequence[dict], resamples: int = RESAMPLES) -> dict:
    """Exact match (Wilson interval), token F1 and ROUGE-L (bootstrap over rows)."""
    estimates = {"exact_match": proportion([p["exact_match"] == 1.0 for p in predictions])}
    for metric in ("f1", "rouge_l"):
        values = [p[metric] for p in predictions]
        estimates[metric] = mean_estimate(values, resamples=resamples)
    return summary(len(predictions), estimates)


def selections(predictions: Sequence[dict]) -> dict[str, dict]:
    """The multi-token figures under each selection rule, from the rows' candidates and the
    gold labels they were scored against."""
    return {
        rule: summarize_multi_token(
            [
                filling_scores(select(p["candidates"], rule)["text"], p["gold_labels"])
                for p in predictions
            ]
        )
        for rule in SELECTIONS
    }


def pll(model, rows: Sequence[ProbeRow], params: PllParams, progress: Progress):
    """Every gold label's score in its sentence, all rows' requests answered in one pool.

    A causal model scores the label and the right context after it (log p(label + right |
    left)), so the question is read wherever the gap stands; the other families read the
    whole sentence anyway and score the label's tokens. A row with a label that does not fit
    the model is skipped, so that every row compares all its labels.
    """
    labels = [list(dict.fromkeys(r.labels)) for r in rows]
    requests = [
        ScoreRequest(in_gap(r.cloze, label), label, right_context=True)
        for r, ls in zip(rows, labels, strict=True)
        for label in ls
    ]
    scores = iter(model.score(requests, progress=progress))
    out = []
    for row, ls in zip(rows, labels, strict=True):
        got = [next(scores) for _ in ls]
        if any(s is None for s in got):
            out.append({**row.key(), SKIPPED: model.unfit_reason})
            continue
        out.append(
            {
                **row.key(),
                "label_scores": {label: s.logprob for label, s in zip(ls, got, strict=True)},
                "label_tokens": {label: s.n_tokens for label, s in zip(ls, got, strict=True)},
            }
        )
    return out


def summarize_pll(predictions: Sequence[dict], resamples: int = RESAMPLES) -> dict:
    """Mean summed log-probability per label, and the per-token perplexity over all labels;
    their intervals resample rows (a row's labels together)."""
    logprobs = [v for p in predictions for v in p["label_scores"].values()]
    rows = [i for i, p in enumerate(predictions) for _ in p["label_scores"]]
    row_logprob = np.array([sum(p["label_scores"].values()) for p in predictions], dtype=float)
    row_tokens = np.array([sum(p["label_tokens"].values()) for p in predictions], dtype=float)
    tokens = row_tokens.sum()
    perplexity = estimate(
        math.exp(-row_logprob.sum() / tokens) if tokens else None,
        lambda c: np.exp(-(c @ row_logprob) / (c @ row_tokens)),
        len(predictions),
        len(predictions),
        resamples=resamples,
    )
    estimates = {
        "mean_label_logprob": mean_estimate(logprobs, rows, resamples=resamples),
        "token_perplexity": perplexity,
    }
    return summary(len(predictions), estimates, labels=len(logprobs))


def _columns(view: str) -> Callable[[], list[tuple]]:
    def columns() -> list[tuple]:
        import pyarrow as pa

        keys = [(k, pa.list_(pa.string()) if k == "answer_labels" else pa.string()) for k in KEYS]
        own = {
            "single-token": [
                ("form", pa.string()),
                ("predictions", pa.list_(pa.string())),
                ("gold_rank", pa.int64()),
            ],
            "multi-token": [
                ("form", pa.string()),
                ("prediction", pa.string()),
                (
                    "candidates",
                    pa.list_(
                        pa.struct(
                            [
                                ("text", pa.string()),
                                ("logprob", pa.float64()),
                                ("mean_logprob", pa.float64()),
                            ]
                        )
                    ),
                ),
                ("gold_labels", pa.list_(pa.string())),
                ("exact_match", pa.float64()),
                ("f1", pa.float64()),
                ("rouge_l", pa.float64()),
            ],
            "pll": [
                ("label_scores", pa.map_(pa.string(), pa.float64())),
                ("label_tokens", pa.map_(pa.string(), pa.int64())),
            ],
        }[view]
        return keys + own

    return columns


def _metrics(view: str) -> Callable[[Sequence[dict], ClozeParams], dict]:
    """One model's figures: the view's headline (the first of its matrix metrics) over every
    row but the deleted ones, and its metrics per period and split."""

    def metrics(predictions: Sequence[dict], params: ClozeParams) -> dict:
        from chronoprobe.probes.grouping import metrics_by_group, outside_all
        from chronoprobe.probes.series_matrix import metric_estimate

        own = VIEW_OBJECTS[view]
        drift = own.drift
        rows = drift.prepare(predictions) if drift.prepare else list(predictions)
        headline = drift.metrics[0]
        kept = [p for p in rows if p.get("split") not in outside_all(params.include_deleted)]
        grouped = metrics_by_group(own, rows, include_deleted=params.include_deleted)
        out = {**metric_estimate(own, headline, kept).fields(headline), **grouped}
        asks = "form" in dict(own.columns())  # the views that ask gap-first rows as questions
        out["coverage"] = answered_part(
            [headline],
            rows,
            _left_out(splits_left_out(outside_all(params.include_deleted)), headline),
            (lambda p: p.get("form")) if asks else None,
        )
        if asks:
            summarize = own.summarize
            forms = {f: [p for p in kept if p.get("form") == f] for f in ("cloze", "question")}
            out["asked_as_question"] = sum(p.get("form") == "question" for p in rows)
            out["by_form"] = {f: summarize(group) for f, group in forms.items() if group}
        if view == "multi-token":
            out["selection"] = params.selection
            out["selections"] = selections(kept)
        return out

    return metrics


def _left_out(deleted: Callable[[dict], str | None], headline: str):
    """Why a row is left out of the headline: a deleted row, or (temporal accuracy) a row
    with no temporal rank."""

    def why(p: dict) -> str | None:
        if deleted(p):
            return deleted(p)
        if headline.startswith("temporal_") and p.get("temporal_rank") is None:
            return NO_TEMPORAL_RANK
        return None

    return why


def _aggregate(view: str) -> Callable[[dict[str, dict], ClozeParams], dict]:
    def aggregate(per_model: dict[str, dict], params: ClozeParams) -> dict:
        """The headline over the models: of one model, its own with its interval, n and
        coverage; over several, their mean (see :func:`one_model_figures`)."""
        from chronoprobe.probes.grouping import outside_all

        headline = VIEW_OBJECTS[view].drift.metrics[0]
        return {
            "metric": headline,
            **one_model_figures(per_model, [headline]),
            "overall_excludes": outside_all(params.include_deleted),
        }

    return aggregate


def _figures(view: str) -> Callable[[dict], dict]:
    def figures(metrics: dict) -> dict:
        """The headline with its interval, then every overall figure with its own."""
        headline = VIEW_OBJECTS[view].drift.metrics[0]
        parts = [headline, *(f"{headline}{part}" for part in FIGURE_PARTS)]
        own = {k: metrics[k] for k in parts if k in metrics}
        overall = {k: v for k, v in metrics["overall"].items() if k != "n"}
        return {**own, **overall}

    return figures


def _keeps_deleted(params: ClozeParams) -> bool:
    return params.include_deleted


def _view(
    name: str,
    help: str,
    params,
    predict,
    summarize,
    matrix: tuple[str, ...],
    gap_first: str = ASKS_AS_QUESTION,
    prepare=None,
    cell_metrics=None,
    **extra,
) -> View:
    return View(
        name=name,
        help=help,
        params=params,
        predict=predict,
        summarize=summarize,
        keys=KEYS,
        columns=_columns(name),
        figures=_figures(name),
        metrics=_metrics(name),
        aggregate=_aggregate(name),
        warnings=gap_first_warnings(name, gap_first),
        drift=DriftMatrix(matrix, prepare, cell_metrics or {}, _keeps_deleted),
        **extra,
    )


SINGLE_TOKEN = _view(
    "single-token",
    "Rank the vocabulary at the gap; P@1/10/50/100 and MRR of the best single-token gold "
    "label.\n\nExample: chronoprobe probe single-token drift/ -m roberta-base -o probe-roberta/",
    SingleTokenParams,
    single_token,
    summarize_single_token,
    ("P@1", "MRR", "P@10", "P@50", "P@100"),
)
MULTI_TOKEN = _view(
    "multi-token",
    "Fill 1..M tokens greedily and keep the filling most likely per token (or in sum, "
    "--selection sum); exact match, token F1, ROUGE-L.\n\nExample: chronoprobe probe "
    "multi-token drift/ -m package:smollm2 --sample 500 -o probe-smol/",
    MultiTokenParams,
    multi_token,
    summarize_multi_token,
    ("f1", "exact_match", "rouge_l"),
    selection="of the greedy fillings of 1..M tokens, the one with the highest log-probability "
    "per scored token (selection mean, the default) or summed (selection sum; decoders score "
    "the filling and its closing); each model's 'selections' gives both",
)


def _nll_median(rows: Sequence[dict], resamples: int) -> Estimate:
    """The median NLL over every gold label, its interval resampling rows (a row's labels
    together)."""
    values = [-v for row in rows for v in row["label_scores"].values()]
    owners = [i for i, row in enumerate(rows) for _ in row["label_scores"]]
    return median_estimate(values, owners, resamples=resamples)


def _temporal(rows: Sequence[dict], resamples: int, accuracy: bool) -> Estimate:
    if "temporal_rank" not in rows[0]:
        raise UserError("temporal accuracy and MRR need rows from with_temporal_ranks()")
    ranks = [r["temporal_rank"] for r in rows if r.get("temporal_rank") is not None]
    if accuracy:
        return proportion([r == 1 for r in ranks])
    return mean_estimate([1.0 / r for r in ranks], resamples=resamples)


# the PLL matrix's figures over a cell's rows
PLL_CELL_METRICS: dict[str, Callable[[Sequence[dict], int], Estimate]] = {
    "median_nll": _nll_median,
    "temporal_acc": lambda rows, resamples: _temporal(rows, resamples, accuracy=True),
    "temporal_mrr": lambda rows, resamples: _temporal(rows, resamples, accuracy=False),
}


PLL = _view(
    "pll",
    "Score every gold label in its sentence (masked: pseudo-log-likelihood; causal: the label "
    "and the right context after it); temporal accuracy, median NLL.\n\nExample: chronoprobe "
    "probe pll drift/ --series series/ -o probe/",
    PllParams,
    pll,
    summarize_pll,
    ("temporal_acc", "temporal_mrr", "median_nll", "mean_label_logprob"),
    gap_first=SCORES_WITH_RIGHT,
    prepare=with_temporal_ranks,
    cell_metrics=PLL_CELL_METRICS,
)
VIEW_OBJECTS = {v.name: v for v in (SINGLE_TOKEN, MULTI_TOKEN, PLL)}
