"""Timeline questions from a KG, after TimelineKGQA (Sun, Li, Huynh, Reynolds and Liu,
"TimelineKGQA: A Comprehensive Question-Answer Pair Generator for Temporal Knowledge Graphs",
WWW 2025 Companion).

Questions are about one fact (simple: its start, end, range, duration, or who held a relation
at a time), two facts (medium: Allen relations, duration comparison, intersection, retrieval
during another fact's interval) or three and more (complex: ranking, set operations against a
third interval, total duration). Each row names its complexity, capability (retrieval,
constrained retrieval, timeline operation, semantic operation) and answer type.

Precision is kept. A fact's bounds are read as points on a timeline at their own precision (as
TimelineKGQA reads them): an interval runs from its start to its end, so a handover on one day
makes the two terms *meet*. Questions that compare bounds do so at the coarsest precision among
them, cut to it, and say so ("counting in years"); a fact known to the year is never compared
by the day. Where the answer is undetermined at that precision, no question is asked: an
interval that shrinks to one unit (a term within one year, counted in years), two starts of the
same unit where a ranking needs their order, two durations of the same length, an intersection
that is only a shared bound. "Who held it in March 2009?" uses the tool's period semantics (a
fact holds in a period iff its interval overlaps it) and is not asked where a fact's coarse
bound leaves it unknown whether it held then. A triple with several intervals (repeated terms)
is not asked about by name: "when did X play for Y" would have several answers.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from importlib import resources
from itertools import combinations
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field, field_validator

from chronoprobe.datasets.builders import BUILDERS, finish, read_kg, seed_of
from chronoprobe.errors import UserError
from chronoprobe.kg.graph import TemporalKG
from chronoprobe.kg.records import bound_points
from chronoprobe.params import ExistingPath, Params, seed_field
from chronoprobe.step_context import StepContext
from chronoprobe.steps import variant
from chronoprobe.templates import read_templates_yaml
from chronoprobe.time import (
    Granularity,
    Period,
    Precision,
    TimePoint,
    civil_from_day_number,
    day_number,
)

SPLITS = ("train", "valid", "test")
SPLIT_SHARES = (0.8, 0.1, 0.1)
UNITS = {Precision.YEAR: "years", Precision.MONTH: "months", Precision.DAY: "days"}
PRECISION_NAMES = {Precision.YEAR: "year", Precision.MONTH: "month", Precision.DAY: "day"}
# kind -> (complexity, capability, answer type)
KINDS: dict[str, tuple[str, str, str]] = {
    "start": ("simple", "retrieval", "time point"),
    "end": ("simple", "retrieval", "time point"),
    "start_end": ("simple", "retrieval", "time range"),
    "duration": ("simple", "retrieval", "duration"),
    "at_time": ("simple", "constrained retrieval", "entity"),
    "allen_relation": ("medium", "timeline operation", "allen relation"),
    "allen_yes_no": ("medium", "timeline operation", "yes/no"),
    "allen_choice": ("medium", "timeline operation", "allen relation"),
    "duration_compare": ("medium", "timeline operation", "yes/no"),
    "intersection": ("medium", "timeline operation", "time range"),
    "during_fact": ("medium", "semantic operation", "entity"),
    "ranking": ("complex", "timeline operation", "entity"),
    "order": ("complex", "timeline operation", "ranked list"),
    "set_operation": ("complex", "timeline operation", "yes/no"),
    "total_duration": ("complex", "timeline operation", "duration"),
}
COMPLEXITIES = ("simple", "medium", "complex")
CAPABILITIES = ("retrieval", "constrained retrieval", "timeline operation", "semantic operation")
ANSWER_TYPES = (
    "entity", "time point", "time range", "duration", "allen relation", "yes/no", "ranked list"
)  # fmt: skip
# Allen's 13 relations of interval A to interval B: name -> the phrase "A ... B" (past tense)
ALLEN: dict[str, str] = {
    "before": "ended before the start of",
    "after": "started after the end of",
    "meets": "ended at the start of",
    "met by": "started at the end of",
    "overlaps": "started before and ended during",
    "overlapped by": "started during and ended after",
    "starts": "started together with and ended before the end of",
    "started by": "started together with and ended after the end of",
    "during": "started after the start of and ended before the end of",
    "contains": "started before the start of and ended after the end of",
    "finishes": "started after the start of and ended together with",
    "finished by": "started before the start of and ended together with",
    "equals": "started and ended together with",
}
_GRANULARITY = {
    Precision.YEAR: Granularity.YEAR,
    Precision.MONTH: Granularity.MONTH,
    Precision.DAY: Granularity.DAY,
}
ORDINALS = ("first", "second", "third", "fourth")
SET_OPERATIONS = ("intersection", "union", "complement")


# --- time at a precision ----------------------------------------------------------------------


def unit(point: TimePoint, precision: Precision) -> int:
    """The point's index on the timeline of ``precision`` (years, months or days): the point
    cut to that precision, which must not be finer than its own."""
    if point.precision < precision:
        raise UserError(f"{point} is not known to the {PRECISION_NAMES[precision]}")
    if precision == Precision.YEAR:
        return point.year
    if precision == Precision.MONTH:
        return point.year * 12 + point.month - 1  # type: ignore[operator]
    return day_number(point.year, point.month, point.day)


def allen(a: tuple[int, int], b: tuple[int, int]) -> str:
    """Allen's relation of interval ``a`` to ``b`` (start < end on one timeline)."""
    (a0, a1), (b0, b1) = a, b
    if a1 < b0:
        return "before"
    if b1 < a0:
        return "after"
    if a1 == b0:
        return "meets"
    if b1 == a0:
        return "met by"
    if a0 == b0:
        return "equals" if a1 == b1 else ("starts" if a1 < b1 else "started by")
    if a1 == b1:
        return "finishes" if a0 > b0 else "finished by"
    if a0 > b0 and a1 < b1:
        return "during"
    if a0 < b0 and a1 > b1:
        return "contains"
    return "overlaps" if a0 < b0 else "overlapped by"


