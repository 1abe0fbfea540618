"""The shared step cache: one directory per finished step, named by the hash of what made it.

``<cache>/<kind>/<key>/`` appears only by renaming a finished work directory
(``<key>.partial/``) into place, so an entry either exists whole or not at all. A killed step
leaves its work directory behind, and with it the shards it finished, for the next attempt.

Entries are never shared with run directories or ``--out`` folders: those get copies, so an
edit to an output cannot reach the cache. An entry's files are made read-only, and its
``step.json`` records each file's sha256; serving an entry copies it and checks every file
against that record while copying, so an entry changed in place (by hand, or through a hard
link an older chronoprobe made into a run directory) is found out, dropped and computed again.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import secrets
import shutil
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from chronoprobe.atomic import atomic_write_text
from chronoprobe.runs.ownership import copy_hashed, file_record, walk_files
from chronoprobe.step_context import SHARDS_DIR
from chronoprobe.steps import STEP_RECORD
from chronoprobe.version import __version__


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def step_key(
    kind: str,
    params: Any,
    inputs: dict[str, str],
    seed: int,
    fingerprint: Any = None,
    plugins: dict[str, str | None] | None = None,
) -> str:
    """The cache key: the kind, its params, the keys of its inputs, the seed and our version,
    and ``plugins``, the digest of each plugin module loaded (by name,
    :func:`chronoprobe.registry.loaded_plugins`): a plugin's code makes a step's output as
    much as chronoprobe's does, so an edited plugin must not be served its old results.
    Without plugins the payload is what it always was, so existing entries stay valid."""
    payload = {
        "kind": kind,
        "params": params,
        "inputs": inputs,
        "seed": seed,
        "fingerprint": fingerprint,
        "chronoprobe": __version__,
    }
    if plugins:
        payload["plugins"] = plugins
    return hashlib.sha256(canonical_json(payload).encode()).hexdigest()


def _is_leftover(path: Path) -> bool:
    """A temporary file of :func:`chronoprobe.atomic.atomic_path` orphaned by a kill."""
    return path.name.startswith(".") and path.name.endswith(".tmp")


def temp_beside(target: Path, tag: str) -> Path:
    return target.with_name(f".{target.name}.{tag}-{secrets.token_hex(4)}.tmp")


def replace_dir(source: Path, target: Path) -> None:
    """Rename ``source`` to ``target``, never leaving ``target`` half-deleted."""
    for stale in target.parent.glob(f".{target.name}.old-*.tmp"):  # an earlier kill's
        shutil.rmtree(stale)
    old = None
    if target.exists():
        old = temp_beside(target, "old")
        os.replace(target, old)
    os.replace(source, target)
    if old is not None:
        shutil.rmtree(old)


def clean_leftovers(directory: Path) -> None:
    """Remove temporary files and directories that a killed process left in ``directory``."""
    for path in list(directory.iterdir()):
        if _is_leftover(path):
            shutil.rmtree(path) if path.is_dir() else path.unlink()


class StepCache:
    def __init__(self, root: Path) -> None:
        self.root = root

    def entry(self, kind: str, key: str) -> Path:
        return self.root / kind / key

    def has(self, kind: str, key: str) -> bool:
        return self.entry(kind, key).is_dir()

    @contextmanager
    def lock(self, kind: str, key: str) -> Iterator[bool]:
        """Hold the step's lock; yields False when another process had to be waited for."""
        path = self.root / kind / f"{key}.lock"
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                waited = False
            except BlockingIOError:
                fcntl.flock(handle, fcntl.LOCK_EX)
                waited = True
            try:
                yield not waited
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def work_dir(self, kind: str, key: str, fresh: bool) -> Path:
        """The step's work directory, keeping only the finished shards of an earlier attempt."""
        work = self.root / kind / f"{key}.partial"
        if work.is_symlink():  # not made here: the link goes, never what it points to
            work.unlink()
        if fresh and work.exists():
            shutil.rmtree(work)
        work.mkdir(parents=True, exist_ok=True)
        for path in work.iterdir():
            if path.name != SHARDS_DIR:
                shutil.rmtree(path) if path.is_dir() else path.unlink()
        for folder in [work / SHARDS_DIR, *(work / SHARDS_DIR).glob("*")]:
            if folder.is_dir():
                clean_leftovers(folder)
        return work

    def commit(self, work: Path, kind: str, key: str, record: dict[str, Any]) -> Path:
        """Make a finished work directory the cache entry; its shards are no longer needed.

        ``record`` is written as its ``step.json`` with the digest of every file, and the
        files are made read-only."""
        shutil.rmtree(work / SHARDS_DIR, ignore_errors=True)
        names = [name for name in walk_files(work) if name != STEP_RECORD]
        record = {**record, "files": {name: file_record(work / name) for name in names}}
        atomic_write_text(work / STEP_RECORD, json.dumps(record, indent=2) + "\n")
        for name in [*names, STEP_RECORD]:
            mode = (work / name).stat().st_mode
            (work / name).chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
        entry = self.entry(kind, key)
        replace_dir(work, entry)
        return entry

    def serve(self, kind: str, key: str, target: Path) -> dict[str, Any]:
        """Copy the entry's files into the empty folder ``target``, each checked against its
        recorded digest; returns the entry's record. Raises :class:`DamagedEntry` when the
        entry is not as it was written (then ``target`` may hold part of it)."""
        entry = self.entry(kind, key)
        where = f"cache entry {entry}"
        try:
            record = json.loads((entry / STEP_RECORD).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
            raise DamagedEntry(f"{where}: its step.json is unreadable ({err})") from None
        files = record.get("files") if isinstance(record, dict) else None
        if not isinstance(files, dict):
            raise DamagedEntry(f"{where}: written by an older chronoprobe, without digests")
        present = [name for name in walk_files(entry) if name != STEP_RECORD]
        if sorted(files) != present:
            extra = sorted(set(present) - set(files)) or sorted(set(files) - set(present))
            raise DamagedEntry(f"{where}: its files are not those it recorded ({extra[0]})")
        for name in present:
            digest = copy_hashed(entry / name, target / name)
            if not isinstance(files[name], dict) or digest != files[name].get("sha256"):
                raise DamagedEntry(f"{where}: {name} was changed after it was written")
        return record

    def discard(self, kind: str, key: str) -> None:
        """Drop a damaged entry (renamed aside first, so no reader sees half of it)."""
        entry = self.entry(kind, key)
        if entry.is_dir():
            aside = temp_beside(entry, "damaged")
            os.replace(entry, aside)
            shutil.rmtree(aside, ignore_errors=True)


class DamagedEntry(ValueError):
    """A cache entry that is not as it was written; it is dropped and computed again."""
