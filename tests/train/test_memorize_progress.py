"""`train memorize` with its output in a log (no terminal) prints progress lines as it trains,
not only "running" and, minutes later, the result."""

from __future__ import annotations

import re

from typer.testing import CliRunner

from chronoprobe.cli.main import app


def test_memorize_prints_count_rate_and_eta_lines_without_a_terminal(
    tmp_path, monkeypatch, world_rows, write_statements
):
    monkeypatch.setenv("CHRONOPROBE_PROGRESS_INTERVAL", "0.001")
    path = write_statements(tmp_path / "statements.jsonl", world_rows[:60])
    args = ["train", "memorize", str(path), "-o", str(tmp_path / "mem"), "--epochs", "3"]
    result = CliRunner().invoke(app, [*args, "--batch-size", "8", "--device", "cpu"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())  # a long line may wrap in a log
    lines = re.findall(r"feeding, epoch \d/3[^:]*: [\d,]+/60 \(\d+\.\d%\) · [\d.,]+/s · ETA", text)
    assert lines, result.output
