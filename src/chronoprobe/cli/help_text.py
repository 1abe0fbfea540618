"""Command help as typer shows it: paragraphs that rich wraps to the terminal's width, and
option tables whose descriptions get the width.

Typer keeps a docstring's line breaks, so a paragraph wrapped at the source's width comes out
with a break in mid-sentence wherever the terminal is narrower or wider than the source.

Typer lays an option out in five columns (long name, short name, ``--no-`` name, its short
name, type) as wide as their widest entry, which left the descriptions of ``probe generate``
22 characters at 100 columns. Here the names share one column of at most
:data:`NAMES_WIDTH` characters (the ``--no-`` name on a line of its own) and the type one of
at most :data:`TYPES_WIDTH`; the description takes the rest. Each panel is narrowed alike,
however the options are grouped into panels.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import typer
from rich.table import Table
from rich.text import Text
from typer import rich_utils
from typer.core import TyperArgument, TyperCommand, TyperGroup

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
    """``function`` with its docstring reflowed, for typer to show as its command's help, its
    brackets as text: typer reads help as rich markup, which took ``pip install
    'chronoprobe[serve]'`` for a style and showed ``pip install 'chronoprobe'``."""
    from rich.markup import escape

    function.__doc__ = escape(reflow(function.__doc__ or ""))
    return function


def usage_name(argument: TyperArgument) -> str:
    """How a usage line names a positional argument: ``KG``, ``[SERIES]``, ``PATHS...``."""
    name = argument.metavar or (argument.name or "").upper()
    if argument.nargs != 1 and not name.endswith("..."):
        name += "..."
    return name if argument.required else f"[{name}]"


NAMES_WIDTH = 26  # the column of an option's names; a longer name folds
TYPES_WIDTH = 15  # the column of its type (a list of choices folds)


def _joined(*parts: Any, sep: str = ", ") -> Text:
    return Text(sep).join(Text(p) if isinstance(p, str) else p for p in parts if p)


def _broken_at_bars(kind: Any) -> Any:
    """A type wider than its column (``<auto|float32|bfloat16|float16>``) on lines broken
    after a ``|``, not inside a choice."""
    if not isinstance(kind, Text) or len(kind.plain) <= TYPES_WIDTH:
        return kind
    cuts, line, offset = [], 0, 0
    for piece in re.split(r"(?<=\|)", kind.plain):
        if line and line + len(piece) > TYPES_WIDTH:
            cuts.append(offset)
            line = 0
        line, offset = line + len(piece), offset + len(piece)
    return Text("\n").join(kind.divide(cuts)) if cuts else kind


def narrowed(table: Table) -> Table:
    """typer's options table with an option's names in one capped column, its type in
    another, and its description in the rest of the width."""
    columns = [list(column.cells) for column in table.columns]
    required = [None] * len(columns[-1]) if len(columns) == 6 else columns.pop(0)
    long, short, negative, negative_short, types, helps = columns
    looks = ("box", "show_lines", "leading", "border_style", "row_styles", "pad_edge", "padding")
    out = Table(
        highlight=True, show_header=False, expand=True, **{k: getattr(table, k) for k in looks}
    )
    if len(table.columns) == 7:
        out.add_column(no_wrap=True)
    out.add_column(max_width=NAMES_WIDTH, overflow="fold")
    out.add_column(max_width=TYPES_WIDTH, overflow="fold")
    out.add_column(ratio=1)
    for row in zip(required, long, short, negative, negative_short, types, helps, strict=True):
        mark, *names, kind, about = row
        spelled = _joined(_joined(*names[:2]), _joined(*names[2:]), sep="\n")
        kind = _broken_at_bars(kind)
        out.add_row(*([mark] if len(table.columns) == 7 else []), spelled, kind, about)
    return out


class _NarrowingConsole:
    """The console typer prints a help panel on, narrowing the options table inside."""

    def __init__(self, console: Any) -> None:
        self._console = console

    def __getattr__(self, name: str) -> Any:
        return getattr(self._console, name)

    def print(self, renderable: Any = "", *args: Any, **kwargs: Any) -> None:
        table = getattr(renderable, "renderable", None)
        if isinstance(table, Table) and len(table.columns) in (6, 7):
            renderable.renderable = narrowed(table)
        self._console.print(renderable, *args, **kwargs)


@contextmanager
def _narrow_option_panels() -> Iterator[None]:
    panel = rich_utils._print_options_panel

    def narrowing(*, console: Any, **options: Any) -> None:
        panel(console=_NarrowingConsole(console), **options)

    rich_utils._print_options_panel = narrowing
    try:
        yield
    finally:
        rich_utils._print_options_panel = panel


class NarrowHelp:
    """Help whose option tables give the descriptions the width (see the module's doc)."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        with _narrow_option_panels():
            super().format_help(ctx, formatter)  # type: ignore[misc]


class Group(NarrowHelp, TyperGroup):
    """A command group with narrowed option tables, whose unknown command names get a hint:
    the same name in other case, or the group that has the command."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        try:
            return super().resolve_command(ctx, args)
        except typer.BadParameter:
            raise
        except Exception as err:
            message = getattr(err, "message", None)
            if not args or not isinstance(message, str) or "No such command" not in message:
                raise
            from chronoprobe.cli.hints import unknown_command_hint

            hint = unknown_command_hint(ctx, self, args[0])
            if hint:
                err.message = f"No such command {args[0]!r}. {hint}"  # type: ignore[attr-defined]
            raise


class Command(NarrowHelp, TyperCommand):
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
