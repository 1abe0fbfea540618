"""The Wikidata dump loader on Ray (``kg convert --engine ray [--address ADDR]``).

Each dump is cut into parts of whole lines (:data:`~chronoprobe.kg.io.compressed.PART_SIZE`
bytes of JSON each, by a rule of the text alone, see
:func:`~chronoprobe.kg.io.compressed.plain_parts`), and each part is parsed in a Ray task by
:func:`~chronoprobe.kg.io.wikidata_dump.parse_block`, the function the local process pool runs.
The tasks read their parts themselves (on a cluster the file must be at the same path on every
node: a shared file system): an uncompressed dump's as byte ranges; a ``.bz2`` dump's as ranges
of its text, which a task decompresses from the blocks that hold them, by the dump's block
index (made here once by a parallel decompression,
:func:`~chronoprobe.kg.io.compressed.bz2_blocks`, and kept with the parts). A ``.gz`` dump is
decompressed once, here, and its parts are sent to the tasks through Ray's object store: a
gzip index must carry 32 kB of text per point to resume from, which for a whole dump grows too
large to hand every task.

Every finished part is written as Parquet files (its entities, relations and facts) and a
small record (skip counts, problems, lines) into a folder of its own, renamed into place, so a
killed load resumes from the parts it finished. A task whose worker died, or that failed
reading its input (an ``OSError``), is retried by Ray, three times at most; one whose parsing
failed is not, as it would fail the same way again. Once every part of a dump is in, the parts
are read back in order and gathered exactly as the local blocks are: the KG is the same, byte
for byte.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pyarrow.parquet as pq

from chronoprobe.atomic import atomic_write_text
from chronoprobe.core.ray_session import cluster_cpus, connect
from chronoprobe.kg.io.compressed import (
    PART_SIZE,
    bz2_blocks,
    bz2_parts,
    decompression_threads,
    line_parts,
    plain_parts,
    read_part,
)
from chronoprobe.kg.io.options import LoadOptions
from chronoprobe.kg.io.wikidata_dump import Parsed, parse_block

_TABLES = ("entities", "relations", "facts")
_RECORD = "part.json"


def parse_part(source: bytes | bytearray | tuple, lang: str, relations) -> Parsed:
    """One part's lines parsed: given as bytes, or as the arguments of
    :func:`~chronoprobe.kg.io.compressed.read_part` that read them."""
    block = read_part(*source) if isinstance(source, tuple) else source
    return parse_block(block, 1, lang, relations)


class PartStore:
    """Finished parts on disk, one folder each, under a key of what made them: parts made
    from other inputs or options are removed, not mixed in."""

    def __init__(self, folder: Path, key: dict) -> None:
        self.folder = folder
        stamp, text = folder / "key.json", json.dumps(key, sort_keys=True)
        if not stamp.is_file() or stamp.read_text(encoding="utf-8") != text:
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            atomic_write_text(stamp, text)

    def _path(self, file: int, part: int) -> Path:
        return self.folder / f"{file:03d}-{part:07d}"

    def done(self, file: int, part: int) -> bool:
        return self._path(file, part).is_dir()

    def write(self, file: int, part: int, parsed: Parsed) -> None:
        target = self._path(file, part)
        work = target.with_name(f".{target.name}.tmp")
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        for name in _TABLES:
            pq.write_table(getattr(parsed, name), work / f"{name}.parquet")
        record = {"skipped": parsed.skipped, "problems": parsed.problems, "lines": parsed.lines}
        record["more_problems"] = parsed.more_problems
        (work / _RECORD).write_text(json.dumps(record), encoding="utf-8")
        work.rename(target)

    def index(self, file: int, make: Callable[[], list]) -> list:
        """The block index of the ``file``-th input: kept, or made by ``make`` and kept."""
        path = self.folder / f"index-{file:03d}.json"
        if not path.is_file():
            atomic_write_text(path, json.dumps(make()))
        return [tuple(entry) for entry in json.loads(path.read_text(encoding="utf-8"))]

    def read(self, file: int, part: int) -> Parsed:
        folder = self._path(file, part)
        record = json.loads((folder / _RECORD).read_text(encoding="utf-8"))
        tables = [pq.read_table(folder / f"{name}.parquet") for name in _TABLES]
        problems = [tuple(problem) for problem in record["problems"]]
        more = Counter(record.get("more_problems", {}))
        return Parsed(*tables, Counter(record["skipped"]), problems, record["lines"], more)


class RayParts:
    """The parts of a load's dumps, parsed on the Ray cluster of ``options.address``."""

    def __init__(self, paths: list[Path], options: LoadOptions, stack: ExitStack) -> None:
        self.paths, self.options, self.part_size = paths, options, PART_SIZE
        self.ray = connect(options.address)
        # A task whose worker died is run again; so is one that failed reading its input (a
        # shared file system's hiccup), but not one whose parsing failed: that would fail again.
        retry = {"max_retries": 3, "retry_exceptions": [OSError]}
        self.task = self.ray.remote(num_cpus=1, **retry)(parse_part)
        folder = options.work_dir
        if folder is None:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="chronoprobe-")))
        key = {
            "inputs": [[str(p.resolve()), p.stat().st_size, p.stat().st_mtime_ns] for p in paths],
            "lang": options.lang,
            "relations": sorted(options.relations) if options.relations is not None else None,
            "part_size": self.part_size,
        }
        self.store = PartStore(Path(folder) / "dump-parts", key)
        self.in_flight = 2 * cluster_cpus(self.ray)  # parts held in the object store at most

    def _sources(self, file: int) -> Iterator[tuple[bytearray | tuple, int]]:
        """Each part of the ``file``-th input (its bytes, or what the task reads them by) with
        the compressed bytes up to its end."""
        path = self.paths[file]
        if path.name.endswith(".gz"):
            yield from line_parts(path, self.part_size, decompression_threads(0))
        elif path.name.endswith(".bz2"):
            blocks = self.store.index(file, lambda: bz2_blocks(path, decompression_threads(0)))
            for start, stop, needed, end in bz2_parts(path, blocks, self.part_size):
                yield (str(path.resolve()), start, stop, needed), end
        else:
            for start, stop in plain_parts(path, self.part_size):
                yield (str(path.resolve()), start, stop), stop

    def parsed(
        self, file: int, report: Callable[[int], None] | None = None
    ) -> Iterator[tuple[Parsed, int]]:
        """The parsed parts of the ``file``-th input in order, once all of them are finished,
        each with its end in the compressed input; ``report(position)`` is told the furthest
        end of a finished part as parts finish."""
        ray, options = self.ray, self.options
        ends: list[int] = []
        pending: dict = {}  # task -> part
        furthest = 0

        def finish(ready: list) -> None:
            nonlocal furthest
            for task in ready:
                part = pending.pop(task)
                self.store.write(file, part, ray.get(task))
                furthest = max(furthest, ends[part])
            if report is not None:
                report(furthest)

        for part, (source, end) in enumerate(self._sources(file)):
            ends.append(end)
            if self.store.done(file, part):
                furthest = max(furthest, end)
                continue
            if len(pending) >= self.in_flight:
                finish(ray.wait(list(pending), num_returns=1)[0])
            pending[self.task.remote(source, options.lang, options.relations)] = part
        while pending:
            finish(ray.wait(list(pending), num_returns=1)[0])
        for part, end in enumerate(ends):
            yield self.store.read(file, part), end
