"""How far each judging rule agrees with a person, on generated answers a person judged.

A calibration record is one real model answer, the gold it is judged against (labels,
aliases, the other entities it may name instead) and a person's verdict: is it a correct
answer to the question for that period? Each rule of :mod:`chronoprobe.probes.judging` judges
the same answers, and so do the two rules the generate view used before them (``leads`` and
``contains``: :data:`OLD_RULES`), for comparison.

Agreement is given as accuracy (the share of answers where rule and person agree, with its
Wilson interval) and as Cohen's kappa (Cohen, 1960, "A Coefficient of Agreement for Nominal
Scales", Educational and Psychological Measurement), which discounts the agreement two raters
would reach by chance from how often each says "correct": when few answers are correct, a
rule that calls everything incorrect agrees on most answers and still has kappa 0. Kappa's
interval is a bootstrap over the records.

The person also says what an answer names (:data:`NAMED`): a gold answer, an answer the
subject has in another period (``stale``), another entity among the record's distractors
(``similar``: a similarly named entity of the data), any other entity (``other``: a made-up
name, a wrong person), or nothing. A rule that calls a ``stale``, ``similar`` or ``other``
answer correct counts a wrong entity as right: the error a researcher can least afford,
counted apart, and apart again where the rule was told of that entity (a distractor).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import msgspec
import numpy as np

from chronoprobe.errors import UserError
from chronoprobe.metrics.uncertainty import Estimate, estimate, proportion
from chronoprobe.probes.judging import RULES, Gold, judge

OLD_RULES = ("leads", "contains")
NAMED = ("gold", "stale", "similar", "other", "none")
DISTRACTOR = frozenset({"stale", "similar"})  # entities the rules are told of


class Record(msgspec.Struct, forbid_unknown_fields=False):
    """One line of a calibration file (see ``tests/fixtures/judging/README.md``)."""

    id: str
    answer: str
    labels: list[str]
    human: bool
    named: str
    aliases: list[list[str]] = msgspec.field(default_factory=list)
    distractors: list[list[str]] = msgspec.field(default_factory=list)
    reason: str = ""
    source: str = ""
    period: str | None = None
    run: str = ""  # which run of the model gave the answer: a row may have several
    decoding: str = "greedy"  # or "sample"
    query: str = ""  # the row's statement, [MASK] for the gap
    relation: str | None = None  # the row's relation (a Wikidata property id)

    def gold(self) -> Gold:
        question = self.query.replace("[MASK]", "___") or None
        return Gold(
            self.labels, self.aliases, self.distractors, question, self.period, self.relation
        )

    @property
    def name(self) -> str:
        """The record's name in reports: row id, with its run and decoding where given."""
        parts = [self.run, self.id] if self.run else [self.id]
        return ":".join(parts + (["sample"] if self.decoding == "sample" else []))


def read_records(path: str | Path) -> list[Record]:
    """The records of a calibration file; a bad line raises ValueError naming file and line."""
    from chronoprobe.jsonl import numbered_lines

    records = []
    for number, record in numbered_lines(path, Record, "not a calibration record"):
        if record.named not in NAMED:
            raise UserError(
                f"{path}:{number}: named is {record.named!r}, not one of {', '.join(NAMED)}"
            )
        if record.human and not record.labels:
            raise UserError(f"{path}:{number}: judged correct, but the row has no gold answer")
        records.append(record)
    return records


def _old_normalize(text: str) -> str:
    """The normalisation of the rules before :mod:`chronoprobe.probes.judging`: lower case,
    punctuation to spaces, articles dropped (no accent folding, no joined abbreviations)."""
    spaced = "".join(" " if unicodedata.category(c).startswith("P") else c for c in text.lower())
    return " ".join(w for w in spaced.split() if w not in ("a", "an", "the"))


def old_rule(rule: str, answer: str, gold: Gold) -> bool:
    """``leads``: the answer begins with a label or alias as whole words; ``contains``: one
    occurs anywhere in it as whole words. Neither knows other entities."""
    said = f" {_old_normalize(answer)} "
    names = {_old_normalize(n) for n in [*gold.labels, *(a for g in gold.aliases for a in g)]}
    names.discard("")
    if not said.strip():
        return False
    if rule == "leads":
        return any(said.startswith(f" {name} ") for name in names)
    if rule == "contains":
        return any(f" {name} " in said for name in names)
    raise UserError(f"unknown old rule {rule!r}: one of {', '.join(OLD_RULES)}")


