"""The temporal knowledge graph: records, the columnar TemporalKG, loaders, the synthetic world.

Importing the package stays light (the command line imports ``chronoprobe.kg.ops`` at start-up):
pyarrow loads with the first of these names used.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "KGBuilder": "chronoprobe.kg.graph",
    "KGFormatError": "chronoprobe.kg.graph",
    "TemporalKG": "chronoprobe.kg.graph",
    "Entity": "chronoprobe.kg.records",
    "Fact": "chronoprobe.kg.records",
    "Relation": "chronoprobe.kg.records",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
