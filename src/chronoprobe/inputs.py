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

What an input file holds, as a cache key (:func:`file_identity`): a key of a file's size and
modification time serves a stale result after an edit that keeps both (``cp -p``, ``rsync
-a``, ``tar x`` and ``touch -r`` all put the old time back), so

- a regular file of at most :data:`CONTENT_LIMIT` (64 MiB) is keyed by the SHA-256 of its
  bytes: any edit shows, whatever its times say, and the same bytes written again (a copy, a
  cached step writing its output anew) key the same, so they are no work again;
- a larger file (model weights, a dump) is keyed by its size, its modification and change
  times (``mtime``, ``ctime``), its device and its inode, since reading gigabytes at every run
  would cost more than many steps. An edit moves the change time, which no tool can set back,
  and a copy or an extraction is a new inode; the price is that a copy of the same bytes
  counts as a new input.

A file is hashed once per process: its digest is kept under its (size, mtime, ctime, device,
inode), except for a file changed in the last two seconds, whose times a coarse file-system
clock may not move again for a further change (git's "racy" files).
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

from chronoprobe.errors import UserError

MAX_RECORD_ENV = "CHRONOPROBE_MAX_RECORD_BYTES"
DEFAULT_MAX_RECORD_BYTES = 16 << 20
_SIZE = re.compile(r"([0-9]{1,15})\s*([KMG]i?B?|B)?", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def parse_size(text: str) -> int:
    """Bytes from ``16777216``, ``16M``, ``16MiB`` or ``1G`` (units are powers of 1024)."""
    match = _SIZE.fullmatch(text.strip())
    if not match or int(match.group(1)) < 1:
        raise UserError(f"not a size in bytes: {text!r} (e.g. 16777216, 64M or 1G)")
    return int(match.group(1)) * _UNITS[(match.group(2) or "")[:1].lower()]


def max_record_bytes() -> int:
    """The limit in force: ``CHRONOPROBE_MAX_RECORD_BYTES`` when set, else 16 MiB."""
    raw = os.environ.get(MAX_RECORD_ENV, "").strip()
    if not raw:
        return DEFAULT_MAX_RECORD_BYTES
    try:
        return parse_size(raw)
    except ValueError as err:
        raise UserError(f"{MAX_RECORD_ENV}: {err}") from None


class RecordTooLong(UserError):
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
        raise UserError(f"{path}: a folder, not a file")
    if str(path).endswith(COMPRESSED):
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


def is_pipe(path: str | Path) -> bool:
    """Whether ``path`` is a pipe or a socket (``<(zcat dump.gz)``, a FIFO): what is read of it
    is gone, so it can be read once only."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


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


# --- compressed inputs ---------------------------------------------------------------------


class CorruptInput(UserError):
    """A compressed input that does not decompress: its message names the file, the byte
    where known and the reason."""


GZIP_MAGIC, BZIP2_MAGIC = b"\x1f\x8b", b"BZh"
# What decompressors raise on damaged data: EOFError (cut short, or bytes after the end),
# zlib's and isal's errors and gzip.BadGzipFile (OSErrors), RuntimeError from indexed_bzip2.
_DAMAGE = (EOFError, OSError, RuntimeError)


def _refuse_other_content(path: Path, head: bytes, magic: bytes, what: str) -> None:
    """A file named like ``what`` (gzip, bzip2) whose first bytes are not ``what``'s."""
    if head and head != magic[: len(head)]:
        raise CorruptInput(
            f"{path}: not {what} data: the name ends in {path.suffix}, but the file does not "
            f"start with {what}'s bytes ({magic.hex(' ')}); if it is not compressed, rename it"
        )


_DIAGNOSE_CHUNK = 1 << 16  # compressed bytes fed at a time: damage is located to within them


def _damage(path: Path, err: BaseException) -> CorruptInput:
    """The error for a compressed file that failed to decompress with ``err``: where and why,
    found by decompressing it again, member by member, in bounded memory."""
    reason = _gzip_damage(path) if path.name.endswith(".gz") else _bz2_damage(path)
    if reason is None:  # not found again (an I/O error, say): what the decompressor said
        reason = f"cannot decompress it: {type(err).__name__}: {err}"
    return CorruptInput(f"{path}: {reason}")


def _gzip_damage(path: Path) -> str | None:
    import zlib

    with path.open("rb") as raw:
        member, data, at, open_member = zlib.decompressobj(31), b"", 0, False
        while True:
            if not data and not (data := raw.read(_DIAGNOSE_CHUNK)):
                break
            if not open_member and not data.startswith(GZIP_MAGIC[: len(data)]):
                rest = len(data) + len(raw.read())
                return (
                    f"byte {at:,}: {rest:,} bytes after the end of the gzip data, which are no gzip"
                )
            open_member = True
            try:
                member.decompress(data, 1 << 16)
            except zlib.error as err:
                return f"bytes {at:,} to {at + len(data):,}: damaged gzip data ({err})"
            left = member.unused_data if member.eof else member.unconsumed_tail
            at += len(data) - len(left)
            data = left
            if member.eof:
                member, open_member = zlib.decompressobj(31), False
        if open_member:
            return f"byte {at:,}: the gzip data is cut short (the file ends inside it)"
    return None


def _bz2_damage(path: Path) -> str | None:
    import bz2

    with path.open("rb") as raw:
        stream, at, open_stream = bz2.BZ2Decompressor(), 0, False
        data = raw.read(_DIAGNOSE_CHUNK)
        while data or not stream.needs_input:
            open_stream = True
            try:
                stream.decompress(data, 1 << 16)
            except OSError as err:
                return f"bytes {at:,} to {at + len(data):,}: damaged bzip2 data ({err})"
            at += len(data)
            data = b""
            if stream.eof:
                data = stream.unused_data
                at -= len(data)
                stream, open_stream = bz2.BZ2Decompressor(), False
                data += raw.read(_DIAGNOSE_CHUNK) if len(data) < 3 else b""
                if data and not data.startswith(BZIP2_MAGIC[: len(data)]):
                    return None  # trailing bytes: indexed_bzip2 leaves them, warning
            elif stream.needs_input:
                data = raw.read(_DIAGNOSE_CHUNK)
        if open_stream:
            return f"byte {at:,}: the bzip2 data is cut short (the file ends inside it)"
    return None


@contextmanager
def open_decompressed(
    path: Path, threads: int, gzip_thread: bool = True
) -> Iterator[tuple[BinaryIO, Callable[[], int]]]:
    """The decompressed stream, and a function telling how many compressed bytes were read.

    ``threads``: bzip2's decompression threads. ``gzip_thread``: gzip decompresses in a thread
    of its own (off the GIL) rather than in the caller's. A folder, a file that is not what its
    name says, and damaged compressed data are :class:`ValueError` naming the file.
    """
    if path.is_dir():
        raise UserError(f"{path}: a folder, not a file")
    if path.name.endswith(".bz2") and is_regular(path):
        import indexed_bzip2

        with path.open("rb") as raw:  # indexed_bzip2 reads a file of other bytes as empty
            _refuse_other_content(path, raw.read(3), BZIP2_MAGIC, "bzip2")
        # Given the path, indexed_bzip2 reads the file natively from its own threads.
        stream = indexed_bzip2.open(str(path), parallelization=max(1, threads))
        furthest = 0

        def position() -> int:
            # It counts bits; with several threads it may fall back to 0 near the end.
            nonlocal furthest
            furthest = max(furthest, stream.tell_compressed() // 8)
            return furthest

        try:
            yield stream, position
        except _DAMAGE as err:
            raise _damage(path, err) from None
        finally:
            stream.close()
        return
    with path.open("rb") as raw:
        # a pipe tells no position: its progress stays at the start, as its size is unknown
        read_so_far = raw.tell if raw.seekable() else lambda: 0
        if path.name.endswith(".bz2"):  # a pipe: indexed_bzip2 needs a file it can seek in
            import bz2

            try:
                with bz2.open(raw) as stream:
                    yield stream, read_so_far
            except _DAMAGE as err:
                raise _damage(path, err) from None
            return
        if not path.name.endswith(".gz"):
            yield raw, read_so_far
            return
        from isal import igzip, igzip_threaded

        _refuse_other_content(path, raw.peek(2)[:2], GZIP_MAGIC, "gzip")
        # One background thread decompresses while the caller does other work. Where the caller
        # parses, its own thread is cheaper: handing blocks over between threads cost more CPU
        # than it saved time (the parser holds the GIL through a block).
        opened = igzip_threaded.open(raw, "rb", threads=1) if gzip_thread else igzip.open(raw)
        try:
            with opened as stream:
                yield stream, read_so_far
        except _DAMAGE as err:
            raise _damage(path, err) from None


@contextmanager
def open_binary(path: str | Path, threads: int = 1) -> Iterator[BinaryIO]:
    """Open a plain, ``.gz`` or ``.bz2`` file for reading its decompressed bytes."""
    with open_decompressed(Path(path), threads) as (stream, _):
        yield stream


CONTENT_LIMIT = 64 << 20  # bytes: files up to this size are keyed by their content
_HASH_CHUNK = 1 << 20
_RECENT_NS = 2 * 10**9
_digests: dict[tuple[int, ...], str] = {}  # (size, mtime_ns, ctime_ns, dev, ino) -> sha256


def file_identity(path: str | Path) -> list[Any]:
    """The cache key of one input file, links followed: ``["sha256", HEX]`` for a regular file
    of at most :data:`CONTENT_LIMIT` bytes, ``["stat", size, mtime_ns, ctime_ns, dev, inode]``
    for a larger one (see the module docstring). Anything but a regular file (a pipe, a
    device, a folder) is a ValueError: what it holds has no key."""
    # O_NONBLOCK: a pipe put in the file's place is not waited on; it is refused below
    handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with open(handle, "rb", buffering=0) as stream:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode):
            raise UserError(f"{path}: not a regular file, so it cannot be keyed by what it holds")
        if info.st_size > CONTENT_LIMIT:
            return ["stat", *_file_stamp(info)]
        seen = _file_stamp(info)
        digest = _digests.get(seen)
        if digest is None:
            began = time.time_ns()
            digest = _sha256_of_stream(stream)
            if _file_stamp(os.fstat(handle)) == seen and began - info.st_ctime_ns > _RECENT_NS:
                _digests[seen] = digest
    return ["sha256", digest]


def tree_identity(path: str | Path) -> list[list[Any]]:
    """``[[name, *file_identity(file)], ...]`` for a file (under its own name) or for every
    regular file under a folder (their paths inside it, sorted). Links to files are followed;
    links to folders are not entered, nor is anything but a regular file keyed."""
    path = Path(path)
    if not path.is_dir():
        return [[path.name, *file_identity(path)]]
    listing = []
    for root, dirs, files in os.walk(path):
        dirs.sort()
        for name in sorted(files):
            file = Path(root) / name
            if file.is_file():
                listing.append([file.relative_to(path).as_posix(), *file_identity(file)])
    return sorted(listing)


def _file_stamp(info: os.stat_result) -> tuple[int, ...]:
    return (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_dev, info.st_ino)


def _sha256_of_stream(stream) -> str:
    digest = hashlib.sha256()
    while chunk := stream.read(_HASH_CHUNK):
        digest.update(chunk)
    return digest.hexdigest()
