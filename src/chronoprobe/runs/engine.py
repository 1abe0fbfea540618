"""Run an experiment: each step in order, from the cache when its key is known, into a run dir.

The one entry point is :func:`run_experiment`; ``chronoprobe run`` is a thin wrapper around it.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import shutil
import stat
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

import yaml
from pydantic import BaseModel
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table
from rich.text import Text

from chronoprobe.atomic import atomic_write_text
from chronoprobe.core.progress import live_progress
from chronoprobe.errors import UserError
from chronoprobe.registry import loaded_plugins
from chronoprobe.runs.cache import DamagedEntry, StepCache, step_key
from chronoprobe.runs.config import ConfigError, Experiment, load_experiment
from chronoprobe.runs.environment import environment
from chronoprobe.runs.ownership import file_record, walk_files
from chronoprobe.runs.run_directory import RunDirectory, claimed
from chronoprobe.step_context import SHARDS_DIR, StepContext
from chronoprobe.steps import STEP_RECORD, ReadOnce, StepKind


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
    log.info(Text.from_markup(markup, emoji=False).plain, extra={"rich": markup})


def step_progress(console: Console) -> Progress:
    """The bars of a run's (or a command's) steps: what each step reports, done of total."""
    return live_progress(
        TextColumn("{task.description}", markup=False),  # a model's or a file's name
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
    )


def open_log(path: Path):
    """``path`` opened for appending, refusing a symbolic link (it is not followed: a run
    appends to its own log, never to a file elsewhere a link points to), a file with other
    names (a hard link) and anything but a regular file (opening a pipe would wait for a
    reader forever)."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
    try:
        handle = os.open(path, flags, 0o666)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise UserError(
                f"{path} is a symbolic link; a run appends to its own log only: remove the link"
            ) from None
        if err.errno == errno.ENXIO:  # a pipe nobody reads
            raise UserError(f"{path} is a pipe; a run appends its log to a file") from None
        raise
    info = os.fstat(handle)
    if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
        os.close(handle)
        what = "has other names (hard links)" if stat.S_ISREG(info.st_mode) else "is no file"
        raise UserError(f"{path} {what}; a run appends its log to a file of its own only")
    os.set_blocking(handle, True)
    return open(handle, "a", encoding="utf-8")


@contextmanager
def console_logger(console: Console, path: Path | None = None) -> Iterator[logging.Logger]:
    """The run's logger, printing on ``console`` and, given a ``path``, appending to it."""
    log = logging.getLogger("chronoprobe.run")
    log.setLevel(logging.INFO)
    log.propagate = False
    handlers: list[logging.Handler] = [_ConsoleHandler(console)]
    if path is not None:
        file_handler = logging.StreamHandler(open_log(path))
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


class Destination(Protocol):
    """Where a step's outputs go (a run's ``steps/<id>``, a command's ``--out``): built in an
    empty folder of the destination's own temporaries, then installed in one step."""

    def staging(self) -> AbstractContextManager[Path]: ...

    def install(self, staged: Path, step_id: str) -> Path: ...


@dataclass(frozen=True)
class _CacheJob:
    """A cacheable step as :meth:`StepExecutor.execute` hands it to the cache: what computing
    its entry needs (``origin``: its params and input keys, recorded with the entry)."""

    step_id: str
    kind: StepKind
    key: str
    params: BaseModel
    inputs: dict[str, Path]
    label: str
    origin: dict


class StepExited(UserError):
    """A step's code (a plugin's, as a rule) called ``sys.exit``: that ends the step, which
    failed, not the run, which must not end as if it had succeeded."""


