"""One small registry per concept: names to things, imported only when one is used.

Built-in entries are written as ``"module:attribute"`` strings, so listing the names (for
``--help``, for a config's choices) imports nothing heavy; plugins and tests add their own with
:meth:`Registry.register`. Every concept (views, adapters, TKG models, QA models, builders,
loaders, step kinds, report sections) is one ``Registry`` and is used the same way::

    VIEWS.names()                 # ['multi-token', 'pll', ...]
    VIEWS.get("pll")              # the registered object (imports its module on first use)
    VIEWS.describe("pll")         # the summary of its docstring

An unknown name is a ``KeyError`` that lists the known ones and suggests the nearest.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib
import inspect
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Generic, TypeVar

from chronoprobe.errors import UserError

T = TypeVar("T")


# Plugins the user names for every command: modules imported as the command line starts (a
# config's own `plugins:` run only with --trust-plugins or when named here too).
PLUGINS_ENV = "CHRONOPROBE_PLUGINS"


def env_plugins() -> list[str]:
    """The module names in ``CHRONOPROBE_PLUGINS`` (comma-separated)."""
    return [m for m in (m.strip() for m in os.environ.get(PLUGINS_ENV, "").split(",")) if m]


_MODULE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")

# The plugin modules imported in this process, by name: the module and the SHA-256 of its file
# as it was imported. The step cache keys on the digests, so that an edited plugin recomputes.
_PLUGINS: dict[str, tuple[ModuleType, str | None]] = {}


def loaded_plugins() -> dict[str, str | None]:
    """The SHA-256 of each plugin module's own file (not of the modules it imports), by module
    name, for the plugins imported in this process; empty when none was."""
    return {
        name: digest
        for name, (module, digest) in sorted(_PLUGINS.items())
        if sys.modules.get(name) is module  # a test may forget a plugin it imported
    }


def _file_digest(module: ModuleType) -> str | None:
    path = getattr(module, "__file__", None)
    return hashlib.sha256(Path(path).read_bytes()).hexdigest() if path else None


def _plugin_folders(beside: Path | None) -> list[Path]:
    """Where a plugin named by its module is found besides the Python path: the config's
    folder (for a config's plugins) and the current directory."""
    here = Path.cwd()
    if beside is None or beside.resolve() == here:
        return [here]
    return [beside.resolve(), here]


def _places(folders: list[Path]) -> str:
    names = ["the config's folder", "the current directory"][-len(folders) :]
    return ", ".join(f"{folder} ({name})" for folder, name in zip(folders, names, strict=True))


def import_plugin(module: str, beside: Path | None = None) -> str | None:
    """Import a plugin module; returns why it failed (None when it did not), so that a bad
    name or a plugin that breaks while importing is one line, not a traceback.

    The module is looked for on the Python path, then in the folder ``beside`` (a config's
    own, for its plugins) and the current directory, as "importable from where you run" says:
    the ``chronoprobe`` command, unlike ``python``, does not put the current directory on the
    path. They go last, so a file there never hides an installed module. A name is a module's,
    never a path or a file name, which are refused before anything is imported."""
    folders = _plugin_folders(beside)
    where = f"in {_places(folders)} or on the Python path"
    if module.endswith(".py"):
        return f"{module!r} is a file name; name its module instead ({module[:-3]}), found {where}"
    if not _MODULE_NAME.fullmatch(module):
        return (
            f"{module!r} is not a module name; name a Python module found {where}, e.g. "
            "my_plugin (for my_plugin.py) or my_package.steps, not a path"
        )
    for folder in folders:
        if str(folder) not in sys.path:
            sys.path.append(str(folder))
    importlib.invalidate_caches()  # a plugin written a moment ago is found
    try:
        loaded = importlib.import_module(module)
    except ModuleNotFoundError as err:
        if err.name is not None and (module == err.name or module.startswith(f"{err.name}.")):
            return f"cannot import {module!r}: {err}; a plugin is a Python module found {where}"
        return _failed(module, err)
    except Exception as err:  # the plugin's own code failed: say so, in one line
        return _failed(module, err)
    _PLUGINS[module] = (loaded, _file_digest(loaded))
    return None


def _failed(module: str, err: Exception) -> str:
    """One line for a plugin whose own code failed while imported (its traceback with
    CHRONOPROBE_DEBUG set)."""
    if os.environ.get("CHRONOPROBE_DEBUG"):
        raise err
    return f"importing {module!r} failed: {type(err).__name__}: {err}"


def nearest(name: str, known: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest known spelling, case aside (a paper's
    TempLAMA is the importer templama), or nothing."""
    folded = {k.casefold(): k for k in known}
    close = difflib.get_close_matches(name.casefold(), list(folded), n=1, cutoff=0.6)
    return f" (did you mean {folded[close[0]]!r}?)" if close else ""


# words a period follows without ending the sentence
_ABBREVIATIONS = {"e.g", "i.e", "al", "vs", "cf", "approx", "resp", "Fig", "No"}
_SENTENCE_END = re.compile(r"([.!?])\s+")


SUMMARY_CHARACTERS = 200  # a longer first paragraph is summed up by its first sentence


def first_sentence(text: str) -> str:
    """The first sentence of ``text`` (one paragraph, its lines joined): up to the first
    period, question or exclamation mark that ends a sentence (not ``e.g.``, ``et al.``)."""
    joined = " ".join(text.split())
    for end in _SENTENCE_END.finditer(joined):
        word = joined[: end.start()].rsplit(" ", 1)[-1].lstrip("(")
        if word not in _ABBREVIATIONS and not (len(word) == 1 and word.isupper()):
            return joined[: end.start() + 1]
    return joined


def summary(text: str | None) -> str:
    """``text``'s first paragraph (its first sentence if it is long), whole however the
    source wraps it; a paragraph that leads into a list ends in a colon: it ends there."""
    paragraph = " ".join(inspect.cleandoc(text or "").split("\n\n")[0].split())
    joined = first_sentence(paragraph) if len(paragraph) > SUMMARY_CHARACTERS else paragraph
    return joined[:-1] + "." if joined.endswith(":") else joined


_FREE = object()  # a name a registry may take


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
        """Register ``entry`` as ``name``. A name the registry already has, built in or added,
        is refused: a plugin's ``VIEWS.add("pll", ...)`` would otherwise replace the built-in
        for every command and step, and the step cache would serve the one's results for the
        other. The very same object again is no clash (a module that registers it, imported
        twice)."""
        held = self._held(name)
        if held is not _FREE and held is not entry:
            origin = "built in" if name in self._builtins else "added earlier"
            raise UserError(
                f"the {self.concept} registry already has {name!r} ({origin}); register yours "
                "under another name"
            )
        self._entries[name] = entry
        return entry

    def _held(self, name: str) -> object:
        """What ``name`` stands for already, or ``_FREE``: a name not taken, or a built-in one
        its own module is registering as it loads (importing that module here hands back the
        module being loaded, whose entry is not there yet)."""
        if name not in self._entries and name in self._builtins:
            module, _, attribute = self._builtins[name].partition(":")
            loaded = importlib.import_module(module)
            if name not in self._entries and attribute and hasattr(loaded, attribute):
                return getattr(loaded, attribute)
        return self._entries.get(name, _FREE)

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
        """The :func:`summary` of the entry's docstring (its ``description`` if it has one)."""
        entry = self.get(name)
        return summary(getattr(entry, "description", None) or inspect.getdoc(entry))

    def items(self) -> list[tuple[str, T]]:
        return [(name, self.get(name)) for name in self.names()]
