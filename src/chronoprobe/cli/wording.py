"""Messages in the words of the command line.

A step raises the same errors inside ``chronoprobe run`` and as a command, and they name what a
config writes: a params field in backticks (`rows`, `base_url`), a field with its value as a
config sets it (`gap_first: skip`) and an input as input `data`. On the command line the user
typed options and arguments instead (--rows, --base-url, --gap-first skip, DATA), so
:func:`spoken` rewrites those names for the command that ran the step: in its errors, in the
warnings it logs while it runs (:func:`speaking`) and in the notes under the table it prints
(:func:`spoken_notes`). A config's run, its log and its metrics.json keep the config's words.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from chronoprobe.params import cli_of

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
            return _flag(name) if inputs[name].option else name.upper()
        if match["input"] or name not in fields:
            return match[0]
        spelled = name.upper() if cli_of(fields[name]).argument else _flag(name)
        if value is None:
            return spelled
        if value in ("true", "false"):  # a switch: --include-deleted, --no-reuse-answers
            return spelled if value == "true" else _flag(f"no_{name}")
        return f"{spelled} {value}"

    return _NAMED.sub(say, message)


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


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")
