"""Turn errors a user can cause into one clear line and exit code 2, not a traceback."""

from __future__ import annotations

import errno
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
# What the file system says about paths a user gave (a name too long, a folder where a file
# goes, a read-only or full disk): the user's to fix, so one line too.
PATH_ERRNOS = {
    errno.ENAMETOOLONG,
    errno.EISDIR,
    errno.EEXIST,
    errno.EROFS,
    errno.ENOSPC,
    errno.EDQUOT,
    errno.ELOOP,
    errno.EXDEV,
    errno.ENOLCK,  # a file system that cannot lock (some network mounts)
}


def _message(err: Exception) -> str:
    if isinstance(err, OSError) and err.filename is not None and err.strerror:
        where = f"{err.filename} -> {err.filename2}" if err.filename2 else err.filename
        return f"{where}: {err.strerror}"
    return str(err)


def _escaped(text: str) -> str:
    """``text`` for rich: a message may hold brackets (pip install 'chronoprobe[ray]', JSON
    paths)."""
    from rich.markup import escape

    return escape(text)


def user_errors(command: F) -> F:
    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except MemoryError as err:
            if os.environ.get("CHRONOPROBE_DEBUG"):
                raise
            reason = f": {err}" if str(err) else ""
            Console(stderr=True, emoji=False).print(
                f"[red]error:[/] out of memory{_escaped(reason)}; ask for less (fewer facts, "
                "rows or a smaller batch) or run where more memory is free",
                highlight=False,
                soft_wrap=True,
            )
            raise typer.Exit(2) from err
        except (*USER_ERRORS, OSError) as err:
            user = isinstance(err, USER_ERRORS) or err.errno in PATH_ERRNOS
            if os.environ.get("CHRONOPROBE_DEBUG") or not user:
                raise
            message = f"[red]error:[/] {_escaped(_message(err))}"
            Console(stderr=True, emoji=False).print(message, highlight=False, soft_wrap=True)
            raise typer.Exit(2) from err

    return wrapper  # type: ignore[return-value]
