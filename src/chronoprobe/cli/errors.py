"""Errors a user can cause as one clear line and exit code 2; a bug as its traceback, said to
be one, with where to report it (exit code 1)."""

from __future__ import annotations

import errno
import functools
import os
from collections.abc import Callable
from typing import TypeVar

import click
import typer
from rich.console import Console

from chronoprobe.errors import UserError

F = TypeVar("F", bound=Callable)

# what typer and click raise to end a command or report its usage: theirs to print (typer
# 0.30 and later carry their own copy of click, with TyperException above its errors)
COMMAND_LINE_SIGNALS = (
    typer.Exit,
    typer.Abort,
    click.exceptions.ClickException,
    click.exceptions.Exit,
    click.exceptions.Abort,
    getattr(typer.exceptions, "TyperException", click.exceptions.ClickException),
)

# Raised by our loaders, parsers and validators for bad input (every error class of theirs is
# a UserError), and what the file system says of a path the user named; anything else is a bug.
USER_ERRORS = (UserError, FileNotFoundError, NotADirectoryError, PermissionError)
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


def where_to_report() -> str:
    """Where the installed chronoprobe's bugs go: its package's issue tracker, where its
    metadata names one."""
    from importlib.metadata import PackageNotFoundError, metadata

    try:
        urls = metadata("chronoprobe").get_all("Project-URL") or []
    except PackageNotFoundError:
        urls = []
    for entry in urls:
        label, _, url = entry.partition(",")
        if label.strip().lower() in ("issues", "bug tracker", "tracker"):
            return f"at {url.strip()}"
    return "to chronoprobe's maintainers"


def _plugin_raising(err: Exception) -> str | None:
    """The loaded plugin whose code is the innermost of chronoprobe's and the plugins' frames
    of ``err``'s traceback (None: chronoprobe's own code)."""
    import traceback

    from chronoprobe.registry import loaded_plugins

    plugins = loaded_plugins()
    if not plugins:
        return None
    frames = [frame for frame, _ in traceback.walk_tb(err.__traceback__)]
    for frame in reversed(frames):
        module = frame.f_globals.get("__name__", "")
        if module in plugins:
            return module
        if module == "chronoprobe" or module.startswith("chronoprobe."):
            return None
    return None


def _bug(err: Exception) -> None:
    """Print ``err``'s traceback and the line saying whose bug it is and where it goes."""
    import traceback

    from chronoprobe.version import __version__

    traceback.print_exception(err)
    plugin = _plugin_raising(err)
    whose = f"the plugin {plugin}" if plugin else f"chronoprobe {__version__}"
    where = "to its authors" if plugin else where_to_report()
    Console(stderr=True, emoji=False).print(
        f"[red]error:[/] this is a bug in {_escaped(whose)}, not a mistake of yours: please "
        f"report it {_escaped(where)}, with the command you ran and the traceback above",
        highlight=False,
        soft_wrap=True,
    )


def user_errors(command: F) -> F:
    """Run a command with a user's mistake printed as one line (exit code 2) and any other
    exception as a bug (its traceback and where to report it; exit code 1).
    ``CHRONOPROBE_DEBUG=1`` lets every exception through as Python raised it."""

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
        except COMMAND_LINE_SIGNALS:
            raise
        except Exception as err:
            if os.environ.get("CHRONOPROBE_DEBUG"):
                raise
            user = isinstance(err, USER_ERRORS) or (
                isinstance(err, OSError) and err.errno in PATH_ERRNOS
            )
            if not user:
                _bug(err)
                raise typer.Exit(1) from err
            message = f"[red]error:[/] {_escaped(_message(err))}"
            Console(stderr=True, emoji=False).print(message, highlight=False, soft_wrap=True)
            raise typer.Exit(2) from err

    return wrapper  # type: ignore[return-value]
