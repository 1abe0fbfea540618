"""`chronoprobe results` refuses a damaged run file in one line: never a DuckDB traceback, a
hang on a pipe, or a link followed out of the run."""

from __future__ import annotations

import os
import shutil
import threading

import pytest
from rich.console import Console
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.runs.engine import run_experiment
from chronoprobe.runs.results import open_results

CONFIG = """
name: exp
plugins: [chronoprobe_test_steps]
steps:
  - id: kg
    kind: tiny_kg
"""
runner = CliRunner()


@pytest.fixture
def run_dir(write_config, tmp_path):
    out = tmp_path / "run"
    run_experiment(write_config(CONFIG), out, console=Console(file=open(os.devnull, "w")))  # noqa: SIM115
    return out


def refused(folder) -> str:
    """The one line `results` prints for ``folder`` (it must not hang: 30 s at most)."""
    outcome = {}

    def call():
        outcome["result"] = runner.invoke(app, ["results", str(folder)])

    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    worker.join(30)
    assert not worker.is_alive(), "results hung"
    result = outcome["result"]
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    return " ".join(result.output.split())


def replace(path, make) -> None:
    path.unlink()
    make(path)


def test_a_parquet_file_that_is_not_parquet(run_dir):
    # Failed before: duckdb.InvalidInputException, with its traceback.
    facts = run_dir / "steps/kg/facts.parquet"
    facts.write_text("id,label\nQ1,x\n")
    assert f"{facts}: not a Parquet file (it lacks the PAR1 marks" in refused(run_dir)


def test_a_parquet_file_cut_short_after_its_first_mark(run_dir):
    facts = run_dir / "steps/kg/facts.parquet"
    data = facts.read_bytes()
    facts.write_bytes(data[:200] + b"PAR1")
    assert f"{facts}: not a Parquet file DuckDB can read" in refused(run_dir)


def test_an_empty_parquet_file(run_dir):
    (run_dir / "steps/kg/facts.parquet").write_bytes(b"")
    assert "not a Parquet file" in refused(run_dir)


def test_a_folder_named_like_a_parquet_file(run_dir):
    facts = run_dir / "steps/kg/facts.parquet"
    replace(facts, lambda p: p.mkdir())
    assert f"{facts} is a folder; `chronoprobe results` reads only the files" in refused(run_dir)


def test_a_pipe_named_like_a_parquet_file_is_not_waited_on(run_dir):
    # Failed before: DuckDB opened the FIFO and waited for a writer forever.
    facts = run_dir / "steps/kg/facts.parquet"
    replace(facts, os.mkfifo)
    assert f"{facts} is not a regular file" in refused(run_dir)


@pytest.mark.parametrize("name", ["facts.parquet", "metrics.json", "step.json"])
def test_a_link_out_of_the_run_is_not_followed(run_dir, tmp_path, name):
    # Failed before: the link's target, outside the run, was read as the step's table.
    outside = tmp_path / f"outside-{name}"
    shutil.copy(run_dir / "steps/kg" / name, outside)
    replace(run_dir / "steps/kg" / name, lambda p: p.symlink_to(outside))
    assert f"{run_dir / 'steps/kg' / name} is a symbolic link" in refused(run_dir)


def test_a_pipe_as_metrics_json_is_not_waited_on(run_dir):
    replace(run_dir / "steps/kg/metrics.json", os.mkfifo)
    assert "metrics.json is not a regular file" in refused(run_dir)


def test_a_step_folder_that_is_a_link_out_of_the_run(run_dir, tmp_path):
    outside = tmp_path / "outside-step"
    shutil.copytree(run_dir / "steps/kg", outside)
    (run_dir / "steps/other").symlink_to(outside)
    assert f"{run_dir / 'steps/other'} is a symbolic link" in refused(run_dir)


def test_steps_a_link_out_of_the_run(run_dir, tmp_path):
    shutil.move(run_dir / "steps", tmp_path / "outside-steps")
    (run_dir / "steps").symlink_to(tmp_path / "outside-steps")
    assert f"{run_dir / 'steps'} is a symbolic link" in refused(run_dir)


def test_a_results_database_that_is_a_link_is_not_followed(run_dir, tmp_path):
    open_results(run_dir).close()
    elsewhere = tmp_path / "elsewhere.duckdb"
    shutil.move(run_dir / "results.duckdb", elsewhere)
    (run_dir / "results.duckdb").symlink_to(elsewhere)
    assert "results.duckdb is not the database `chronoprobe results` writes" in refused(run_dir)


def test_a_damaged_file_in_a_hidden_folder_is_not_read(run_dir):
    """What results never reads (a hidden folder's files) costs nothing."""
    hidden = run_dir / "steps/kg/.scratch"
    hidden.mkdir()
    (hidden / "x.parquet").write_text("no parquet")
    result = runner.invoke(app, ["results", str(run_dir)])
    assert result.exit_code == 0 and "kg_facts" in result.output
