"""One operation run from the command line: a one-step experiment into ``--out``.

The step runs exactly as inside ``chronoprobe run`` (same function, same cache entry, same
files), with its inputs given as directories instead of earlier steps. An input that is itself
an output of chronoprobe (it has a ``step.json``) is keyed by that step's key, so chained
commands hit the cache like chained steps; any other input is keyed by its files' names, sizes
and modification times.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pydantic import BaseModel
from rich.console import Console

from chronoprobe.runs.cache import STEP_RECORD, StepCache, canonical_json, default_cache_dir
from chronoprobe.runs.engine import StepExecutor, StepResult, console_logger, step_progress
from chronoprobe.runs.steps import StepKind


def input_key(path: Path) -> str:
    """What an input directory (or file) holds, as a cache key."""
    record = path / STEP_RECORD
    if record.is_file():
        try:
            key = json.loads(record.read_text(encoding="utf-8")).get("key")
        except (json.JSONDecodeError, AttributeError):
            key = None
        if isinstance(key, str):
            return key
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    listing = [
        [
            p.relative_to(path).as_posix() if p != path else p.name,
            p.stat().st_size,
            p.stat().st_mtime_ns,
        ]
        for p in files
    ]
    return hashlib.sha256(canonical_json(listing).encode()).hexdigest()


def check_output_dir(out: Path, cache_root: Path) -> None:
    """``--out`` is replaced by the step's outputs: never a folder holding other things."""
    target = out.resolve()
    for what, path in (("the working directory", Path.cwd()), ("the step cache", cache_root)):
        inside = path.resolve()
        if inside == target or inside.is_relative_to(target):
            raise ValueError(f"--out {out} holds {what}; pass a folder of its own")
    if target.is_file():
        raise ValueError(f"--out {out} is a file; pass a folder")
    if target.is_dir() and any(target.iterdir()) and not (target / STEP_RECORD).is_file():
        raise ValueError(
            f"--out {out} is not empty and was not written by chronoprobe (no {STEP_RECORD}); "
            "pass a new or empty folder"
        )


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

    ``keyed`` names, per input, what its cache key is computed from when not the input itself
    (a file given for its folder: the folder may hold other things, even ``out``)."""
    console = console or Console(stderr=True)
    cache_root = default_cache_dir()
    check_output_dir(out, cache_root)
    for name, path in inputs.items():
        if not path.exists():
            raise FileNotFoundError(f"{path}: no such file or directory (input {name!r})")
    keys = {name: input_key((keyed or {}).get(name, path)) for name, path in inputs.items()}
    progress = step_progress(console)
    out.parent.mkdir(parents=True, exist_ok=True)
    with console_logger(console) as log, progress:
        executor = StepExecutor(StepCache(cache_root), use_cache, log, progress, out.parent, seed)
        return executor.execute(
            step_id, kind, params, inputs, keys, out, {k: str(v) for k, v in inputs.items()}
        )
