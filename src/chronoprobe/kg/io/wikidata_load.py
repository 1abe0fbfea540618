"""Loading Wikidata JSON dumps into one temporal KG: blocks of lines parsed in order, in this
process, a process pool or Ray tasks, and gathered with bounded memory.

Parsing a block is :func:`chronoprobe.kg.io.wikidata_dump.parse_block`; a file holding one
entity document (or an array of them) is read by :mod:`chronoprobe.kg.io.wikidata_entities`.
Memory stays bounded by the output, not the input: entity rows go to a Parquet spool on disk
(``TMPDIR``) as they are parsed, and only those a fact refers to or that have a time span of
their own are read back at the end; a full dump has a hundred million items, most of them
neither.
"""

from __future__ import annotations

import functools
import os
import tempfile
from collections import Counter, deque
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, closing, contextmanager
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from chronoprobe.kg.graph import TemporalKG
from chronoprobe.kg.io.compressed import (
    BLOCK_SIZE,
    SharedBlocks,
    decompression_threads,
    line_blocks,
)
from chronoprobe.kg.io.options import LoadOptions
from chronoprobe.kg.io.problems import Problems
from chronoprobe.kg.io.shapes import expect
from chronoprobe.kg.io.wikidata_dump import Parsed, parse_block, parse_task
from chronoprobe.kg.records import ENTITY_SCHEMA, FACT_SCHEMA, RELATION_SCHEMA

_MERGE_EVERY = 64  # parsed blocks of facts or relations held before they are combined
_SPOOL_ROWS = 1 << 16  # entity rows held before they are written to the spool


def _parsed_blocks(path: Path, options: LoadOptions, pool) -> Iterator[tuple[Parsed, int]]:
    """Parsed blocks of one file in order, with the compressed bytes read so far.

    Each block numbers its lines from 1 (the caller adds the lines of the blocks before), so
    the reader hands blocks over as they come, with no work per line. With a pool, blocks go
    through shared memory, at most two per worker in flight, so memory stays bounded however
    far the reader runs ahead of the parsers.
    """
    threads = decompression_threads(options.processes)
    # gzip in this thread when it also parses: less CPU than a thread of its own, as fast.
    blocks = line_blocks(path, threads=threads, gzip_thread=pool is not None)
    if pool is None:
        for block, position in blocks:
            yield parse_block(block, 1, options.lang, options.relations), position
        return
    in_flight = 2 * options.processes
    pending: deque = deque()
    with closing(SharedBlocks(in_flight)) as shared:
        for block, position in blocks:
            if len(pending) == in_flight:
                result, ticket, done = pending.popleft()
                parsed = result.get()
                shared.release(ticket)
                yield parsed, done
            ticket = shared.put(block)
            task = (ticket, options.lang, options.relations)
            pending.append((pool.apply_async(parse_task, (task,)), ticket, position))
        while pending:
            result, ticket, done = pending.popleft()
            yield result.get(), done


class _Tables:
    """Small tables appended one by one, combined now and then so chunk counts stay low."""

    def __init__(self, schema: pa.Schema) -> None:
        self.schema, self.parts = schema, [schema.empty_table()]

    def append(self, table: pa.Table) -> None:
        if table.num_rows:
            self.parts.append(table)
        if len(self.parts) >= _MERGE_EVERY:
            self.parts = [pa.concat_tables(self.parts).combine_chunks()]

    def table(self) -> pa.Table:
        return pa.concat_tables(self.parts).combine_chunks()


