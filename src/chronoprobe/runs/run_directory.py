"""Claiming a run directory: only one run at a time, and a run touches only what it made.

A run directory is where ``chronoprobe run`` writes; it may be a user's own folder by mistake
(``--out .``, ``--out mykg``, a web app's folder). It is recognised by its marker,
``.chronoprobe-run``, a file only chronoprobe writes, which also lists the step folders the run
made; never by a name another program could use too (``manifest.json``). So a run:

- refuses a directory that holds the working directory or the cache, and a non-empty one that
  holds no marker, naming what is there;
- checks everything it would replace or delete before it writes anything: its own files must
  be plain files (a ``run.log`` that is a link is refused, not followed), ``steps/`` a real
  folder, and each step folder it replaces must hold nothing but the files its ``step.json``
  lists, unchanged since they were written; a link, a user's file or an edited output stops
  the run with one line naming it;
- keeps its temporaries in ``.chronoprobe-tmp/`` and deletes nothing else of that kind;
- deletes the step folders of steps dropped from the config only once every step has run,
  so a run that fails leaves the previous run's outputs where they were;
- holds an exclusive lock on the directory while it works, so a second run on it fails at
  once instead of racing the first one's renames.

Run directories written before markers existed (``config.yaml``, ``environment.json`` and
``steps/`` as chronoprobe left them, with or without its ``manifest.json``) are adopted: the
marker is added, and only the steps that manifest listed count as the run's own.
"""

from __future__ import annotations

import errno
import json
import re
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chronoprobe.errors import UserError
from chronoprobe.runs.ownership import (
    TMP_DIR,
    changed_files,
    clear_tmp,
    describe,
    foreign_entries,
    install_outputs,
    listing,
    locked_folder,
    lstat_kind,
    own_tmp,
    read_marker,
    remove_folder,
    staging_folder,
    tmp_problem,
    write_marker,
)
from chronoprobe.steps import STEP_RECORD, read_step_record

MARKER = ".chronoprobe-run"
STEPS = "steps"
# files a run writes at its top level (report.html by the report step)
OWN_FILES = ("config.yaml", "environment.json", "run.log", "report.html", "results.duckdb")
LEGACY_MANIFEST = "manifest.json"
# what a step id may be (chronoprobe.runs.config checks configs the same way); a marker that
# names anything else (``../..``) is not one chronoprobe wrote
_STEP_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,99}")
# keys every environment.json chronoprobe wrote holds (see chronoprobe.runs.environment)
_ENVIRONMENT_KEYS = {"chronoprobe", "python", "packages", "started"}


def _contains(outer: Path, inner: Path) -> bool:
    return inner == outer or inner.is_relative_to(outer)


def refuse_holding(folder: Path, cache_root: Path, option: str = "--out") -> None:
    """A folder chronoprobe writes may not hold the working directory or the step cache."""
    target = folder.resolve()
    for what, path in (("the working directory", Path.cwd()), ("the step cache", cache_root)):
        if _contains(target, path.resolve()):
            raise UserError(
                f"{folder} holds {what} ({path}); chronoprobe replaces what it writes there: "
                f"pass {option} to a folder of its own"
            )
    existing = target
    while lstat_kind(existing) is None and existing != existing.parent:
        existing = existing.parent
    if existing != target and not existing.is_dir():
        raise UserError(f"{folder}: {existing} is a file, so no folder can be made there")


def step_dir_problem(step_dir: Path) -> str | None:
    """Why ``step_dir`` may not be replaced or deleted: it is a link or a file, or it holds
    something its ``step.json`` does not list as written there, or an output was edited."""
    kind = lstat_kind(step_dir)
    if kind in (None, "dir") and not (kind == "dir" and any(step_dir.iterdir())):
        return None
    if kind != "dir":
        return f"{step_dir} is {describe(kind)}, not a step folder chronoprobe made"
    record = read_step_record(step_dir)
    if record is None:
        return (
            f"{step_dir} has no readable step.json, so chronoprobe cannot tell its files from yours"
        )
    foreign = foreign_entries(step_dir, [*record["outputs"], STEP_RECORD])
    if foreign:
        return f"{step_dir} holds what chronoprobe did not write there: {listing(foreign)}"
    changed = changed_files(step_dir, record.get("files", {}), missing_ok=True)
    if changed:
        return f"{step_dir}: {listing(changed)} changed since chronoprobe wrote it"
    return None


