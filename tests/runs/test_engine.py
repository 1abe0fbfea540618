"""The engine: run directory layout, caching (in a run, across runs, forced off), determinism."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from rich.console import Console

from chronoprobe.runs.engine import run_experiment

CONFIG = """
name: exp
seed: 3
plugins: [chronoprobe_test_steps]
steps:
  - id: kg
    kind: tiny_kg
  - id: sq
    kind: squares
    params: {shards: 4, rows_per_shard: 3}
  - id: sum
    kind: summary
    inputs: {kg: kg}
"""


def quiet() -> Console:
    return Console(file=open("/dev/null", "w"))


def run(path: Path, out: Path, *overrides: str, **kwargs):
    return run_experiment(path, out, overrides, console=quiet(), **kwargs)


def test_run_directory_layout(write_config, tmp_path):
    result = run(write_config(CONFIG), tmp_path / "run")
    run_dir = tmp_path / "run"
    assert result.run_dir == run_dir
    assert sorted(p.name for p in run_dir.iterdir()) == [
        ".chronoprobe-run",
        "config.yaml",
        "environment.json",
        "run.log",
        "steps",
    ]
    marker = json.loads((run_dir / ".chronoprobe-run").read_text())
    assert marker["format"] == 1 and marker["steps"] == ["kg", "sq", "sum"]
    assert sorted(p.name for p in (run_dir / "steps").iterdir()) == ["kg", "sq", "sum"]
    record = json.loads((run_dir / "steps/sq/step.json").read_text())
    assert record["id"] == "sq" and record["kind"] == "squares" and record["cached"] is False
    assert record["params"]["shards"] == 4 and record["inputs"] == {}
    assert record["outputs"] == ["metrics.json", "squares.parquet"]
    assert len(record["key"]) == 64
    table = pq.read_table(run_dir / "steps/sq/squares.parquet")
    assert table.column("i").to_pylist() == list(range(12))
    assert table.column("square").to_pylist() == [i * i for i in range(12)]
    # the summary step read the KG step's output through its input
    assert json.loads((run_dir / "steps/sum/metrics.json").read_text()) == {
        "answers": ["Q180589", "Q264766"]
    }
    assert json.loads((run_dir / "steps/sum/step.json").read_text())["inputs"] == {"kg": "kg"}
    env = json.loads((run_dir / "environment.json").read_text())
    assert env["seed"] == 3
    assert env["device"] == "cpu" or env["device"].startswith("cuda:0 (")
    assert {"chronoprobe", "python", "packages", "git_revision", "started", "platform"} <= set(env)
    config = yaml.safe_load((run_dir / "config.yaml").read_text())
    assert config["steps"][1]["params"]["delay"] == 0.0  # defaults resolved
    assert "✓ sq (squares)" in (run_dir / "run.log").read_text()


def test_default_run_directory_is_runs_slash_name(write_config, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run_experiment(write_config(CONFIG), console=quiet())
    assert result.run_dir == Path("runs/exp")
    assert (tmp_path / "runs/exp/steps/kg/facts.parquet").is_file()


def test_rerun_reuses_every_step_and_says_so(write_config, tmp_path):
    path = write_config(CONFIG)
    run(path, tmp_path / "run")
    console = Console(record=True, width=200)
    second = run_experiment(path, tmp_path / "run", console=console)
    assert [s.cached for s in second.steps] == [True, True, True]
    assert "✓ kg (tiny_kg) cached" in console.export_text()
    record = json.loads((tmp_path / "run/steps/sq/step.json").read_text())
    assert record["cached"] is True and record["outputs"] == ["metrics.json", "squares.parquet"]


def test_shared_cache_across_run_directories_serves_copies(write_config, tmp_path, private_cache):
    path = write_config(CONFIG)
    first = run(path, tmp_path / "a")
    second = run(path, tmp_path / "b")
    assert [s.cached for s in second.steps] == [True, True, True]
    assert [s.key for s in first.steps] == [s.key for s in second.steps]
    a, b = tmp_path / "a/steps/sq/squares.parquet", tmp_path / "b/steps/sq/squares.parquet"
    entry = private_cache / "squares" / first.step("sq").key / "squares.parquet"
    assert a.read_bytes() == b.read_bytes() == entry.read_bytes()
    # copies, not hard links: an edit to one run's output reaches neither the other nor the cache
    assert len({a.stat().st_ino, b.stat().st_ino, entry.stat().st_ino}) == 3
    assert entry.stat().st_mode & 0o222 == 0  # the cache's files are read-only
    assert a.stat().st_mode & 0o200  # the run's are the user's to edit


def test_changed_params_recompute_the_step_and_its_dependents(write_config, tmp_path):
    path = write_config(CONFIG)
    first = run(path, tmp_path / "run")
    second = run(path, tmp_path / "run", "steps.kg.params.last_pm=Q1")
    assert [s.cached for s in second.steps] == [False, True, False]
    assert second.step("sum").key != first.step("sum").key  # keyed by its input's key
    assert json.loads((tmp_path / "run/steps/sum/metrics.json").read_text()) == {
        "answers": ["Q1", "Q264766"]
    }


def test_a_changed_seed_changes_every_key(write_config, tmp_path):
    path = write_config(CONFIG)
    first = run(path, tmp_path / "run")
    second = run(path, tmp_path / "run", "seed=4")
    assert all(not s.cached for s in second.steps)
    assert {s.key for s in first.steps}.isdisjoint(s.key for s in second.steps)


def test_no_cache_recomputes(write_config, tmp_path):
    path = write_config(CONFIG)
    run(path, tmp_path / "run")
    again = run(path, tmp_path / "run", use_cache=False)
    assert [s.cached for s in again.steps] == [False, False, False]
    assert pq.read_table(tmp_path / "run/steps/sq/squares.parquet").num_rows == 12


def test_steps_removed_from_the_config_leave_the_run_directory(write_config, tmp_path):
    run(write_config(CONFIG), tmp_path / "run")
    shorter = CONFIG.split("  - id: sum")[0]
    run(write_config(shorter, "short.yaml"), tmp_path / "run")
    assert sorted(p.name for p in (tmp_path / "run/steps").iterdir()) == ["kg", "sq"]


def test_same_config_and_seed_give_identical_results(write_config, tmp_path, monkeypatch):
    path = write_config(CONFIG)
    monkeypatch.setenv("CHRONOPROBE_CACHE", str(tmp_path / "cache1"))
    first = run(path, tmp_path / "one")
    monkeypatch.setenv("CHRONOPROBE_CACHE", str(tmp_path / "cache2"))
    second = run(path, tmp_path / "two")
    assert not any(s.cached for s in second.steps)  # really computed twice
    for step in ("kg", "sq"):
        for file in sorted((tmp_path / "one/steps" / step).glob("*.parquet")):
            other = tmp_path / "two/steps" / step / file.name
            assert pq.read_table(file).equals(pq.read_table(other)), file
    for step in ("kg", "sq", "sum"):
        metrics = [
            json.loads((tmp_path / r / "steps" / step / "metrics.json").read_text())
            for r in ("one", "two")
        ]
        assert metrics[0] == metrics[1]
    assert [s.key for s in first.steps] == [s.key for s in second.steps]
    # and the seed matters: another seed gives other noise
    run(path, tmp_path / "three", "seed=4")
    noise = [
        pq.read_table(tmp_path / r / "steps/sq/squares.parquet")["noise"] for r in ("one", "three")
    ]
    assert not noise[0].equals(noise[1])


def test_a_failed_step_resumes_from_its_finished_shards(
    write_config, tmp_path, private_cache, monkeypatch
):
    side = tmp_path / "side.txt"
    path = write_config(CONFIG)
    monkeypatch.setenv("CHRONOPROBE_TEST_FAIL_AT", "2")
    with pytest.raises(RuntimeError, match="failing at shard 2"):
        run(path, tmp_path / "run", f"steps.sq.params.side_file={side}")
    [work] = (private_cache / "squares").glob("*.partial")
    assert sorted(p.name for p in (work / ".shards/squares").iterdir()) == [
        "00000.parquet",
        "00001.parquet",
    ]
    assert not (tmp_path / "run/steps/sq").exists()
    monkeypatch.delenv("CHRONOPROBE_TEST_FAIL_AT")
    result = run(path, tmp_path / "run", f"steps.sq.params.side_file={side}")
    assert side.read_text().split() == ["0", "1", "2", "2", "3"]  # 0 and 1 were not redone
    assert not work.exists() and (private_cache / "squares" / result.step("sq").key).is_dir()
    table = pq.read_table(tmp_path / "run/steps/sq/squares.parquet")
    assert table.column("square").to_pylist() == [i * i for i in range(12)]
    assert "resuming, 2 of 4 shards done" in (tmp_path / "run/run.log").read_text()


def test_progress_task_shows_a_bar_while_its_block_runs(tmp_path):
    import io
    import logging

    from rich.progress import Progress

    from chronoprobe.step_context import StepContext

    display = Progress(console=Console(file=io.StringIO()))
    ctx = StepContext("probe", tmp_path, tmp_path, 0, logging.getLogger("t"), display)
    with ctx.progress_task("m (pll)") as advance:
        (task,) = display.tasks
        assert task.description == "probe: m (pll)" and task.total is None
        advance(3, 8)
        assert (task.completed, task.total) == (3, 8)
    assert display.tasks == []
    with pytest.raises(KeyError), ctx.progress_task("m (pll)"):  # removed on errors too
        raise KeyError("boom")
    assert display.tasks == []
    quiet = StepContext("probe", tmp_path, tmp_path, 0, logging.getLogger("t"))
    with quiet.progress_task("m") as advance:
        advance(1, 2)  # no display: nothing to move, nothing fails


def test_a_folder_input_is_fingerprinted_by_the_files_in_it(tmp_path):
    # A folder's own size and times stay put when a file in it is rewritten in place.
    import os
    from types import SimpleNamespace

    from chronoprobe.steps import files_fingerprint

    folder = tmp_path / "release"
    (folder / "2019").mkdir(parents=True)
    rows = folder / "2019" / "rows.json"
    rows.write_text('{"a": 1}\n')
    params = SimpleNamespace(paths=[folder])
    before, stamp = files_fingerprint(params), os.stat(folder)
    rows.write_text('{"a": 22}\n')
    os.utime(folder, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    after = files_fingerprint(params)
    assert before != after
    assert [entry[0] for entry in after] == [str(rows)]
