"""Read a run directory as the run engine leaves it: config, environment, one record per step.

The report reads only files (see the run directory layout in ``chronoprobe.runs``), so it works
on a copied or archived run, and on a run still in progress (steps not yet run are listed as such).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from chronoprobe.jsonl import read_json_object

STEP_RECORD = "step.json"


@dataclass(frozen=True)
class StepInfo:
    id: str
    kind: str
    dir: Path
    record: dict[str, Any] = field(default_factory=dict)  # step.json; {} when not run yet

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


def _read_config(path: Path) -> tuple[dict[str, Any], str]:
    if not path.is_file():
        raise ValueError(
            f"{path.parent}: not a run directory (no config.yaml); "
            "create one with `chronoprobe run CONFIG.yaml`"
        )
    text = path.read_text(encoding="utf-8")
    try:
        config = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise ValueError(f"{path}{line}: invalid YAML: {getattr(err, 'problem', err)}") from err
    if not isinstance(config, dict):
        raise ValueError(f"{path}:1: the config must be a mapping")
    steps = config.get("steps") or []
    if not isinstance(steps, list) or not all(
        isinstance(s, dict) and "id" in s and "kind" in s for s in steps
    ):
        raise ValueError(f"{path}: `steps` must be a list of mappings with an id and a kind")
    return config, text


def load_run(run_dir: str | Path) -> RunInfo:
    """The run's config, environment and steps in config order.

    Step directories the config does not name (an older config's leftovers) are not shown;
    the engine removes them on the next run.
    """
    path = Path(run_dir)
    if path.is_file():
        raise ValueError(f"{path}: a file, not a run directory (made by `chronoprobe run`)")
    if not path.is_dir():
        raise FileNotFoundError(f"{path}: no such run directory")
    config, text = _read_config(path / "config.yaml")
    env_path = path / "environment.json"
    environment = read_json_object(env_path) if env_path.is_file() else {}
    if not isinstance(environment, dict):
        raise ValueError(f"{env_path}:1: the environment record must be a JSON object")
    steps = []
    for step in config.get("steps") or []:
        step_dir = path / "steps" / str(step["id"])
        record_path = step_dir / STEP_RECORD
        record = read_json_object(record_path) if record_path.is_file() else {}
        if not isinstance(record, dict):
            raise ValueError(f"{record_path}:1: the step record must be a JSON object")
        steps.append(StepInfo(str(step["id"]), str(step["kind"]), step_dir, record))
    return RunInfo(path, str(config.get("name", path.name)), config, text, environment, steps)
