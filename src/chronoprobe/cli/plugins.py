"""The plugins a user names in ``CHRONOPROBE_PLUGINS``, imported before a command reads the
registries they add to (its commands and choices, the report's sections, ``list``)."""

from __future__ import annotations

import typer

from chronoprobe.registry import PLUGINS_ENV, env_plugins, import_plugin


def import_env_plugins() -> None:
    """Import each module ``CHRONOPROBE_PLUGINS`` names (comma-separated); one that cannot be
    imported stops the command in one line."""
    for module in env_plugins():
        problem = import_plugin(module)
        if problem is not None:
            typer.echo(f"error: {PLUGINS_ENV}: {problem}", err=True)
            raise typer.Exit(2)
