"""Resume after a real kill: `chronoprobe run` in a subprocess, SIGKILL or SIGINT mid-step.

A re-run must finish without recomputing finished shards (the one in flight may be computed
twice), produce the complete table, and leave no temporary or partial files behind.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from rich.console import Console
from tests.signals import interruptible

from chronoprobe.runs.engine import run_experiment

HERE = Path(__file__).parent
SHARDS = 20
BLOCK_AT = 6

CONFIG = f"""
name: slow
plugins: [chronoprobe_test_steps]
steps:
  - id: kg
    kind: tiny_kg
  - id: sq
    kind: squares
    params: {{shards: {SHARDS}, rows_per_shard: 5, delay: 0.01, side_file: side.txt}}
"""


def start(config: Path, run_dir: Path, cache: Path) -> subprocess.Popen:
    # the step blocks in shard BLOCK_AT, so the kill lands mid-step however loaded the machine is
    # the tree under test stays first on the path, as in this process
    path = os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, CHRONOPROBE_CACHE=str(cache), PYTHONPATH=path)
    env["CHRONOPROBE_TEST_BLOCK_AT"] = str(BLOCK_AT)
    command = [sys.executable, "-c", "from chronoprobe.cli.main import app; app()"]
    return subprocess.Popen(
        [*command, "run", str(config), "--out", str(run_dir)],
        cwd=config.parent,  # side.txt lands next to the config
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=interruptible,
    )


def computed(side: Path) -> list[int]:
    return [int(x) for x in side.read_text().split()] if side.exists() else []


def leftovers(*roots: Path) -> list[Path]:
    return [
        p
        for root in roots
        for p in root.rglob("*")
        if p.name.endswith((".tmp", ".partial")) or p.name in (".shards", ".chronoprobe-tmp")
    ]


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "SIGINT"])
def test_killed_run_resumes_without_recomputing(write_config, tmp_path, monkeypatch, sig):
    config = write_config(CONFIG)
    side, run_dir, cache = tmp_path / "side.txt", tmp_path / "run", tmp_path / "cache"
    process = start(config, run_dir, cache)
    deadline = time.monotonic() + 30
    while BLOCK_AT not in computed(side):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the run never got going"
        time.sleep(0.01)
    process.send_signal(sig)
    _, stderr = process.communicate(timeout=30)
    if sig == signal.SIGKILL:
        assert process.returncode == -signal.SIGKILL
    else:
        assert process.returncode == 130, stderr
        assert "interrupted" in stderr and "run the same command again to resume" in stderr
    before = computed(side)
    [work] = (cache / "squares").glob("*.partial")
    finished = sorted(int(p.stem) for p in (work / ".shards/squares").glob("*.parquet"))
    assert finished == list(range(BLOCK_AT))  # killed mid-step, with finished shards to keep
    assert not (run_dir / "steps/sq").exists()

    monkeypatch.setenv("CHRONOPROBE_CACHE", str(cache))
    monkeypatch.chdir(tmp_path)  # where the killed run was started (side.txt is relative)
    console = Console(record=True, width=200)
    run_experiment(config, run_dir, console=console)  # in-process: saves a second start-up
    assert "✓ kg (tiny_kg) cached" in console.export_text()

    counts = Counter(computed(side))
    assert set(counts) == set(range(SHARDS))
    assert all(counts[i] == 1 for i in finished)  # finished shards were never redone
    twice = [i for i, n in counts.items() if n > 1]
    assert len(twice) <= 1 and set(twice) <= set(before) - set(finished)  # the one in flight
    table = pq.read_table(run_dir / "steps/sq/squares.parquet")
    assert table.column("i").to_pylist() == list(range(SHARDS * 5))
    assert table.column("square").to_pylist() == [i * i for i in range(SHARDS * 5)]
    assert f"resuming, {len(finished)} of {SHARDS} shards done" in (run_dir / "run.log").read_text()
    assert leftovers(run_dir, cache) == []
