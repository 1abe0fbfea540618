"""The symbolic oracle of timeline questions: each answer worked out again from a KG.

It reads only what a question names (its facts by subject, relation and object, the entity and
relation it asks about, the time, the options, the operation: ``timeline.facts`` and
``timeline.asks`` of the row, never its gold), looks those facts up in a KG and computes the
answer with the interval semantics of :mod:`chronoprobe.datasets.timeline`. On the KG the
questions were built from it must be right on every row, which tests the generator; on a KG
with facts removed (``--oracle-drop``, or another KG) the rows it gets wrong are what those
facts carried. A named fact missing from the KG, or a triple with several intervals there,
leaves the question unanswered (it says "unknown").

``chronoprobe build timeline-oracle KG --questions FILE`` writes its answers (and its own
typed verdicts); ``probe generate DATA --responses answers.jsonl`` judges them as any model's,
into the same files, metrics and report.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import Field

from chronoprobe.datasets.builders import BUILDERS, finish, read_kg
from chronoprobe.datasets.timeline import (
    _GRANULARITY,
    UNITS,
    TimedFact,
    _uncovered,
    allen,
    answer_label,
    common,
    holds_in,
    overlap,
    spans,
    timed_facts,
    unit,
)
from chronoprobe.errors import UserError
from chronoprobe.kg.graph import TemporalKG
from chronoprobe.params import Params
from chronoprobe.step_context import StepContext
from chronoprobe.steps import variant
from chronoprobe.time import Period, TimePoint

UNKNOWN = "unknown"  # the oracle's answer where the KG does not determine one
ANSWER_KEYS = ("point", "range", "duration", "unit", "relation", "yes", "entities", "order")


class Oracle:
    """Timeline answers from one KG's facts, indexed by triple and by (side, entity, relation)."""

    def __init__(self, facts: Sequence[TimedFact]) -> None:
        self.by_triple: dict[tuple[str, str, str], list[TimedFact]] = defaultdict(list)
        self.by_given: dict[tuple[str, str, str], list[TimedFact]] = defaultdict(list)
        for f in facts:
            self.by_triple[(f.subject, f.relation, f.object)].append(f)
            self.by_given[("subject", f.subject, f.relation)].append(f)
            self.by_given[("object", f.object, f.relation)].append(f)

    def lookup(self, subject: str, relation: str, obj: str) -> TimedFact | None:
        """The one fact of a triple (None: absent, or several intervals)."""
        found = self.by_triple.get((subject, relation, obj), [])
        return found[0] if len(found) == 1 else None

    def answer(self, timeline: dict[str, Any]) -> dict[str, Any] | None:
        """The typed answer (the keys of :data:`ANSWER_KEYS` a gold of this kind has), or
        None where the KG does not determine it."""
        kind, asks = timeline["kind"], timeline.get("asks", {})
        if kind == "at_time":
            return self._at_time(asks)
        if kind in ("ranking", "order"):
            return self._ranking(kind, asks)
        named = timeline["facts"][:1] if kind == "during_fact" else timeline["facts"]
        facts = [self.lookup(f["subject"], f["relation"], f["object"]) for f in named]
        if None in facts:
            return None
        if kind == "during_fact":
            return self._during(facts[0], asks)  # type: ignore[arg-type]
        return _on_facts(kind, facts, asks)  # type: ignore[arg-type]

    def _at_time(self, asks: dict[str, Any]) -> dict[str, Any] | None:
        point = TimePoint.parse(asks["time"])
        period = Period.containing(point, _GRANULARITY[point.precision])
        side = "subject" if asks["asked"] == "object" else "object"
        group = self.by_given.get((side, asks["given"], asks["relation"]), [])
        held = [holds_in(f, period) for f in group]
        if None in held or not any(held):
            return None
        ids = sorted({getattr(f, asks["asked"]) for f, h in zip(group, held, strict=True) if h})
        return {"entities": ids}

    def _during(self, a: TimedFact, asks: dict[str, Any]) -> dict[str, Any] | None:
        side = "subject" if asks["asked"] == "object" else "object"
        group = self.by_given.get((side, asks["given"], asks["relation"]), [])
        if not all(f.closed for f in group):
            return None
        shared = [overlap(a, f) for f in group]
        if None in shared or not any(shared):
            return None
        return {
            "entities": sorted(
                {getattr(f, asks["asked"]) for f, s in zip(group, shared, strict=True) if s}
            )
        }

    def _ranking(self, kind: str, asks: dict[str, Any]) -> dict[str, Any] | None:
        asked, given, relation = asks["asked"], asks["given"], asks["relation"]
        triples = [
            (given, relation, option) if asked == "object" else (option, relation, given)
            for option in asks["options"]
        ]
        facts = [self.lookup(*t) for t in triples]
        if None in facts or any(f.start is None for f in facts):  # type: ignore[union-attr]
            return None
        precision = common(facts)  # type: ignore[arg-type]
        starts = [unit(f.start, precision) for f in facts]  # type: ignore[union-attr,arg-type]
        if len(set(starts)) < len(starts):
            return None
        order = [
            getattr(f, asked)
            for _, f in sorted(zip(starts, facts, strict=True), key=lambda p: p[0])
        ]
        if kind == "ranking":
            return {"entities": [order[asks["rank"]]]}
        return {"order": order}


