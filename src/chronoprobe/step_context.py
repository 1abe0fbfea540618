"""The context a step runs in: its work folder, log, progress display and resumable shards.

A step function gets a :class:`StepContext` beside its params and inputs. Its ``out_dir`` is a
work folder that becomes the step's cache entry once the step returns; shards written through
it survive a killed run there and are merged when every one is written.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from rich.progress import Progress

from chronoprobe.atomic import atomic_path
from chronoprobe.errors import UserError

SHARDS_DIR = ".shards"


@dataclass
class StepContext:
    """What a step function gets besides its params and inputs.

    ``out_dir`` is a work directory that becomes the step's cache entry once ``run`` returns;
    shards written through :meth:`shards` survive a killed run there, everything else is
    discarded before a retry.
    """

    step_id: str
    out_dir: Path
    run_dir: Path
    seed: int
    log: logging.Logger
    progress: Progress | None = None
    _open_shards: dict[str, int] = field(default_factory=dict)

    def shard_path(self, name: str, index: int) -> Path:
        return self.out_dir / SHARDS_DIR / name / f"{index:05d}.parquet"

    def shards(self, name: str, n_shards: int) -> Iterator[int]:
        """Yield the indices of the shards of ``name`` not finished by an earlier attempt.

        The caller writes each yielded shard with :meth:`write_shard` before asking for the next,
        then calls :meth:`merge_shards`. Finished shards are files renamed into place, so a
        kill at any moment loses at most the shard in flight.
        """
        if n_shards < 1:
            raise UserError(f"{self.step_id}: {name!r} needs at least one shard, got {n_shards}")
        todo = [i for i in range(n_shards) if not self.shard_path(name, i).is_file()]
        if len(todo) < n_shards:
            self.log.info(f"{name}: resuming, {n_shards - len(todo)} of {n_shards} shards done")
        task = None
        if self.progress is not None:
            task = self.progress.add_task(
                f"{self.step_id}: {name}", total=n_shards, completed=n_shards - len(todo)
            )
        self._open_shards[name] = n_shards
        for index in todo:
            yield index
            if not self.shard_path(name, index).is_file():
                raise RuntimeError(f"{self.step_id}: shard {index} of {name!r} was not written")
            if task is not None:
                self.progress.advance(task)
        if task is not None:
            self.progress.remove_task(task)

    @contextmanager
    def progress_task(self, description: str) -> Iterator[Callable[[float, float], None]]:
        """A bar in the run's progress display while the block runs, and the ``(done, total)``
        callback that moves it (a no-op without a display)."""
        if self.progress is None:
            yield lambda done, total: None
            return
        progress = self.progress
        task = progress.add_task(f"{self.step_id}: {description}", total=None)
        try:
            yield lambda done, total: progress.update(task, completed=done, total=total)
        finally:
            progress.remove_task(task)

    def write_shard(self, name: str, index: int, table) -> None:
        """Write one finished shard (a pyarrow Table) as Parquet, atomically."""
        import pyarrow.parquet as pq

        with atomic_path(self.shard_path(name, index)) as tmp:
            pq.write_table(table, tmp)

    def merge_shards(self, name: str, filename: str | None = None) -> Path:
        """Concatenate the shards of ``name`` in order into ``out_dir/<name>.parquet``."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        n_shards = self._open_shards[name]
        tables = [pq.read_table(self.shard_path(name, i)) for i in range(n_shards)]
        target = self.out_dir / (filename or f"{name}.parquet")
        with atomic_path(target) as tmp:
            pq.write_table(pa.concat_tables(tables), tmp)
        shutil.rmtree(self.out_dir / SHARDS_DIR / name)
        return target