def _legacy_steps(run_dir: Path) -> set[str] | None:
    """The steps a run directory of an older chronoprobe (no marker) owns, or None when the
    folder does not have the layout that version left: environment.json as it wrote it,
    config.yaml, steps/, and a manifest.json (if any) of exactly its shape."""
    if lstat_kind(run_dir / "config.yaml") != "file" or lstat_kind(run_dir / STEPS) != "dir":
        return None
    environment = _json_object(run_dir / "environment.json")
    if environment is None or not set(environment) >= _ENVIRONMENT_KEYS:
        return None
    manifest_kind = lstat_kind(run_dir / LEGACY_MANIFEST)
    if manifest_kind is None:
        return set()  # before manifests: no step counts as the run's own
    manifest = _json_object(run_dir / LEGACY_MANIFEST)
    if manifest is None or not _is_legacy_manifest(manifest):
        return None
    return set(manifest["steps"])


def _is_legacy_manifest(data: dict[str, Any]) -> bool:
    return set(data) == {"chronoprobe", "steps"} and _is_step_ids(data["steps"])


def _json_object(path: Path) -> dict[str, Any] | None:
    if lstat_kind(path) != "file" or path.stat().st_size > 1 << 20:
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _is_step_ids(steps: Any) -> bool:
    """A list of step ids as a config allows them: a name in ``steps/``, never a path."""
    return isinstance(steps, list) and all(
        isinstance(s, str) and _STEP_ID.fullmatch(s) for s in steps
    )


def _marker_steps(run_dir: Path, marker: dict[str, Any]) -> set[str]:
    steps = marker.get("steps", [])
    if not _is_step_ids(steps):
        raise UserError(f"{run_dir / MARKER}: damaged marker (steps is not a list of ids)")
    return set(steps)


def stale_steps(config: dict[str, Any], records: dict[str, dict[str, Any]]) -> list[str]:
    """The steps whose outputs (``records``: step id -> step.json) were made with other params
    than ``config`` (a run's config.yaml) gives them: a run stopped (interrupted, or a step
    failed) before it reached them, so they hold an earlier config's results."""
    wanted = {
        s.get("id"): s.get("params")
        for s in config.get("steps") or []
        if isinstance(s, dict) and isinstance(s.get("params"), dict)
    }
    return [
        step_id
        for step_id, record in records.items()
        if record.get("step", step_id) in wanted
        and record.get("params") != wanted[record.get("step", step_id)]
    ]


def is_run_directory(path: Path) -> bool:
    """Whether ``path`` is a folder ``chronoprobe run`` made (with its marker, or in the
    layout an older version left)."""
    if not path.is_dir():
        return False
    return lstat_kind(path / MARKER) == "file" or _legacy_steps(path) is not None


