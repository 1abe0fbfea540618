"""Which released dataset a row comes from, told by its fields.

Each format ``chronoprobe import`` reads has fields that name it. A row that lacks the fields
of the format asked for is checked against the others, so the error says what the file looks
like and which command reads it, instead of one problem per line.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from pathlib import Path

from chronoprobe.errors import UserError

# format -> the fields every row of it has, in the order the error lists them
REQUIRED: dict[str, tuple[str, ...]] = {
    "templama": ("query", "answer", "date", "id", "relation"),
    "ecbd": (
        "ex_id",
        "masked_sentence",
        "answer_str",
        "definition",
        "year",
        "entity_span_str",
        "entity_span_loc",
    ),
    "ecbd-ekp": ("ex_id", "ent_str", "definition", "def_target", "probe_sentences"),
    "cronquestions": ("question", "answers", "type", "answer_type", "entities", "times"),
}
# dynamic-templama rows have TempLAMA's fields; the dates tell them apart
REQUIRED["dynamic-templama"] = REQUIRED["templama"]

# rows chronoprobe itself writes, which need no import
_BUILT = {
    "a drift probe set already in chronoprobe's row format (probe it directly)": (
        "id",
        "query",
        "answer_labels",
    ),
    "an ECBD set already in chronoprobe's row format (probe it directly)": (
        "id",
        "entity",
        "sentence",
        "span_start",
    ),
}


def import_command(fmt: str, path: Path) -> str:
    """The command that imports the file ``path`` as ``fmt`` (into a folder DIR of the user's
    choosing: never one beside the data). On the command line, the suggestion is spelled with
    the user's own arguments and options (:data:`SUGGESTED_IMPORT`)."""
    return shlex.join(["chronoprobe", "import", fmt, str(path), "-o", "DIR"])


# a command import_command suggests, in the backticks a message quotes it in
SUGGESTED_IMPORT = re.compile(r"`chronoprobe import (?P<format>[a-z][a-z0-9-]*) [^`]*`")


def looks_like(fields: Iterable[str], asked: str, path: Path) -> str | None:
    """The released format (or chronoprobe row kind) whose fields a row of ``path`` has, other
    than ``asked``, with the command that reads the file so; None when it has none's."""
    keys = set(fields)
    for name, required in REQUIRED.items():
        if name != asked and set(required) <= keys and REQUIRED[asked] != required:
            return f"{name} rows; read them with `{import_command(name, path)}`"
    for what, required in _BUILT.items():
        if set(required) <= keys:
            return what
    return None


def missing_fields(row: dict, fmt: str) -> list[str]:
    return [name for name in REQUIRED[fmt] if name not in row]


class WrongFormat(UserError):
    """A file that holds another format than the one asked for (never skipped)."""


def check_fields(row: object, fmt: str, where: str, path: Path) -> list[str]:
    """The fields of ``fmt`` that ``row`` (at ``where`` in the file ``path``) lacks;
    :class:`WrongFormat` when the row is another format's (its message names file and line, the
    format it looks like, what is missing and the command that reads it)."""
    if not isinstance(row, dict):
        raise WrongFormat(f"{where}: not {_a(fmt)} row: expected a JSON object")
    missing = missing_fields(row, fmt)
    if missing:
        other = looks_like(row, fmt, path)
        if other is not None:
            raise WrongFormat(
                f"{where}: not {_a(fmt)} row (no {', '.join(missing)}); this looks like {other}"
            )
    return missing


def _a(word: str) -> str:
    """``word`` with its indefinite article ("an ecbd", "a templama")."""
    return f"{'an' if word[:1] in 'aeiou' else 'a'} {word}"
