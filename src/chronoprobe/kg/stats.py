"""Summary statistics of a TemporalKG, as plain JSON-ready data (for `kg info` and the report)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow.compute as pc

from chronoprobe.kg.graph import TemporalKG
from chronoprobe.time import Precision


def precision_mix(kg: TemporalKG) -> dict[str, int]:
    """How many fact bounds are known to the day, month or year, or are absent."""
    names = {Precision.YEAR: "year", Precision.MONTH: "month", Precision.DAY: "day"}
    out = {"day": 0, "month": 0, "year": 0, "absent": 0}
    for bound in ("start", "end"):
        counts = pc.value_counts(kg.facts.column(f"{bound}_precision")).to_pylist()
        for row in counts:
            key = "absent" if row["values"] is None else names[Precision(row["values"])]
            out[key] += row["counts"]
    return out


def facts_per_year(kg: TemporalKG) -> dict[int, int]:
    """Facts holding in each year of the KG's range (a fact counts in every year it overlaps)."""
    first, last = kg.year_range()
    if first is None:
        return {}
    # Start/end years at any precision bound the years a fact overlaps; open bounds clip to range.
    starts = kg.facts.column("start_year").fill_null(first).to_numpy().astype(np.int64)
    ends = kg.facts.column("end_year").fill_null(last).to_numpy().astype(np.int64)
    delta = np.zeros(last - first + 2, dtype=np.int64)
    np.add.at(delta, np.clip(starts, first, last) - first, 1)
    np.add.at(delta, np.clip(ends, first, last) - first + 1, -1)
    counts = np.cumsum(delta)[:-1]
    return {first + i: int(c) for i, c in enumerate(counts)}


def kg_statistics(kg: TemporalKG, top: int = 10) -> dict[str, Any]:
    per_relation = kg.facts_per_relation()
    total = max(len(kg), 1)
    popular = kg.popularity().slice(0, top).to_pylist()
    first, last = kg.year_range()
    return {
        "name": kg.name,
        "entities": kg.entities.num_rows,
        "relations": kg.relations.num_rows,
        "facts": len(kg),
        "year_range": [first, last],
        "relation_shares": {
            rel: {"label": kg.relation_label(rel), "facts": n, "share": n / total}
            for rel, n in per_relation.items()
        },
        "cardinality": kg.cardinality(),
        "multi_answer_share": kg.multi_answer_share(),
        "precision": precision_mix(kg),
        "open_ended_facts": int(kg.facts.column("end_precision").null_count),
        "unknown_start_facts": int(kg.facts.column("start_precision").null_count),
        "top_entities": [
            {"id": row["entity"], "label": kg.label(row["entity"]), "facts": row["facts"]}
            for row in popular
        ],
    }
