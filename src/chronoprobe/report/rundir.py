"""Read a run directory as the run engine leaves it: config, environment, one record per step.

The report reads only files (see the run directory layout in ``chronoprobe.runs``), so it works
on a copied or archived run, and on a run still in progress (steps not yet run are listed as such).

A damaged file costs only what it holds: a broken ``step.json`` that step's section (shown as
an error), a broken ``environment.json`` the environment lines, a broken ``config.yaml`` the
config (the steps are then those found in ``steps/``). Each problem names the file and why.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from chronoprobe import safe_yaml
from chronoprobe.errors import UserError
from chronoprobe.jsonl import read_json_object
from chronoprobe.runs.run_directory import is_run_directory, stale_steps
from chronoprobe.steps import STEP_RECORD

_STEP_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")  # as configs allow them
# what the fields of a step record the report shows are, when present
_RECORD_TYPES: dict[str, type | tuple[type, ...]] = {
    "id": str,
    "kind": str,
    "params": dict,
    "inputs": dict,
    "seconds": (int, float),
    "cached": bool,
    "outputs": list,
}
# config.yaml and the JSON records are kilobytes as a run writes them; more is not a run's
MAX_CONFIG_BYTES = 8 << 20
MAX_RECORD_BYTES = 64 << 20


@dataclass(frozen=True)
class StepInfo:
    id: str
    kind: str
    dir: Path
    record: dict[str, Any] = field(default_factory=dict)  # step.json; {} when not run yet
    error: str | None = None  # why step.json could not be read

    @property
    def done(self) -> bool:
        return bool(self.record)


@dataclass(frozen=True)
class RunInfo:
    dir: Path
    name: str
    config: dict[str, Any]
    config_text: str
    environment: dict[str, Any]
    steps: list[StepInfo]
    problems: list[str] = field(default_factory=list)  # run files that could not be read
    stale: list[str] = field(default_factory=list)  # steps holding an earlier config's outputs
    found: str = ""  # what a folder of outputs holds ("2 command outputs"); "" for a run


def _regular(path: Path, limit: int = MAX_RECORD_BYTES) -> Path:
    """``path``, if it is a regular file of a record's size: a pipe or a device would be read
    forever, a huge file whole."""
    if not path.is_file():
        raise UserError(f"{path}: not a regular file")
    if path.stat().st_size > limit:
        raise UserError(f"{path}: larger than a run writes it ({limit >> 20} MB)")
    return path


def _read_config(path: Path) -> tuple[dict[str, Any], str]:
    _regular(path, MAX_CONFIG_BYTES)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise UserError(f"{path}: not UTF-8 text (byte {err.start})") from None
    try:
        config = safe_yaml.load(text)
    except yaml.YAMLError as err:
        line, reason = safe_yaml.problem_of(err)
        raise UserError(f"{path}{'' if line is None else f':{line}'}: {reason}") from None
    if not isinstance(config, dict):
        raise UserError(f"{path}:1: the config must be a mapping")
    steps = config.get("steps")
    if not isinstance(steps, list) or not steps:
        raise UserError(f"{path}: no `steps` list; a run's config lists the steps it ran")
    for i, step in enumerate(steps):
        if not (
            isinstance(step, dict)
            and isinstance(step.get("id"), str)
            and isinstance(step.get("kind"), str)
        ):
            raise UserError(f"{path}: steps[{i}] is not a mapping with an id and a kind")
        if not _STEP_ID.fullmatch(step["id"]):  # a folder in steps/, never a path out of it
            raise UserError(f"{path}: steps[{i}].id {step['id']!r} is not a step id")
    return config, text


def read_record(step_dir: Path) -> tuple[dict[str, Any], str | None]:
    """A step's record and, when it cannot be read, why."""
    path = step_dir / STEP_RECORD
    if not path.exists():
        return {}, None
    try:
        record = read_json_object(_regular(path), "the step record")
    except (ValueError, OSError) as err:
        return {}, str(err)
    special = _special_files(step_dir)
    if special:
        return (
            {},
            f"{step_dir} holds {', '.join(special[:5])}, not regular files; nothing in it is read",
        )
    for key, expected in _RECORD_TYPES.items():
        if key in record and not isinstance(record[key], expected):
            return {}, f"{path}: {key} is a {type(record[key]).__name__}, not as a run writes it"
    if not all(isinstance(v, str) for v in record.get("inputs", {}).values()):
        return {}, f"{path}: inputs must name the steps they come from"
    return record, None


