"""Command help as typer shows it: paragraphs that rich wraps to the terminal's width.

Typer keeps a docstring's line breaks, so a paragraph wrapped at the source's width comes out
with a break in mid-sentence wherever the terminal is narrower or wider than the source.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any, TypeVar

import typer
from typer.core import TyperArgument, TyperCommand

_LISTED = re.compile(r"\s|[-*] |[0-9]+\. ")  # a list item or an indented line starts so

Function = TypeVar("Function", bound=Callable)


def reflow(text: str) -> str:
    """``text`` with the lines of each paragraph joined into one, except in a paragraph that
    holds a list item or an indented line, which keeps its lines as written."""
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(
        paragraph
        if any(_LISTED.match(line) for line in paragraph.splitlines())
        else " ".join(paragraph.split("\n"))
        for paragraph in paragraphs
    )


def reflowed(function: Function) -> Function:
    """``function`` with its docstring reflowed, for typer to show as its command's help."""
    function.__doc__ = reflow(function.__doc__ or "")
    return function


def usage_name(argument: TyperArgument) -> str:
    """How a usage line names a positional argument: ``KG``, ``[SERIES]``, ``PATHS...``."""
    name = argument.metavar or (argument.name or "").upper()
    if argument.nargs != 1 and not name.endswith("..."):
        name += "..."
    return name if argument.required else f"[{name}]"


class Command(TyperCommand):
    """A command whose usage line names its arguments as above (typer writes ``{kg}``, which a
    shell would read as a brace expansion), and whose refusals of a value read as ours do:
    typer checks values with pydantic, whose messages start "Value error, "."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except typer.BadParameter as err:
            err.message = err.message.removeprefix("Value error, ")
            raise

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if isinstance(param, TyperArgument):
                pieces.append(usage_name(param))
            else:
                pieces.extend(param.get_usage_pieces(ctx))
        return pieces
