"""Figures over groups of predictions: overall, per period, per split, per (period, split).

Deleted rows carry the previous period's answers: they are a split's test of forgetting, not
knowledge of their own period. Overall and per-period figures leave them out by default; the
``deleted`` split keeps its own figures either way.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

from chronoprobe.probes.view import DELETED, SKIPPED, View


def grouped(predictions: Sequence[dict], *fields: str) -> dict[tuple, list[dict]]:
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for p in predictions:
        key = tuple(p.get(f) for f in fields)
        if None not in key:
            groups[key].append(p)
    return dict(sorted(groups.items()))


def outside_all(include_deleted: bool = False) -> list[str]:
    """The splits left out of overall, per-period and "all" figures."""
    return [] if include_deleted else [DELETED]


def metrics_by_group(
    view: View, predictions: Sequence[dict], *, include_deleted: bool = False
) -> dict:
    """The view's metrics overall, per period, per split, and per (period, split).

    Overall and per period leave the deleted rows out unless ``include_deleted``; per split
    and per (period, split) every split has its own metrics.
    """
    left_out = outside_all(include_deleted)
    kept = [p for p in predictions if p.get("split") not in left_out]
    by_period_split: dict[str, dict] = defaultdict(dict)
    for (period, split), group in grouped(predictions, "period", "split").items():
        by_period_split[period][split] = view.summarize(group)
    return {
        "overall_excludes": left_out,
        "overall": view.summarize(kept),
        "by_period": {k[0]: view.summarize(g) for k, g in grouped(kept, "period").items()},
        "by_split": {k[0]: view.summarize(g) for k, g in grouped(predictions, "split").items()},
        "by_period_split": dict(by_period_split),
    }


def count_skipped(skipped: Sequence[dict]) -> dict[str, int]:
    """Skipped rows per reason, most frequent first."""
    return dict(Counter(s[SKIPPED] for s in skipped).most_common())