@dataclass(frozen=True)
class TimedFact:
    subject: str
    relation: str
    object: str
    start: TimePoint | None
    end: TimePoint | None

    @property
    def id(self) -> str:
        return f"{self.subject}|{self.relation}|{self.object}|{self.start or ''}"

    @property
    def closed(self) -> bool:
        """Both bounds known and not one point (an award in 1901 is an event, not a span)."""
        return self.start is not None and self.end is not None and self.start != self.end

    @property
    def precision(self) -> Precision:
        """The coarsest precision of its known bounds."""
        return min(p.precision for p in (self.start, self.end) if p is not None)

    def span(self, precision: Precision) -> tuple[int, int]:
        return unit(self.start, precision), unit(self.end, precision)  # type: ignore[arg-type]

    def to_dict(self) -> dict:
        return {
            "subject": self.subject,
            "relation": self.relation,
            "object": self.object,
            "start": self.start.iso() if self.start else None,
            "end": self.end.iso() if self.end else None,
        }


def common(facts: Sequence[TimedFact]) -> Precision:
    return min(f.precision for f in facts)


def spans(facts: Sequence[TimedFact]) -> tuple[Precision, list[tuple[int, int]]] | None:
    """The facts' intervals at their common precision; None when one shrinks to a unit."""
    precision = common(facts)
    out = [f.span(precision) for f in facts]
    return (precision, out) if all(s < e for s, e in out) else None


def holds_in(fact: TimedFact, period: Period) -> bool | None:
    """Does the fact hold at some time of ``period`` (True / False), or is it unknown at the
    precision of its bounds (None)? A bound covers its whole span."""
    if fact.start is None:
        return None
    if fact.start.first_day() > period.last_day() or (
        fact.end is not None and fact.end.last_day() < period.first_day()
    ):
        return False
    if fact.start.last_day() <= period.last_day() and (
        fact.end is None or fact.end.first_day() >= period.first_day()
    ):
        return True
    return None


def overlap(a: TimedFact, b: TimedFact) -> bool | None:
    """Do two closed facts share a stretch of time at their common precision (None: they
    only touch, or one shrinks to a unit there)?"""
    both = spans([a, b])
    if both is None:
        return None
    _, ((a0, a1), (b0, b1)) = both
    lo, hi = max(a0, b0), min(a1, b1)
    return None if lo == hi else lo < hi


# --- templates --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Phrases:
    did: str
    past: str
    ask_object: str
    ask_subject: str
    actor: str = "subject"  # who does it: "<object> led the government of <subject>"
    # a symmetric relation (spouse) holds both ways: the KG may store each fact twice, mirrored
    symmetric: bool = False


@dataclass(frozen=True)
class Templates:
    relations: dict[str, Phrases]
    questions: dict[str, list[str]]