def verdicts(records: Sequence[Record]) -> dict[str, list[bool]]:
    """Each rule's verdict on each record, the rules of :data:`RULES` then :data:`OLD_RULES`."""
    judged = [judge(r.answer, r.gold()) for r in records]
    out = {rule: [j[rule] for j in judged] for rule in RULES}
    for rule in OLD_RULES:
        out[rule] = [old_rule(rule, r.answer, r.gold()) for r in records]
    return out


def cohen_kappa(first: Sequence[bool], second: Sequence[bool]) -> float | None:
    """Cohen's kappa of two raters' yes/no verdicts on the same items: (observed agreement -
    chance agreement) / (1 - chance agreement). None when chance agreement is 1 (both raters
    say the same thing of every item), where kappa is undefined."""
    if len(first) != len(second):
        raise UserError(f"{len(first)} verdicts against {len(second)}")
    if not first:
        return None
    a = np.asarray(first, dtype=bool)
    b = np.asarray(second, dtype=bool)
    value = float(_kappa(np.ones((1, len(a))), a, b)[0])
    return None if np.isnan(value) else value


def _kappa(counts: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Kappa per row of ``counts`` (how often each item counts), NaN where undefined."""
    n = counts.sum(axis=1)
    observed = counts @ (a == b) / n
    yes_a, yes_b = counts @ a / n, counts @ b / n
    chance = yes_a * yes_b + (1 - yes_a) * (1 - yes_b)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.isclose(chance, 1.0), np.nan, (observed - chance) / (1 - chance))


@dataclass(frozen=True)
class Agreement:
    """One rule against the person: agreement, chance-corrected agreement, the share of the
    right answers it accepts (recall) and of the wrong ones it accepts (false correct), and
    the errors."""

    rule: str
    n: int
    accuracy: Estimate
    kappa: Estimate
    recall: Estimate  # of the answers the person calls correct, the share the rule does
    false_correct: Estimate  # of the answers the person calls incorrect, the share it accepts
    false_positives: int  # the rule says correct, the person does not
    false_negatives: int
    distractor_positives: int  # false positives naming a stale or similar entity
    other_entity_positives: int  # false positives naming another wrong entity
    disagreements: tuple[str, ...]  # record names (:attr:`Record.name`)


def agreement(
    records: Sequence[Record], said: dict[str, Sequence[bool]] | None = None
) -> list[Agreement]:
    """Each rule's agreement with the person's verdicts: ``said`` (rule -> a verdict per
    record, a model judge's say), else every rule of :func:`verdicts`, in its order."""
    human = np.array([r.human for r in records], dtype=bool)
    distractor = np.array([r.named in DISTRACTOR for r in records], dtype=bool)
    other = np.array([r.named == "other" for r in records], dtype=bool)
    out = []
    for rule, verdict in (verdicts(records) if said is None else said).items():
        rule_says = np.array(verdict, dtype=bool)
        agree = rule_says == human
        value = cohen_kappa(list(rule_says), list(human))
        out.append(
            Agreement(
                rule=rule,
                n=len(records),
                accuracy=proportion(list(agree)),
                kappa=estimate(
                    value, partial(_kappa, a=rule_says, b=human), len(records), len(records)
                ),
                recall=proportion(list(rule_says[human])),
                false_correct=proportion(list(rule_says[~human])),
                false_positives=int(np.sum(rule_says & ~human)),
                false_negatives=int(np.sum(~rule_says & human)),
                distractor_positives=int(np.sum(rule_says & ~human & distractor)),
                other_entity_positives=int(np.sum(rule_says & ~human & other)),
                disagreements=tuple(r.name for r, ok in zip(records, agree, strict=True) if not ok),
            )
        )
    return out


def interval(e: Estimate, digits: int = 3) -> str:
    """A figure with its 95% interval, as the docs' tables show it."""
    if e.value is None:
        return "undefined"
    if e.low is None:
        return f"{e.value:.{digits}f}"
    return f"{e.value:.{digits}f} [{e.low:.{digits}f}, {e.high:.{digits}f}]"


def markdown_table(rows: Sequence[Agreement]) -> str:
    """The agreement table as the docs show it."""
    lines = [
        "| rule | agreement [95% CI] | Cohen's kappa [95% CI] | right answers accepted [95% CI] "
        "| false correct [95% CI] | false positives: a stale or similar entity, another "
        "| false negatives | n |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for a in rows:
        name = f"`{a.rule}`" + (" (old)" if a.rule in OLD_RULES else "")
        lines.append(
            f"| {name} | {interval(a.accuracy)} | {interval(a.kappa)} | {interval(a.recall)} "
            f"| {interval(a.false_correct)} ({a.false_positives}) "
            f"| {a.distractor_positives}, {a.other_entity_positives} "
            f"| {a.false_negatives} | {a.n} |"
        )
    return "\n".join(lines)