def _special_files(folder: Path) -> list[str]:
    """Entries of ``folder`` that are pipes, sockets or devices (links followed): reading one
    would wait forever or never end, so a step holding one is not read at all."""
    special = []
    for root, dirs, files in os.walk(folder):
        for name in files + dirs:
            try:
                mode = (Path(root) / name).stat().st_mode
            except OSError:  # a broken link: nothing to read
                continue
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                special.append((Path(root) / name).relative_to(folder).as_posix())
    return sorted(special)


def _copies(path: Path, step_id: str, seeds: Any) -> list[str]:
    """A config step's ids in the run: one per seed where the run repeated it over ``seeds``
    (see :mod:`chronoprobe.runs.seeds`), else its own."""
    from chronoprobe.runs.seeds import seeded_id

    if not isinstance(seeds, list) or not all(isinstance(s, int) for s in seeds):
        return [step_id]
    copies = [seeded_id(step_id, seed) for seed in seeds]
    return copies if any((path / "steps" / c).is_dir() for c in copies) else [step_id]


def _found_steps(path: Path) -> list[StepInfo]:
    """The steps in ``steps/`` when the config cannot tell which there are, by name."""
    steps = []
    folders = sorted(p for p in (path / "steps").glob("*") if p.is_dir())
    for step_dir in folders:
        if step_dir.name.startswith("."):
            continue
        record, error = read_record(step_dir)
        kind = record.get("kind") if isinstance(record.get("kind"), str) else "unknown"
        steps.append(StepInfo(step_dir.name, kind, step_dir, record, error))
    return steps


def is_run(path: Path) -> bool:
    """Whether ``path`` is a run directory (its config, or its marker), not some other folder."""
    return (path / "config.yaml").is_file() or is_run_directory(path)


def load_run(run_dir: str | Path) -> RunInfo:
    """The run's config, environment and steps in config order (any other folder of outputs:
    :func:`chronoprobe.report.outputs.load_folder`).

    Step directories the config does not name (an older config's leftovers) are not shown;
    the engine removes them on the next run.
    """
    path = Path(run_dir)
    config_path = path / "config.yaml"
    problems: list[str] = []
    try:
        config, text = _read_config(config_path)
    except (ValueError, OSError) as err:
        problems.append(f"the config could not be read: {err}")
        config, text = {}, ""
    environment: dict[str, Any] = {}
    env_path = path / "environment.json"
    if env_path.exists():
        try:
            environment = read_json_object(_regular(env_path), "the environment record")
        except (ValueError, OSError) as err:
            problems.append(f"the environment could not be read: {err}")
        if not isinstance(environment.get("packages", {}), dict):
            problems.append(
                f"the environment could not be read: {env_path}: packages is no mapping"
            )
            environment = {}
    if config:
        steps = []
        for step in config["steps"]:
            for step_id in _copies(path, step["id"], config.get("seeds")):
                step_dir = path / "steps" / step_id
                steps.append(StepInfo(step_id, step["kind"], step_dir, *read_record(step_dir)))
        stale = stale_steps(config, {step.id: step.record for step in steps if step.record})
        if stale:
            many = len(stale) > 1
            problems.append(
                f"step{'s' * many} {', '.join(stale)} {'hold' if many else 'holds'} the outputs "
                "of an earlier config (their params differ from config.yaml's): the last run "
                "stopped before it reached them; run it again to bring them up to date"
            )
    else:
        steps, stale = _found_steps(path), []
    name = config.get("name")
    return RunInfo(
        path,
        name if isinstance(name, str) else path.name,
        config,
        text,
        environment,
        steps,
        problems,
        stale=stale,
    )