def run_step(kind: StepKind, context: StepContext, params: BaseModel, inputs: dict) -> None:
    """``kind.run`` on ``context``, with a ``sys.exit`` in its code turned into the step's
    failure (:class:`StepExited`), naming where the code called it."""
    try:
        kind.run(context, params, inputs)
    except SystemExit as exit_:
        frame = exit_.__traceback__
        while frame is not None and frame.tb_next is not None:
            frame = frame.tb_next
        where = ""
        if frame is not None:
            code = frame.tb_frame.f_code
            where = f" in {frame.tb_frame.f_globals.get('__name__', code.co_filename)}"
            where += f" ({Path(code.co_filename).name}:{frame.tb_lineno})"
        raise StepExited(
            f"step {context.step_id} ({kind.name}): its code{where} called "
            f"sys.exit({exit_.code!r}), which ended the step: the step failed (a step returns "
            "when it is done, or raises an error)"
        ) from None


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
        destination: Destination,
        recorded_inputs: dict[str, str],
        repeat: dict | None = None,
    ) -> StepResult:
        """Run (or fetch from the cache) one step into ``destination``; ``input_keys``
        identify what each input holds, ``recorded_inputs`` is how step.json names them, and
        ``repeat`` (the config ``step`` and the ``seed`` of a step repeated over seeds) is
        added to it."""
        extra = kind.fingerprint(params) if kind.fingerprint else None
        once = extra if isinstance(extra, ReadOnce) else None
        if once is not None:
            extra = {"read once": once.token}
        plugins = loaded_plugins()
        dumped = params.model_dump(mode="json")
        key = step_key(kind.name, dumped, input_keys, self.seed, extra, plugins)
        cacheable = kind.cacheable and once is None
        started, began = _now(), time.perf_counter()
        cached = cacheable and self.use_cache and self.cache.has(kind.name, key)
        label = f"{escape(step_id)} [dim]({kind.name})[/]"
        if once is not None:
            _say(self.log, f"[bold]…[/] {label} running, not cached: {escape(once.why)}")
        elif not cached:
            _say(self.log, f"[bold]…[/] {label} running")
        with destination.staging() as staged:
            if cacheable:
                origin = {"params": dumped, "inputs": input_keys}
                if plugins:  # a step continues only from one made by the same plugin code
                    origin["plugins"] = plugins
                job = _CacheJob(step_id, kind, key, params, inputs, label, origin)
                cached, computed = self._serve(job, staged)
                digests = {name: entry["sha256"] for name, entry in computed["files"].items()}
            else:
                run_step(kind, self.context(step_id, staged), params, inputs)
                computed, digests = None, {}
            outputs = walk_files(staged)
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
                **(repeat or {}),
                "outputs": outputs,
                # what was written, to tell later whether a user changed it (never served)
                "files": {name: file_record(staged / name, digests.get(name)) for name in outputs},
            }
            atomic_write_text(staged / STEP_RECORD, json.dumps(record, indent=2) + "\n")
            target = destination.install(staged, step_id)
        status = "[green]cached[/]" if cached else f"{seconds:.1f}s"
        _say(self.log, f"[green]✓[/] {label} {status}")
        return StepResult(step_id, kind.name, key, cached, seconds, target)

    def _serve(self, job: _CacheJob, staged: Path) -> tuple[bool, dict]:
        """Copy the step's cache entry into ``staged``, computing it first when there is none;
        an entry that is not as it was written is dropped and computed again. Returns whether
        it came from the cache, and the entry's record."""
        name, key = job.kind.name, job.key
        cached = self.use_cache and self.cache.has(name, key)
        if not cached:
            cached = self._compute_into_cache(job)
        try:
            return cached, self.cache.serve(name, key, staged)
        except DamagedEntry as err:
            _say(self.log, f"[yellow]{escape(str(err))}[/]; computing it again")
        for path in list(staged.iterdir()):
            shutil.rmtree(path) if path.is_dir() else path.unlink()
        with self.cache.lock(name, key):
            self.cache.discard(name, key)
        self._compute_into_cache(job)
        return False, self.cache.serve(name, key, staged)

    def _compute_into_cache(self, job: _CacheJob) -> bool:
        """Compute the step into its cache entry; True when another run finished it meanwhile.

        ``job.origin`` (params and input keys) is recorded with the entry, so that a later run
        of a kind that can continue (more epochs) starts from the furthest finished one."""
        kind, key = job.kind, job.key
        with self.cache.lock(kind.name, key) as free:
            if not free:
                _say(self.log, f"  {job.label} was being computed by another run; waited for it")
            if self.use_cache and self.cache.has(kind.name, key):
                return True
            work, dropped = self.cache.work_dir(kind.name, key, fresh=not self.use_cache)
            if dropped:
                _say(self.log, f"  [yellow]{escape(dropped)}[/]")
            if kind.continues is not None and self.use_cache and not (work / SHARDS_DIR).exists():
                self._continue(kind, job.origin, work, job.label)
            began, started = time.perf_counter(), _now()
            run_step(kind, self.context(job.step_id, work), job.params, job.inputs)
            record = {"id": job.step_id, "kind": kind.name, "key": key, "started": started}
            record.update(job.origin, seed=self.seed)
            record["seconds"] = round(time.perf_counter() - began, 3)
            self.cache.commit(work, kind.name, key, record)
        return False

    def _continue(self, kind: StepKind, origin: dict, work: Path, label: str) -> None:
        """Seed a fresh work directory with the furthest finished run of the same step that
        differs only in ``kind.continues``' field (fewer epochs), so training goes on from it.
        Only an entry this cache made is continued from, with every file as it was written."""
        field, copy = kind.continues  # type: ignore[misc]
        want = {k: v for k, v in origin["params"].items() if k != field}
        candidates = []
        folder = self.cache.root / kind.name
        names = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
        for name in (n for n in names if "." not in n and self.cache.has(kind.name, n)):
            try:
                record = self.cache.record(kind.name, name)
                value = record["params"][field]
                same = {k: v for k, v in record["params"].items() if k != field} == want
                same = same and record["inputs"] == origin["inputs"] and record["seed"] == self.seed
                same = same and record.get("plugins") == origin.get("plugins")
                if same and value < origin["params"][field]:
                    candidates.append((value, name))
            except (DamagedEntry, KeyError, TypeError):
                continue
        for value, name in sorted(candidates, reverse=True):
            try:
                self.cache.verified(kind.name, name)
            except DamagedEntry as err:
                _say(self.log, f"  [yellow]{escape(str(err))}[/]; not continued from")
                continue
            copy(self.cache.entry(kind.name, name), work)
            _say(self.log, f"  {label} continues from a finished run of {field} {value}")
            return


