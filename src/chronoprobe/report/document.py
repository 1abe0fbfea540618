"""Assemble the report of a run: summary first, one section per step in config order, then the run.

A section that fails to build or to draw (a step's outputs damaged, a bug in a section function)
shows the error in its place, naming the step, and the rest of the report is still written: one
broken step should not hide hours of other results, nor be hidden itself. Each such failure is
also logged as a warning (``chronoprobe report`` prints it).
"""

from __future__ import annotations

import logging
import os
import stat
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from chronoprobe.report.blocks import (
    Block,
    Code,
    Details,
    Link,
    Section,
    Table,
    Text,
    flatten,
    format_value,
    key_value_table,
    with_uncertainty,
)
from chronoprobe.report.html import StepView, anchor, render_page
from chronoprobe.report.outputs import load_folder
from chronoprobe.report.rundir import RunInfo, StepInfo
from chronoprobe.report.sections import SectionKind, read_metrics, section_kind
from chronoprobe.steps import STEP_RECORD
from chronoprobe.version import __version__

log = logging.getLogger(__name__)

HEADLINE_ITEMS = 4  # metrics per summary row when a kind names none
LOG_LINES = 60
LOG_TAIL_BYTES = 64 << 10  # enough for LOG_LINES lines
REPORT_KIND = "report"  # the step that writes this page; it is still running while it does
MAX_FILES = 100


def _status(step: StepInfo) -> str:
    if step.error is not None:
        return "unreadable step.json"
    if step.kind == REPORT_KIND:
        return "this page"
    if not step.done:
        return "not run"
    return "cached" if step.record.get("cached") else "computed"


def headline(step: StepInfo) -> str:
    """The few metrics that say how a step went, for its row in the summary table."""
    if not step.done:
        return ""
    try:
        raw = read_metrics(step.dir)
    except ValueError as err:
        return f"unreadable metrics: {err}"
    metrics = flatten(raw)
    keys = section_kind(step.kind, step.record).headline
    if callable(keys):
        return " · ".join(f"{k} {format_value(v)}" for k, v in keys(raw).items())
    if keys is None:
        keys = tuple(
            k
            for k, v in metrics.items()
            if "." not in k and isinstance(v, int | float) and not isinstance(v, bool)
        )[:HEADLINE_ITEMS]
    return " · ".join(f"{k} {_figure(raw, k)}" for k in keys if k in metrics)


def _figure(metrics: dict[str, Any], path: str) -> str:
    """The figure at dotted ``path`` of a metrics.json, with its 95% interval when it has one
    and the rows it counts of those it could have where its group's coverage names it
    ("0.050 [0.014, 0.165] over 40 of 60 rows (66.7%)")."""
    *parents, key = path.split(".")
    group: Any = metrics
    for part in parents:
        group = group.get(part) if isinstance(group, dict) else None
    if not isinstance(group, dict):
        return format_value(flatten(metrics).get(path))
    return with_uncertainty(group, key) if f"{key}_ci95" in group else format_value(group[key])


def _summary(run: RunInfo, shown: set[str]) -> Table:
    """One row per step in config order; steps with a section link to it."""
    rows: list[list[Any]] = []
    for step in run.steps:
        seconds = step.record.get("seconds")
        rows.append(
            [
                Link(step.id, f"#{anchor(step.id)}") if step.id in shown else step.id,
                step.kind,
                _status(step),
                seconds,
                headline(step),
            ]
        )
    return Table(["step", "kind", "status", "seconds", "headline metrics"], rows)


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def _rows(path: Path) -> int | str | None:
    if path.suffix != ".parquet":
        return None
    try:
        return pq.read_metadata(path).num_rows
    except (OSError, pa.ArrowException):
        return "unreadable"


def _files(step_dir: Path) -> Table:
    """The step's output files; Parquet ones with their row counts (queryable with SQL)."""
    files = sorted(
        p
        for p in step_dir.rglob("*")
        if p.is_file()
        and p.name != STEP_RECORD
        and not any(part.startswith(".") for part in p.relative_to(step_dir).parts)
    )
    rows = []
    for path in files[:MAX_FILES]:
        rows.append(
            [path.relative_to(step_dir).as_posix(), _size(path.stat().st_size), _rows(path)]
        )
    return Table(["file", "size", "rows"], rows, omitted=max(0, len(files) - MAX_FILES))


def _failed(step: StepInfo, what: str, err: Exception) -> Text:
    """An error box in place of what could not be built; the command line warns of it."""
    message = f"the {step.kind} {what} of step {step.id} could not be built"
    log.warning("report: %s: %s: %s", message, type(err).__name__, err)
    log.debug("report: %s", message, exc_info=True)
    return Text(f"{message[0].upper()}{message[1:]}: {type(err).__name__}: {err}", style="error")


def _comparisons(run: RunInfo) -> dict[str, list[Block]]:
    """Each section kind's run-wide comparisons, keyed by the first of its steps."""
    groups: dict[str, tuple[SectionKind, list[StepInfo]]] = {}
    for step in run.steps:
        kind = section_kind(step.kind, step.record)
        if step.done and kind.compare is not None:
            groups.setdefault(kind.kind, (kind, []))[1].append(step)
    out = {}
    for kind, steps in groups.values():
        try:
            out[steps[0].id] = kind.compare(run, steps)
        except Exception as err:  # shown, not raised, as a broken section is
            out[steps[0].id] = [_failed(steps[0], "comparison", err)]
    return out


