"""Reading plain, gzip and bzip2 inputs fast, as blocks of whole lines.

Dumps come as ``.json``, ``.json.gz`` or ``.json.bz2``; the standard-library decompressors run
at a fraction of the speed the parsers reach, so gzip goes through isal (igzip, decompressing
in a thread of its own where other processes parse, in the caller's thread where the caller
parses) and bzip2 through indexed_bzip2 (as many threads as cores are free, see
:func:`decompression_threads`). Loaders that parse
line by line take blocks of many whole lines: one block is one unit of work for a process
pool, and splitting a block costs far less than iterating a file object line by line. Blocks
reach worker processes through shared memory (:class:`SharedBlocks`), not the pool's pipe.

A distributed load cuts a file into parts instead (:func:`plain_parts`, :func:`line_parts`),
and a ``.bz2`` file into parts that each reader decompresses by itself from the blocks that
hold it (:func:`bz2_parts`, :func:`read_part`).
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from chronoprobe.inputs import RecordTooLong, is_regular, max_record_bytes, open_decompressed
from chronoprobe.jsonl import BOM

BLOCK_SIZE = 4 << 20  # bytes of decompressed text per block


def decompression_threads(parsers: int) -> int:
    """Threads for a parallel decompressor beside ``parsers`` busy parsing processes: the cores
    this process may use that are neither loaded by other work (the 1-minute load average) nor
    taken by the parsers, and at least one. On a busy machine a second decompression thread
    only competes with the parser for a core, and one thread is faster."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    free = (cores or 1) - round(os.getloadavg()[0])
    return max(1, free - parsers)


def line_blocks(
    path: str | Path, threads: int = 1, block_size: int = BLOCK_SIZE, gzip_thread: bool = True
) -> Iterator[tuple[bytearray, int]]:
    """Blocks of whole lines of a possibly compressed file, with the compressed bytes read so far.

    Every block but the last ends with a newline, so line numbers continue from one block to
    the next by counting newlines. One buffer is read into again and again, right after the
    unfinished line the previous block left over: a block is valid only until the next one is
    asked for (copy it to keep it), and nothing may still hold a view of it then. No block is
    allocated, zeroed or copied on its way out, and memory stays at one block (a few, for a
    line longer than a block) whatever the file's size. ``threads`` and ``gzip_thread``: how it
    decompresses (see ``_open``).
    """
    zeros = memoryview(bytes(block_size))  # to grow the buffer by: no pages of their own
    limit = max_record_bytes()
    done = 0  # bytes of the text in the blocks handed out
    with open_decompressed(Path(path), threads, gzip_thread) as (stream, position):
        # A byte-order mark some tools write is no part of the first line.
        block = bytearray(stream.read(len(BOM)).removeprefix(BOM))
        kept = len(block)  # bytes at the buffer's start that hold the unfinished line
        searched = 0  # of those, the bytes known to hold no newline
        while True:
            _fit(block, kept + block_size, zeros)
            with memoryview(block) as view:
                read = stream.readinto(view[kept:])
            if not read:
                break
            end = kept + read
            cut = block.rfind(b"\n", searched, end)
            if cut < 0:  # a line longer than a block: keep reading until it ends, or too long
                if end > limit:
                    raise RecordTooLong(_where(Path(path), done), limit)
                kept = searched = end
                continue
            rest = bytes(block[cut + 1 : end])
            del block[cut + 1 :]
            yield block, position()
            done += len(block)
            block[: len(rest)] = rest
            kept = searched = len(rest)
        del block[kept:]
        if block:
            yield block, position()


def _where(path: Path, offset: int) -> str:
    """``FILE:LINE`` of the line that starts at byte ``offset`` of a file's text, counted by
    reading the file again (only a regular file can be; else ``FILE, byte OFFSET``). Lines are
    not counted as blocks are read: that would cost every load time for the rare error."""
    if offset == 0:
        return f"{path}:1"
    if not is_regular(path):
        return f"{path}, byte {offset:,}"
    with open_decompressed(path, 1, gzip_thread=False) as (stream, _):
        head = stream.read(len(BOM)).removeprefix(BOM)[:offset]
        newlines, left = head.count(b"\n"), offset - len(head)
        while left > 0 and (chunk := stream.read(min(left, 1 << 20))):
            newlines += chunk.count(b"\n")
            left -= len(chunk)
    return f"{path}:{newlines + 1}"