def _summary(results: Sequence[StepResult]) -> Table:
    table = Table(title="steps")
    for column in ("step", "kind", "cached", "seconds"):
        table.add_column(column, justify="right" if column == "seconds" else "left")
    for r in results:
        table.add_row(r.id, r.kind, "yes" if r.cached else "no", f"{r.seconds:.1f}")
    return table


def _paths_inside(experiment: Experiment, run_dir: Path) -> list[str]:
    """Params naming files inside the run directory: the run replaces what is there while a
    step would read it. An earlier step's output is named as an input instead."""
    inside = run_dir.resolve()
    problems = []

    def walk(value: object, loc: str) -> None:
        if isinstance(value, Path):
            if value.resolve().is_relative_to(inside):
                problems.append(
                    f"{experiment.path.name}: {loc}: {value} is inside the run directory "
                    f"{run_dir}, which the run rewrites; name the step that makes it under "
                    "`inputs:`, or copy the file elsewhere"
                )
        elif isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{loc}.{key}")
        elif isinstance(value, list | tuple):
            for i, item in enumerate(value):
                walk(item, f"{loc}[{i}]")

    for i, step in enumerate(experiment.config.steps):
        walk(experiment.params[step.id].model_dump(), f"steps[{i}].params")
    return problems


def run_experiment(
    config_path: str | Path,
    out: str | Path | None = None,
    overrides: Sequence[str] = (),
    *,
    use_cache: bool = True,
    console: Console | None = None,
    trust_plugins: bool = False,
    seeds: Sequence[int] | None = None,
    trust_cache_dir: bool = False,
) -> RunResult:
    """Run every step of an experiment config into ``out`` (default ``runs/<name>``).

    ``seeds`` replaces the config's ``seeds``: the steps that train, and those that read
    them, run once per seed (see :mod:`chronoprobe.runs.seeds`).

    Finished steps come from the shared cache; an interrupted step resumes from its finished
    shards. The whole plan is checked before anything is written: an invalid config raises
    :class:`~chronoprobe.runs.config.ConfigError`, a run directory the run could not safely
    write over a ValueError. ``trust_plugins`` lets the config's ``plugins:`` be imported
    (they run code; see :func:`~chronoprobe.runs.config.load_experiment`), and
    ``trust_cache_dir`` its ``cache_dir:`` be used (its entries are served as results).
    """
    experiment = load_experiment(
        config_path,
        overrides,
        trust_plugins=trust_plugins,
        seeds=seeds,
        trust_cache_dir=trust_cache_dir,
    )
    config = experiment.config
    run_dir = Path(out) if out is not None else Path("runs") / config.name
    console = console or Console(stderr=True, emoji=False)
    cache_root = experiment.cache_root
    problems = _paths_inside(experiment, run_dir)
    if problems:
        raise ConfigError(problems)
    cache = StepCache(cache_root)
    warnings = cache.check()
    keep = [run.id for run in experiment.step_runs()]
    with claimed(run_dir, cache_root) as directory:
        directory.check(keep)
        checks = {k.run_dir_check for k in experiment.kinds.values() if k.run_dir_check}
        problems = [problem for check in checks for problem in check(run_dir)]
        if problems:
            raise UserError("; ".join(problems) + ". Nothing was changed")
        return _run(experiment, directory, cache, use_cache, console, warnings)


