"""Run an experiment: each step in order, from the cache when its key is known, into a run dir.

The one entry point is :func:`run_experiment`; ``chronoprobe run`` is a thin wrapper around it.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import yaml
from pydantic import BaseModel
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table
from rich.text import Text

from chronoprobe.atomic import atomic_write_text
from chronoprobe.core.progress import live_progress
from chronoprobe.runs.cache import (
    STEP_RECORD,
    StepCache,
    default_cache_dir,
    link_tree,
    replace_dir,
    step_key,
    temp_beside,
)
from chronoprobe.runs.config import Experiment, load_experiment
from chronoprobe.runs.environment import environment
from chronoprobe.runs.run_directory import check_run_dir, claimed, tidy
from chronoprobe.runs.steps import SHARDS_DIR, StepContext, StepKind


@dataclass(frozen=True)
class StepResult:
    id: str
    kind: str
    key: str
    cached: bool
    seconds: float
    dir: Path


@dataclass(frozen=True)
class RunResult:
    run_dir: Path
    steps: list[StepResult]

    def step(self, step_id: str) -> StepResult:
        return next(s for s in self.steps if s.id == step_id)

    @property
    def report(self) -> Path | None:
        path = self.run_dir / "report.html"
        return path if path.is_file() else None


class _ConsoleHandler(logging.Handler):
    """Log records on the rich console; engine lines carry their markup in ``record.rich``."""

    def __init__(self, console: Console) -> None:
        super().__init__(logging.INFO)
        self.console = console

    def emit(self, record: logging.LogRecord) -> None:
        rich = getattr(record, "rich", None)
        self.console.print(rich or record.getMessage(), markup=rich is not None, highlight=False)


def _say(log: logging.Logger, markup: str) -> None:
    log.info(Text.from_markup(markup).plain, extra={"rich": markup})


def step_progress(console: Console) -> Progress:
    """The bars of a run's (or a command's) steps: what each step reports, done of total."""
    return live_progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
    )


@contextmanager
def console_logger(console: Console, path: Path | None = None) -> Iterator[logging.Logger]:
    """The run's logger, printing on ``console`` and, given a ``path``, appending to it."""
    log = logging.getLogger("chronoprobe.run")
    log.setLevel(logging.INFO)
    log.propagate = False
    handlers: list[logging.Handler] = [_ConsoleHandler(console)]
    if path is not None:
        file_handler = logging.FileHandler(path, encoding="utf-8")
        file_handler.setFormatter(logging.Formatter("%(asctime)s %(name)s: %(message)s"))
        handlers.append(file_handler)
    for handler in handlers:
        log.addHandler(handler)
    try:
        yield log
    finally:
        for handler in handlers:
            log.removeHandler(handler)
            handler.close()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class StepExecutor:
    """Runs one step at a time into a target directory, through the shared cache.

    The engine runs a config's steps with it; a CLI command runs its one step with it, so a
    command and a step of the same operation write the same files and share cache entries.
    """

    def __init__(
        self,
        cache: StepCache,
        use_cache: bool,
        log: logging.Logger,
        progress: Progress | None,
        run_dir: Path,
        seed: int,
    ) -> None:
        self.cache, self.use_cache, self.log, self.progress = cache, use_cache, log, progress
        self.run_dir, self.seed = run_dir, seed

    def context(self, step_id: str, out_dir: Path) -> StepContext:
        return StepContext(
            step_id=step_id,
            out_dir=out_dir,
            run_dir=self.run_dir,
            seed=self.seed,
            log=self.log.getChild(step_id),
            progress=self.progress,
        )

    def execute(
        self,
        step_id: str,
        kind: StepKind,
        params: BaseModel,
        inputs: dict[str, Path],
        input_keys: dict[str, str],
        target: Path,
        recorded_inputs: dict[str, str],
    ) -> StepResult:
        """Run (or fetch from the cache) one step into ``target``; ``input_keys`` identify what
        each input holds, ``recorded_inputs`` is how step.json names them."""
        extra = kind.fingerprint(params) if kind.fingerprint else None
        key = step_key(kind.name, params.model_dump(mode="json"), input_keys, self.seed, extra)
        started, began = _now(), time.perf_counter()
        cached = kind.cacheable and self.use_cache and self.cache.has(kind.name, key)
        label = f"{step_id} [dim]({kind.name})[/]"
        if not cached:
            _say(self.log, f"[bold]…[/] {label} running")
        if kind.cacheable:
            if not cached:
                origin = {"params": params.model_dump(mode="json"), "inputs": input_keys}
                cached = self._compute_into_cache(step_id, kind, key, params, inputs, label, origin)
            entry = self.cache.entry(kind.name, key)
            computed = json.loads((entry / STEP_RECORD).read_text(encoding="utf-8"))
            outputs = link_tree(entry, target, skip=(STEP_RECORD,))
        else:
            work = temp_beside(self.run_dir / step_id, "work")  # outside steps/, which it reads
            work.mkdir(parents=True)
            try:
                kind.run(self.context(step_id, work), params, inputs)
                replace_dir(work, target)
            finally:
                shutil.rmtree(work, ignore_errors=True)
            files = (p for p in target.rglob("*") if p.is_file())
            outputs = sorted(p.relative_to(target).as_posix() for p in files)
            computed = None
        seconds = time.perf_counter() - began
        record = {
            "id": step_id,
            "kind": kind.name,
            "key": key,
            "params": params.model_dump(mode="json"),
            "inputs": recorded_inputs,
            "cached": cached,
            "started": started,
            "finished": _now(),
            "seconds": round(seconds, 3),
            "compute_seconds": computed["seconds"] if computed else round(seconds, 3),
            "outputs": outputs,
        }
        atomic_write_text(target / STEP_RECORD, json.dumps(record, indent=2) + "\n")
        status = "[green]cached[/]" if cached else f"{seconds:.1f}s"
        _say(self.log, f"[green]✓[/] {label} {status}")
        return StepResult(step_id, kind.name, key, cached, seconds, target)

    def _compute_into_cache(
        self,
        step_id: str,
        kind: StepKind,
        key: str,
        params: BaseModel,
        inputs: dict[str, Path],
        label: str,
        origin: dict,
    ) -> bool:
        """Compute the step into its cache entry; True when another run finished it meanwhile.

        ``origin`` (params and input keys) is recorded with the entry, so that a later run of
        a kind that can continue (more epochs) starts from the furthest finished one."""
        with self.cache.lock(kind.name, key) as free:
            if not free:
                _say(self.log, f"  {label} was being computed by another run; waited for it")
            if self.use_cache and self.cache.has(kind.name, key):
                return True
            work = self.cache.work_dir(kind.name, key, fresh=not self.use_cache)
            if kind.continues is not None and self.use_cache and not (work / SHARDS_DIR).exists():
                self._continue(kind, origin, work, label)
            began, started = time.perf_counter(), _now()
            kind.run(self.context(step_id, work), params, inputs)
            record = {"id": step_id, "kind": kind.name, "key": key, "started": started}
            record.update(origin, seed=self.seed)
            record["seconds"] = round(time.perf_counter() - began, 3)
            atomic_write_text(work / STEP_RECORD, json.dumps(record, indent=2) + "\n")
            self.cache.commit(work, kind.name, key)
        return False

    def _continue(self, kind: StepKind, origin: dict, work: Path, label: str) -> None:
        """Seed a fresh work directory with the furthest finished run of the same step that
        differs only in ``kind.continues``' field (fewer epochs), so training goes on from it."""
        field, copy = kind.continues  # type: ignore[misc]
        want = {k: v for k, v in origin["params"].items() if k != field}
        best, best_value = None, None
        for record_path in (self.cache.root / kind.name).glob(f"*/{STEP_RECORD}"):
            try:
                record = json.loads(record_path.read_text(encoding="utf-8"))
                value = record["params"][field]
                same = {k: v for k, v in record["params"].items() if k != field} == want
                same = same and record["inputs"] == origin["inputs"] and record["seed"] == self.seed
            except (KeyError, TypeError, json.JSONDecodeError):
                continue
            if same and value < origin["params"][field] and (best is None or value > best_value):
                best, best_value = record_path.parent, value
        if best is not None:
            copy(best, work)
            _say(self.log, f"  {label} continues from a finished run of {field} {best_value}")


