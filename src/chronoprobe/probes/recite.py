"""The ``recite`` view: how many LAMA-TK statements a model recalls, in the paper's two views.

The model ranks every entity and year at each statement's mask (a ``train memorize`` model, a
symbolic adapter: :mod:`chronoprobe.train.lamatk.symbolic`). Acc@K is query-oriented: a query (one
masked text) counts 1 if any of its answers is among the top K; rows that share a masked text
are one query. Hit@K is answer-oriented: every row counts 1 if its own target is among the top
K, so a text with three answers needs all three near the top to score well (Zhao et al., 2022).
Metrics are given overall and by single/multi answer, relation, slot and (for the implicit
queries) template. ``rows: queries.jsonl`` recites a boundary or implicit query set.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from pydantic import Field

from chronoprobe.errors import UserError
from chronoprobe.metrics.ranking import acc_at_k, hit_at_k
from chronoprobe.metrics.uncertainty import proportion, summary
from chronoprobe.models.capabilities import RanksSymbols
from chronoprobe.models.requests import Cloze, RankRequest
from chronoprobe.probes.coverage import one_model_figures
from chronoprobe.probes.view import SKIPPED, ProbeParams, Progress, RowsFormat, View, figure_name
from chronoprobe.set_files import STATEMENTS

ACC_KS = (1, 5)
HIT_KS = (5, 10)
METRICS = tuple(f"acc@{k}" for k in ACC_KS) + tuple(f"hit@{k}" for k in HIT_KS)
GROUPS = ("relation", "slot", "template")  # row fields metrics are broken down by (when present)
# the statement fields every prediction repeats
KEYS = (
    "id",
    "text",
    "slot",
    "relation",
    "subject",
    "object",
    "start",
    "end",
    "target",
    "answers",
    "multi_answer",
    "template",
)
NOT_SYMBOLIC = (
    "{name} has no entity and year symbols to rank: the recite view takes a `train memorize` "
    "model (its model/ directory or run directory); probe a word-level model with the "
    "single-token, multi-token or pll view"
)


class ReciteParams(ProbeParams):
    batch_size: int = Field(256, ge=1, description="Statements per forward pass.")
    top_k: int = Field(10, ge=max(HIT_KS), description="Symbols listed per statement.")
    rows: str | None = Field(
        None,
        description="Which file of the data directory holds the rows (default statements.jsonl; "
        "queries.jsonl for a boundary or implicit query set).",
    )


def _column(metric: str) -> str:
    return metric.replace("@", "_at_")


def predict_recite(model, rows: Sequence[dict], params: ReciteParams, progress: Progress):
    """One prediction per statement: the top symbols, the target's rank and each metric."""
    if not isinstance(model, RanksSymbols):
        raise UserError(NOT_SYMBOLIC.format(name=model.name))
    targets = [model.symbol(r["slot"], r["target"]) for r in rows]
    requests = [
        RankRequest(
            Cloze.from_query(r["text"]),
            candidates=() if target is None else (target,),
            mentions=tuple(r[k] for k in ("subject", "object") if r["slot"] != k),
        )
        for r, target in zip(rows, targets, strict=True)
    ]
    rankings = model.rank(requests, top_k=params.top_k, progress=progress)
    out = []
    for row, ranking in zip(rows, rankings, strict=True):
        prediction = {key: row.get(key) for key in KEYS}
        if ranking is None:
            out.append({**prediction, SKIPPED: model.unfit_reason})
            continue
        top = [model.token_text(i) for i in ranking.token_ids]
        prediction["predictions"] = top
        prediction["probabilities"] = [math.exp(lp) for lp in ranking.logprobs]
        prediction["target_rank"] = ranking.candidate_ranks[0] if ranking.candidate_ranks else None
        for k in ACC_KS:
            prediction[f"acc_at_{k}"] = bool(acc_at_k(top, row["answers"], k))
        for k in HIT_KS:
            prediction[f"hit_at_{k}"] = bool(hit_at_k(top, row["target"], k))
        out.append(prediction)
    return out


def summarize_recite(predictions: Sequence[dict]) -> dict[str, Any]:
    """Statements, queries (distinct masked texts) and each metric: Acc@K over the queries
    (rows that share a text share their predictions), Hit@K over the statements; each with
    its Wilson 95% interval (``n`` counts statements, ``acc@K_n`` the queries)."""
    queries = list({p["text"]: p for p in predictions}.values())
    estimates = {
        metric: proportion(
            [
                bool(p[_column(metric)])
                for p in (queries if metric.startswith("acc") else predictions)
            ]
        )
        for metric in METRICS
    }
    return summary(len(predictions), estimates, statements=len(predictions), queries=len(queries))


def recite_metrics(predictions: Sequence[dict], params: ReciteParams | None = None) -> dict:
    """Overall figures, then by answers (single/multi) and by each group field present."""
    metrics = summarize_recite(predictions)
    by_answers = {
        name: [p for p in predictions if bool(p["multi_answer"]) == multi]
        for name, multi in (("single", False), ("multi", True))
    }
    metrics["by_answers"] = {k: summarize_recite(g) for k, g in by_answers.items() if g}
    for key in GROUPS:
        groups: dict[str, list[dict]] = defaultdict(list)
        for p in predictions:
            if p.get(key) is not None:
                groups[str(p[key])].append(p)
        if groups:
            metrics[f"by_{key}"] = {k: summarize_recite(groups[k]) for k in sorted(groups)}
    return metrics


def _aggregate(per_model: dict[str, dict], params: ReciteParams) -> dict:
    """Each metric over the models: of one model, its own with its interval and n; over
    several, their mean (see :func:`~chronoprobe.probes.coverage.one_model_figures`)."""
    return one_model_figures(per_model, METRICS)


def _figures(metrics: dict) -> dict:
    """What the command line shows of one model: the statements, and each metric with its
    interval."""
    shown = {k: v for k, v in metrics.items() if figure_name(k, metrics) in METRICS}
    return {"statements": metrics["statements"], **shown}


def _columns() -> list[tuple]:
    import pyarrow as pa

    text = {"answers": pa.list_(pa.string()), "multi_answer": pa.bool_()}
    return [
        *((key, text.get(key, pa.string())) for key in KEYS),
        ("predictions", pa.list_(pa.string())),
        ("probabilities", pa.list_(pa.float64())),
        ("target_rank", pa.int64()),
        *((_column(m), pa.bool_()) for m in METRICS),
    ]


def _read(path):
    from chronoprobe.train.lamatk.statements import load_statements

    return load_statements(path)


RECITE = View(
    name="recite",
    help="LAMA-TK reciting: rank every entity and year at each statement's mask (a `train "
    "memorize` model); Acc@1/5 per query and Hit@5/10 per statement.\n\nExample: chronoprobe "
    "probe recite lamatk/statements.jsonl --trained mem/ -o recited/",
    params=ReciteParams,
    predict=predict_recite,
    summarize=summarize_recite,
    keys=KEYS,
    columns=_columns,
    metrics=recite_metrics,
    aggregate=_aggregate,
    figures=_figures,
    rows=RowsFormat(STATEMENTS, ("text", "slot", "target"), _read),
)
