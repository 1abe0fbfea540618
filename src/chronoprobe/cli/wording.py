"""Messages in the words of the command line.

A step raises the same errors inside ``chronoprobe run`` and as a command, and they name what a
config writes: a params field in backticks (`rows`, `base_url`) and an input as input `data`.
On the command line the user typed options and arguments instead (--rows, --base-url, DATA),
so :func:`spoken` rewrites those names for the command that ran the step.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from chronoprobe.params import cli_of

if TYPE_CHECKING:
    from pydantic import BaseModel

    from chronoprobe.steps import StepKind

# a field in backticks, or an input: "input `data`", "the input `split_from`"
_NAMED = re.compile(r"(?P<input>(?:the )?input )?`(?P<name>[a-z_][a-z0-9_]*)`")


def spoken(message: str, kind: StepKind, model: type[BaseModel]) -> str:
    """``message`` with the fields and inputs of ``kind`` (its params ``model``) it names as
    the command line spells them; any other backticked word is left as it is."""
    fields = model.model_fields
    inputs = {declared.name: declared for declared in kind.inputs or ()}

    def say(match: re.Match[str]) -> str:
        name = match["name"]
        if match["input"] and name in inputs:
            return _flag(name) if inputs[name].option else name.upper()
        if not match["input"] and name in fields:
            return name.upper() if cli_of(fields[name]).argument else _flag(name)
        return match[0]

    return _NAMED.sub(say, message)


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")
