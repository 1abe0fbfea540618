"""Knowledge categories over a timeline, after ChroKnowledge (Park et al., 2024, "ChroKnowledge:
Unveiling Chronological Knowledge of Language Models in Multiple Domains", arXiv:2410.09870).

Per (fact, period): ``Correct`` when every greedy answer (one per exemplar set) matches,
``Partial`` when some greedy or sampled answer matches, ``Incorrect`` when none does. Per fact
across periods, a fact is *known* in a period when it is not Incorrect there, and its timeline
is one of: known throughout, only before its change, only after its change (a change is the
first period whose split is ``updated``), never known, or mixed.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

CATEGORIES = ("Correct", "Partial", "Incorrect")
TIMELINES = ("known throughout", "only before the change", "only after the change", "never known")
MIXED = "mixed"


def category(greedy_hits: Sequence[bool], sample_hits: Sequence[bool] = ()) -> str:
    if greedy_hits and all(greedy_hits):
        return "Correct"
    if any(greedy_hits) or any(sample_hits):
        return "Partial"
    return "Incorrect"


def timeline(periods: Sequence[tuple[str, str | None, str]]) -> str:
    """The class of one fact's (period, split, category) list, in period order."""
    known = [c != "Incorrect" for _, _, c in periods]
    if all(known):
        return "known throughout"
    if not any(known):
        return "never known"
    change = next((i for i, (_, split, _) in enumerate(periods) if split == "updated"), None)
    if change is not None:
        if any(known[:change]) and not any(known[change:]):
            return "only before the change"
        if any(known[change:]) and not any(known[:change]):
            return "only after the change"
    return MIXED


def fact_timelines(predictions: Sequence[dict], *, include_deleted: bool = False) -> dict:
    """Per fact (subject, relation) its timeline class; counted overall and per relation.

    Deleted rows carry the previous period's answers, so they leave the timeline unless
    ``include_deleted``; rows without a period (timeline questions) have none.
    """
    facts: dict[tuple[str, str], list[tuple[str, str | None, str]]] = defaultdict(list)
    for p in predictions:
        if (p.get("split") == "deleted" and not include_deleted) or not p.get("period"):
            continue
        facts[(p.get("subject") or p["id"], p.get("relation") or "")].append(
            (p.get("period") or "", p.get("split"), p["category"])
        )
    classes = {key: timeline(sorted(rows)) for key, rows in facts.items()}
    per_relation: dict[str, Counter] = defaultdict(Counter)
    for (_, relation), name in classes.items():
        per_relation[relation][name] += 1
    order = (*TIMELINES, MIXED)
    overall = Counter(classes.values())
    return {
        "facts": len(classes),
        "overall": {name: overall[name] for name in order},
        "by_relation": {
            r: {name: c[name] for name in order} for r, c in sorted(per_relation.items())
        },
    }
