"""Messages in the words of the command line.

A step raises the same errors inside ``chronoprobe run`` and as a command, and they name what a
config writes: a params field in backticks (`rows`, `base_url`), a field with its value as a
config sets it (`gap_first: skip`) and an input as input `data`. On the command line the user
typed options and arguments instead (--rows, --base-url, --gap-first skip, DATA), so
:func:`spoken` rewrites those names for the command that ran the step: in its errors, in the
warnings it logs while it runs (:func:`speaking`) and in the notes under the table it prints
(:func:`spoken_notes`). A config's run, its log and its metrics.json keep the config's words.
A command such a message suggests (another importer for the same file) is spelled with what
the user typed: their files, their ``-o`` and the options the other command takes too.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from chronoprobe.params import cli_of, option_flag

if TYPE_CHECKING:
    from pydantic import BaseModel

    from chronoprobe.steps import StepKind

# a field in backticks, with the value a config gives it, or an input: "input `data`", "the
# input `split_from`", "`gap_first: skip`"
_NAMED = re.compile(
    r"(?P<input>(?:the )?input )?`(?P<name>[a-z_][a-z0-9_]*)(?:: (?P<value>[^`]+))?`"
)
RUN_LOG = "chronoprobe.run"  # the logger a step's messages go through


def spoken(message: str, kind: StepKind, model: type[BaseModel]) -> str:
    """``message`` with the fields and inputs of ``kind`` (its params ``model``) it names as
    the command line spells them; any other backticked word is left as it is."""
    fields = model.model_fields
    inputs = {declared.name: declared for declared in kind.inputs or ()}

    def say(match: re.Match[str]) -> str:
        name, value = match["name"], match["value"]
        if match["input"] and name in inputs and value is None:
            return option_flag(name) if inputs[name].option else name.upper()
        if match["input"] or name not in fields:
            return match[0]
        spelled = name.upper() if cli_of(fields[name]).argument else option_flag(name)
        if value is None:
            return spelled
        if value in ("true", "false"):  # a switch: --include-deleted, --no-reuse-answers
            return spelled if value == "true" else option_flag(f"no_{name}")
        return f"{spelled} {value}"

    return respelled_imports(_NAMED.sub(say, message))


def respelled_imports(message: str) -> str:
    """``message`` with each suggested ``chronoprobe import FORMAT ...`` rewritten as the
    import command being run, with FORMAT in place of its importer: the same files, ``-o``
    and options (those FORMAT takes), so that following it loses none of them."""
    from chronoprobe.datasets.released_shapes import SUGGESTED_IMPORT

    ctx = current_context()
    if ctx is None or ctx.parent is None or ctx.parent.info_name != "import":
        return message  # not run as an import command: the suggestion stays as written

    def respell(match: re.Match[str]) -> str:
        command = _user_command(ctx, match["format"])
        return f"`{command}`" if command else match[0]

    return SUGGESTED_IMPORT.sub(respell, message)


def current_context() -> Any:
    """The click context of the command running, if any (typer 0.2x carries its own click)."""
    try:
        from typer._click.globals import get_current_context
    except ImportError:  # typer before it vendored click
        from click import get_current_context
    return get_current_context(silent=True)


def _user_command(ctx: Any, fmt: str) -> str | None:
    """The command line of ``ctx`` (an import command) with the importer ``fmt``: what the
    user typed, less the options ``fmt`` does not take."""
    import shlex

    group = ctx.parent.command  # type: ignore[union-attr]
    target = group.get_command(ctx.parent, fmt)  # type: ignore[attr-defined]
    if target is None:
        return None
    taken = {param.name for param in target.params}
    words = ["chronoprobe", "import", fmt]
    for param in ctx.command.params:
        source = ctx.get_parameter_source(param.name)
        if getattr(source, "name", None) != "COMMANDLINE":
            continue
        value = ctx.params.get(param.name)
        values = list(value) if isinstance(value, list | tuple) else [value]
        if param.param_type_name == "argument":
            words += [str(v) for v in values]
        elif param.name in taken:
            if isinstance(value, bool) and param.secondary_opts:
                words.append(param.opts[0] if value else param.secondary_opts[0])
            elif isinstance(value, bool):
                words += [param.opts[0]] if value else []
            else:
                for item in values:
                    words += [param.opts[0], str(item)]
    return shlex.join(words)


@contextmanager
def speaking(kind: StepKind, model: type[BaseModel], step_id: str) -> Iterator[None]:
    """While a command runs its step ``step_id``: the messages it logs (its warnings) in the
    words of the command line."""

    class Spoken(logging.Filter):
        def filter(self, record: logging.LogRecord) -> bool:
            text = record.getMessage()
            said = spoken(text, kind, model)
            if said != text:
                record.msg, record.args = said, ()
            return True

    # a logger's filter sees the records made on it: the run's own lines and the step's
    logs, spoken_filter = [logging.getLogger(RUN_LOG).getChild(step_id)], Spoken()
    for log in logs:
        log.addFilter(spoken_filter)
    try:
        yield
    finally:
        for log in logs:
            log.removeFilter(spoken_filter)


def spoken_notes(shown: Any, kind: StepKind, model: type[BaseModel]) -> Any:
    """What a command prints after its step (a line, or a table with notes under it) in the
    words of the command line."""
    if isinstance(shown, str):
        return spoken(shown, kind, model)
    notes = getattr(shown, "notes", None)
    if notes and dataclasses.is_dataclass(shown):
        return dataclasses.replace(shown, notes=[spoken(n, kind, model) for n in notes])
    return shown
