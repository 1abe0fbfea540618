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


def user_errors(command: F) -> F:
    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except (*USER_ERRORS, OSError) as err:
            user = isinstance(err, USER_ERRORS) or err.errno in PATH_ERRNOS
            if os.environ.get("CHRONOPROBE_DEBUG") or not user:
                raise
            from rich.markup import escape

            # escaped: a message may hold brackets (pip install 'chronoprobe[ray]', JSON paths)
            message = f"[red]error:[/] {escape(_message(err))}"
            Console(stderr=True).print(message, highlight=False, soft_wrap=True)
            raise typer.Exit(2) from err

    return wrapper  # type: ignore[return-value]
