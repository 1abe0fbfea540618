"""Reading plain, gzip and bzip2 inputs fast, as blocks of whole lines.

Dumps come as ``.json``, ``.json.gz`` or ``.json.bz2``; the standard-library decompressors run
at a fraction of the speed the parsers reach, so gzip goes through isal (igzip, decompressing
in a thread of its own) and bzip2 through indexed_bzip2 (several threads). Loaders that parse
line by line take blocks of many whole lines: one block is one unit of work for a process
pool, and splitting a block costs far less than iterating a file object line by line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

BLOCK_SIZE = 4 << 20  # bytes of decompressed text per block


@contextmanager
def _open(path: Path, threads: int) -> Iterator[tuple[BinaryIO, Callable[[], int]]]:
    """The decompressed stream, and a function telling how many compressed bytes were read."""
    if path.name.endswith(".bz2"):
        import indexed_bzip2

        # Given the path, indexed_bzip2 reads the file natively from its own threads.
        stream = indexed_bzip2.open(str(path), parallelization=max(1, threads))
        try:
            yield stream, lambda: stream.tell_compressed() // 8  # it counts bits
        finally:
            stream.close()
        return
    with path.open("rb") as raw:
        if not path.name.endswith(".gz"):
            yield raw, raw.tell
            return
        from isal import igzip_threaded

        # One background thread decompresses while the caller parses (off the GIL).
        with igzip_threaded.open(raw, "rb", threads=1) as stream:
            yield stream, raw.tell


@contextmanager
def open_binary(path: str | Path, threads: int = 1) -> Iterator[BinaryIO]:
    """Open a plain, ``.gz`` or ``.bz2`` file for reading its decompressed bytes."""
    with _open(Path(path), threads) as (stream, _):
        yield stream


def line_blocks(
    path: str | Path, threads: int = 1, block_size: int = BLOCK_SIZE
) -> Iterator[tuple[bytes, int]]:
    """Blocks of whole lines of a possibly compressed file, with the compressed bytes read so far.

    Every block but the last ends with a newline, so line numbers continue from one block to
    the next by counting newlines. Memory stays at a few blocks whatever the file's size.
    """
    with _open(Path(path), threads) as (stream, position):
        rest = b""
        while True:
            chunk = stream.read(block_size)
            if not chunk:
                break
            cut = chunk.rfind(b"\n")
            if cut < 0:  # a line longer than a block: keep reading until it ends
                rest += chunk
                continue
            yield rest + chunk[: cut + 1], position()
            rest = chunk[cut + 1 :]
        if rest:
            yield rest, position()
