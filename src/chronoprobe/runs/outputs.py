"""What chronoprobe wrote under a folder, for ``report`` and ``results`` to read.

A user's results are rarely one run directory: a probe here, a training there, a folder
``outputs/`` holding both. So a folder is read as

- a run directory (its marker ``.chronoprobe-run``, or a ``config.yaml`` beside ``steps/``):
  its steps;
- one command's output (its ``step.json``; ``.chronoprobe-output`` beside it): one step;
- any other folder: the run directories and outputs found in it, down to :data:`MAX_DEPTH`
  levels, without following links or entering hidden folders, and without looking inside
  what was found (a run's steps are its own).

Each step gets an id that is unique in what was found and says where it lies: a run's step
id; a command's output, its path from the folder given (``probes/smollm2``); a step of a run
found inside the folder, the run's path and the step id (``demo/world``). The SQL tables of
``results`` and the sections of ``report`` are named by these ids.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from pathlib import Path

from chronoprobe.errors import UserError
from chronoprobe.runs.ownership import lstat_kind
from chronoprobe.runs.run_directory import is_run_directory
from chronoprobe.steps import STEP_RECORD

MAX_DEPTH = 4  # folder levels searched below the one given
MAX_FOLDERS = 20_000  # folders looked into before the search stops (a home folder by mistake)


@dataclass(frozen=True)
class Found:
    """What a folder holds: run directories and command outputs, each with its id prefix
    (the path from the folder given; "" for the folder itself)."""

    root: Path
    runs: list[tuple[str, Path]]
    outputs: list[tuple[str, Path]]
    cut_short: bool = False  # the search stopped at MAX_FOLDERS folders

    @property
    def is_run(self) -> bool:
        """The folder given is itself one run directory."""
        return [prefix for prefix, _ in self.runs] == [""] and not self.outputs

    def describe(self) -> str:
        """ "2 command outputs and 1 run directory", for page titles and messages."""
        outputs = f"{len(self.outputs)} command output{'s' * (len(self.outputs) != 1)}"
        runs = f"{len(self.runs)} run director{'y' if len(self.runs) == 1 else 'ies'}"
        return " and ".join(p for p, n in ((outputs, self.outputs), (runs, self.runs)) if n)

    def warning(self) -> str | None:
        """What the search left out, if it stopped early."""
        if not self.cut_short:
            return None
        return (
            f"{self.root}: searched only the first {MAX_FOLDERS:,} folders; pass a folder "
            "nearer to the outputs to see them all"
        )


def is_run(folder: Path) -> bool:
    """A run directory: marked as one, or laid out as one (``config.yaml`` and ``steps/``)."""
    return is_run_directory(folder) or (
        lstat_kind(folder / "config.yaml") == "file" and lstat_kind(folder / "steps") == "dir"
    )


def is_output(folder: Path) -> bool:
    """One command's (or one step's) output: it holds its ``step.json``."""
    return lstat_kind(folder / STEP_RECORD) == "file"


def find_outputs(folder: str | Path) -> Found:
    """The run directories and outputs in ``folder`` (see the module docstring); a folder
    with none is refused, saying what was looked for and how deep."""
    root = Path(folder)
    kind = lstat_kind(root)
    if kind is None:
        raise FileNotFoundError(f"{root}: no such folder")
    if not root.is_dir():
        raise UserError(
            f"{root}: a file, not a folder; pass a run directory, a command's --out folder, "
            "or a folder holding several"
        )
    if is_run(root):
        return Found(root, [("", root)], [])
    if is_output(root):
        return Found(root, [], [("", root)])
    runs: list[tuple[str, Path]] = []
    outputs: list[tuple[str, Path]] = []
    queue: deque[tuple[Path, int]] = deque([(root, 0)])
    seen = 0
    while queue and seen < MAX_FOLDERS:
        current, depth = queue.popleft()
        seen += 1
        try:
            children = sorted(current.iterdir())
        except OSError:  # unreadable: nothing of ours can be found in it
            continue
        for child in children:
            if child.name.startswith(".") or lstat_kind(child) != "dir":
                continue
            prefix = child.relative_to(root).as_posix()
            if is_run(child):
                runs.append((prefix, child))
            elif is_output(child):
                outputs.append((prefix, child))
            elif depth + 1 < MAX_DEPTH:
                queue.append((child, depth + 1))
    if not runs and not outputs:
        raise UserError(
            f"{root}: no chronoprobe output in it or in the {MAX_DEPTH} levels of folders "
            "below (a run directory holds .chronoprobe-run, a command's output step.json); "
            "make one with `chronoprobe run experiments/demo.yaml` or any command's --out"
        )
    return Found(root, sorted(runs), sorted(outputs), cut_short=bool(queue))


def step_id(prefix: str, step: str) -> str:
    """The id of step ``step`` of the run at ``prefix`` in what was found."""
    return f"{prefix}/{step}" if prefix else step


def output_id(found: Found, prefix: str) -> str:
    """The id of the command output at ``prefix``: its path, or the folder's own name when
    it is the folder given."""
    return prefix or found.root.resolve().name or str(found.root)
