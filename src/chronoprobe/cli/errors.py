"""Turn errors a user can cause into one clear line and exit code 2, not a traceback."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import TypeVar

import typer
from rich.console import Console

F = TypeVar("F", bound=Callable)

# Raised by our loaders, parsers and validators for bad input (BadRecord and KGFormatError
# are ValueErrors); anything else is a bug and keeps its traceback.
USER_ERRORS = (ValueError, FileNotFoundError, NotADirectoryError, PermissionError)


def user_errors(command: F) -> F:
    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except USER_ERRORS as err:
            if os.environ.get("CHRONOPROBE_DEBUG"):
                raise
            from rich.markup import escape

            # escaped: a message may hold brackets (pip install 'chronoprobe[ray]', JSON paths)
            message = f"[red]error:[/] {escape(str(err))}"
            Console(stderr=True).print(message, highlight=False, soft_wrap=True)
            raise typer.Exit(2) from err

    return wrapper  # type: ignore[return-value]
