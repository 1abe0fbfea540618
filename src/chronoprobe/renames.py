"""Old names, kept for one release: of params fields, of inputs and of their options.

A params class declares the fields it renamed once, as ``renamed: ClassVar[dict[str, str]] =
{"old_name": "new_name"}`` (a class's renames and those of its bases all hold); an input
declares its old name as ``Input(..., formerly="old_name")``. The old name then still works
everywhere the new one does, until :data:`REMOVED_IN`, and says so each time it is used:

- on the command line, the old option is hidden from --help and prints one line on stderr;
- in a config, the old key prints the same line, naming the key's ``file:line``;
- in ``--set steps.ID.params.OLD=...``, the same, naming the ``--set``;
- in Python (``chronoprobe.probe(limit=...)``), a :class:`DeprecationWarning`.

Both names given at once are refused. Params validate to the new names, so a step's cache key
does not depend on which name was written.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from chronoprobe.errors import UserError

REMOVED_IN = "0.6.0"

# warn(old, new): tell a user that ``old`` was given where ``new`` is the name now
Warn = Callable[[str, str], None]


def renamed_fields(model: type) -> dict[str, str]:
    """old -> new for every field ``model`` or one of its bases renamed."""
    out: dict[str, str] = {}
    for cls in reversed(model.__mro__):
        out.update(cls.__dict__.get("renamed", {}))
    return out


def deprecated(old: str, new: str) -> str:
    """The line a use of an old name prints: ``--limit is deprecated (removed in 0.6.0): use
    --sample``."""
    return f"{old} is deprecated (removed in {REMOVED_IN}): use {new}"


def both_given(old: str, new: str) -> UserError:
    return UserError(f"{new} and {old} are the same setting ({old} is its old name): give {new}")


def tell_user(line: str) -> None:
    """A deprecation on the command line or in a config: one line on stderr."""
    print(line, file=sys.stderr, flush=True)


def python_warning(old: str, new: str) -> None:
    """A keyword argument's old name given to a function of :mod:`chronoprobe.api`, which
    renamed it with :func:`rename_keys`: a :class:`DeprecationWarning` at that function's
    caller."""
    warnings.warn(deprecated(f"{old}=", f"{new}="), DeprecationWarning, stacklevel=4)


def rename_keys(values: Mapping[str, Any], renames: Mapping[str, str], warn: Warn) -> dict:
    """``values`` with each old key under its new name, ``warn(old, new)`` told for each;
    a :class:`UserError` when both names are given."""
    out = dict(values)
    for old, new in renames.items():
        if old not in out:
            continue
        if new in out:
            raise both_given(old, new)
        warn(old, new)
        out[new] = out.pop(old)
    return out


def renaming_validator(cls: type, data: Any, context: Any) -> Any:
    """What :class:`~chronoprobe.params.Params` does before validating: the old keys of a
    mapping under their new names. Who validates says how to tell the user, by the
    validation context's ``renamed`` (a :data:`Warn`; a config names the key's line); without
    one, a :class:`DeprecationWarning` (Python code building params)."""
    renames = renamed_fields(cls)
    if not renames or not isinstance(data, Mapping):
        return data
    warn = (context or {}).get("renamed") or _validator_warning
    return rename_keys(data, renames, warn)


def _validator_warning(old: str, new: str) -> None:
    warnings.warn(deprecated(old, new), DeprecationWarning, stacklevel=2)
