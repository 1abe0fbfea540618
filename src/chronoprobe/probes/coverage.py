"""What a figure covers: the rows given, the rows it counts, and why the rest were left out.

A probe step's ``metrics.json`` gives each model a ``coverage`` record beside its figures::

    "coverage": {"figures": ["accuracy"], "rows": 4654, "counted": 3588, "share": 0.771,
                 "left_out": {"the gap comes first: ...": 1066},
                 "forms": {"template": 3000, "question": 588}, "by_relation": {...}}

``rows`` are the rows the model was given (after ``sample``), ``counted`` the rows the named
``figures`` count, and ``left_out`` the rest, by reason: rows the view skipped (with the reason
it wrote) and rows it answered but leaves out of those figures (a drift view's deleted rows).
``forms`` counts the counted rows by the way they were asked, where a view asks rows in more
than one way; ``by_relation`` gives the same per relation, every relation of the rows given
included, so a relation the view skipped entirely is listed with its reason. The view knows
the rows it answered (:func:`answered_part`, in its metrics); the probe step knows the rows
skipped (:func:`completed`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from chronoprobe.core.tables import FIGURE_PARTS, Figure
from chronoprobe.probes.view import DELETED, SKIPPED, mean

EVERY_FIGURE = "every figure"  # what a view without a coverage of its own covers
# why a drift view leaves a deleted row out of its overall figures, in the words of a config
# (the command line says --include-deleted)
DELETED_LEFT_OUT = (
    "deleted split: answers that ended before the row's period (`include_deleted: true` "
    "counts them)"
)
SKIPPED_PREFIX = "skipped: "


def splits_left_out(splits: Sequence[str]) -> Callable[[dict], str | None]:
    """Why a view leaves a prediction out of its overall figures: its split is one of
    ``splits`` (a drift view's ``overall_excludes``: the deleted rows, unless included)."""

    def why(p: dict) -> str | None:
        split = p.get("split")
        if split not in splits:
            return None
        return DELETED_LEFT_OUT if split == DELETED else f"split {split}: left out of the figures"

    return why


def answered_part(
    figures: Sequence[str],
    predictions: Sequence[dict],
    left_out: Callable[[dict], str | None] | None = None,
    form: Callable[[dict], str | None] | None = None,
) -> dict[str, Any]:
    """The part of a model's coverage record that its view's metrics know: of the rows it
    answered (one or more predictions per row id), how many ``figures`` count and why the
    others are left out (``left_out`` of a row's first prediction; None: counted), by the
    way each counted row was asked (``form``), overall and per relation."""
    first: dict[Any, dict] = {}
    for p in predictions:
        first.setdefault(p["id"], p)
    rows = [(p, left_out(p) if left_out else None) for p in first.values()]
    part: dict[str, Any] = {"figures": list(figures), **_counts(rows, form)}
    relations: dict[str, list] = {}
    for p, why in rows:
        if p.get("relation") is not None:
            relations.setdefault(p["relation"], []).append((p, why))
    if relations:
        part["by_relation"] = {r: _counts(group, form) for r, group in sorted(relations.items())}
    return part


def _counts(rows: Sequence[tuple[dict, str | None]], form) -> dict[str, Any]:
    out: dict[str, Any] = {
        "counted": sum(why is None for _, why in rows),
        "left_out": dict(Counter(why for _, why in rows if why is not None).most_common()),
    }
    if form is not None:
        asked = (form(p) for p, why in rows if why is None)
        out["forms"] = dict(Counter(f for f in asked if f is not None))
    return out


def completed(
    entry: dict, rows: int, predictions: Sequence[dict], skipped: Sequence[dict]
) -> dict[str, Any]:
    """One model's coverage record whole: its view's part (``entry["coverage"]``; without one,
    every answered row counts in every figure) with the ``rows`` it was given and the rows
    skipped (those of ``skipped`` with no prediction: a row skipped under one condition and
    answered under others is covered), per reason and per relation."""
    part = entry.get("coverage") or answered_part(
        [EVERY_FIGURE], predictions, splits_left_out(entry.get("overall_excludes") or ())
    )
    answered = {p["id"] for p in predictions}
    alone = [s for s in skipped if s["id"] not in answered]
    reasons = Counter(f"{SKIPPED_PREFIX}{s[SKIPPED]}" for s in alone)
    record = {
        "figures": part["figures"],
        "rows": rows,
        "counted": part["counted"],
        "share": part["counted"] / rows if rows else None,
        "left_out": dict((Counter(part["left_out"]) + reasons).most_common()),
        **({"forms": part["forms"]} if "forms" in part else {}),
        **{k: v for k, v in part.items() if k not in RECORD_KEYS},
    }
    by_relation = {r: dict(c) for r, c in (part.get("by_relation") or {}).items()}
    for s in alone:
        relation = s.get("relation")
        if relation is None:
            continue
        counts = by_relation.setdefault(relation, {"counted": 0, "left_out": {}})
        why = f"{SKIPPED_PREFIX}{s[SKIPPED]}"
        counts["left_out"] = {**counts["left_out"], why: counts["left_out"].get(why, 0) + 1}
    if by_relation:
        record["by_relation"] = {
            r: {"rows": c["counted"] + sum(c["left_out"].values()), **c}
            for r, c in sorted(by_relation.items())
        }
    return record


RECORD_KEYS = ("figures", "rows", "counted", "share", "left_out", "forms", "by_relation")


ONE_MODEL = ("coverage",)  # what the figures over one model repeat of its entry besides them


def one_model_figures(per_model: dict[str, dict], names: Sequence[str]) -> dict:
    """The figures over the models where there is one: its own figures ``names``, each with
    its interval and n, and its coverage; over several, each figure's mean over the models,
    which has no interval of its own (each model's figure has one, under ``models``)."""
    if len(per_model) == 1:
        (only,) = per_model.values()
        out = {}
        for name in names:  # a figure the model has none of (a condition not scored): null
            out[name] = only.get(name)
            out.update({k: only[k] for k in (f"{name}{p}" for p in FIGURE_PARTS) if k in only})
        return {**out, **{k: only[k] for k in ONE_MODEL if k in only}}
    out: dict = {}
    for name in names:
        values = [m[name] for m in per_model.values() if m.get(name) is not None]
        out[name] = mean(values)
        out[f"{name}_ci95"] = None
        out[f"{name}_no_interval"] = (
            f"a mean over {len(per_model)} models' figures: each model's own, with its "
            "interval, is under models"
        )
    return out


def figure_words(coverage: Mapping[str, Any]) -> str:
    """The figures a record covers, as a sentence names them: "accuracy", "P@1"."""
    figures = [f for f in coverage.get("figures") or () if f != EVERY_FIGURE]
    if not figures:
        return EVERY_FIGURE
    return figures[0] if len(figures) == 1 else f"{', '.join(figures[:-1])} and {figures[-1]}"


def over_rows(coverage: Mapping[str, Any]) -> str:
    """The rows a record's figures count of those given: "over 3,588 of 4,654 rows (77.1%)"."""
    rows, counted = coverage.get("rows") or 0, coverage.get("counted") or 0
    share = f" ({counted / rows:.1%})" if rows else ""
    return f"over {counted:,} of {rows:,} rows{share}"


FORM_WORDS = {
    "template": "by the template",
    "cloze": "as cloze statements",
    "question": "as questions",
}
QUESTION_PROMPT_WORDS = {"chat": "chat turns", "plain": "'Question: ... Answer:'"}


def form_words(coverage: Mapping[str, Any]) -> dict[str, str]:
    """Each form of a record as a sentence says how rows were asked ("as questions (chat
    turns)")."""
    words = dict(FORM_WORDS)
    style = coverage.get("question_prompt")
    if style in QUESTION_PROMPT_WORDS:
        words["question"] = f"as questions ({QUESTION_PROMPT_WORDS[style]})"
    return words


def coverage_line(coverage: Mapping[str, Any]) -> str:
    """The record in words: "accuracy over 3,588 of 4,654 rows (77.1%); left out: 1,066
    skipped: the gap comes first ...; asked 3,000 by the template, 588 as questions (chat
    turns)"."""
    text = f"{figure_words(coverage)} {over_rows(coverage)}"
    left_out = coverage.get("left_out") or {}
    if left_out:
        text += "; left out: " + "; ".join(f"{n:,} {why}" for why, n in left_out.items())
    forms = {f: n for f, n in (coverage.get("forms") or {}).items() if n}
    if len(forms) > 1:
        names = form_words(coverage)
        text += "; asked " + ", ".join(f"{n:,} {names.get(f, f)}" for f, n in forms.items())
    return text


def by_form_line(entry: Mapping[str, Any]) -> str | None:
    """A model's covered figures per form, each with its interval, where its rows were asked
    in more than one way: "by the template: accuracy 0.050 [0.014, 0.165] (n 40); as questions
    (chat turns): accuracy 0.100 [...] (n 20)"; None where they were asked one way."""
    coverage = entry.get("coverage") or {}
    by_form = {f: g for f, g in (entry.get("by_form") or {}).items() if g.get("n")}
    if len(by_form) < 2:
        return None
    names = form_words(coverage)
    figures = [f for f in coverage.get("figures") or () if f != EVERY_FIGURE]
    parts = []
    for form, group in by_form.items():
        shown = ", ".join(f"{f} {Figure.of(group, f) or '-'}" for f in figures if f in group)
        parts.append(f"{names.get(form, form)}: {shown} (n {group['n']:,})")
    return "; ".join(parts)


def coverage_notes(name: str, entry: Mapping[str, Any]) -> list[str]:
    """What a model's figures cover, and its figures per form, as lines under a table."""
    coverage = entry.get("coverage")
    if not coverage:
        return []
    notes = [f"{name}: {coverage_line(coverage)}"]
    left_out = coverage.get("left_out") or {}
    for reason, k in (entry.get("skipped") or {}).items():
        partly = k - left_out.get(f"{SKIPPED_PREFIX}{reason}", 0)
        if partly > 0:  # rows the view answered otherwise: skipped for some figures only
            notes.append(
                f"{name}: skipped {partly:,} of {coverage.get('rows', 0):,} rows: {reason} "
                "(its other figures count them)"
            )
    forms = by_form_line(entry)
    if forms:
        notes.append(f"{name}: per form, {forms}")
    return notes


def relation_left_out(counts: Mapping[str, Any]) -> str:
    """A relation's rows left out, in short: "20 skipped: the gap comes first ..."."""
    return "; ".join(f"{n:,} {why}" for why, n in (counts.get("left_out") or {}).items())