def _summary(results: Sequence[StepResult]) -> Table:
    table = Table(title="steps")
    for column in ("step", "kind", "cached", "seconds"):
        table.add_column(column, justify="right" if column == "seconds" else "left")
    for r in results:
        table.add_row(r.id, r.kind, "yes" if r.cached else "no", f"{r.seconds:.1f}")
    return table


def _cache_root(experiment: Experiment) -> Path:
    configured = experiment.config.cache_dir
    if configured is None:
        return default_cache_dir()
    return configured if configured.is_absolute() else experiment.path.parent / configured


def run_experiment(
    config_path: str | Path,
    out: str | Path | None = None,
    overrides: Sequence[str] = (),
    *,
    use_cache: bool = True,
    console: Console | None = None,
) -> RunResult:
    """Run every step of an experiment config into ``out`` (default ``runs/<name>``).

    Finished steps come from the shared cache; an interrupted step resumes from its finished
    shards. Raises :class:`~chronoprobe.runs.config.ConfigError` before doing anything when the
    config is invalid.
    """
    experiment = load_experiment(config_path, overrides)
    config = experiment.config
    run_dir = Path(out) if out is not None else Path("runs") / config.name
    console = console or Console(stderr=True)
    cache_root = _cache_root(experiment)
    check_run_dir(run_dir, cache_root)
    with claimed(run_dir):
        return _run(experiment, run_dir, cache_root, use_cache, console)


def _run(
    experiment: Experiment, run_dir: Path, cache_root: Path, use_cache: bool, console: Console
) -> RunResult:
    config = experiment.config
    foreign = tidy(run_dir, {step.id for step in config.steps})
    resolved = yaml.safe_dump(experiment.resolved(), sort_keys=False, allow_unicode=True)
    atomic_write_text(run_dir / "config.yaml", resolved)
    record = json.dumps(environment(config.seed), indent=2) + "\n"
    atomic_write_text(run_dir / "environment.json", record)
    progress = step_progress(console)
    results: list[StepResult] = []
    with console_logger(console, run_dir / "run.log") as log, progress:
        _say(log, f"run [bold]{config.name}[/] into {run_dir}")
        if foreign:
            _say(
                log, f"[yellow]left alone[/] in steps/ (not made by this run): {', '.join(foreign)}"
            )
        executor = StepExecutor(
            StepCache(cache_root), use_cache, log, progress, run_dir, config.seed
        )
        keys: dict[str, str] = {}
        for step in config.steps:
            try:
                result = executor.execute(
                    step.id,
                    experiment.kinds[step.id],
                    experiment.params[step.id],
                    {name: run_dir / "steps" / source for name, source in step.inputs.items()},
                    {name: keys[source] for name, source in step.inputs.items()},
                    run_dir / "steps" / step.id,
                    dict(step.inputs),
                )
                keys[step.id] = result.key
                results.append(result)
            except KeyboardInterrupt:
                _say(log, f"[yellow]interrupted[/] in step {step.id}; run again to resume")
                raise
            except Exception as err:
                _say(log, f"[red]failed[/] in step {step.id}: {err}")
                raise
    console.print(_summary(results))
    return RunResult(run_dir, results)
