"""The shared step cache: one directory per finished step, named by the hash of what made it.

``<cache>/<kind>/<key>/`` appears only by renaming a finished work directory
(``<key>.partial/``) into place, so an entry either exists whole or not at all. A killed step
leaves its work directory behind, and with it the shards it finished, for the next attempt.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from chronoprobe import __version__
from chronoprobe.runs.steps import SHARDS_DIR

STEP_RECORD = "step.json"


def default_cache_dir() -> Path:
    if os.environ.get("CHRONOPROBE_CACHE"):
        return Path(os.environ["CHRONOPROBE_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "chronoprobe"


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def step_key(
    kind: str, params: Any, inputs: dict[str, str], seed: int, fingerprint: Any = None
) -> str:
    """The cache key: the kind, its params, the keys of its inputs, the seed and our version."""
    payload = {
        "kind": kind,
        "params": params,
        "inputs": inputs,
        "seed": seed,
        "fingerprint": fingerprint,
        "chronoprobe": __version__,
    }
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


def link_tree(source: Path, target: Path, skip: tuple[str, ...] = ()) -> list[str]:
    """Mirror ``source`` at ``target`` by hard links (copies across file systems).

    Built beside the target and renamed into place. Returns the relative file names.
    """
    work = temp_beside(target, "link")
    names = []
    for file in sorted(p for p in source.rglob("*") if p.is_file()):
        name = file.relative_to(source).as_posix()
        if name in skip:
            continue
        dest = work / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(file, dest)
        except OSError:
            shutil.copy2(file, dest)
        names.append(name)
    work.mkdir(parents=True, exist_ok=True)
    replace_dir(work, target)
    return names


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

    def commit(self, work: Path, kind: str, key: str) -> Path:
        """Make a finished work directory the cache entry; its shards are no longer needed."""
        shutil.rmtree(work / SHARDS_DIR, ignore_errors=True)
        entry = self.entry(kind, key)
        replace_dir(work, entry)
        return entry
