"""Load untrusted pickles (the released CronQuestions files) without running their code, and
with bounded work.

Unpickling calls any function a pickle names, so a downloaded pickle can run arbitrary code.
This unpickler resolves no global except the builtin container and scalar types: the data
structures those files hold (lists, dicts, sets, tuples, strings, numbers) load, anything else
is refused with the name it asked for.

Data alone can still be made to cost without end. A pickle refers back to objects it built
before (its memo), so a few hundred bytes make a list holding one list twice, holding one list
twice, ... forty levels down: it loads at once, but anything that walks it (printing it,
sorting by ``str``, copying) visits 2**40 lists. So the loaded value is walked once, counting
every part as often as it occurs, and refused past :class:`Limits` (depth, objects and
characters in proportion to the file's size); the calls a pickle may make (``set(...)``,
``bytes(...)``) are checked the same way before they run. The one cost that cannot be checked
from outside, hashing a key built the same way while the unpickler fills a dict, is bounded by
time and memory: :func:`safe_load` unpickles in a separate Python process, stopped at a
deadline and limited in memory, which hands back only a value that passed the checks.
"""

from __future__ import annotations

import builtins
import io
import pickle
import subprocess
import sys
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import Any

try:
    from chronoprobe.errors import UserError
except ImportError:  # the unpickling process runs this file alone, with the stdlib only
    UserError = ValueError


def looks_pickled(head: bytes) -> bool:
    """Whether a file whose first bytes are ``head`` is a pickle: protocols 2 to 5 start with
    0x80 (PROTO and their number), protocols 0 and 1 with a mark or an empty list, dict or
    tuple (``(lp0``, ``]q``, ``}q``), which no JSON and no text of a release starts with."""
    return head[:1] in (b"\x80", b"(", b"]", b"}", b")")


_CONTAINERS = {"list": list, "dict": dict, "set": set, "frozenset": frozenset, "tuple": tuple}
_SCALARS = {"str", "bytes", "int", "float", "bool", "complex"}
_CONTAINER_TYPES = (list, tuple, set, frozenset, dict)
_TEXT = (str, bytes)


@dataclass(frozen=True)
class Limits:
    """What an untrusted pickle may cost, mostly in proportion to its size in bytes: nesting,
    objects and characters of the value it gives (shared parts counted each time they occur),
    and, in :func:`safe_load`, wall-clock time and memory.

    A pickle of data needs about one byte per object it holds and less than one per character;
    the allowances leave room for the strings such files share (dict keys, templates).
    """

    depth: int = 64
    objects_per_byte: int = 4
    characters_per_byte: int = 64
    base: int = 1 << 20  # objects and characters allowed to any pickle, however small
    seconds_per_mb: float = 2.0
    base_seconds: float = 60.0
    memory_per_byte: int = 64
    base_memory: int = 1 << 30

    def seconds(self, data: bytes) -> float:
        return self.base_seconds + self.seconds_per_mb * len(data) / 2**20


class _Budget:
    """The objects and characters left to a pickle's value; :meth:`walk` spends them."""

    def __init__(self, data: bytes, limits: Limits) -> None:
        self.objects = limits.base + limits.objects_per_byte * len(data)
        self.characters = limits.base + limits.characters_per_byte * len(data)
        self.depth = limits.depth

    def walk(self, value: Any) -> None:
        """Count ``value``'s parts (each time they occur) and its nesting; UnpicklingError past
        the limits. It stops as soon as a budget is spent, so its own work is bounded too. A
        scalar (the argument of ``complex(...)``, say) has no parts: only a text's characters
        count."""
        if isinstance(value, _TEXT):
            self.characters -= len(value)
        stack = [(value, 1)] if isinstance(value, _CONTAINER_TYPES) else []
        while stack:
            item, depth = stack.pop()
            if depth > self.depth:
                raise pickle.UnpicklingError(f"refused: nested deeper than {self.depth} levels")
            if isinstance(item, dict):
                item = [*item.keys(), *item.values()]
            self.objects -= 1 + len(item)
            for element in item:
                if isinstance(element, _TEXT):
                    self.characters -= len(element)
                elif isinstance(element, _CONTAINER_TYPES):
                    stack.append((element, depth + 1))
            self._check()
        self._check()

    def _check(self) -> None:
        if self.objects < 0 or self.characters < 0:
            raise pickle.UnpicklingError(
                "refused: the value holds far more objects or characters than a pickle of "
                "its size can hold without counting shared parts again and again"
            )


