"""Plugins that pip-installed packages declare, and the ones the user allowed.

A package declares its plugin modules under the entry-point group ``chronoprobe.plugins``, as
pytest and lm-evaluation-harness plugins do (in its pyproject.toml)::

    [project.entry-points."chronoprobe.plugins"]
    teams = "chronoprobe_teams.steps"

Installing it makes the plugin known, not trusted: a plugin is code that runs with the user's
rights, so nothing of it is imported until the user allows it, by its entry-point name, once
(``chronoprobe plugins allow teams``, kept in the file :func:`allowed_file` names) or for one
shell (``CHRONOPROBE_PLUGINS=teams``). An allowance holds for the distribution's version it
was given to: an upgraded plugin asks again.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from chronoprobe.atomic import atomic_write_text
from chronoprobe.errors import UserError
from chronoprobe.registry import env_plugins

PLUGIN_GROUP = "chronoprobe.plugins"
ALLOWED_ENV = "CHRONOPROBE_ALLOWED_PLUGINS"


@dataclass(frozen=True)
class InstalledPlugin:
    """One entry point of the group: its name, the module it names, and the distribution
    (name and version) that declares it."""

    name: str
    module: str
    distribution: str
    version: str

    def describe(self) -> str:
        return f"{self.name} ({self.module}, from {self.distribution} {self.version})"


def installed_plugins() -> dict[str, InstalledPlugin]:
    """The plugins the installed distributions declare, by entry-point name; nothing is
    imported (entry points are read from the distributions' metadata)."""
    from importlib.metadata import entry_points

    found: dict[str, InstalledPlugin] = {}
    for point in entry_points(group=PLUGIN_GROUP):
        dist = point.dist
        name, version = (dist.name, dist.version) if dist is not None else ("?", "?")
        found.setdefault(point.name, InstalledPlugin(point.name, point.module, name, version))
    return dict(sorted(found.items()))


def plugin_module(name: str) -> str:
    """The module a plugin name stands for: an installed plugin's entry-point name gives its
    module; any other name is a module's own."""
    plugin = installed_plugins().get(name)
    return plugin.module if plugin is not None else name


def allowed_file() -> Path:
    """Where the allowed installed plugins are kept: ``CHRONOPROBE_ALLOWED_PLUGINS``, else
    ``$XDG_CONFIG_HOME/chronoprobe/allowed-plugins.json`` (``~/.config`` by default)."""
    if os.environ.get(ALLOWED_ENV):
        return Path(os.environ[ALLOWED_ENV])
    config = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(config) / "chronoprobe" / "allowed-plugins.json"


def allowances() -> dict[str, dict[str, str]]:
    """What the user allowed: entry-point name -> the distribution and version allowed; an
    unreadable file is one line naming it."""
    path = allowed_file()
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise UserError(f"{path}: cannot read the allowed plugins: {err}") from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise UserError(f"{path}: not a mapping of plugin names; remove it and allow again")
    return data


def is_allowed(plugin: InstalledPlugin, given: dict[str, dict[str, str]]) -> bool:
    held = given.get(plugin.name)
    return held == {"distribution": plugin.distribution, "version": plugin.version}


def set_allowed(plugin: InstalledPlugin, allowed: bool) -> Path:
    """Allow ``plugin`` (its distribution's version) or take the allowance back; returns the
    file that keeps them."""
    given = allowances()
    if allowed:
        given[plugin.name] = {"distribution": plugin.distribution, "version": plugin.version}
    else:
        given.pop(plugin.name, None)
    path = allowed_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(dict(sorted(given.items())), indent=2) + "\n")
    return path


def user_plugins() -> list[str]:
    """The plugin modules the user chose, in order: those ``CHRONOPROBE_PLUGINS`` names (an
    installed plugin by its entry-point name or its module), then the installed plugins
    allowed, at the version allowed."""
    installed = installed_plugins()
    given = allowances()
    modules = [installed[n].module if n in installed else n for n in env_plugins()]
    for plugin in installed.values():
        if is_allowed(plugin, given) and plugin.module not in modules:
            modules.append(plugin.module)
    return modules


def waiting_plugins() -> list[InstalledPlugin]:
    """The installed plugins the user has not allowed (nor named in CHRONOPROBE_PLUGINS)."""
    chosen = user_plugins()
    return [p for p in installed_plugins().values() if p.module not in chosen]
