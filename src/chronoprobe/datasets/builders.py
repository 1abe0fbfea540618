"""The builders' registry and what every builder does: read its KG, seed its draws, and finish
with metrics.json and the set's card.

Declarations and shared helpers only: the builders themselves (``datasets/ops.py``,
``datasets/timeline.py``, ``datasets/timeline_oracle.py``) register here, and ``build`` is the
step kind over this registry.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from chronoprobe.atomic import atomic_write_text
from chronoprobe.errors import UserError
from chronoprobe.registry import Registry
from chronoprobe.step_context import StepContext
from chronoprobe.steps import Variant

BUILDERS: Registry[Variant] = Registry(
    "builder",
    {
        "drift": "chronoprobe.datasets.ops:build_drift",
        "lamatk": "chronoprobe.datasets.ops:build_lamatk",
        "cronq": "chronoprobe.datasets.ops:build_cronq",
        "ecbd": "chronoprobe.datasets.ops:build_ecbd",
        "dates": "chronoprobe.datasets.ops:build_dates",
        "timeline": "chronoprobe.datasets.timeline:build_timeline",
        "timeline-oracle": "chronoprobe.datasets.timeline_oracle:build_timeline_oracle",
    },
)


def read_kg(inputs: dict[str, Path], facts: bool = True):
    """The input KG; one without facts (dated entities alone, which ECBD reads) is refused
    where the builder reads facts (``facts``), saying so rather than writing an empty set."""
    from chronoprobe.kg.graph import TemporalKG

    kg = TemporalKG.load(inputs["kg"])
    if facts and not len(kg):
        raise UserError(
            f"{inputs['kg']}: the KG holds no facts, only entities ({kg.entities.num_rows:,}; "
            "`build ecbd` reads such a KG); this builder needs time-scoped facts"
        )
    return kg


def finish(
    ctx: StepContext, params: Any, inputs: dict[str, Path], headline: dict, **sources: Any
) -> None:
    """metrics.json (the headline counts) and the set's card (README.md; ``sources``: files
    read besides the KG)."""
    from chronoprobe.core.tables import figures_line
    from chronoprobe.datasets.card import card_text, write_step_card

    family = params.family
    metrics = {"family": family, **headline}
    atomic_write_text(ctx.out_dir / "metrics.json", json.dumps(metrics, indent=2) + "\n")
    ctx.log.info(figures_line(metrics))
    if getattr(params, "seed", 0) is None:  # the card's command names the seed drawn with
        params = params.model_copy(update={"seed": ctx.seed})
    text = card_text(BUILDERS.get(family))
    write_step_card(ctx, "build", text, params, inputs, kg=inputs["kg"], **sources)


def seed_of(ctx: StepContext, params: Any) -> int:
    return ctx.seed if params.seed is None else params.seed
