"""The plugins a command imports, and ``chronoprobe plugins``.

Every command imports the plugins the user chose (``CHRONOPROBE_PLUGINS``, and the installed
plugins allowed with ``chronoprobe plugins allow``) before it reads the registries they add to
(its commands and choices, the report's sections, ``list``). ``chronoprobe report`` also
imports the plugins a run recorded, where the very code the run used is found here.
"""

from __future__ import annotations

import hashlib
import json
import sys
from importlib.machinery import PathFinder
from pathlib import Path

import typer

from chronoprobe.cli.errors import user_errors
from chronoprobe.cli.help_text import Command, reflowed
from chronoprobe.core.plugins import (
    InstalledPlugin,
    allowances,
    installed_plugins,
    is_allowed,
    set_allowed,
    user_plugins,
)
from chronoprobe.errors import UserError
from chronoprobe.registry import PLUGINS_ENV, env_plugins, import_plugin, loaded_plugins, nearest


def import_user_plugins() -> None:
    """Import each plugin the user chose; one that cannot be imported stops the command in
    one line."""
    try:
        modules = user_plugins()
    except ValueError as err:  # an unreadable file of allowed plugins
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(2) from None
    named = set(env_plugins())
    for module in modules:
        problem = import_plugin(module)
        if problem is not None:
            source = PLUGINS_ENV if module in named else "an allowed installed plugin"
            typer.echo(f"error: {source}: {problem}", err=True)
            raise typer.Exit(2)


def _module_file(module: str, beside: Path | None) -> Path | None:
    """The file ``module`` would be imported from (the Python path, then the folder
    ``beside`` and the current directory, as :func:`chronoprobe.registry.import_plugin`
    looks), found without running any of it (nor its packages' ``__init__``)."""
    path: list[str] | None = [*sys.path, *([str(beside)] if beside else []), str(Path.cwd())]
    spec = None
    parts = module.split(".")
    for i in range(len(parts)):
        spec = PathFinder.find_spec(".".join(parts[: i + 1]), path)
        if spec is None:
            return None
        path = list(spec.submodule_search_locations or [])
    return Path(spec.origin) if spec is not None and spec.has_location and spec.origin else None


def recorded_plugins(folder: Path) -> dict[str, dict]:
    """The plugins each run in ``folder`` recorded in its environment.json, by module."""
    from chronoprobe.runs.outputs import find_outputs

    found: dict[str, dict] = {}
    for _, run_dir in find_outputs(folder).runs:
        try:
            record = json.loads((run_dir / "environment.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # the report says what is wrong with a run's environment record
        plugins = record.get("plugins") if isinstance(record, dict) else None
        if isinstance(plugins, dict):
            for module, used in plugins.items():
                if isinstance(used, dict):
                    found.setdefault(module, used)
    return found


def import_run_plugins(folder: Path) -> list[str]:
    """Import the plugins the runs in ``folder`` recorded that are not loaded yet, each only
    where the file found here (on the Python path, where the run found it, or in the current
    directory) is the very one the run used (its SHA-256): a run directory may come from
    someone else, and naming a module in it must not run other code. Returns one line for
    each that cannot be loaded, saying why."""
    loaded = loaded_plugins()
    lines = []
    for module, used in recorded_plugins(folder).items():
        if module in loaded:
            continue
        beside = _root(module, used.get("file"))
        why = _cannot_load(module, used.get("sha256"), beside)
        if why is None:
            why = import_plugin(module, beside=beside)
        if why is not None:
            lines.append(
                f"the run used plugin {module!r}, which is not loaded: {why}; its steps show "
                f"generic sections (name the plugin in {PLUGINS_ENV} to use it as it is here)"
            )
    return lines


def _root(module: str, file: object) -> Path | None:
    """The folder the run imported ``module`` from (``X`` for ``X/my_package/steps.py``):
    a plugin beside the run's config is looked for there again."""
    if not isinstance(file, str):
        return None
    path = Path(file)
    depth = module.count(".") + (path.name == "__init__.py")
    return path.parents[depth] if len(path.parents) > depth else None


def _cannot_load(module: str, digest: object, beside: Path | None) -> str | None:
    path = _module_file(module, beside)
    if path is None:
        return "no such module here"
    if digest is None or hashlib.sha256(path.read_bytes()).hexdigest() != digest:
        return f"{path} is not the file the run used (its SHA-256 differs)"
    return None


plugins_app = typer.Typer(
    help="The plugins installed packages declare: list them, allow one, take an allowance back.",
    no_args_is_help=True,
)


def _state(plugin: InstalledPlugin, given: dict) -> str:
    if plugin.module in env_plugins() or plugin.name in env_plugins():
        return f"imported ({PLUGINS_ENV})"
    if is_allowed(plugin, given):
        return "allowed"
    if plugin.name in given:
        return "allowed at another version: allow it again"
    return "not allowed"


@plugins_app.command("list", cls=Command)
@reflowed
@user_errors
def list_plugins() -> None:
    """List the plugins installed packages declare (the entry-point group
    chronoprobe.plugins), and whether each is imported.

    Installing a plugin does not run it: each is imported only once you allow it (chronoprobe
    plugins allow NAME) or name it in CHRONOPROBE_PLUGINS.

    Example: chronoprobe plugins list
    """
    installed, given = installed_plugins(), allowances()
    if not installed:
        typer.echo("no installed plugins (none declares the entry-point group chronoprobe.plugins)")
    for plugin in installed.values():
        typer.echo(f"{plugin.describe()}: {_state(plugin, given)}")


def _installed(name: str) -> InstalledPlugin:
    installed = installed_plugins()
    if name not in installed:
        known = ", ".join(installed) or "none"
        raise UserError(
            f"no installed plugin {name!r}{nearest(name, installed)}; installed: {known}"
        )
    return installed[name]


@plugins_app.command("allow", cls=Command)
@reflowed
@user_errors
def allow(name: str = typer.Argument(..., help="The plugin's name (chronoprobe plugins list).")):
    """Allow an installed plugin: every command imports it from now on.

    A plugin is Python code that runs with your rights: allow only what you trust. The
    allowance holds for the version installed now; after an upgrade the plugin asks again.
    Steps made with a plugin are cached apart from those made without it (its file's SHA-256
    is in every cache key).

    Example: chronoprobe plugins allow teams
    """
    plugin = _installed(name)
    path = set_allowed(plugin, True)
    typer.echo(f"allowed {plugin.describe()} (kept in {path})")


@plugins_app.command("revoke", cls=Command)
@reflowed
@user_errors
def revoke(name: str = typer.Argument(..., help="The plugin's name (chronoprobe plugins list).")):
    """Take an allowance back: the plugin stays installed and is no longer imported.

    Example: chronoprobe plugins revoke teams
    """
    plugin = _installed(name)
    path = set_allowed(plugin, False)
    typer.echo(f"revoked {plugin.describe()} (kept in {path})")
