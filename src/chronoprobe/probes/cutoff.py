"""The cutoff view: up to when does a model know the world? Its effective knowledge cutoff per
relation, from the facts of a drift or TempLAMA set that changed.

Each row of the set whose answers differ from its subject's answers in the period before is a
change: its new answers (not held in the period before) against the earlier ones (held then,
not now). The view asks which the model prefers:

- ``scores`` (a model that gives log-probabilities: masked, causal, seq2seq, loaded here):
  every new and earlier answer scored in the row's sentence, as the pll view scores a label
  (a causal model reads the right context after the gap); the model prefers the new answers
  when the best of them scores above the best earlier one (1), the earlier ones when below (0),
  neither on a tie (0.5);
- ``answers`` (a served model, or any model asked so): the row asked as the generate view asks
  it, and the answer judged by the names rule against the new answers and the earlier ones:
  naming a new answer is 1, naming only an earlier one 0, naming neither no preference (the
  change is counted, not used).

The estimate, per relation and over every change, is the changepoint of the preference curve
(:mod:`chronoprobe.metrics.cutoff`, where the estimator is written down exactly): the last
period whose new answers the model prefers, before its preference falls.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from chronoprobe.errors import UserError
from chronoprobe.metrics.cutoff import ALPHA, PERMUTATIONS, effective_cutoff
from chronoprobe.metrics.uncertainty import RESAMPLES, mean, summary
from chronoprobe.models.requests import ScoreRequest
from chronoprobe.probes.generate import (
    DELETED,
    AskedRow,
    GenerateParams,
    predict_generate,
    read_asked_rows,
)
from chronoprobe.probes.judging import DEFAULT_RULE, Gold, judge
from chronoprobe.probes.known_answers import History
from chronoprobe.probes.series_matrix import period_order
from chronoprobe.probes.view import SKIPPED, Progress, RowsFormat, View

KEYS = ("id", "period", "split", "relation", "subject")
OTHERS = 3  # other subjects' sentences an answer's popularity is read from
SCORES, ANSWERS = "scores", "answers"
ESTIMATOR = (
    "the changepoint of the preference curve: the least-squares step down over periods, "
    "significant by a permutation test of the changes' periods (else one level: above 0.5 "
    "'after', below 'before', across 'none'); its 95% interval bootstraps subjects"
)


class CutoffParams(GenerateParams):
    evidence: Literal["auto", "scores", "answers"] = Field(
        "auto",
        description="How the model's preference is read: scores (the log-probabilities of the "
        "new and the earlier answers in the row's sentence), answers (its generated answer, "
        "judged against both), or auto: scores for a model loaded here, answers for a served "
        "one (openai:), whose server may give no log-probabilities.",
    )
    min_changes: int = Field(
        10,
        ge=1,
        description="The fewest changed facts a relation's estimate rests on; a relation with "
        "fewer is listed with its count and no estimate.",
    )
    calibrate: bool = Field(
        True,
        description="Scores: compare each answer's score in the subject's sentence less its "
        "mean score in three other subjects' sentences of the relation (how likely the model "
        "finds the answer whoever the subject is), so that a popular answer is not taken for "
        "knowledge; off: the raw scores.",
    )
    permutations: int = Field(
        PERMUTATIONS,
        ge=1,
        description="Shuffles of the changes' periods in the test that a preference falls.",
    )
    alpha: float = Field(
        ALPHA, gt=0, lt=1, description="The test's level: a fall is a cutoff below it."
    )


@dataclass(frozen=True)
class Change:
    """A row whose answers changed at its period: the answers new then (label, aliases) and
    the earlier ones the subject no longer has."""

    row: AskedRow
    new: tuple[tuple[str, ...], ...]
    old: tuple[tuple[str, ...], ...]
    # sentences of the same relation about other subjects: where an answer's score says how
    # likely the model finds it whoever the subject is
    others: tuple = ()

    @property
    def cloze(self):
        return self.row.cloze

    @property
    def id(self) -> str:
        return self.row.id

    def key(self) -> dict:
        row = self.row
        return {k: getattr(row, k) for k in KEYS}

    def prediction(
        self,
        evidence: str,
        preference: float | None,
        best: tuple[float | None, float | None] = (None, None),
        answer: str | None = None,
    ) -> dict:
        """The change's prediction row: which side the model preferred (``preference``, None
        for neither), read from ``evidence``, with the best new and earlier scores or the
        answer it rests on."""
        return {
            **self.key(),
            "evidence": evidence,
            "new_answers": [n[0] for n in self.new],
            "earlier_answers": [n[0] for n in self.old],
            "best_new": best[0],
            "best_earlier": best[1],
            "answer": answer,
            "preference": preference,
        }


def read_changes(path: str | Path) -> list[Change]:
    """The changes of a drift or TempLAMA rows file: each row whose answers differ from its
    subject's answers in the period before (the latest earlier period the set gives it), with
    the answers new at its period and those it no longer has.

    Only the period before is compared, never every earlier one: a model with no dated
    knowledge then prefers either side of each change with the same chance in every period,
    while against all earlier answers the older changes, which have fewer of them to beat,
    would seem better known, a fall that is no cutoff."""
    rows = read_asked_rows(path)
    if not rows:
        return []
    history = rows[0].source.history  # every row's answers, by subject, relation and period
    order = period_order([r.period for r in rows if r.period])
    position = {p: i for i, p in enumerate(order)}
    others = _other_subjects(rows)
    out = []
    for row in rows:
        if row.split == DELETED or row.period is None or row.timeline is not None:
            continue
        periods = history.periods.get((row.subject, row.relation), {})
        before = [p for p in periods if periods[p] and position.get(p, -1) < position[row.period]]
        if not before:
            continue
        previous = set(periods[max(before, key=position.__getitem__)])
        now = set(row.keys)
        new, old = sorted(now - previous), sorted(previous - now)
        if new and old:
            refs = tuple(c for subject, c in others.get(row.relation, ()) if subject != row.subject)
            out.append(Change(row, _names(history, new), _names(history, old), refs[:OTHERS]))
    if not out:
        raise UserError(
            f"{path}: no changed fact (no row whose answers differ from its subject's answers "
            "in the period before): an effective cutoff needs a set over several periods in "
            "which facts change, e.g. chronoprobe build drift KG --first 2010 --last 2020"
        )
    return out


def _other_subjects(rows: Sequence[AskedRow]) -> dict[str, list[tuple[str, Any]]]:
    """Per relation, the sentence of each of its first subjects (in the file's order), at
    most one more than :data:`OTHERS`, so that every change has that many about others."""
    out: dict[str, list[tuple[str, Any]]] = {}
    for row in rows:
        mine = out.setdefault(row.relation, [])
        if len(mine) <= OTHERS and all(subject != row.subject for subject, _ in mine):
            mine.append((row.subject, row.cloze))
    return out


def _names(history: History, keys: Sequence[str]) -> tuple[tuple[str, ...], ...]:
    return tuple(name for name in history.named(keys) if name)


def _uses_scores(model: Any, params: CutoffParams) -> bool:
    from chronoprobe.models.capabilities import ReportsUsage

    if params.evidence == "auto":
        return not isinstance(model, ReportsUsage)
    return params.evidence == SCORES


def predict_cutoff(model, rows: Sequence[Change], params: CutoffParams, progress: Progress):
    if _uses_scores(model, params):
        return _by_scores(model, rows, params, progress)
    return _by_answers(model, rows, params, progress)


def _by_scores(model, changes: Sequence[Change], params, progress: Progress) -> list[dict]:
    """Each change's new and earlier answers scored in its sentence; with ``calibrate``, less
    each answer's mean score in other subjects' sentences of the relation, so that an answer
    the model finds likely whoever the subject is (a popular club) is not taken for one it
    knows of this subject."""
    from chronoprobe.probes.cloze_views import in_gap

    def contexts(change: Change) -> tuple:
        return (change.cloze, *change.others) if params.calibrate else (change.cloze,)

    unique = list(
        dict.fromkeys(
            (cloze, n[0]) for c in changes for n in (*c.new, *c.old) for cloze in contexts(c)
        )
    )
    requests = [
        ScoreRequest(in_gap(cloze, label), label, right_context=True) for cloze, label in unique
    ]
    scored = dict(zip(unique, model.score(requests, progress=progress), strict=True))

    def lift(change: Change, label: str) -> float | None:
        own = scored[change.cloze, label]
        others = [scored[c, label] for c in contexts(change)[1:]]
        if own is None or any(s is None for s in others):
            return None
        popular = sum(s.logprob for s in others) / len(others) if others else 0.0
        return own.logprob - popular

    out = []
    for change in changes:
        new = [lift(change, n[0]) for n in change.new]
        old = [lift(change, n[0]) for n in change.old]
        if any(v is None for v in (*new, *old)):
            out.append({**change.key(), SKIPPED: model.unfit_reason})
            continue
        best_new, best_old = max(new), max(old)
        preference = 1.0 if best_new > best_old else 0.0 if best_new < best_old else 0.5
        out.append(change.prediction(SCORES, preference, best=(best_new, best_old)))
    return out


def _by_answers(model, changes, params: CutoffParams, progress: Progress) -> list[dict]:
    asked = predict_generate(model, [c.row for c in changes], params, progress)
    out = []
    for change, got in zip(changes, asked, strict=True):
        if SKIPPED in got:
            out.append({**change.key(), SKIPPED: got[SKIPPED]})
            continue
        text = got["prediction"]
        names_new = _names_one_of(text, change.new, change.old, change.row)
        names_old = _names_one_of(text, change.old, change.new, change.row)
        preference = 1.0 if names_new else 0.0 if names_old else None
        out.append(change.prediction(ANSWERS, preference, answer=text))
    return out


def _names_one_of(text: str, these, others, row: AskedRow) -> bool:
    """Does ``text``, the answer to ``row``, name one of ``these`` (label, aliases), a longer
    name of ``others`` not counting, by the default rule?"""
    labels, aliases = [n[0] for n in these], [n[1:] for n in these]
    gold = Gold(labels, aliases, list(others), period=row.period, relation=row.relation)
    return judge(text, gold)[DEFAULT_RULE]


def summarize_cutoff(predictions: Sequence[dict], resamples: int = RESAMPLES) -> dict:
    """The mean preference of the changes that showed one (new answers 1, earlier 0), with its
    interval over subjects."""
    shown = [p for p in predictions if p.get("preference") is not None]
    estimate = mean(
        [p["preference"] for p in shown], [p["subject"] for p in shown], resamples=resamples
    )
    return summary(
        len(predictions), {"preference": estimate}, no_preference=len(predictions) - len(shown)
    )


def _estimate(predictions: Sequence[dict], order: list[str], params: CutoffParams) -> dict | None:
    shown = [p for p in predictions if p.get("preference") is not None]
    found = effective_cutoff(
        [p["period"] for p in shown],
        [p["preference"] for p in shown],
        [p["subject"] for p in shown],
        order,
        permutations=params.permutations,
        alpha=params.alpha,
    )
    return None if found is None else found.to_dict()


def cutoff_metrics(predictions: Sequence[dict], params: CutoffParams) -> dict:
    """The effective cutoff over every change and per relation, each with its interval, the
    changes it rests on and its preference curve; a relation with fewer than ``min_changes``
    changes that showed a preference is listed with its count only."""
    order = period_order([p["period"] for p in predictions])
    overall = _estimate(predictions, order, params)
    by_relation: dict[str, dict] = {}
    for relation in sorted({p["relation"] for p in predictions if p.get("relation")}):
        mine = [p for p in predictions if p.get("relation") == relation]
        shown = sum(p.get("preference") is not None for p in mine)
        if shown < params.min_changes:
            by_relation[relation] = {
                "kind": "too few changes",
                "changes": shown,
                "why": f"{shown} changed facts showed a preference, fewer than `min_changes: "
                f"{params.min_changes}`",
            }
            continue
        by_relation[relation] = _estimate(mine, order, params)
    evidence = sorted({p["evidence"] for p in predictions})
    return {
        **summarize_cutoff(predictions),
        "evidence": evidence[0] if len(evidence) == 1 else evidence,
        "estimator": ESTIMATOR,
        "periods": order,
        **{
            key: (overall or {}).get(field)
            for key, field in (
                ("cutoff", "cutoff"),
                ("cutoff_kind", "kind"),
                ("cutoff_interval", "cutoff_interval"),
                ("cutoff_year", "cutoff_year"),
                ("cutoff_year_ci95", "cutoff_year_ci95"),
            )
        },
        "overall": overall,
        "by_relation": by_relation,
    }


def _figures(metrics: dict) -> dict:
    def said(group: dict | None) -> str:
        if not group or group.get("cutoff") is None:
            return (group or {}).get("kind", "none")
        interval = group.get("cutoff_interval")
        at = f"{group['kind']} {group['cutoff']}" if group["kind"] != "step" else group["cutoff"]
        return f"{at} [{interval[0]}, {interval[1]}]" if interval else at

    figures = {
        "cutoff": said(metrics.get("overall")),
        "preference": metrics.get("preference"),
        "preference_ci95": metrics.get("preference_ci95"),
        "changes": metrics.get("n"),
    }
    for relation, group in metrics.get("by_relation", {}).items():
        figures[f"cutoff {relation}"] = said(group)
    return figures


def _columns() -> list[tuple]:
    import pyarrow as pa

    return [
        *((k, pa.string()) for k in KEYS),
        ("evidence", pa.string()),
        ("new_answers", pa.list_(pa.string())),
        ("earlier_answers", pa.list_(pa.string())),
        ("best_new", pa.float64()),
        ("best_earlier", pa.float64()),
        ("answer", pa.string()),
        ("preference", pa.float64()),
    ]


def _warnings(model, rows: Sequence[Change], params: CutoffParams) -> list[str]:
    if not rows:
        return ["the set has no changed fact (no answer that differs from an earlier period's)"]
    return []


CUTOFF = View(
    name="cutoff",
    help="Effective knowledge cutoff (Cheng et al., 2024, Dated Data) per relation: at every "
    "fact that changed, does the model prefer the new answers or the earlier ones (by scores, "
    "or by its generated answer for a served model); the last period before its preference "
    "falls, with a bootstrap interval over subjects, and the preference curve by period.\n\n"
    "Example: chronoprobe probe cutoff templama/ -m package:smollm2 -o cutoff-smol/",
    params=CutoffParams,
    predict=predict_cutoff,
    summarize=summarize_cutoff,
    keys=KEYS,
    columns=_columns,
    metrics=cutoff_metrics,
    figures=_figures,
    rows=RowsFormat(read=read_changes),
    selection="scores: the best new answer against the best earlier one; answers: the first "
    "greedy answer, judged by the names rule",
    warnings=_warnings,
)
