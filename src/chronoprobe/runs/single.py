"""One operation run from the command line: a one-step experiment into ``--out``.

The step runs exactly as inside ``chronoprobe run`` (same function, same cache entry, same
files), with its inputs given as directories instead of earlier steps. An input that is itself
an output of chronoprobe (it has a ``step.json`` whose files are unchanged) is keyed by that
step's key, so chained commands hit the cache like chained steps; any other input is keyed by
its files' names and what they hold (:func:`chronoprobe.inputs.tree_identity`).

``--out`` is replaced by the step's outputs, so it must be new, empty, or an earlier output of
the same command: one holding the marker ``.chronoprobe-output`` (which names the command and
the files it wrote) and nothing else but those files, unchanged. Another command's output, a
user's notes or a link in it stop the command before anything is computed.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel
from rich.console import Console

from chronoprobe.core.cache_dir import default_cache_dir
from chronoprobe.errors import UserError
from chronoprobe.inputs import tree_identity
from chronoprobe.runs.cache import StepCache, canonical_json
from chronoprobe.runs.engine import StepExecutor, StepResult, console_logger, step_progress
from chronoprobe.runs.ownership import (
    TMP_DIR,
    changed_files,
    clear_tmp,
    describe,
    foreign_entries,
    fresh_dir,
    keep_unchanged,
    listing,
    locked_folder,
    lstat_kind,
    own_tmp,
    read_marker,
    rename_all,
    staging_folder,
    tmp_problem,
    walk_files,
    write_marker,
)
from chronoprobe.runs.run_directory import MARKER as RUN_MARKER
from chronoprobe.runs.run_directory import refuse_holding
from chronoprobe.steps import STEP_RECORD, StepKind, read_step_record

OUTPUT_MARKER = ".chronoprobe-output"
_OWN = (OUTPUT_MARKER, TMP_DIR)


def input_key(path: Path) -> str:
    """What an input directory (or file) holds, as a cache key."""
    record = read_step_record(path) if path.is_dir() else None
    if record is not None and isinstance(record.get("key"), str) and record.get("files"):
        files = record["files"]
        unchanged = not changed_files(path, files)
        if unchanged and not foreign_entries(path, [*files, STEP_RECORD], skip=_OWN):
            return record["key"]
    return hashlib.sha256(canonical_json(tree_identity(path)).encode()).hexdigest()


def check_output_dir(out: Path, cache_root: Path, command: str) -> list[str]:
    """Refuse an ``--out`` this command may not replace; returns the files chronoprobe wrote
    there (all of what the folder holds besides the marker and temporaries)."""
    refuse_holding(out, cache_root)
    kind = lstat_kind(out)
    if kind is None:
        return []
    if not out.is_dir():
        raise UserError(f"--out {out} is {describe(kind)}; pass a folder")
    names = sorted(set(os.listdir(out)) - {TMP_DIR})  # ours, while this command works
    if not names:
        return []
    marker = read_marker(out / OUTPUT_MARKER)
    if marker is not None:
        writer, files = marker.get("command"), marker.get("files")
        if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
            raise UserError(f"{out / OUTPUT_MARKER}: damaged marker (no list of files)")
    else:  # an output of a chronoprobe before markers: its step.json names the command
        record = read_step_record(out)
        if lstat_kind(out / RUN_MARKER) is not None:
            raise UserError(
                f"--out {out} is a run directory (made by `chronoprobe run`); a command writes a "
                "folder of its own: pass a new or empty one"
            )
        if record is None:
            raise UserError(
                f"--out {out} is not empty and was not written by chronoprobe (it holds "
                f"{listing(names)}); pass a new or empty folder"
            )
        writer, files = record.get("id"), [*record["outputs"], STEP_RECORD]
    if writer != command:
        if isinstance(writer, str) and " " in writer:  # commands are two words, step ids one
            what = f"`chronoprobe {writer}`"
        else:
            what = "a step of a run" if not isinstance(writer, str) else f"the run step {writer!r}"
        raise UserError(
            f"--out {out} holds the output of {what}, not of `chronoprobe {command}`; a command "
            "replaces only its own earlier output: pass another folder"
        )
    problems = []
    foreign = foreign_entries(out, files, skip=_OWN)
    if foreign:
        problems.append(f"it holds what `chronoprobe {command}` did not write: {listing(foreign)}")
    record = read_step_record(out)
    changed = changed_files(out, record.get("files", {}), missing_ok=True) if record else []
    if changed:
        problems.append(f"{listing(changed)} changed since chronoprobe wrote it")
    if tmp_problem(out):
        problems.append(str(tmp_problem(out)))
    if problems:
        raise UserError(
            f"--out {out}: {'; '.join(problems)}; the command would replace the folder whole: "
            "move that away, or pass another folder"
        )
    return files


@dataclass(frozen=True)
class OutputFolder:
    """A command's claimed ``--out``, as a step's destination."""

    path: Path
    command: str
    cache_root: Path

    def staging(self) -> AbstractContextManager[Path]:
        """An empty folder in the folder's own temporaries, to build the step's outputs in."""
        return staging_folder(self.path)

    def install(self, staged: Path, step_id: str) -> Path:
        """Replace what the folder holds by ``staged``'s files, moving entries by renames
        (outputs the same as the earlier ones are left as they are, see
        :func:`~chronoprobe.runs.ownership.keep_unchanged`).

        The marker lists both old and new files while they are swapped (step.json goes first
        and comes back last), so a folder left by a kill mid-way is still known as this
        command's and is replaced whole by the next attempt."""
        old_files = check_output_dir(self.path, self.cache_root, self.command)
        new_files = walk_files(staged)
        record = {"command": self.command}
        if keep_unchanged(self.path, staged, own_tmp(self.path)):
            write_marker(self.path / OUTPUT_MARKER, {**record, "files": new_files})
            return self.path
        write_marker(
            self.path / OUTPUT_MARKER, {**record, "files": sorted({*old_files, *new_files})}
        )
        old = fresh_dir(own_tmp(self.path), "old")
        earlier = sorted(set(os.listdir(self.path)) - set(_OWN), key=lambda n: n != STEP_RECORD)
        later = sorted(os.listdir(staged), key=lambda n: n == STEP_RECORD)
        try:
            rename_all(
                [(self.path / n, old / n) for n in earlier]
                + [(staged / n, self.path / n) for n in later],
                old,
            )
        except OSError:
            write_marker(self.path / OUTPUT_MARKER, {**record, "files": old_files})
            raise
        write_marker(self.path / OUTPUT_MARKER, {**record, "files": new_files})
        shutil.rmtree(old, ignore_errors=True)
        return self.path


