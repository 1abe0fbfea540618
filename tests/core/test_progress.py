"""Progress without a terminal: plain lines at a steady interval, a live bar on a terminal."""

from __future__ import annotations

import io
import time

from rich.console import Console
from rich.progress import Progress, TextColumn

from chronoprobe.core.progress import LineProgress, interval_s, live_progress, task_line


def _console(terminal: bool) -> Console:
    return Console(file=io.StringIO(), force_terminal=terminal, width=120)


def test_without_a_terminal_lines_are_printed_at_the_interval(monkeypatch):
    monkeypatch.setenv("CHRONOPROBE_PROGRESS_INTERVAL", "0.05")
    console = _console(terminal=False)
    bar = live_progress(TextColumn("{task.description}"), console=console)
    assert isinstance(bar, LineProgress)
    with bar:
        task = bar.add_task("probe pll", total=200)
        bar.update(task, completed=50)
        time.sleep(0.3)
    lines = [line for line in console.file.getvalue().splitlines() if line]
    assert len(lines) >= 2
    assert lines[0].startswith("probe pll: 50/200 (25.0%)")


def test_finished_tasks_print_nothing():
    console = _console(terminal=False)
    bar = LineProgress(
        TextColumn("{task.description}"), console=console, interval=10, transient=True
    )
    with bar:
        task = bar.add_task("done already", total=3)
        bar.update(task, completed=3)
        bar.print_lines()
    assert console.file.getvalue().strip() == ""


def test_a_terminal_gets_the_live_bar():
    bar = live_progress(TextColumn("{task.description}"), console=_console(terminal=True))
    assert type(bar) is Progress


def test_task_line_reads_rate_and_time_left():
    bar = Progress(console=_console(terminal=False))
    task_id = bar.add_task("train", total=1000)
    task = bar.tasks[0]
    assert task_line(task) == "train: 0/1,000 (0.0%)"
    bar.update(task_id, completed=1000)
    assert task_line(task).startswith("train: 1,000/1,000 (100.0%)")
    unknown = bar.add_task("load", total=None)
    bar.update(unknown, completed=7)
    assert task_line(bar.tasks[1]) == "load: 7"


def test_interval_falls_back_on_a_bad_value(monkeypatch):
    monkeypatch.setenv("CHRONOPROBE_PROGRESS_INTERVAL", "soon")
    assert interval_s() == 30.0
    monkeypatch.setenv("CHRONOPROBE_PROGRESS_INTERVAL", "-1")
    assert interval_s() == 30.0
    monkeypatch.setenv("CHRONOPROBE_PROGRESS_INTERVAL", "2.5")
    assert interval_s() == 2.5


def test_a_long_line_is_not_folded_in_a_log():
    console = Console(file=io.StringIO(), force_terminal=False, width=40)
    bar = LineProgress(
        TextColumn("{task.description}"), console=console, interval=10, transient=True
    )
    with bar:
        bar.add_task("probe generate: package:smollm2 (generate)", total=10_693)
        bar.print_lines()
    lines = [line for line in console.file.getvalue().splitlines() if line]
    assert lines == ["probe generate: package:smollm2 (generate): 0/10,693 (0.0%)"]
