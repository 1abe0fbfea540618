"""The report of any folder of outputs: one command's ``--out``, or a folder holding several
outputs and run directories (found as :mod:`chronoprobe.runs.outputs` finds them).

Such a folder is read as one run whose steps are what was found, each under its id there
(``probes/smollm2``, ``demo/world``): sections per step kind, comparisons across the steps of a
kind, the files of each. A step's inputs link to the step that made them when that step is
among those found (a run's steps name each other; a command names its input's folder).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chronoprobe.report.rundir import RunInfo, StepInfo, is_run, load_run, read_record
from chronoprobe.runs.outputs import Found, find_outputs, output_id, step_id


def _linked_inputs(inputs: Any, found: Found, ids: dict[Path, str]) -> Any:
    """A command output's inputs (paths as typed) as the ids of found outputs where they are
    one of them (or a file in one), else as typed."""
    if not isinstance(inputs, dict):
        return inputs
    out = {}
    for name, typed in inputs.items():
        out[name] = typed
        if not isinstance(typed, str):
            continue
        path = Path(typed)
        for candidate in (path, found.root / path) if not path.is_absolute() else (path,):
            resolved = candidate.resolve()
            match = next((ids[p] for p in (resolved, *resolved.parents) if p in ids), None)
            if match is not None:
                out[name] = match
                break
    return out


def _run_steps(found: Found, prefix: str, run_dir: Path) -> tuple[RunInfo, list[StepInfo]]:
    """A run found in the folder, its steps renamed by the run's path (and their inputs with
    them)."""
    run = load_run(run_dir)
    steps = []
    for step in run.steps:
        record = dict(step.record)
        if record:
            record["id"] = step_id(prefix, step.id)
            if isinstance(record.get("inputs"), dict):
                record["inputs"] = {
                    k: step_id(prefix, v) if isinstance(v, str) else v
                    for k, v in record["inputs"].items()
                }
        steps.append(StepInfo(step_id(prefix, step.id), step.kind, step.dir, record, step.error))
    return run, steps


def load_outputs(folder: str | Path) -> RunInfo:
    """The outputs in ``folder`` as one run (see the module docstring); a folder without any
    is refused, naming what was looked for."""
    found = find_outputs(folder)
    groups: list[tuple[str, list[StepInfo]]] = []
    problems: list[str] = []
    configs: list[str] = []
    for prefix, run_dir in found.runs:
        run, steps = _run_steps(found, prefix, run_dir)
        groups.append((prefix, steps))
        problems += [f"{prefix or run_dir}: {problem}" for problem in run.problems]
        if run.config_text:
            configs.append(f"# {prefix}/config.yaml\n{run.config_text.rstrip()}\n")
    ids = {path.resolve(): output_id(found, prefix) for prefix, path in found.outputs}
    for prefix, out in found.outputs:
        record, error = read_record(out)
        kind = record.get("kind") if isinstance(record.get("kind"), str) else "unknown"
        if record:
            record = {
                **record,
                "id": output_id(found, prefix),
                "inputs": _linked_inputs(record.get("inputs", {}), found, ids),
            }
        groups.append((prefix, [StepInfo(output_id(found, prefix), kind, out, record, error)]))
    if (warning := found.warning()) is not None:
        problems.append(warning)
    steps = [step for _, group in sorted(groups, key=lambda g: g[0]) for step in group]
    name = found.root.resolve().name or str(found.root)
    return RunInfo(
        found.root, name, {}, "\n".join(configs), {}, steps, problems, found=found.describe()
    )


def load_folder(folder: str | Path) -> RunInfo:
    """What a report shows of ``folder``: a run directory's run, else the outputs in it."""
    path = Path(folder)
    return load_run(path) if is_run(path) else load_outputs(path)
