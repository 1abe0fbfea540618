"""``--max-record-bytes``, before the command (``chronoprobe --max-record-bytes 64M kg convert
...``) or after it (``chronoprobe kg convert ... --max-record-bytes 64M``), as ``--threads`` is:
one option, set by one function wherever it is given."""

from __future__ import annotations

import os
from typing import Any

import typer

from chronoprobe.inputs import MAX_RECORD_ENV, parse_size

MAX_RECORD_HELP = (
    "The longest record an input may hold (a line of JSON Lines, a dump line, a tab-separated "
    "line), in bytes or with a unit: 64M, 1G. A longer one stops the read with FILE:LINE, so "
    "that a file without newlines cannot fill the memory. Default 16M. Before the command or "
    "after it: chronoprobe --max-record-bytes 64M kg convert ..., or chronoprobe kg convert ... "
    "--max-record-bytes 64M"
)


def max_record_option(**extra: Any) -> Any:
    """The ``--max-record-bytes`` option (``extra``: more of typer's settings, e.g. its envvar)."""
    return typer.Option(None, "--max-record-bytes", help=MAX_RECORD_HELP, **extra)


def use_max_record(value: str | None) -> None:
    """Set the record limit for this process and the workers it starts; None leaves it as it
    is (the root option's, the environment's, or the default)."""
    if value is None:
        return
    try:
        os.environ[MAX_RECORD_ENV] = str(parse_size(value))
    except ValueError as err:
        raise typer.BadParameter(str(err), param_hint="--max-record-bytes") from None
