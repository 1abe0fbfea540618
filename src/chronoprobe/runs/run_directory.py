"""Claiming a run directory: only one run at a time, and a run touches only what it made.

A run directory is where ``chronoprobe run`` writes; it may be a user's own folder by mistake
(``--out .``, an experiment named ``..``). So a run refuses a directory that holds the working
directory or the cache, refuses a non-empty directory that is not a run directory, and deletes
only the step directories an earlier run of it listed in ``manifest.json`` as its own. While a
run works, it holds an exclusive lock on the directory, so a second run on it fails at once
instead of racing the first one's renames.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from chronoprobe import __version__
from chronoprobe.atomic import atomic_write_text
from chronoprobe.runs.cache import STEP_RECORD, clean_leftovers

MANIFEST = "manifest.json"
# What a run directory made before manifests existed holds beside one step record at least;
# such a directory is adopted, but nothing in it is deleted that a manifest does not list.
_LEGACY_SHAPE = ("config.yaml", "environment.json")


def _contains(outer: Path, inner: Path) -> bool:
    return inner == outer or inner.is_relative_to(outer)


def check_run_dir(run_dir: Path, cache_root: Path) -> None:
    """Refuse run directories whose tidy-up or outputs could destroy files they do not own."""
    target = run_dir.resolve()
    for what, path in (("the working directory", Path.cwd()), ("the step cache", cache_root)):
        if _contains(target, path.resolve()):
            raise ValueError(
                f"run directory {run_dir} holds {what} ({path}); a run writes config.yaml and "
                "run.log there and tidies steps/: pass --out to a folder of its own"
            )
    if target.is_file():
        raise ValueError(f"run directory {run_dir} is a file; pass --out to a folder")
    if target.is_dir() and any(target.iterdir()) and not is_run_dir(target):
        raise ValueError(
            f"run directory {run_dir} is not empty and is not a chronoprobe run directory (no "
            f"{MANIFEST}); pass --out to a new or empty folder"
        )


def is_run_dir(path: Path) -> bool:
    if (path / MANIFEST).is_file():
        return True
    legacy = all((path / name).is_file() for name in _LEGACY_SHAPE)
    return legacy and any(path.glob(f"steps/*/{STEP_RECORD}"))


def owned_steps(run_dir: Path) -> set[str]:
    """The step ids the last run of this directory listed as its own (none for old runs)."""
    try:
        data = json.loads((run_dir / MANIFEST).read_text(encoding="utf-8"))
        return {str(s) for s in data.get("steps", [])}
    except (FileNotFoundError, json.JSONDecodeError, AttributeError, TypeError):
        return set()


def tidy(run_dir: Path, keep: set[str]) -> list[str]:
    """Drop what a killed run or an older version of the config left; returns the names of
    step directories left alone because no manifest says this run made them."""
    steps_dir = run_dir / "steps"
    steps_dir.mkdir(parents=True, exist_ok=True)
    clean_leftovers(run_dir)
    clean_leftovers(steps_dir)
    owned, foreign = owned_steps(run_dir), []
    for path in sorted(steps_dir.iterdir()):
        if path.name in keep:
            continue
        if path.is_dir() and path.name in owned:
            shutil.rmtree(path)
        else:
            foreign.append(path.name)
    atomic_write_text(
        run_dir / MANIFEST,
        json.dumps({"chronoprobe": __version__, "steps": sorted(keep)}, indent=2) + "\n",
    )
    return foreign


@contextmanager
def claimed(run_dir: Path) -> Iterator[None]:
    """Hold the run directory's lock for the block; fail at once if another run holds it."""
    run_dir.mkdir(parents=True, exist_ok=True)
    handle = os.open(run_dir, os.O_RDONLY)
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ValueError(
                f"another chronoprobe run is working in {run_dir}; wait for it to finish (it "
                "resumes from the same steps when run again) or pass another --out"
            ) from None
        yield
    finally:
        os.close(handle)