def _run(
    experiment: Experiment,
    directory: RunDirectory,
    cache: StepCache,
    use_cache: bool,
    console: Console,
    warnings: Sequence[str],
) -> RunResult:
    config, run_dir = experiment.config, directory.path
    keep = [run.id for run in experiment.step_runs()]
    foreign = directory.start(keep)
    tmp = directory.tmp
    resolved = yaml.safe_dump(experiment.resolved(), sort_keys=False, allow_unicode=True)
    atomic_write_text(run_dir / "config.yaml", resolved, tmp)
    record = json.dumps(environment(config.seed), indent=2) + "\n"
    atomic_write_text(run_dir / "environment.json", record, tmp)
    progress = step_progress(console)
    results: list[StepResult] = []
    with console_logger(console, run_dir / "run.log") as log, progress:
        _say(log, f"run [bold]{config.name}[/] into {escape(str(run_dir))}")
        if directory.adopted:
            where = escape(str(run_dir))
            _say(log, f"added the run marker: {where} was written by an earlier chronoprobe")
        if foreign:
            names = escape(", ".join(foreign))
            _say(log, f"[yellow]left alone[/] in steps/ (not made by this run): {names}")
        for warning in warnings:
            _say(log, f"[yellow]warning:[/] {escape(warning)}")
        keys: dict[str, str] = {}
        for step in experiment.step_runs():
            executor = StepExecutor(cache, use_cache, log, progress, run_dir, step.seed)
            try:
                result = executor.execute(
                    step.id,
                    experiment.kinds[step.step],
                    experiment.params[step.step],
                    {name: directory.steps / source for name, source in step.inputs.items()},
                    {name: keys[source] for name, source in step.inputs.items()},
                    directory,
                    step.inputs,
                    {"step": step.step, "seed": step.seed} if step.repeated else None,
                )
                keys[step.id] = result.key
                results.append(result)
            except KeyboardInterrupt:
                _say(log, f"[yellow]interrupted[/] in step {step.id}; run again to resume")
                raise
            except Exception as err:
                _say(log, f"[red]failed[/] in step {step.id}: {escape(str(err))}")
                raise
        for problem in directory.finish(keep):
            _say(log, f"[yellow]left alone[/] (not deleted): {escape(problem)}")
    console.print(_summary(results))
    return RunResult(run_dir, results)
