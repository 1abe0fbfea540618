"""Load untrusted pickles (the released CronQuestions files) without running their code.

Unpickling calls any function a pickle names, so a downloaded pickle can run arbitrary code.
This unpickler resolves no global except the builtin container and scalar types: the data
structures those files hold (lists, dicts, sets, tuples, strings, numbers) load, anything else
is refused with the name it asked for.
"""

from __future__ import annotations

import builtins
import io
import pickle
from pathlib import Path
from typing import Any

_ALLOWED = frozenset(
    {"list", "dict", "set", "frozenset", "tuple", "str", "bytes", "int", "float", "bool", "complex"}
)


class RestrictedUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        # Protocol 2 pickles name the Python 2 module; the types are the same.
        if module in ("builtins", "__builtin__") and name in _ALLOWED:
            return getattr(builtins, name)
        raise pickle.UnpicklingError(
            f"refused to load {module}.{name}: only builtin containers and scalars are allowed "
            "in untrusted pickles"
        )


def safe_loads(data: bytes) -> Any:
    return RestrictedUnpickler(io.BytesIO(data)).load()


def safe_load(path: str | Path) -> Any:
    """Unpickle a file through the restricted unpickler; errors name the file."""
    try:
        return safe_loads(Path(path).read_bytes())
    except pickle.UnpicklingError as err:
        raise ValueError(f"{path}: {err}") from err