def load_timeline_templates(path: str | Path | None = None) -> Templates:
    """The built-in templates (templates/timeline.yaml) or a user's file of the same form;
    a file's problem is one line naming it, the entry and the reason."""
    source = Path(path) if path else resources.files("chronoprobe.templates") / "timeline.yaml"
    data = read_templates_yaml(source)
    if not isinstance(data, dict) or not {"relations", "questions"} <= set(data):
        raise UserError(f"{source}: expected a mapping with 'relations' and 'questions'")
    relations, questions = data["relations"], data["questions"]
    if not isinstance(relations, dict) or not isinstance(questions, dict):
        raise UserError(f"{source}: 'relations' and 'questions' must be mappings")
    phrases = {}
    optional = {"actor", "symmetric"}
    for relation, entry in relations.items():
        fields = set(Phrases.__dataclass_fields__)
        if not isinstance(entry, dict) or not fields - optional <= set(entry) <= fields:
            raise UserError(
                f"{source}: relations.{relation}: needs did, past, ask_object and ask_subject "
                "(and may name the actor and say it is symmetric)"
            )
        if entry.get("actor", "subject") not in ("subject", "object"):
            raise UserError(f"{source}: relations.{relation}.actor: subject or object")
        if not isinstance(entry.get("symmetric", False), bool):
            raise UserError(f"{source}: relations.{relation}.symmetric: true or false")
        for key, text in entry.items():
            if key in optional:
                continue
            if not isinstance(text, str) or not ("<subject>" in text or "<object>" in text):
                raise UserError(
                    f"{source}: relations.{relation}.{key}: a text naming <subject> or <object>"
                )
        phrases[str(relation)] = Phrases(**entry)
    unknown = sorted(set(questions) - set(KINDS))
    if unknown:
        raise UserError(
            f"{source}: questions.{unknown[0]}: unknown question kind; known: {', '.join(KINDS)}"
        )
    for kind, texts in questions.items():
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
            raise UserError(f"{source}: questions.{kind}: a list of paraphrases (strings)")
    return Templates(phrases, {k: list(v) for k, v in questions.items()})


# --- the generator ----------------------------------------------------------------------------


@dataclass
class Question:
    kind: str
    facts: list[TimedFact]  # every fact the question reads: those it names and its answers'
    slots: dict[str, str]
    answers: list[str]  # canonical answers (entity ids, ISO dates, "N days", relation, yes/no)
    labels: list[str]  # the answers in words, for judging
    aliases: list[list[str]]
    precision: Precision
    gold: dict[str, Any]
    # what the question names beside its facts, never its answer (see `asks` in the rows)
    asks: dict[str, Any] = dataclasses.field(default_factory=dict)


def timed_facts(kg: TemporalKG) -> list[TimedFact]:
    """Every fact of the KG with its bounds as time points."""
    starts, ends = bound_points(kg.facts, "start"), bound_points(kg.facts, "end")
    columns = [kg.facts.column(c).to_pylist() for c in ("subject", "relation", "object")]
    return [TimedFact(*t, s, e) for *t, s, e in zip(*columns, starts, ends, strict=True)]


def mirrored(facts: Sequence[TimedFact], templates: Templates) -> dict[str, str]:
    """The id of each fact of a symmetric relation that the KG also holds mirrored (object and
    subject swapped, same bounds), mapped to the id of the fact of the pair that stands for
    both: the one whose subject comes first. A mirrored pair is one fact to the questions."""
    symmetric = {r for r, phrases in templates.relations.items() if phrases.symmetric}
    ids = {(f.subject, f.relation, f.object, f.start, f.end): f.id for f in facts}
    out = {}
    for f in facts:
        if f.relation in symmetric and f.subject != f.object:
            twin = ids.get((f.object, f.relation, f.subject, f.start, f.end))
            if twin is not None:
                out[f.id] = f.id if f.subject < f.object else twin
    return out


