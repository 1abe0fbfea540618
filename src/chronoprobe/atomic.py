"""Atomic file writes: a reader sees the old file or the new one, never half of one.

Every file chronoprobe writes goes through here, so an interrupted run (Ctrl-C, SIGKILL, a full
disk) leaves no truncated output behind to be mistaken for finished work.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def _create_temp(target: Path, folder: Path) -> Path:
    """A new empty file in ``folder`` for ``target``, created with the process umask's
    permissions.

    ``tempfile.mkstemp`` would create it 0600, and the rename would then make every output file
    private to its writer; ``os.open`` with mode 0666 lets the umask decide, as ``open`` does.
    """
    while True:
        tmp = folder / f".{target.name}.{secrets.token_hex(6)}.tmp"
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileExistsError:
            continue
        return tmp


@contextmanager
def atomic_path(target: str | Path, tmp_dir: Path | None = None) -> Iterator[Path]:
    """Yield a temporary path beside ``target`` (or in ``tmp_dir``, a folder of chronoprobe's
    own on the same file system, where a killed write's leftover is known to be ours); rename
    it over ``target`` on success."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = _create_temp(target, target.parent if tmp_dir is None else tmp_dir)
    try:
        yield tmp
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def atomic_write_text(target: str | Path, text: str, tmp_dir: Path | None = None) -> None:
    with atomic_path(target, tmp_dir) as tmp:
        tmp.write_text(text, encoding="utf-8")
