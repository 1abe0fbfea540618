"""chronoprobe: measure and build time-scoped knowledge in language models.

``chronoprobe.probe(VIEW, DATA, model=...)`` and ``chronoprobe.run(CONFIG)`` run a probe or an
experiment from Python and return its results (see :mod:`chronoprobe.api`); importing the
package loads nothing else.
"""

from typing import Any

__version__ = "0.4.0"
__all__ = ["probe", "run"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from chronoprobe import api

        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