def _fit(block: bytearray, size: int, zeros: memoryview) -> None:
    """Make ``block`` ``size`` bytes long. A bytearray keeps its allocation when it shrinks by
    less than half and grows back into it, so a block reused this way costs no new pages."""
    while len(block) < size:
        block += zeros[: size - len(block)]
    del block[size:]


class SharedBlocks:
    """Blocks handed to worker processes through shared memory rather than through the pool's
    pipe: pickling a block and pushing it through a pipe costs the reader and the worker more
    CPU than parsing it does. A block is copied once into a free slot and the worker gets the
    slot's name and the block's length; a block larger than a slot (a huge line) goes the
    ordinary way. The caller releases a slot once its worker's result is in.
    """

    def __init__(self, slots: int, size: int = 2 * BLOCK_SIZE) -> None:
        from multiprocessing.shared_memory import SharedMemory

        self.size, self.segments = size, {}
        try:
            for _ in range(slots):
                segment = SharedMemory(create=True, size=size)
                self.segments[segment.name] = segment
        except BaseException:
            self.close()
            raise
        self.free = list(self.segments)

    def put(self, block: bytes | bytearray) -> tuple[str, int] | bytes:
        """What to send a worker for ``block``: a (slot, length) ticket, or a copy of the block."""
        if len(block) > self.size or not self.free:
            return bytes(block)  # a copy: the reader reuses its block before this is sent
        name = self.free.pop()
        self.segments[name].buf[: len(block)] = block
        return name, len(block)

    def release(self, ticket: tuple[str, int] | bytes) -> None:
        if isinstance(ticket, tuple):
            self.free.append(ticket[0])

    def close(self) -> None:
        for segment in self.segments.values():
            segment.close()
            segment.unlink()
        self.segments = {}


_ATTACHED: dict = {}  # in a worker: the slots it has mapped, by name


def shared_block(ticket: tuple[str, int] | bytes) -> bytes:
    """In a worker: the block a ticket of :class:`SharedBlocks` stands for, copied out.

    Workers share the reader's resource tracker, so the slot stays registered once, to the
    reader, which unlinks it.
    """
    if not isinstance(ticket, tuple):
        return ticket
    name, length = ticket
    segment = _ATTACHED.get(name)
    if segment is None:
        from multiprocessing.shared_memory import SharedMemory

        segment = _ATTACHED[name] = SharedMemory(name=name)
    return bytes(segment.buf[:length])


# Parts: the units of work of a distributed load. A part starting at byte ``start`` ends with
# the line that holds byte ``(start // size + 1) * size - 1``: a rule of the text alone, so a
# file is cut the same way every time, whether its parts come from byte ranges of a plain file
# or from a decompressing stream, and a resumed load finds its finished parts again.
PART_SIZE = 64 << 20  # bytes of decompressed text per part