@dataclass
class RunDirectory:
    """A claimed run directory: what its checks found, and the writes a run makes in it."""

    path: Path
    owned: set[str] = field(default_factory=set)  # step folders the run made
    adopted: bool = False  # written by a chronoprobe before markers
    created: bool = False  # the folder did not exist before this run

    @property
    def steps(self) -> Path:
        return self.path / STEPS

    @property
    def tmp(self) -> Path:
        return self.path / TMP_DIR

    def check(self, keep: Iterable[str]) -> None:
        """Refuse, before anything is written, what this run could not safely write over."""
        names = sorted(p.name for p in self.path.iterdir() if p.name != TMP_DIR)
        if not names:  # empty, or only the temporaries of a run killed before its marker
            return
        marker = read_marker(self.path / MARKER)
        if marker is not None:
            self.owned = _marker_steps(self.path, marker)
        else:
            legacy = _legacy_steps(self.path)
            if legacy is None:
                raise UserError(
                    f"run directory {self.path} is not empty and is not a chronoprobe run "
                    f"directory (no {MARKER}; it holds {listing(names)}); pass --out to a new "
                    "or empty folder"
                )
            self.owned, self.adopted = legacy, True
        problems = [
            f"{self.path / name} is {describe(kind)}; a run writes a file there"
            for name in (*OWN_FILES, MARKER)
            if (kind := lstat_kind(self.path / name)) not in (None, "file")
        ]
        steps_kind = lstat_kind(self.steps)
        if steps_kind not in (None, "dir"):
            problems.append(f"{self.steps} is {describe(steps_kind)}; a run keeps its steps there")
        problems.append(tmp_problem(self.path) or "")
        if steps_kind == "dir":
            problems += [step_dir_problem(self.steps / name) or "" for name in sorted(set(keep))]
        problems = [p for p in problems if p]
        if problems:
            raise UserError(
                "; ".join(problems) + ". Nothing was changed: move these away, or pass --out to "
                "another folder"
            )

    def start(self, keep: Iterable[str]) -> list[str]:
        """Mark the directory as a run's (listing the steps it will hold as well as those it
        made before: a failed run still owns both), and clear the temporaries of a killed run.
        Returns the names in steps/ that are not the run's own, left alone."""
        clear_tmp(self.path)
        self.steps.mkdir(exist_ok=True)
        write_marker(self.path / MARKER, {"steps": sorted(self.owned | set(keep))})
        if self.adopted:
            manifest = _json_object(self.path / LEGACY_MANIFEST)
            if manifest is not None and _is_legacy_manifest(manifest):
                (self.path / LEGACY_MANIFEST).unlink()  # the marker lists its steps now
        return sorted(p.name for p in self.steps.iterdir() if p.name not in self.owned | set(keep))

    def staging(self) -> AbstractContextManager[Path]:
        """An empty folder in the run's own temporaries, to build a step's outputs in."""
        return staging_folder(self.path)

    def install(self, staged: Path, step_id: str) -> Path:
        """Make ``staged`` the folder of step ``step_id``, replacing the earlier one only if
        it still holds nothing but chronoprobe's own unchanged outputs; outputs the same as
        the earlier ones are left as they are, and only the step record is written."""
        target = self.steps / step_id
        problem = step_dir_problem(target)
        if problem:
            raise UserError(f"{problem}; the step's new outputs were not written")
        install_outputs(staged, target, own_tmp(self.path))
        return target

    def finish(self, keep: Iterable[str]) -> list[str]:
        """After every step ran: delete the run's own steps the config no longer has (unless
        something not written by chronoprobe got into them) and list only ``keep`` in the
        marker. Returns the messages about step folders left alone."""
        keep, left = set(keep), {}
        for name in sorted(self.owned - keep):
            step_dir = self.steps / name
            problem = step_dir_problem(step_dir)
            if problem:
                left[name] = problem  # still the run's own: deleted once it holds only that
            elif lstat_kind(step_dir) == "dir":
                remove_folder(step_dir, own_tmp(self.path))
        write_marker(self.path / MARKER, {"steps": sorted(keep | set(left))})
        return list(left.values())


@contextmanager
def claimed(run_dir: Path, cache_root: Path) -> Iterator[RunDirectory]:
    """Lock the run directory for the block (fail at once if another run holds it) and
    yield it; a folder this call made is removed again if the block fails before using it."""
    refuse_holding(run_dir, cache_root)
    kind = lstat_kind(run_dir)
    if kind is not None and not run_dir.is_dir():
        raise UserError(f"run directory {run_dir} is {describe(kind)}; pass --out to a folder")
    created = kind is None
    run_dir.mkdir(parents=True, exist_ok=True)
    directory = RunDirectory(run_dir, created=created)
    busy = (
        f"another chronoprobe run is working in {run_dir}; wait for it to finish (it resumes "
        "from the same steps when run again) or pass another --out"
    )
    with locked_folder(run_dir, busy):
        try:
            yield directory
        finally:
            if lstat_kind(directory.path / MARKER) == "file":
                clear_tmp(directory.path)
            elif created:
                _remove_if_empty(run_dir)


def _remove_if_empty(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError as err:
        if err.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOENT):
            raise
