"""Progress that is seen wherever the output goes: a live bar on a terminal, plain lines elsewhere.

rich draws nothing while its output is not a terminal (a log file, ``| tee``, CI, a cluster's
job log), so hours of training would print only "running". Without a terminal, a
:class:`LineProgress` prints one line per unfinished task at a steady interval instead:
``<task>: 1,200/5,000 (24.0%) · 38.2/s · ETA 1m39s``.
"""

from __future__ import annotations

import os
import threading

from rich.console import Console
from rich.progress import Progress, ProgressColumn, Task

INTERVAL_ENV = "CHRONOPROBE_PROGRESS_INTERVAL"
DEFAULT_INTERVAL_S = 30.0


def interval_s() -> float:
    """Seconds between two plain progress lines: ``CHRONOPROBE_PROGRESS_INTERVAL`` or 30."""
    raw = os.environ.get(INTERVAL_ENV, "")
    try:
        value = float(raw)
    except ValueError:
        return DEFAULT_INTERVAL_S
    return value if value > 0 else DEFAULT_INTERVAL_S


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def task_line(task: Task) -> str:
    """One plain line for ``task``: count, share, rate and time left where known."""
    parts = [f"{task.description}: {task.completed:,.0f}"]
    if task.total:
        parts[0] += f"/{task.total:,.0f} ({100 * task.completed / task.total:.1f}%)"
    if task.speed:
        parts.append(f"{task.speed:,.1f}/s")
    if task.time_remaining is not None and task.total:
        parts.append(f"ETA {_duration(task.time_remaining)}")
    return " · ".join(parts)


class LineProgress(Progress):
    """A :class:`rich.progress.Progress` that prints :func:`task_line` lines every
    ``interval`` seconds, for output that is not a terminal."""

    def __init__(self, *columns: str | ProgressColumn, interval: float, **kwargs) -> None:
        super().__init__(*columns, **kwargs)
        self._interval = interval
        self._stop = threading.Event()
        self._printer: threading.Thread | None = None

    def start(self) -> None:
        super().start()
        self._stop.clear()
        self._printer = threading.Thread(target=self._print_lines, daemon=True)
        self._printer.start()

    def stop(self) -> None:
        self._stop.set()
        if self._printer is not None:
            self._printer.join()
            self._printer = None
        super().stop()

    def print_lines(self) -> None:
        """Print a line for each task still running."""
        for task in self.tasks:
            if not task.finished and task.visible:
                self.console.print(task_line(task), markup=False, highlight=False, soft_wrap=True)

    def _print_lines(self) -> None:
        while not self._stop.wait(self._interval):
            self.print_lines()


def live_progress(
    *columns: str | ProgressColumn, console: Console, transient: bool = True
) -> Progress:
    """A live bar on a terminal; elsewhere a :class:`LineProgress` at :func:`interval_s`."""
    if console.is_terminal:
        return Progress(*columns, console=console, transient=transient)
    return LineProgress(*columns, console=console, transient=transient, interval=interval_s())
