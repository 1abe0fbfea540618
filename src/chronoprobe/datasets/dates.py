"""Dated statements for the date-context consistency test, after TimeStress (Ammar Khodja et al.,
2025, "Factual Knowledge in Language Models: Robustness and Anomalies under Simple Temporal
Context Variations", ACL, arXiv:2502.01220).

Each fact becomes its statement ("Steve Jobs works for Apple Inc.") behind a date context ("In
2005, ", "In March 2005, ", "On 4 March 2005, "): once with a right date and, at each distance,
with a wrong date before its start and one after its end, at every precision its dates allow.
Right is the middle day of the fact's interval (its start when it has no end) at that precision;
wrong is the start's year, month or day moved ``d`` units earlier, or the end's moved ``d``
later, so a wrong context lies wholly outside the interval. A fact known to the year only gets
year contexts; an open-ended fact gets no "after" contexts.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

from chronoprobe.errors import UserError
from chronoprobe.kg.graph import TemporalKG
from chronoprobe.templates import MASK, followed_by, load_cloze_templates
from chronoprobe.time import Precision, TimePoint, civil_from_day_number

PRECISIONS = {"year": Precision.YEAR, "month": Precision.MONTH, "day": Precision.DAY}


def shifted(point: TimePoint, units: int) -> TimePoint:
    """``point`` moved by ``units`` of its own precision (years, months or days)."""
    if point.precision == Precision.YEAR:
        return TimePoint(point.year + units)
    if point.precision == Precision.MONTH:
        index = point.year * 12 + point.month - 1 + units  # type: ignore[operator]
        return TimePoint(index // 12, index % 12 + 1)
    return TimePoint(*civil_from_day_number(point.first_day() + units))


def spoken(point: TimePoint) -> str:
    """The date context that opens a statement: "In 2005, ", "In March 2005, ", "On 4 March
    2005, "."""
    return f"{'On' if point.precision == Precision.DAY else 'In'} {point.words()}, "


def date_contexts(
    start: TimePoint, end: TimePoint | None, precision: Precision, distances: Sequence[int]
) -> list[tuple[str, int, TimePoint]]:
    """(kind, distance, date) of the right date and of every wrong one at ``precision``:
    kind is right, before or after; the right date's distance is 0."""
    if start.precision < precision or (end is not None and end.precision < precision):
        return []
    if end is None:
        right = start.at_precision(precision)
    else:
        middle = (start.first_day() + end.last_day()) // 2
        right = TimePoint(*civil_from_day_number(middle)).at_precision(precision)
    out = [("right", 0, right)]
    out += [("before", d, shifted(start.at_precision(precision), -d)) for d in distances]
    if end is not None:
        out += [("after", d, shifted(end.at_precision(precision), d)) for d in distances]
    return out


def build_dated_statements(
    kg: TemporalKG,
    *,
    precisions: Sequence[str] = ("year", "month", "day"),
    distances: Sequence[int] = (1, 2, 5, 10),
    relations: Sequence[str] | None = None,
    first_year: int | None = None,
    max_facts: int | None = None,
    seed: int = 0,
) -> tuple[list[dict], dict]:
    """The statements of every fact with a start (see the module) and counts of what was kept.

    ``first_year`` keeps facts still holding in or after that year; ``max_facts`` draws that
    many of them (seeded). Statements come from the drift templates (one per relation).
    """
    templates = load_cloze_templates("drift")
    if relations is not None:
        unknown = sorted(set(relations) - set(templates))
        if unknown:
            raise UserError(f"no statement template for relations: {', '.join(unknown)}")
        templates = {r: templates[r] for r in relations}
    facts = kg.facts
    columns = {c: facts.column(c).to_pylist() for c in ("subject", "relation", "object")}
    skipped: Counter = Counter()
    chosen = []
    for row in range(facts.num_rows):
        if columns["relation"][row] not in templates:
            continue
        start, end = kg.fact_points(row)
        if start is None or start.year < 1:
            skipped["no start date"] += 1
            continue
        if first_year is not None and end is not None and end.year < first_year:
            continue
        chosen.append((row, start, end))
    if max_facts is not None and len(chosen) > max_facts:
        chosen = sorted(random.Random(seed).sample(chosen, max_facts), key=lambda c: c[0])
    statements = []
    for row, start, end in chosen:
        subject, relation, obj = (columns[c][row] for c in ("subject", "relation", "object"))
        template = templates[relation]
        given = kg.label(subject if template.mask == "object" else obj)
        answer = kg.label(obj if template.mask == "object" else subject)
        left, right = template.query(given).split(MASK)
        fact = f"{subject}_{relation}_{obj}_{start.iso()}"
        for name in precisions:
            for kind, distance, date in date_contexts(start, end, PRECISIONS[name], distances):
                statements.append(
                    {
                        "id": f"{fact}_{name}_{kind}{distance or ''}",
                        "fact": fact,
                        "relation": relation,
                        "subject": subject,
                        "object": obj,
                        "precision": name,
                        "kind": kind,
                        "distance": distance,
                        "date": date.iso(),
                        "left": spoken(date) + left,
                        "span": answer,
                        "right": followed_by(answer, right),
                        "start": start.iso(),
                        "end": end.iso() if end else None,
                    }
                )
    kinds = Counter((s["precision"], s["kind"]) for s in statements)
    stats = {
        "facts": len({s["fact"] for s in statements}),
        "statements": len(statements),
        "by_precision": {
            p: {k: kinds[(p, k)] for k in ("right", "before", "after")} for p in precisions
        },
        "skipped_facts": dict(skipped),
    }
    return statements, stats