class Generator:
    """Every question kind over one KG, its facts read once.

    A fact of a symmetric relation stored twice, mirrored, is asked about once: only one fact
    of the pair is named (:func:`mirrored`), both are the one split's, and no question reads a
    fact and its mirror. Both stay in the lookups that find a question's answers, so "Who was
    X married to?" finds every spouse whichever way the KG stores each marriage."""

    def __init__(self, kg: TemporalKG, templates: Templates, split_of: dict[str, str]):
        self.kg = kg
        self.templates = templates
        self.split_of = split_of
        facts = [f for f in timed_facts(kg) if f.relation in templates.relations]
        self.one_of = mirrored(facts, templates)
        triples: dict[tuple, int] = defaultdict(int)
        for f in facts:
            triples[(f.subject, f.relation, f.object)] += 1
        # a triple asked about by name must have one interval
        self.single_ids = {f.id for f in facts if triples[(f.subject, f.relation, f.object)] == 1}
        self.named = [f for f in facts if f.id in self.single_ids and self.stands_for_itself(f)]
        self.closed = [f for f in self.named if f.closed]
        self.by_given: dict[tuple[str, str, str], list[TimedFact]] = defaultdict(list)
        for f in facts:
            self.by_given[("subject", f.subject, f.relation)].append(f)
            self.by_given[("object", f.object, f.relation)].append(f)
        self.neighbours: dict[str, list[TimedFact]] = defaultdict(list)
        for f in self.closed:
            self.neighbours[f.subject].append(f)
            self.neighbours[f.object].append(f)

    # -- words --

    def phrase(self, fact: TimedFact, key: str) -> str:
        text = getattr(self.templates.relations[fact.relation], key)
        return text.replace("<subject>", self.kg.label(fact.subject)).replace(
            "<object>", self.kg.label(fact.object)
        )

    def fact_slots(self, fact: TimedFact, prefix: str) -> dict[str, str]:
        actor = self.kg.label(getattr(fact, self.templates.relations[fact.relation].actor))
        return {
            f"{prefix}_actor": actor,
            f"{prefix}_did": self.phrase(fact, "did"),
            f"{prefix}_past": self.phrase(fact, "past"),
            f"period_{prefix}": f"the time when {actor} {self.phrase(fact, 'past')}",
        }

    def ask(self, fact: TimedFact, asked: str) -> str:
        return self.phrase(fact, "ask_object" if asked == "object" else "ask_subject")

    def entities(self, ids: Sequence[str]) -> tuple[list[str], list[list[str]]]:
        return [self.kg.label(i) for i in ids], [self.kg.aliases(i) for i in ids]

    def stands_for_itself(self, fact: TimedFact) -> bool:
        """False for the fact of a mirrored pair that the other stands for."""
        return self.one_of.get(fact.id, fact.id) == fact.id

    def split(self, fact: TimedFact) -> str:
        """The fact's split: a mirrored pair's is that of the fact standing for both."""
        return self.split_of[self.one_of.get(fact.id, fact.id)]

    def same_split(self, facts: Sequence[TimedFact]) -> bool:
        return len({self.split(f) for f in facts}) == 1

    # -- simple --

    def simple(self, fact: TimedFact, kind: str) -> Question | None:
        slots = self.fact_slots(fact, "a")
        if kind == "start":
            answer, precision = fact.start, fact.start.precision  # type: ignore[union-attr]
            gold = {"point": answer.iso()}  # type: ignore[union-attr]
        elif kind == "end":
            answer, precision = fact.end, fact.end.precision  # type: ignore[union-attr]
            gold = {"point": answer.iso()}  # type: ignore[union-attr]
        elif kind == "start_end":
            precision = fact.precision
            gold = {"range": [fact.start.iso(), fact.end.iso()]}  # type: ignore[union-attr]
        else:
            both = spans([fact])
            if both is None:
                return None
            precision, ((s, e),) = both
            gold = {"duration": e - s, "unit": UNITS[precision]}
            slots["unit"] = UNITS[precision]
        label = answer_label(gold)
        return Question(kind, [fact], slots, [label], [label], [[]], precision, gold)

    def at_time(self, fact: TimedFact, asked: str) -> Question | None:
        precision = fact.precision
        if fact.end is None:
            point = fact.start.at_precision(precision)  # type: ignore[union-attr]
        else:
            middle = (fact.start.first_day() + fact.end.last_day()) // 2  # type: ignore[union-attr]
            point = TimePoint(*civil_from_day_number(middle)).at_precision(precision)
        period = Period.containing(point, _GRANULARITY[precision])
        given = fact.subject if asked == "object" else fact.object
        group = self.by_given[("subject" if asked == "object" else "object", given, fact.relation)]
        held = [holds_in(f, period) for f in group]
        if None in held:
            return None
        facts = [f for f, h in zip(group, held, strict=True) if h]
        ids = sorted({getattr(f, asked) for f in facts})
        labels, aliases = self.entities(ids)
        when = ("on " if precision == Precision.DAY else "in ") + point.words()
        slots = {"ask": self.ask(fact, asked), "when": when}
        gold = {"entities": ids, "time": point.iso()}
        asks = {"asked": asked, "given": given, "relation": fact.relation, "time": point.iso()}
        return Question("at_time", facts, slots, ids, labels, aliases, precision, gold, asks)

    # -- medium --

    def pair(self, a: TimedFact, b: TimedFact, kind: str, rng: random.Random) -> Question | None:
        both = spans([a, b])
        if both is None:
            return None
        precision, (sa, sb) = both
        slots = {**self.fact_slots(a, "a"), **self.fact_slots(b, "b"), "unit": UNITS[precision]}
        relation = allen(sa, sb)
        if kind == "allen_relation":
            gold: dict[str, Any] = {"relation": relation}
        elif kind == "allen_choice":
            others = rng.sample([r for r in ALLEN if r != relation], 2)
            choices = [relation, *others]
            rng.shuffle(choices)
            slots["choices"] = f"{choices[0]}, {choices[1]} or {choices[2]}"
            gold = {"relation": relation, "choices": choices}
        elif kind == "allen_yes_no":
            asked = (
                relation if rng.random() < 0.5 else rng.choice([r for r in ALLEN if r != relation])
            )
            slots["relation"] = ALLEN[asked]
            gold = {"yes": asked == relation, "asked": asked}
        elif kind == "duration_compare":
            la, lb = sa[1] - sa[0], sb[1] - sb[0]
            if la == lb:
                return None
            gold = {"yes": la > lb, "durations": [la, lb]}
        else:  # intersection
            lo, hi = max(sa[0], sb[0]), min(sa[1], sb[1])
            if lo >= hi:
                return None
            starts = [f.start for f in (a, b) if unit(f.start, precision) == lo]  # type: ignore[arg-type]
            ends = [f.end for f in (a, b) if unit(f.end, precision) == hi]  # type: ignore[arg-type]
            first, last = starts[0].at_precision(precision), ends[0].at_precision(precision)  # type: ignore[union-attr]
            gold = {"range": [first.iso(), last.iso()]}
        label = answer_label(gold)
        asks = {"relation": gold["asked"]} if kind == "allen_yes_no" else {}
        if kind == "allen_choice":
            asks = {"choices": gold["choices"]}
        return Question(kind, [a, b], slots, [label], [label], [[]], precision, gold, asks)

    def during_fact(self, a: TimedFact, b: TimedFact, asked: str) -> Question | None:
        side = "subject" if asked == "object" else "object"
        given = getattr(b, side)
        group = [f for f in self.by_given[(side, given, b.relation)] if f.closed]
        if a in group or len(group) < len(self.by_given[(side, given, b.relation)]):
            return None  # asking about the fact itself, or one of its group is open
        shared = [overlap(a, f) for f in group]
        if None in shared:
            return None
        facts = [f for f, s in zip(group, shared, strict=True) if s]
        if not facts:
            return None
        ids = sorted({getattr(f, asked) for f in facts})
        if {a.subject, a.object} & set(ids):
            # the question names an answer ("While A was married to B, who was married to A?",
            # the mirror of its own fact; "While A played for Reds, which team did C play for?")
            return None
        labels, aliases = self.entities(ids)
        slots = {**self.fact_slots(a, "a"), "ask": self.ask(b, asked)}
        gold = {"entities": ids}
        asks = {"asked": asked, "given": given, "relation": b.relation}
        return Question(
            "during_fact", [a, *facts], slots, ids, labels, aliases, a.precision, gold, asks
        )

    # -- complex --

    def ranking(self, facts: list[TimedFact], asked: str, kind: str, rng: random.Random):
        precision = common(facts)
        starts = [unit(f.start, precision) for f in facts]  # type: ignore[arg-type]
        if len(set(starts)) < len(starts):
            return None  # two start in one unit: their order is unknown at this precision
        ordered = [f for _, f in sorted(zip(starts, facts, strict=True), key=lambda p: p[0])]
        ids = [getattr(f, asked) for f in ordered]
        shown = list(ids)
        rng.shuffle(shown)
        names = self.entities(shown)[0]
        options = listing(names, "or" if kind == "ranking" else "and")
        slots = {"ask": self.ask(facts[0], asked), "options": options}
        side = "subject" if asked == "object" else "object"
        asks: dict[str, Any] = {
            "asked": asked, "given": getattr(facts[0], side), "relation": facts[0].relation,
            "options": shown,
        }  # fmt: skip
        if kind == "ranking":
            index = rng.choice([0, -1, *range(1, len(facts) - 1)])
            slots["ordinal"] = "last" if index == -1 else ORDINALS[index]
            labels, aliases = self.entities([ids[index]])
            gold: dict[str, Any] = {"entities": [ids[index]], "rank": index}
            asks["rank"] = index
            return Question(
                kind, facts, slots, [ids[index]], labels, aliases, precision, gold, asks
            )
        labels, aliases = self.entities(ids)
        gold = {"order": ids, "labels": labels}
        label = "; ".join(labels)
        return Question(kind, facts, slots, ids, [label], [[]], precision, gold, asks)

    def set_operation(self, facts: list[TimedFact], operation: str) -> Question | None:
        both = spans(facts)
        if both is None:
            return None
        precision, (sa, sb, sc) = both
        slots: dict[str, str] = {}
        for prefix, fact in zip("abc", facts, strict=True):
            slots.update(self.fact_slots(fact, prefix))
        slots["unit"] = UNITS[precision]
        if operation == "intersection":
            lo, hi = max(sa[0], sb[0], sc[0]), min(sa[1], sb[1], sc[1])
            if lo == hi:
                return None
            yes = lo < hi
            slots["op"] = (
                f"was there a time when {slots['a_actor']} {slots['a_past']}, "
                f"{slots['b_actor']} {slots['b_past']} and {slots['c_actor']} "
                f"{slots['c_past']}, all at once"
            )
        else:
            uncovered = _uncovered(sc, [sa, sb])
            yes = uncovered if operation == "complement" else not uncovered
            slots["op"] = (
                f"was there a time during {slots['period_c']} when neither {slots['a_actor']} "
                f"{slots['a_past']} nor {slots['b_actor']} {slots['b_past']}"
                if operation == "complement"
                else f"was {slots['period_c']} covered by {slots['period_a']} together with "
                f"{slots['period_b']}"
            )
        gold = {"yes": yes, "operation": operation}
        label = answer_label(gold)
        asks = {"operation": operation}
        return Question(
            "set_operation", facts, slots, [label], [label], [[]], precision, gold, asks
        )

    def total_duration(self, facts: list[TimedFact]) -> Question | None:
        both = spans(facts)
        if both is None:
            return None
        precision, intervals = both
        slots = {"unit": UNITS[precision]}
        names = []
        for prefix, fact in zip("abc", facts, strict=True):
            slots.update(self.fact_slots(fact, prefix))
            names.append(slots[f"period_{prefix}"])
        slots["items"] = listing(names)
        gold = {"duration": sum(e - s for s, e in intervals), "unit": UNITS[precision]}
        label = answer_label(gold)
        return Question("total_duration", facts, slots, [label], [label], [[]], precision, gold)


