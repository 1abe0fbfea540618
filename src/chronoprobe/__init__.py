"""chronoprobe: measure and build time-scoped knowledge in language models.

``chronoprobe.probe(VIEW, DATA, model=...)`` and ``chronoprobe.run(CONFIG)`` run a probe or an
experiment from Python and return its results (see :mod:`chronoprobe.api`); importing the
package loads nothing else. A mistake of the user's is a :class:`UserError` (see
:mod:`chronoprobe.errors`).
"""

from typing import Any

from chronoprobe.errors import UserError
from chronoprobe.version import __version__

__all__ = ["UserError", "__version__", "probe", "run"]


def __getattr__(name: str) -> Any:
    if name in ("probe", "run"):
        from chronoprobe import api

        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
