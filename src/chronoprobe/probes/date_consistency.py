"""The date-context view: does a model prefer a fact under its right date to wrong dates?

After TimeStress (Ammar Khodja et al., 2025, arXiv:2502.01220). Each dated statement of
``build dates`` is scored as the log-probability of its answer given the dated context, with
the rest of the sentence after it (one ``score`` request, so every family answers: causal
models read the context before the answer, masked and seq2seq models the whole sentence). Per
fact and precision, each (right, wrong) pair is ordered correctly when the right date's score
is higher. Metrics: the share of pairs ordered correctly (``win_rate``) overall, by precision,
by distance, by side (before the start or after the end) and by precision and distance; and
the share of (fact, precision) groups whose every pair is ordered correctly (``robust``); each
with its 95% interval (the win rate's resamples whole groups: their pairs share a right date).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import msgspec

from chronoprobe.core.tables import FIGURE_PARTS
from chronoprobe.jsonl import numbered_lines
from chronoprobe.metrics.uncertainty import proportion
from chronoprobe.models.requests import Cloze, ScoreRequest
from chronoprobe.probes.coverage import one_model_figures
from chronoprobe.probes.view import ProbeParams, Progress, RowsFormat, View
from chronoprobe.set_files import STATEMENTS

KEYS = ("id", "fact", "relation", "precision", "kind", "distance", "date")
PRECISION_ORDER = ("year", "month", "day")


class DateContextParams(ProbeParams):
    pass


class DatedStatement(msgspec.Struct, frozen=True):
    id: str
    fact: str
    relation: str
    precision: str
    kind: str
    distance: int
    date: str
    left: str
    span: str
    right: str

    def key(self) -> dict:
        return {k: getattr(self, k) for k in KEYS}


def read_statements(path: str | Path) -> list[DatedStatement]:
    """Rows of ``statements.jsonl``; a bad line raises ValueError naming file and line."""
    return [row for _, row in numbered_lines(path, DatedStatement, "not a dated statement")]


def predict_date_context(
    model, rows: Sequence[DatedStatement], params: DateContextParams, progress: Progress
) -> list[dict]:
    requests = [ScoreRequest(Cloze(r.left, r.right), r.span, right_context=True) for r in rows]
    scores = model.score(requests, progress=progress)
    return [
        {**r.key(), "logprob": s.logprob, "n_tokens": s.n_tokens}
        for r, s in zip(rows, scores, strict=True)
    ]


def pairs(predictions: Sequence[dict]) -> list[dict]:
    """Every (right, wrong) pair of one fact and precision: the wrong one's side, distance and
    precision, and whether the right date scored higher."""
    groups: dict[tuple[str, str], dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for p in predictions:
        groups[(p["fact"], p["precision"])]["right" if p["kind"] == "right" else "wrong"].append(p)
    out = []
    for (fact, precision), group in groups.items():
        for right in group["right"]:
            for wrong in group["wrong"]:
                out.append(
                    {
                        "fact": fact,
                        "precision": precision,
                        "side": wrong["kind"],
                        "distance": wrong["distance"],
                        "won": right["logprob"] > wrong["logprob"],
                    }
                )
    return out


def _win(pair_rows: Sequence[dict]) -> dict:
    """Pairs and win rate; the interval resamples (fact, precision) groups, whose pairs share
    the right date's score and are not independent of each other."""
    groups = [(p["fact"], p["precision"]) for p in pair_rows]
    won = proportion([p["won"] for p in pair_rows], clusters=groups, unit="fact and precision")
    return {"pairs": len(pair_rows), **won.fields("win_rate")}


def summarize_date_context(predictions: Sequence[dict]) -> dict:
    """Win rate over the pairs of a group of statements, and the share of robust groups."""
    found = pairs(predictions)
    by_group: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for p in found:
        by_group[(p["fact"], p["precision"])].append(p["won"])
    return {
        "n": len(predictions),
        **_win(found),
        **proportion([all(w) for w in by_group.values()]).fields("robust", len(predictions)),
    }


def date_context_metrics(predictions: Sequence[dict], params: DateContextParams) -> dict:
    found = pairs(predictions)

    def by(*fields: str) -> dict:
        groups: dict[str, list[dict]] = defaultdict(list)
        for p in found:
            groups["/".join(str(p[f]) for f in fields)].append(p)
        return {k: _win(g) for k, g in sorted(groups.items(), key=lambda kv: _order(kv[0]))}

    overall = summarize_date_context(predictions)
    # the headline: the win rate and the robust share, each with its interval and n
    keys = [f"{name}{part}" for name in ("win_rate", "robust") for part in ("", *FIGURE_PARTS)]
    return {
        **{k: overall[k] for k in keys if k in overall},
        "overall": overall,
        "by_precision": {
            p: summarize_date_context([x for x in predictions if x["precision"] == p])
            for p in PRECISION_ORDER
            if any(x["precision"] == p for x in predictions)
        },
        "by_distance": by("distance"),
        "by_side": by("side"),
        "by_precision_distance": by("precision", "distance"),
        "by_relation": {
            r: summarize_date_context([x for x in predictions if x["relation"] == r])
            for r in sorted({x["relation"] for x in predictions})
        },
    }


def _order(key: str) -> tuple:
    parts = key.split("/")
    return tuple(
        (PRECISION_ORDER.index(p), 0)
        if p in PRECISION_ORDER
        else (9, int(p))
        if p.isdigit()
        else (8, p)
        for p in parts
    )


def _aggregate(per_model: dict[str, dict], params: DateContextParams) -> dict:
    """The win rate over the models: of one model, its own with its interval, n and
    coverage; over several, their mean (see :func:`one_model_figures`)."""
    return {"metric": "win_rate", **one_model_figures(per_model, ["win_rate"])}


def _figures(metrics: dict) -> dict:
    """What the command line shows of one model: the win rate, the robust share and the win
    rate per precision, each with its interval (or why it has none)."""
    out = {k: metrics[k] for k in metrics if k.startswith(("win_rate", "robust"))}
    for precision, group in metrics["by_precision"].items():
        for key, value in group.items():
            if key.startswith("win_rate") and not key.endswith("_n"):
                out[key.replace("win_rate", f"win {precision}", 1)] = value
    return out


def _columns() -> list[tuple]:
    import pyarrow as pa

    return [
        *((k, pa.int64() if k == "distance" else pa.string()) for k in KEYS),
        ("logprob", pa.float64()),
        ("n_tokens", pa.int64()),
    ]


DATE_CONTEXT = View(
    name="date-context",
    help="Score each fact's statement under its right date and under wrong dates (build "
    "dates); the share of (right, wrong) pairs ordered correctly by precision and distance."
    "\n\nExample: chronoprobe probe date-context dates/ -m package:smollm2 -o dates-smol/",
    params=DateContextParams,
    predict=predict_date_context,
    summarize=summarize_date_context,
    keys=KEYS,
    columns=_columns,
    metrics=date_context_metrics,
    aggregate=_aggregate,
    figures=_figures,
    rows=RowsFormat(STATEMENTS, ("fact", "precision", "kind", "date", "span"), read_statements),
)