def _uncovered(c: tuple[int, int], parts: list[tuple[int, int]]) -> bool:
    """Is a stretch of ``c`` (of positive length) outside every interval of ``parts``?"""
    at = c[0]
    for start, end in sorted(parts):
        if start > at:
            return True
        at = max(at, end)
        if at >= c[1]:
            return False
    return at < c[1]


def listing(names: Sequence[str], last: str = "and") -> str:
    """'A, B and C' (or 'A, B or C')."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} {last} {names[-1]}"


def answer_label(gold: dict[str, Any]) -> str:
    """The answer in words, as a judge reads it back."""
    if "point" in gold:
        return gold["point"]
    if "range" in gold:
        return f"{gold['range'][0]} to {gold['range'][1]}"
    if "duration" in gold:
        return f"{gold['duration']} {gold['unit']}"
    if "relation" in gold:
        return gold["relation"]
    return "yes" if gold["yes"] else "no"


# --- drawing questions ------------------------------------------------------------------------


def fact_splits(facts: Sequence[TimedFact], seed: int) -> dict[str, str]:
    """Each fact's split, drawn from a hash of its id (stable under other facts' changes)."""
    out = {}
    for fact in facts:
        digest = hashlib.blake2b(f"{seed}:{fact.id}".encode(), digest_size=8).digest()
        share = int.from_bytes(digest, "big") / 2**64
        out[fact.id] = (
            SPLITS[0]
            if share < SPLIT_SHARES[0]
            else (SPLITS[1] if share < SPLIT_SHARES[0] + SPLIT_SHARES[1] else SPLITS[2])
        )
    return out


def _candidates(gen: Generator, kind: str, rng: random.Random) -> Iterator[Question | None]:
    """An endless-enough stream of attempts at ``kind`` (None: a draw that gave no question)."""
    if kind in ("start", "end", "start_end", "duration"):
        pool = [f for f in gen.named if f.start is not None and (kind == "start" or f.closed)]
        for fact in rng.sample(pool, len(pool)):
            yield gen.simple(fact, kind)
    elif kind == "at_time":
        pool = [f for f in gen.named if f.start is not None]
        for fact in rng.sample(pool, len(pool)):
            yield gen.at_time(fact, rng.choice(("object", "subject")))
    elif kind in ("allen_relation", "allen_yes_no", "allen_choice", "duration_compare",
                  "intersection", "during_fact"):  # fmt: skip
        pairs = _pairs(gen, rng)
        for a, b in pairs:
            if kind == "during_fact":
                yield gen.during_fact(a, b, rng.choice(("object", "subject")))
            else:
                yield gen.pair(a, b, kind, rng)
    elif kind in ("ranking", "order"):
        symmetric = {r for r, p in gen.templates.relations.items() if p.symmetric}
        groups = [
            (asked, [f for f in group if f.start is not None])
            for (side, _, relation), group in gen.by_given.items()
            # a symmetric relation's groups by object ask what those by subject ask
            if side == "subject" or relation not in symmetric
            for asked in ("object" if side == "subject" else "subject",)
        ]
        groups = [(asked, g) for asked, g in groups if len({getattr(f, asked) for f in g}) >= 3]
        for asked, group in rng.sample(groups, len(groups)):
            counts: dict[str, int] = defaultdict(int)
            for f in group:
                counts[getattr(f, asked)] += 1
            group = [f for f in group if counts[getattr(f, asked)] == 1 and f.id in gen.single_ids]
            if group:  # options of one split, so that the question is kept
                split = gen.split(rng.choice(group))
                group = [f for f in group if gen.split(f) == split]
            size = min(len(group), rng.choice((3, 4)))
            if size < 3:
                continue
            yield gen.ranking(rng.sample(group, size), asked, kind, rng)
    elif kind == "set_operation":
        for a, b in _pairs(gen, rng):
            near = [f for f in gen.neighbours[a.subject] + gen.neighbours[b.subject]
                    if f not in (a, b) and gen.same_split([a, f])]  # fmt: skip
            if near:
                c = rng.choice(near)
                yield gen.set_operation([a, b, c], rng.choice(SET_OPERATIONS))
    else:  # total_duration
        for a, b in _pairs(gen, rng):
            near = [
                f for f in gen.neighbours[a.subject] if f not in (a, b) and gen.same_split([a, f])
            ]
            if near:
                yield gen.total_duration([a, b, rng.choice(near)])


def _pairs(gen: Generator, rng: random.Random) -> list[tuple[TimedFact, TimedFact]]:
    """Ordered pairs of closed facts of one split that share an entity (their intervals are
    near, so every Allen relation occurs), shuffled, then random pairs of one split."""
    near = set()
    for group in gen.neighbours.values():
        chosen = group if len(group) <= 30 else rng.sample(group, 30)
        for a, b in combinations(chosen, 2):
            if gen.same_split([a, b]):
                near.update(((a, b), (b, a)))
    pairs = sorted(near, key=lambda p: (p[0].id, p[1].id))
    rng.shuffle(pairs)
    by_split: dict[str, list[TimedFact]] = defaultdict(list)
    for fact in gen.closed:
        by_split[gen.split(fact)].append(fact)
    pools = [facts for facts in by_split.values() if len(facts) >= 2]
    for _ in range(len(pairs) // 2 + 20 if pools else 0):
        a, b = rng.sample(rng.choice(pools), 2)
        pairs.append((a, b))
    return pairs


def generate(
    kg: TemporalKG,
    *,
    templates: Templates | None = None,
    per_kind: int = 200,
    seed: int = 0,
    kinds: Sequence[str] | None = None,
) -> tuple[list[dict], dict[str, Any]]:
    """The question rows (each with its split) and counts of what was left out.

    ``per_kind`` questions of each kind at most, drawn seeded and shared among the splits as
    their facts are (at least one each); the paraphrase of each question is drawn too. A
    question is kept in a split only when every fact it reads lies in it.
    """
    templates = templates or load_timeline_templates()
    rng = random.Random(seed)
    probe = Generator(kg, templates, {})
    facts = {f.id: f for group in probe.by_given.values() for f in group}
    gen = Generator(kg, templates, fact_splits(list(facts.values()), seed))
    rows: list[dict] = []
    left_out: dict[str, int] = defaultdict(int)
    for kind in kinds or KINDS:
        if kind not in templates.questions:
            left_out[f"{kind}: no template"] += 1
            continue
        seen: set[str] = set()
        room = {
            s: max(1, round(per_kind * share))
            for s, share in zip(SPLITS, SPLIT_SHARES, strict=True)
        }
        for attempt, question in enumerate(_candidates(gen, kind, rng)):
            if attempt > 50 * per_kind or not any(room.values()):
                break
            if question is None:
                left_out[f"{kind}: undetermined or not askable"] += 1
                continue
            if not gen.same_split(question.facts):
                left_out[f"{kind}: facts in several splits"] += 1
                continue
            split = gen.split(question.facts[0])
            if not room[split]:
                continue
            row = _row(gen, question, rng)
            if row["id"] not in seen:
                seen.add(row["id"])
                rows.append(row)
                room[split] -= 1
    return rows, dict(left_out)


def _row(gen: Generator, q: Question, rng: random.Random) -> dict:
    complexity, capability, answer_type = KINDS[q.kind]
    paraphrases = gen.templates.questions[q.kind]
    index = rng.randrange(len(paraphrases))
    slots = dict(q.slots)
    if "ask" in slots:
        slots["ask_lower"] = slots["ask"][0].lower() + slots["ask"][1:]
    if "when" in slots:
        slots["When"] = slots["when"][0].upper() + slots["when"][1:]
    question = paraphrases[index].format_map(_Slots(slots, q.kind))
    key = "|".join([q.kind, *(f.id for f in q.facts), repr(sorted(q.gold.items()))])
    digest = hashlib.blake2b(key.encode(), digest_size=8).hexdigest()
    return {
        "id": f"timeline-{q.kind}-{digest}",
        "question": question,
        "query": f"Question: {question}\nAnswer: [MASK]",
        "answers": q.answers,
        "answer_labels": q.labels,
        "answer_aliases": q.aliases,
        "relation": q.kind,
        "subject": q.facts[0].subject,
        "split": gen.split(q.facts[0]),
        "timeline": {
            "kind": q.kind,
            "complexity": complexity,
            "capability": capability,
            "answer_type": answer_type,
            "precision": PRECISION_NAMES[q.precision],
            "paraphrase": index,
            "gold": q.gold,
            "asks": q.asks,
            "facts": [f.to_dict() for f in q.facts],
            "names": _names(gen, q),
        },
    }


def _names(gen: Generator, q: Question) -> dict[str, str]:
    """The label of every entity of the question's facts and ``asks``, as its text names
    them: what a reader linking the question's words to KG entities needs."""
    ids = [e for f in q.facts for e in (f.subject, f.object)]
    ids += [q.asks["given"]] if "given" in q.asks else []
    ids += q.asks.get("options", [])
    return {e: gen.kg.label(e) for e in dict.fromkeys(ids)}