class _EntitySpool:
    """Entity rows on disk until the facts tell which of them to keep; written some blocks at a
    time (a row group per block of a few hundred rows cost more than the rows)."""

    def __init__(self, stack: ExitStack) -> None:
        folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="chronoprobe-"))
        self.path = Path(folder) / "entities.parquet"
        self.writer = stack.enter_context(pq.ParquetWriter(self.path, ENTITY_SCHEMA))
        self.waiting: list[pa.Table] = []

    def write(self, entities: pa.Table) -> None:
        if entities.num_rows:
            self.waiting.append(entities)
        if sum(table.num_rows for table in self.waiting) >= _SPOOL_ROWS:
            self._flush()

    def _flush(self) -> None:
        if self.waiting:
            self.writer.write_table(pa.concat_tables(self.waiting))
        self.waiting = []

    def kept(self, facts: pa.Table) -> pa.Table:
        """Entities a fact refers to or with a span of their own, the last record of each id."""
        self._flush()
        self.writer.close()
        referenced = pc.unique(
            pa.chunked_array(facts["subject"].chunks + facts["object"].chunks, pa.string())
        )
        kept = _Tables(ENTITY_SCHEMA)
        for batch in pq.ParquetFile(self.path).iter_batches(batch_size=1 << 18):
            keep = pc.or_(
                pc.is_in(batch["id"], value_set=referenced),
                pc.or_(pc.is_valid(batch["start_precision"]), pc.is_valid(batch["end_precision"])),
            )
            kept.append(pa.Table.from_batches([batch.filter(keep)]))
        return _last_per_id(kept.table())


def _last_per_id(table: pa.Table) -> pa.Table:
    """Keep the last row of each id, as a later record of an entity replaces an earlier one."""
    ids = table.column("id")
    if pc.count_distinct(ids).as_py() == len(ids):
        return table
    rows = pa.table({"id": ids, "row": np.arange(len(ids))})
    last = rows.group_by("id", use_threads=False).aggregate([("row", "max")])["row_max"]
    return table.take(np.sort(last.to_numpy()))


class _Gathered:
    """What the parsed blocks of every input add up to, taken in input order: the problems
    reported with their file and line, the skip counts, and the tables of the KG."""

    def __init__(self, stack: ExitStack, problems: Problems) -> None:
        self.problems, self.skipped = problems, Counter()
        self.spool = _EntitySpool(stack)
        self.relations, self.facts = _Tables(RELATION_SCHEMA), _Tables(FACT_SCHEMA)

    def add(self, path: Path, parsed: Parsed, before: int) -> int:
        """Take the block after the ``before`` lines of ``path``; returns the lines so far."""
        for number, reason, kind in parsed.problems:
            self.problems.report(str(path), before + number, reason, kind=kind)
        for kind, count in parsed.more_problems.items():
            self.problems.counted(kind, count)
        self.skipped.update(parsed.skipped)
        self.spool.write(parsed.entities)
        self.relations.append(parsed.relations)
        self.facts.append(parsed.facts)
        return before + parsed.lines

    def kg(self, meta: dict) -> TemporalKG:
        facts = self.facts.table()
        entities = self.spool.kept(facts)
        meta = {**meta, "skipped": dict(sorted(self.skipped.items()))}
        return TemporalKG.from_tables(
            entities, _last_per_id(self.relations.table()), facts, meta=meta
        )


WORKER_MEMORY = 256 << 20  # bytes a parsing worker may take: its interpreter, blocks, tables


def _available_memory() -> int | None:
    """Bytes of memory free for new work: the system's MemAvailable, capped by this
    process's cgroup (v2) limit; None where neither can be read."""
    found = []
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                found.append(int(line.split()[1]) * 1024)
    except (OSError, ValueError, IndexError):
        pass
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        used = Path("/sys/fs/cgroup/memory.current").read_text().strip()
        if limit != "max":
            found.append(int(limit) - int(used))
    except (OSError, ValueError):
        pass
    return max(min(found), 0) if found else None


