"""One small registry per concept: names to things, imported only when one is used.

Built-in entries are written as ``"module:attribute"`` strings, so listing the names (for
``--help``, for a config's choices) imports nothing heavy; plugins and tests add their own with
:meth:`Registry.register`. Every concept (views, adapters, TKG models, QA models, builders,
loaders, step kinds, report sections) is one ``Registry`` and is used the same way::

    VIEWS.names()                 # ['multi-token', 'pll', ...]
    VIEWS.get("pll")              # the registered object (imports its module on first use)
    VIEWS.describe("pll")         # the first line of its docstring

An unknown name is a ``KeyError`` that lists the known ones and suggests the nearest.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import os
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Generic, TypeVar

T = TypeVar("T")


# Plugins the user names for every command: modules imported as the command line starts (a
# config's own `plugins:` run only with --trust-plugins or when named here too).
PLUGINS_ENV = "CHRONOPROBE_PLUGINS"


def env_plugins() -> list[str]:
    """The module names in ``CHRONOPROBE_PLUGINS`` (comma-separated)."""
    return [m for m in (m.strip() for m in os.environ.get(PLUGINS_ENV, "").split(",")) if m]


_MODULE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def import_plugin(module: str) -> str | None:
    """Import a plugin module; returns why it failed (None when it did not), so that a bad
    name or a plugin that breaks while importing is one line, not a traceback."""
    if not _MODULE_NAME.fullmatch(module):
        return (
            f"{module!r} is not a module name; name a Python module importable from where you "
            "run, e.g. my_plugin or my_package.steps (not a path)"
        )
    try:
        importlib.import_module(module)
    except ImportError as err:
        return f"cannot import {module!r}: {err}"
    except Exception as err:  # the plugin's own code failed: say so, in one line
        if os.environ.get("CHRONOPROBE_DEBUG"):
            raise
        return f"importing {module!r} failed: {type(err).__name__}: {err}"
    return None


def nearest(name: str, known: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest known spelling, or nothing."""
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


class Registry(Generic[T]):
    def __init__(self, concept: str, builtins: Mapping[str, str] | None = None) -> None:
        self.concept = concept
        self._builtins = dict(builtins or {})
        self._entries: dict[str, T] = {}

    def names(self) -> list[str]:
        return sorted({*self._builtins, *self._entries})

    def builtin_names(self) -> list[str]:
        """The names that ship with chronoprobe (not those plugins or tests added)."""
        return sorted(self._builtins)

    def __contains__(self, name: object) -> bool:
        return name in self._entries or name in self._builtins

    def add(self, name: str, entry: T) -> T:
        self._entries[name] = entry
        return entry

    def register(self, name: str | None = None) -> Callable[[T], T]:
        """Decorator: register a class or function under ``name`` (default: its ``name``
        attribute, else its ``__name__``)."""

        def decorate(entry: T) -> T:
            key = name or getattr(entry, "name", None) or entry.__name__  # type: ignore[attr-defined]
            return self.add(str(key), entry)

        return decorate

    def get(self, name: str) -> T:
        if name not in self._entries and name in self._builtins:
            module, _, attribute = self._builtins[name].partition(":")
            loaded = importlib.import_module(module)
            if name not in self._entries:  # the module may register it itself
                self._entries[name] = getattr(loaded, attribute)
        if name not in self._entries:
            raise KeyError(
                f"unknown {self.concept} {name!r}{nearest(name, self.names())}; "
                f"known: {', '.join(self.names()) or 'none'}"
            )
        return self._entries[name]

    __getitem__ = get

    def make(self, name: str, *args, **kwargs):
        """``get(name)(*args, **kwargs)``: an instance of a registered class."""
        return self.get(name)(*args, **kwargs)  # type: ignore[operator]

    def describe(self, name: str) -> str:
        """The first line of the entry's docstring (its ``description`` if it has one)."""
        entry = self.get(name)
        text = getattr(entry, "description", None) or inspect.getdoc(entry) or ""
        return text.strip().splitlines()[0] if text.strip() else ""

    def items(self) -> list[tuple[str, T]]:
        return [(name, self.get(name)) for name in self.names()]
