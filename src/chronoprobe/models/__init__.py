"""Language-model adapters behind four requests: rank the gap, score a span, fill the gap,
continue a prompt.

``load_model(spec)`` gives the adapter for a Hugging Face id, a local directory, a .gguf file or
package-shipped weights (``package:smollm2``); views in ``chronoprobe.probes`` are written against
the requests in ``chronoprobe.models.requests`` only, so every view runs on every family.
Importing this package stays light: torch and transformers load with the first adapter.
"""

from __future__ import annotations

from typing import Any

from chronoprobe.models.requests import (
    Candidate,
    Cloze,
    GenerateRequest,
    Ranking,
    RankRequest,
    ScoreRequest,
    SpanScore,
)

_LAZY = {
    "LanguageModel": "chronoprobe.models.base",
    "load_model": "chronoprobe.models.spec",
    "resolve_spec": "chronoprobe.models.spec",
}

__all__ = [
    "Candidate",
    "Cloze",
    "GenerateRequest",
    "LanguageModel",
    "RankRequest",
    "Ranking",
    "ScoreRequest",
    "SpanScore",
    "load_model",
    "resolve_spec",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