class RestrictedUnpickler(pickle.Unpickler):
    def __init__(self, data: bytes, limits: Limits) -> None:
        super().__init__(io.BytesIO(data))
        self.budget = _Budget(data, limits)

    def find_class(self, module: str, name: str) -> Any:
        # Protocol 2 pickles name the Python 2 module; the types are the same.
        if module not in ("builtins", "__builtin__") or name not in {*_CONTAINERS, *_SCALARS}:
            raise pickle.UnpicklingError(
                f"refused to load {module}.{name}: only builtin containers and scalars are "
                "allowed in untrusted pickles"
            )
        kind, budget = getattr(builtins, name), self.budget

        def checked(*args: Any) -> Any:
            """``kind(*args)`` once its arguments are known to cost little to walk or hash;
            ``bytes(n)`` and ``str(container)`` are no data a pickle of data needs."""
            for arg in args:
                if name in ("bytes", "str") and not isinstance(arg, _TEXT):
                    raise pickle.UnpicklingError(f"refused: {name}() of {type(arg).__name__}")
                budget.walk(arg)
            return kind(*args)

        return checked


def safe_loads(data: bytes, limits: Limits | None = None) -> Any:
    """Unpickle ``data`` through the restricted unpickler and check its value's size; refusals
    raise UnpicklingError. Runs in this process, so with no time limit (see :func:`safe_load`)."""
    unpickler = RestrictedUnpickler(data, limits or Limits())
    try:
        value = unpickler.load()
    except pickle.UnpicklingError:
        raise
    except RecursionError:
        raise pickle.UnpicklingError("refused: nested too deeply to unpickle") from None
    except MemoryError:
        raise pickle.UnpicklingError("refused: more memory than the limit") from None
    except Exception as err:  # a malformed pickle raises about any error type
        raise pickle.UnpicklingError(f"not a readable pickle: {err!r}") from None
    unpickler.budget.walk(value)
    return value


def safe_load(path: str | Path, limits: Limits | None = None) -> Any:
    """Unpickle a file through the restricted unpickler in a separate Python process, stopped
    at the deadline of ``limits``; every refusal is a ValueError naming the file."""
    limits = limits or Limits()
    data = Path(path).read_bytes()
    seconds = limits.seconds(data)
    memory = limits.base_memory + limits.memory_per_byte * len(data)
    # A fresh interpreter that runs this file alone (stdlib imports only, so it starts fast and
    # imports no __main__ of the caller), isolated from the environment.
    code = (
        "import importlib.util as u, sys; s = u.spec_from_file_location('safe_pickle', "
        f"{__file__!r}); m = sys.modules['safe_pickle'] = u.module_from_spec(s); "
        "s.loader.exec_module(m); m._serve()"
    )
    request = pickle.dumps((data, astuple(limits), memory))
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-c", code], input=request, capture_output=True, timeout=seconds
        )
    except subprocess.TimeoutExpired:
        raise UserError(
            f"{path}: refused: unpickling took more than {seconds:.0f} s, far longer than a "
            f"data file of {len(data):,} bytes needs"
        ) from None
    if done.returncode != 0:
        error = done.stderr.decode(errors="replace").strip().splitlines()[-1:]
        raise UserError(f"{path}: refused: the unpickling process failed: {' '.join(error)}")
    # The worker's own pickle of a value that passed the checks: loading it costs what loading
    # that value costs, but it still goes through the restricted unpickler.
    ok, result = RestrictedUnpickler(done.stdout, limits).load()
    if not ok:
        raise UserError(f"{path}: {result}")
    return result


def _serve() -> None:
    """In the worker process: unpickle the request's data, answer (True, value) or
    (False, why)."""
    data, limits, memory = pickle.loads(sys.stdin.buffer.read())  # from safe_load: trusted
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    except (ImportError, ValueError, OSError):
        pass  # no address-space limit on this system: the deadline still holds
    try:
        answer = (True, safe_loads(data, Limits(*limits)))
    except pickle.UnpicklingError as err:
        answer = (False, str(err))
    sys.stdout.buffer.write(pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL))