def _part_limit(start: int, part_size: int) -> int:
    """The byte whose line ends the part that starts at ``start``."""
    return (start // part_size + 1) * part_size - 1


# The block index of a .bz2 file: (bit in the compressed file, byte in the decompressed text)
# where each block starts, ascending, and where the text ends last.
Blocks = list[tuple[int, int]]


def _line_bounds(stream: BinaryIO, size: int, part_size: int) -> list[tuple[int, int]]:
    """The (start, stop) ranges of the parts of the ``size`` bytes of a seekable stream: each
    reads a few bytes from where a part should end to the end of that line, nothing else."""
    bounds, start = [], 0
    while start < size:
        position = _part_limit(start, part_size)
        stream.seek(position)
        stop = size
        while chunk := stream.read(1 << 16):
            newline = chunk.find(b"\n")
            if newline >= 0:
                stop = position + newline + 1
                break
            position += len(chunk)
        bounds.append((start, min(stop, size)))
        start = stop
    return bounds


def plain_parts(path: str | Path, part_size: int = PART_SIZE) -> list[tuple[int, int]]:
    """The (start, stop) byte ranges of the parts of an uncompressed file."""
    path = Path(path)
    with path.open("rb") as stream:
        return _line_bounds(stream, path.stat().st_size, part_size)


def read_part(path: str | Path, start: int, stop: int, blocks: Blocks | None = None) -> bytes:
    """The bytes of one part of an uncompressed file, or of a ``.bz2`` file given the entries
    of its block index (:func:`bz2_parts`) that the part needs (a byte-order mark left out).

    A part is whole lines: the byte before it is a newline, and it ends with one or at the end
    of the file. Both are checked, so that a file changed since it was cut, or an index that
    does not fit it, fails with an ``OSError`` instead of handing over other bytes.
    """
    begin = max(start - 1, 0)  # the newline before the part, read to check it
    with Path(path).open("rb") if blocks is None else _indexed_bz2(path, blocks) as stream:
        stream.seek(begin)
        data = stream.read(stop - begin)
        at_end = not data.endswith(b"\n") and not stream.read(1)
    if len(data) != stop - begin:
        short = f"{len(data)} bytes from byte {begin}, not {stop - begin}"
        raise OSError(f"{path}: {short}: the file changed or was cut short")
    if (start and data[:1] != b"\n") or not (data.endswith(b"\n") or at_end):
        raise OSError(
            f"{path}: bytes {start} to {stop} are not whole lines: the file changed since it "
            "was cut into parts, or its block index does not fit it"
        )
    return data[1:] if start else data.removeprefix(BOM)


@contextmanager
def _indexed_bz2(path: str | Path, blocks: Blocks) -> Iterator[BinaryIO]:
    """A ``.bz2`` file read by one thread that seeks by ``blocks``, all or some of them."""
    import indexed_bzip2

    stream = indexed_bzip2.open(str(path), parallelization=1)
    try:
        stream.set_block_offsets(dict(blocks))
        yield stream
    finally:
        stream.close()


def bz2_blocks(path: str | Path, threads: int = 1) -> Blocks:
    """The block index of a ``.bz2`` file, found by decompressing it once (in parallel): a
    block's length in text is known only once it is decoded."""
    import indexed_bzip2

    stream = indexed_bzip2.open(str(path), parallelization=max(1, threads))
    try:
        return sorted(stream.block_offsets().items())
    finally:
        stream.close()


def bz2_parts(
    path: str | Path, blocks: Blocks, part_size: int = PART_SIZE
) -> list[tuple[int, int, Blocks, int]]:
    """The parts of a ``.bz2`` file, cut by the rule of :func:`plain_parts` (the driver reads
    a few bytes at each cut, seeking by the index): each part's decompressed (start, stop), the
    entries of the index that reading it needs (its blocks and the one after them), and the
    compressed bytes up to its end."""
    texts = [text for _, text in blocks]
    size = texts[-1]
    with _indexed_bz2(path, blocks) as stream:
        bounds = _line_bounds(stream, size, part_size)
    parts = []
    for start, stop in bounds:
        first = bisect.bisect_right(texts, start) - 1
        after = bisect.bisect_left(texts, stop)
        if texts[after] == size:  # the last part: the end-of-stream entries too
            after = len(blocks) - 1
        end = Path(path).stat().st_size if stop == size else blocks[after][0] // 8
        parts.append((start, stop, blocks[first : after + 1], end))
    return parts


def line_parts(
    path: str | Path, part_size: int = PART_SIZE, threads: int = 1
) -> Iterator[tuple[bytearray, int]]:
    """The parts of a possibly compressed file, cut by the rule of :func:`plain_parts` while it
    is decompressed, each with the compressed bytes read so far. Each part is a buffer of its
    own, its bytes copied once from the blocks they were read into."""
    part = bytearray()
    start = offset = 0  # where the current part and the current block start
    position = 0
    for block, position in line_blocks(path, threads):
        cut = 0
        with memoryview(block) as view:
            while True:
                limit = _part_limit(start, part_size) - offset
                newline = block.find(b"\n", limit) if limit < len(block) else -1
                if newline < 0:
                    break
                part += view[cut : newline + 1]
                yield part, position
                part, cut = bytearray(), newline + 1
                start = offset + cut
            part += view[cut:]
        offset += len(block)
    if part:
        yield part, position