def worker_processes(asked: int, paths: Sequence[Path]) -> tuple[int, str | None]:
    """The worker processes to parse ``paths`` with when ``asked`` for some: at most one per
    usable core, per block of input (a compressed file counted as ten times its size; a pipe
    as any number) and per
    WORKER_MEMORY of free memory; with the line saying why, where that is fewer."""
    from chronoprobe.core.threads import usable_cores
    from chronoprobe.inputs import COMPRESSED, is_regular

    caps = {f"{usable_cores():,} usable cores": usable_cores()}
    if all(is_regular(path) for path in paths):  # a pipe's size is not known beforehand
        size = sum(
            os.stat(path).st_size * (10 if str(path).endswith(COMPRESSED) else 1) for path in paths
        )
        blocks = max(1, -(-size // BLOCK_SIZE))
        plural = "s" if blocks > 1 else ""
        caps[f"{blocks:,} block{plural} of input ({BLOCK_SIZE >> 20} MiB a block)"] = blocks
    memory = _available_memory()
    if memory is not None:
        room = max(1, memory // WORKER_MEMORY)
        caps[f"free memory for {room:,} ({WORKER_MEMORY >> 20} MiB each)"] = room
    allowed = min(asked, *caps.values())
    if allowed == asked:
        return asked, None
    plural = "es" if allowed > 1 else ""
    return allowed, (
        f"--processes {asked:,}: parsing with {allowed:,} worker process{plural}, the most "
        f"that fit {', '.join(caps)}"
    )


@contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt while the block runs (in the main thread), as Ctrl-C
    does, so that the pool and its shared memory are closed on the way out: killed by the
    default handler, a run left its forkserver, its workers and their shared blocks behind."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _process_pool(stack: ExitStack, processes: int):
    import multiprocessing

    # Workers fork from a server process that imported this module once (no worker imports
    # it, nor the caller's main module, anew) and inherit none of the decompressor threads of
    # this process; spawn where there is no fork server.
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["__main__", __name__])
    else:
        context = multiprocessing.get_context("spawn")
    return stack.enter_context(context.Pool(processes))


def load(paths: Sequence[Path], options: LoadOptions, problems: Problems) -> TemporalKG:
    """Load Wikidata JSON dumps (plain, gzip or bzip2) into one temporal KG.

    Items become entities when a fact refers to them or they have a span of their own;
    properties with item values become relations. With ``options.engine == "ray"`` the lines
    of each dump are parsed in Ray tasks (:mod:`chronoprobe.kg.io.wikidata_dump_ray`): the
    same function on the same lines, gathered in the same order, so the KG is the same.
    """
    paths = [Path(p) for p in paths]
    shapes = [expect(p, "wikidata-json", "Wikidata entity JSON", ("type", "id")) for p in paths]
    sizes = [p.stat().st_size for p in paths]
    with ExitStack() as stack:
        gathered = _Gathered(stack, problems)
        pool = ray_parts = None
        if options.engine == "ray":
            from chronoprobe.kg.io.wikidata_dump_ray import RayParts

            ray_parts = RayParts(paths, options, stack)
        elif options.processes > 1:
            stack.enter_context(_terminate_as_interrupt())
            pool = _process_pool(stack, options.processes)

        furthest = 0

        def report(index: int, position: int) -> None:
            nonlocal furthest  # never backwards: Ray parts are read back from the first
            furthest = max(furthest, sum(sizes[:index]) + min(position, sizes[index]))
            if options.progress is not None:
                options.progress(furthest, sum(sizes))

        for index, (path, shape) in enumerate(zip(paths, shapes, strict=True)):
            before = 0  # lines of the blocks before
            if shape is not None and shape.document:
                from chronoprobe.kg.io.wikidata_entities import document_blocks

                blocks = document_blocks(path, options)
            elif ray_parts is not None:
                blocks = ray_parts.parsed(index, functools.partial(report, index))
            else:
                blocks = _parsed_blocks(path, options, pool)
            for parsed, position in blocks:
                before = gathered.add(path, parsed, before)
                report(index, position)
            report(index, sizes[index])
        source = {
            "format": "wikidata-json",
            "inputs": [str(p) for p in paths],
            "lang": options.lang,
        }
        return gathered.kg({"source": source})