def _step_view(step: StepInfo, first: list[Block], known: set[str]) -> StepView | None:
    """The step's section with its parameters, inputs (linked to the ``known`` steps that
    made them) and files (after ``first``, the comparisons it opens); None for steps not run
    yet."""
    if step.error is not None:
        log.warning("report: step %s: %s", step.id, step.error)
        box = Text(f"The record of step {step.id} could not be read: {step.error}", style="error")
        return StepView(step.id, step.kind, _status(step), None, Section(f"Step {step.id}", [box]))
    if not step.done:
        return None
    try:
        section = section_kind(step.kind, step.record).build(step.dir, step.record)
    except Exception as err:  # a broken section is shown, not raised: see the module docstring
        section = Section(f"Step {step.id}", [_failed(step, "section", err)])
    if section is None:
        return None
    extra: list[Block] = []
    if step.record.get("params"):
        extra.append(Details("Parameters", [key_value_table(step.record["params"])]))
    if step.record.get("inputs"):
        inputs = Table(
            ["input", "from step"],
            [
                [name, Link(src, f"#{anchor(src)}") if src in known else src]
                for name, src in step.record["inputs"].items()
            ],
        )
        extra.append(Details("Inputs", [inputs]))
    extra.append(Details("Files", [_files(step.dir)]))
    section = Section(section.title, [*first, *section.blocks, *extra])
    return StepView(step.id, step.kind, _status(step), step.record.get("seconds"), section)


def _when(iso: Any) -> str:
    """An ISO timestamp as "2026-01-31 14:05 UTC"; anything else as given."""
    try:
        moment = datetime.fromisoformat(str(iso))
    except ValueError:
        return str(iso)
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M") + (" UTC" if moment.tzinfo is not None else "")


def _environment(run: RunInfo) -> list[tuple[str, str]]:
    env = run.environment
    revision = env.get("git_revision")
    pairs = [
        ("started", _when(env["started"]) if "started" in env else None),
        ("chronoprobe", env.get("chronoprobe")),
        ("python", env.get("python")),
        ("device", env.get("device")),
        ("seed", env.get("seed", run.config.get("seed"))),
        ("git revision", revision[:12] if isinstance(revision, str) else "not a git checkout"),
        ("platform", env.get("platform")),
    ]
    return [(k, format_value(v) if not isinstance(v, str) else v) for k, v in pairs]


def _span(run: RunInfo) -> list[tuple[str, str]]:
    """The header of a folder of outputs: what it holds and when its steps ran."""
    times = sorted(
        str(step.record[key])
        for step in run.steps
        for key in ("started", "finished")
        if isinstance(step.record.get(key), str)
    )
    pairs = [("outputs", run.found), ("chronoprobe", __version__ + " (this report)")]
    if times:
        pairs += [("first started", _when(times[0])), ("last finished", _when(times[-1]))]
    return pairs


def _appendix(run: RunInfo) -> list[Block]:
    blocks: list[Block] = []
    if run.config_text or not run.found:
        title = "Configuration (config.yaml, resolved)" if not run.found else "Configurations"
        blocks.append(Details(title, [Code(run.config_text)]))
    packages = run.environment.get("packages") or {}
    if packages:
        rows = [[name, version or "not installed"] for name, version in packages.items()]
        blocks.append(Details("Package versions", [Table(["package", "version"], rows)]))
    lines = _log_tail(run.dir / "run.log")
    if lines is not None:
        blocks.append(
            Details(f"Log (run.log, last {LOG_LINES} lines)", [Code("\n".join(lines[-LOG_LINES:]))])
        )
    return blocks


def _log_tail(path: Path) -> list[str] | None:
    """The last lines of the run's log: its end only (a log may be large), and never through
    a link (the page would show whatever file it points to)."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with open(handle, "rb") as stream:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            return None
        size = stream.seek(0, os.SEEK_END)
        stream.seek(max(0, size - LOG_TAIL_BYTES))
        text = stream.read().decode("utf-8", errors="replace")
    return text.splitlines()[1 if size > LOG_TAIL_BYTES else 0 :]


def render_report(run_dir: str | Path) -> str:
    """The report of the run in ``run_dir`` as one HTML string."""
    run = load_folder(run_dir)
    comparisons = _comparisons(run)
    known = {step.id for step in run.steps}
    views = [
        view
        for step in run.steps
        if (view := _step_view(step, comparisons.get(step.id, []), known)) is not None
    ]
    for problem in run.problems:
        log.warning("report: %s", problem)
    started = _when(run.environment.get("started", "at an unknown time"))
    now = _when(datetime.now(UTC).isoformat())
    subtitle = f"Run started {started}, {len(run.steps)} steps, in {run.dir}"
    if run.found:
        steps = f"{len(run.steps)} step{'s' * (len(run.steps) != 1)}"
        subtitle = f"{steps} from {run.found} in {run.dir}"
    return render_page(
        title=f"chronoprobe report: {run.name}",
        subtitle=subtitle,
        environment=_environment(run) if not run.found else _span(run),
        summary=_summary(run, {view.id for view in views}),
        steps=views,
        appendix=_appendix(run),
        problems=[Text(f"{p[0].upper()}{p[1:]}", style="error") for p in run.problems],
        appendix_title="Run" if not run.found else "Runs in this folder",
        footer=f"Written by chronoprobe {__version__} at {now}.",
    )
