"""Opening a user's input files: a folder is named as one, and no input makes memory grow
without bound.

Every reader of line-based input (JSON Lines, dump lines, tab-separated KG lines) holds one
record at a time; a file with no newline (``/dev/zero``, a damaged or hostile file, a JSON
document saved on one line by mistake) would otherwise be read into memory whole. A record
longer than the limit stops the read with ``FILE:LINE: record longer than N bytes``. The
limit is 16 MiB by default; for a file whose records are larger, raise it with
``--max-record-bytes`` or the environment variable ``CHRONOPROBE_MAX_RECORD_BYTES`` (in bytes,
or with a unit: ``64M``, ``1G``).

Formats that are one JSON document (SPARQL results, an entities response, a released JSON
array) are read whole from a regular file, whose size is known; from a pipe, a device or a
compressed file, whose size is not, the document is held to the same limit.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

MAX_RECORD_ENV = "CHRONOPROBE_MAX_RECORD_BYTES"
DEFAULT_MAX_RECORD_BYTES = 16 << 20
_SIZE = re.compile(r"([0-9]{1,15})\s*([KMG]i?B?|B)?", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def parse_size(text: str) -> int:
    """Bytes from ``16777216``, ``16M``, ``16MiB`` or ``1G`` (units are powers of 1024)."""
    match = _SIZE.fullmatch(text.strip())
    if not match or int(match.group(1)) < 1:
        raise ValueError(f"not a size in bytes: {text!r} (e.g. 16777216, 64M or 1G)")
    return int(match.group(1)) * _UNITS[(match.group(2) or "")[:1].lower()]


def max_record_bytes() -> int:
    """The limit in force: ``CHRONOPROBE_MAX_RECORD_BYTES`` when set, else 16 MiB."""
    raw = os.environ.get(MAX_RECORD_ENV, "").strip()
    if not raw:
        return DEFAULT_MAX_RECORD_BYTES
    try:
        return parse_size(raw)
    except ValueError as err:
        raise ValueError(f"{MAX_RECORD_ENV}: {err}") from None


class RecordTooLong(ValueError):
    """A record past the limit, located as ``FILE:LINE``."""

    def __init__(self, where: str, limit: int) -> None:
        super().__init__(
            f"{where}: record longer than {limit:,} bytes (no newline within them); if it is "
            f"sound, raise the limit with --max-record-bytes or {MAX_RECORD_ENV}"
        )
        self.where, self.limit = where, limit


def bounded_lines(
    stream: BinaryIO, name: str | Path, limit: int | None = None
) -> Iterator[tuple[int, bytes]]:
    """(line number, line with its newline) of a binary stream, each line at most ``limit``
    bytes besides its newline (:func:`max_record_bytes` by default); :class:`RecordTooLong`
    names ``name`` and the line past it, having read at most ``limit + 1`` bytes of it."""
    limit = limit or max_record_bytes()
    number = 0
    while line := stream.readline(limit + 1):
        number += 1
        if len(line) > limit and not line.endswith(b"\n"):
            raise RecordTooLong(f"{name}:{number}", limit)
        yield number, line


COMPRESSED = (".gz", ".bz2")


@contextmanager
def open_input(path: str | Path) -> Iterator[BinaryIO]:
    """``path`` opened for reading bytes, decompressed when its name ends in ``.gz`` or
    ``.bz2``; a folder, or compressed data that is damaged, is a ValueError saying so (not an
    IsADirectoryError or a decompressor's traceback). A symbolic link is followed, as the user
    named it."""
    if Path(path).is_dir():
        raise ValueError(f"{path}: a folder, not a file")
    if str(path).endswith(COMPRESSED):
        from chronoprobe.kg.io.compressed import open_binary  # the decompressors live there

        with open_binary(path) as stream:
            yield stream
        return
    with open(path, "rb") as stream:
        yield stream


def is_regular(path: str | Path) -> bool:
    """Whether ``path`` is a regular file (a symlink to one counts), not a pipe or a device."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def known_size(path: str | Path) -> bool:
    """Whether the bytes read from ``path`` are as many as its size says: a regular file, not
    compressed (a compressed file may expand a thousandfold)."""
    return is_regular(path) and not str(path).endswith(COMPRESSED)


def read_document(stream: BinaryIO, name: str | Path, sized: bool) -> bytes:
    """All bytes of a stream holding one document: whole when its size is known (``sized``: a
    regular file read as it is), else (a pipe, a device, a compressed file, which may expand
    a thousandfold) at most :func:`max_record_bytes`, :class:`RecordTooLong` past that."""
    if sized:
        return stream.read()
    limit, chunks, total = max_record_bytes(), [], 0
    # in chunks, to the end: a decompressing reader may return less than asked before its end
    while chunk := stream.read(min(1 << 20, limit + 1 - total)):
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise RecordTooLong(f"{name}:1", limit)
    return b"".join(chunks)
