"""Command groups made on first use, so that ``chronoprobe --help`` imports no operation."""

from __future__ import annotations

from collections.abc import Callable

import typer
import typer.main

from chronoprobe.cli.help_text import Group


def lazy_group(load: Callable[[], typer.Typer]) -> type[Group]:
    """A command group class whose commands are made the first time they are needed, so that
    ``chronoprobe --help`` lists the groups without importing every operation."""

    class LazyGroup(Group):
        def _fill(self) -> None:
            if not getattr(self, "_filled", False):
                self._filled = True
                self.commands.update(typer.main.get_command(load()).commands)

        def list_commands(self, ctx):
            self._fill()
            return super().list_commands(ctx)

        def get_command(self, ctx, name):
            self._fill()
            return super().get_command(ctx, name)

    return LazyGroup