class _Slots(dict):
    """Slot values for one paraphrase; a slot its question lacks names the kind."""

    def __init__(self, values: dict[str, str], kind: str) -> None:
        super().__init__(values)
        self.kind = kind

    def __missing__(self, key: str) -> str:
        raise UserError(f"questions.{self.kind}: no slot {{{key}}} for this kind of question")


def statistics(rows: Sequence[dict]) -> dict[str, Any]:
    """Rows per split, and per kind, complexity, capability and answer type."""
    out: dict[str, Any] = {"questions": len(rows)}
    for field in ("kind", "complexity", "capability", "answer_type", "precision"):
        counts: dict[str, int] = defaultdict(int)
        for row in rows:
            counts[row["timeline"][field]] += 1
        out[f"by_{field}"] = dict(sorted(counts.items()))
    out["multi_answer"] = sum(len(r["answer_labels"]) > 1 for r in rows)
    return out


# --- the builder ------------------------------------------------------------------------------


class TimelineParams(Params):
    renamed: ClassVar[dict[str, str]] = {"per_kind": "per_group"}

    per_group: int = Field(
        200, ge=1, description="At most N questions per question kind, drawn seeded."
    )
    kinds: list[str] | None = Field(
        None,
        description="Question kinds to write (default: all): start, end, start_end, duration, "
        "at_time, allen_relation, allen_yes_no, allen_choice, duration_compare, intersection, "
        "during_fact, ranking, order, set_operation, total_duration.",
    )
    templates: ExistingPath | None = Field(
        None,
        description="Your own phrases and paraphrases instead of the built-in ones: a YAML file "
        "like templates/timeline.yaml (relations the KG has, question kinds you want).",
    )
    seed: int | None = seed_field("the builder's draws")

    @field_validator("kinds")
    @classmethod
    def _known(cls, kinds: list[str] | None) -> list[str] | None:
        unknown = sorted(set(kinds or ()) - set(KINDS))
        if unknown:
            raise UserError(f"unknown question kind {unknown[0]!r}; known: {', '.join(KINDS)}")
        return kinds

    @field_validator("templates")
    @classmethod
    def _readable(cls, path: Path | None) -> Path | None:
        if path is not None:
            load_timeline_templates(path)  # its errors, when the config loads
        return path