@contextmanager
def claimed_output(out: Path, cache_root: Path, command: str) -> Iterator[OutputFolder]:
    """Check ``--out`` (before making anything), then lock it for the block: a second command
    writing to the same folder fails at once. A folder made here and left empty is removed."""
    check_output_dir(out, cache_root, command)
    created = lstat_kind(out) is None
    out.mkdir(parents=True, exist_ok=True)
    busy = (
        f"another chronoprobe command is writing to --out {out}; wait for it, or pass another "
        "folder"
    )
    with locked_folder(out, busy):
        try:
            check_output_dir(out, cache_root, command)  # as it is now that it is ours
            yield OutputFolder(out, command, cache_root)
        finally:
            clear_tmp(out)
            if created and not any(out.iterdir()):
                out.rmdir()


def run_operation(
    kind: StepKind,
    params: BaseModel,
    inputs: dict[str, Path],
    out: Path,
    step_id: str,
    *,
    use_cache: bool = True,
    seed: int = 0,
    console: Console | None = None,
    keyed: dict[str, Path] | None = None,
) -> StepResult:
    """Run ``kind`` once with ``params`` on ``inputs`` into ``out``; returns the step's result.

    ``step_id`` is the command (``kg convert``): an ``out`` written by another command is
    refused. ``keyed`` names, per input, what its cache key is computed from when not the
    input itself (a file given for its folder: the folder may hold other things, even
    ``out``)."""
    console = console or Console(stderr=True, emoji=False)
    cache_root = default_cache_dir()
    check_output_dir(out, cache_root, step_id)
    for name, path in inputs.items():
        if not path.exists():
            raise FileNotFoundError(f"{path}: no such file or directory (input {name!r})")
    keys = {name: input_key((keyed or {}).get(name, path)) for name, path in inputs.items()}
    cache = StepCache(cache_root)
    warnings = cache.check()
    progress = step_progress(console)
    claim = claimed_output(out, cache_root, step_id)
    with claim as folder, console_logger(console) as log, progress:
        for warning in warnings:
            log.warning(f"warning: {warning}")
        executor = StepExecutor(cache, use_cache, log, progress, out.parent, seed)
        return executor.execute(
            step_id, kind, params, inputs, keys, folder, {k: str(v) for k, v in inputs.items()}
        )