def _on_facts(kind: str, facts: list[TimedFact], asks: dict[str, Any]) -> dict[str, Any] | None:
    """The answer of a question about its named facts alone (one, two or three)."""
    if kind in ("start", "end"):
        point = getattr(facts[0], kind)
        return None if point is None else {"point": point.iso()}
    if kind == "start_end":
        f = facts[0]
        return {"range": [f.start.iso(), f.end.iso()]} if f.closed else None  # type: ignore
    if not all(f.closed for f in facts):
        return None
    both = spans(facts)
    if both is None:
        return None
    precision, intervals = both
    if kind in ("duration", "total_duration"):
        return {"duration": sum(e - s for s, e in intervals), "unit": UNITS[precision]}
    if kind in ("allen_relation", "allen_choice"):
        return {"relation": allen(*intervals)}
    if kind == "allen_yes_no":
        return {"yes": allen(*intervals) == asks["relation"]}
    if kind == "duration_compare":
        (a0, a1), (b0, b1) = intervals
        return None if a1 - a0 == b1 - b0 else {"yes": a1 - a0 > b1 - b0}
    if kind == "intersection":
        lo, hi = max(s for s, _ in intervals), min(e for _, e in intervals)
        if lo >= hi:
            return None
        start = next(f.start for f in facts if unit(f.start, precision) == lo)  # type: ignore
        end = next(f.end for f in facts if unit(f.end, precision) == hi)  # type: ignore
        return {"range": [start.at_precision(precision).iso(), end.at_precision(precision).iso()]}  # type: ignore
    if kind == "set_operation":
        a, b, c = intervals
        if asks["operation"] == "intersection":
            lo, hi = max(a[0], b[0], c[0]), min(a[1], b[1], c[1])
            return None if lo == hi else {"yes": lo < hi}
        uncovered = _uncovered(c, [a, b])
        return {"yes": uncovered if asks["operation"] == "complement" else not uncovered}
    raise UserError(f"unknown timeline question kind {kind!r}")


def agrees(answer: dict[str, Any] | None, gold: dict[str, Any]) -> bool:
    """Is the oracle's typed answer the gold's (entities as a set, orders in order)?"""
    if answer is None:
        return False
    mine = {k: v for k, v in answer.items() if k in ANSWER_KEYS}
    theirs = {k: gold.get(k) for k in mine}
    if "entities" in mine:
        return set(mine["entities"]) == set(theirs["entities"] or ()) and len(mine) == 1
    return mine == theirs


def said(answer: dict[str, Any] | None, kg: TemporalKG) -> str:
    """The answer in words, as a model would give it (entities by their labels, all of them)."""
    if answer is None:
        return UNKNOWN
    if "entities" in answer:
        return "; ".join(kg.label(e) for e in answer["entities"])
    if "order" in answer:
        return "; ".join(kg.label(e) for e in answer["order"])
    return answer_label(answer)


def dropped(facts: Sequence[TimedFact], share: float, seed: int) -> list[TimedFact]:
    """``facts`` less a ``share`` of them, drawn from a hash of each fact and the seed (a fact
    dropped at one share is dropped at every larger one)."""
    kept = []
    for f in facts:
        digest = hashlib.blake2b(f"{seed}:{f.id}:{f.end}".encode(), digest_size=8).digest()
        if int.from_bytes(digest, "big") / 2**64 >= share:
            kept.append(f)
    return kept


def judge_rows(oracle: Oracle, rows: Sequence[dict], kg: TemporalKG, where: Path) -> list[dict]:
    """Each row's answer by the oracle (``answer``, in words) and whether it is the gold's
    (``right``), with the row's labels; a row that is not a timeline question names its line."""
    out = []
    for number, row in enumerate(rows, 1):
        timeline = row.get("timeline") if isinstance(row, dict) else None
        if not isinstance(timeline, dict) or "asks" not in timeline or "gold" not in timeline:
            raise UserError(
                f"{where}:{number}: not a timeline question with 'asks' (rows of `chronoprobe "
                "build timeline`; rows of an earlier chronoprobe lack 'asks': build them again, "
                "with --no-cache where a cached step holds them)"
            )
        answer = oracle.answer(timeline)
        out.append(
            {
                "id": row["id"],
                "answer": said(answer, kg),
                "right": agrees(answer, timeline["gold"]),
                **{f: timeline[f] for f in ("kind", "complexity", "capability", "answer_type")},
            }
        )
    return out