def show_timeline(out: Path):
    """What `chronoprobe build timeline` prints: questions per complexity and split."""
    import json

    from rich.table import Table

    stats = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    table = Table(title="timeline questions per complexity and split")
    table.add_column("complexity")
    for name in ("all", *SPLITS):
        table.add_column(name, justify="right")
    for level in COMPLEXITIES:
        table.add_row(
            level, *(str(stats[n]["by_complexity"].get(level, 0)) for n in ("all", *SPLITS))
        )
    return table


@variant(BUILDERS, "timeline", TimelineParams, show=show_timeline)
def build_timeline(ctx: StepContext, params: TimelineParams, inputs: dict[str, Path]) -> None:
    """Build timeline questions (TimelineKGQA, Sun et al., 2025) with answers computed on the KG.

    Simple (one fact: start, end, range, duration, who at a time), medium (two facts: Allen
    relations as relation, yes/no and choice, duration comparison, intersection, retrieval
    during another fact) and complex (three or more: ranking, order, set operations, total
    duration); bounds compared at their common precision, undetermined questions left out.
    Writes questions.jsonl and train/valid/test.jsonl, split by fact (no test question reads a
    fact a training question reads), and stats.json. Ask them with `probe generate`.

    Example: chronoprobe build timeline kg/real --per-group 50 -o timeline/
    """
    from chronoprobe.datasets.writers import _write_stats
    from chronoprobe.jsonl import write_jsonl

    templates = load_timeline_templates(params.templates)
    kg = read_kg(inputs)
    rows, left_out = generate(
        kg, templates=templates, per_kind=params.per_group, seed=seed_of(ctx, params),
        kinds=params.kinds,
    )  # fmt: skip
    if not rows:
        raise UserError(
            f"{inputs['kg']}: no timeline question: no relation of the KG has a template "
            "with dated facts"
        )
    write_jsonl(ctx.out_dir / "questions.jsonl", rows)
    for split in SPLITS:
        write_jsonl(ctx.out_dir / f"{split}.jsonl", [r for r in rows if r["split"] == split])
    stats = {
        "all": statistics(rows),
        **{s: statistics([r for r in rows if r["split"] == s]) for s in SPLITS},
        "left_out": left_out,
    }
    _write_stats(ctx.out_dir, stats, kg)
    headline = {
        "questions": len(rows),
        **{f"{s}_questions": stats[s]["questions"] for s in SPLITS},
        "complexity": stats["all"]["by_complexity"],
    }
    own = () if params.templates is None else (params.templates,)
    finish(ctx, params, inputs, headline, extra_sources=own)
