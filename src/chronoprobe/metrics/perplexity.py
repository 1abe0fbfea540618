"""Span perplexity aggregated as ECBD does: per entity first, then over entities.

Each example's score is its token-normalised negative log-likelihood (mean NLL over the span's
tokens). Averaging over an entity's examples first, then over entities, keeps entities with many
sentences from dominating a subset; the subset's perplexity is exp of that mean.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable

from chronoprobe.errors import UserError


def entity_averaged_perplexity(examples: Iterable[tuple[str, float, int]]) -> float:
    """Perplexity of (entity, summed log-probability of the span, span token count) examples."""
    per_entity: dict[str, list[float]] = defaultdict(list)
    for entity, logprob, n_tokens in examples:
        if n_tokens <= 0:
            raise UserError(f"an example of entity {entity!r} has no span tokens")
        per_entity[entity].append(-logprob / n_tokens)
    if not per_entity:
        return math.nan
    entity_means = [sum(v) / len(v) for v in per_entity.values()]
    return math.exp(sum(entity_means) / len(entity_means))