def oracle_metrics(judged: Sequence[dict]) -> dict[str, Any]:
    """Accuracy overall and by complexity, capability, answer type, kind and the complexity x
    capability grid, each with n and its Wilson 95% interval."""
    from chronoprobe.metrics.uncertainty import proportion, summary

    def figures(group: Sequence[dict]) -> dict[str, Any]:
        return summary(len(group), {"accuracy": proportion([j["right"] for j in group])})

    def by(*fields: str) -> dict[str, Any]:
        groups: dict[str, list[dict]] = defaultdict(list)
        for j in judged:
            groups[" x ".join(j[f] for f in fields)].append(j)
        return {k: figures(g) for k, g in sorted(groups.items())}

    return {
        **figures(judged),
        "unanswered": sum(j["answer"] == UNKNOWN for j in judged),
        **{f"by_{f}": by(f) for f in ("complexity", "capability", "answer_type", "kind")},
        "grid": by("complexity", "capability"),
    }


# --- the step ---------------------------------------------------------------------------------


class OracleParams(Params):
    rows: str | None = Field(
        None,
        description="Which file of the questions folder to answer (default: questions.jsonl, "
        "every split); naming the file in --questions sets it.",
    )
    drop: float = Field(
        0.0,
        ge=0,
        lt=1,
        description="Forget this share of the KG's facts first (drawn by --seed), to measure "
        "what the questions lose with them. Example: --drop 0.2.",
    )
    seed: int = Field(0, description="Seed of the facts --drop forgets.")


def show_oracle(out: Path):
    """What `chronoprobe build timeline-oracle` prints: the oracle's accuracy with its 95%
    interval, over all questions and per complexity, and the facts it answered from."""
    import json

    from rich.table import Table

    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    dropped = metrics["facts_dropped"]
    table = Table(
        title=f"oracle accuracy, from {metrics['facts'] - dropped:,} of the KG's "
        f"{metrics['facts']:,} facts ({dropped:,} dropped); {metrics['unanswered']:,} "
        "questions unanswered"
    )
    for column in ("questions", "n", "accuracy", "95% interval"):
        table.add_column(column, justify="left" if column == "questions" else "right")
    groups = [("all", metrics), *sorted((metrics.get("by_complexity") or {}).items())]
    for name, group in groups:
        low, high = group.get("accuracy_ci95") or (None, None)
        interval = f"[{low:.3f}, {high:.3f}]" if low is not None else "-"
        table.add_row(name, f"{group['n']:,}", f"{group['accuracy']:.3f}", interval)
    return table


@variant(BUILDERS, "timeline-oracle", OracleParams, needs=("questions",), show=show_oracle)
def build_timeline_oracle(ctx: StepContext, params: OracleParams, inputs: dict[str, Path]) -> None:
    """Answer timeline questions with the symbolic oracle: from the KG's facts, never the gold.

    Each question's answer is worked out again from the facts it names, looked up in the KG,
    with the same interval semantics as `build timeline`: on the KG the questions were built
    from every answer is right (a test of the generator); with --drop, or another KG, the
    questions it gets wrong are what the missing facts carried. Writes answers.jsonl
    ({"id", "answer"} per line: judge it with `probe generate --responses`), judged.jsonl
    (each answer against the gold) and metrics.json (accuracy by complexity, capability,
    answer type, kind and their grid, with 95% intervals).

    Example: chronoprobe build timeline-oracle kg/real --questions timeline/test.jsonl
    --drop 0.2 --seed 0 -o oracle/
    """
    from chronoprobe.jsonl import numbered_lines, write_jsonl

    questions = inputs["questions"] / (params.rows or "questions.jsonl")
    if not questions.is_file():
        raise UserError(f"{questions}: no such file of timeline questions")
    kg = read_kg(inputs)
    facts = timed_facts(kg)
    oracle = Oracle(dropped(facts, params.drop, params.seed) if params.drop else facts)
    rows = [row for _, row in numbered_lines(questions)]
    judged = judge_rows(oracle, rows, kg, questions)
    if not judged:
        raise UserError(f"{questions}: no questions")
    write_jsonl(
        ctx.out_dir / "answers.jsonl", ({"id": j["id"], "answer": j["answer"]} for j in judged)
    )
    write_jsonl(ctx.out_dir / "judged.jsonl", judged)
    headline = {
        "facts": len(facts),
        "facts_dropped": len(facts) - sum(len(v) for v in oracle.by_triple.values()),
        **oracle_metrics(judged),
    }
    finish(ctx, params, inputs, headline, extra_sources=(questions,))
