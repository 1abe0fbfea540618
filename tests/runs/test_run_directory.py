"""A run never touches files it did not create, and two runs never share a run directory."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.runs.config import ConfigError
from chronoprobe.runs.engine import run_experiment

CONFIG = """
name: {name}
plugins: [chronoprobe_test_steps]
steps:
  - id: kg
    kind: tiny_kg
"""


def quiet() -> Console:
    return Console(file=open(os.devnull, "w"))


def users_files(folder: Path) -> dict[str, str]:
    """A folder as a user might have it: their own config, log and a steps/ of their own."""
    files = {
        "config.yaml": "mine: true\n",
        "run.log": "my notes\n",
        "environment.json": "{}",
        "steps/analysis/notes.txt": "precious\n",
    }
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return files


@pytest.mark.parametrize("name", ["..", "."])
def test_dot_names_are_refused_and_nothing_is_touched(name, write_config, tmp_path, monkeypatch):
    work = tmp_path / "work"
    (work / "runs").mkdir(parents=True)
    before = users_files(work)
    monkeypatch.chdir(work / "runs" if name == ".." else work)
    with pytest.raises(ConfigError, match="not a usable name"):
        run_experiment(write_config(CONFIG.format(name=name)), console=quiet())
    for file, text in before.items():
        assert (work / file).read_text() == text


def test_out_holding_the_working_directory_is_refused(write_config, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    with pytest.raises(ValueError, match="holds the working directory"):
        run_experiment(write_config(CONFIG.format(name="exp")), tmp_path, console=quiet())


def test_out_holding_the_cache_is_refused(write_config, tmp_path, private_cache):
    with pytest.raises(ValueError, match="holds the step cache"):
        run_experiment(write_config(CONFIG.format(name="exp")), tmp_path, console=quiet())


def test_a_users_non_empty_folder_is_refused(write_config, tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    before = users_files(folder)
    with pytest.raises(ValueError, match="not a chronoprobe run directory"):
        run_experiment(write_config(CONFIG.format(name="exp")), folder, console=quiet())
    assert {f: (folder / f).read_text() for f in before} == before


def test_tidy_up_deletes_only_the_steps_its_manifest_lists(write_config, tmp_path):
    config = write_config(CONFIG.format(name="exp") + "  - id: old\n    kind: tiny_kg\n")
    run_dir = tmp_path / "run"
    run_experiment(config, run_dir, console=quiet())
    (run_dir / "steps" / "mine").mkdir()  # a user's folder among the steps
    (run_dir / "steps" / "mine" / "notes.txt").write_text("keep me")
    config.write_text(CONFIG.format(name="exp"))  # step `old` removed from the config
    run_experiment(config, run_dir, console=quiet())
    assert sorted(p.name for p in (run_dir / "steps").iterdir()) == ["kg", "mine"]
    assert (run_dir / "steps/mine/notes.txt").read_text() == "keep me"
    assert "left alone in steps/ (not made by this run): mine" in (run_dir / "run.log").read_text()


def test_a_run_directory_from_before_manifests_is_adopted_without_deleting(write_config, tmp_path):
    run_dir = tmp_path / "run"
    (run_dir / "steps" / "someone").mkdir(parents=True)
    (run_dir / "steps" / "kg").mkdir(parents=True)
    (run_dir / "steps" / "kg" / "step.json").write_text("{}")
    (run_dir / "config.yaml").write_text("name: exp\n")
    (run_dir / "environment.json").write_text("{}")
    run_experiment(write_config(CONFIG.format(name="exp")), run_dir, console=quiet())
    assert (run_dir / "steps/someone").is_dir() and (run_dir / "steps/kg").is_dir()


def test_a_second_run_on_a_locked_directory_fails_at_once(write_config, tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    holder = os.open(run_dir, os.O_RDONLY)  # another run holds the directory
    fcntl.flock(holder, fcntl.LOCK_EX)
    try:
        result = CliRunner().invoke(
            app, ["run", str(write_config(CONFIG.format(name="exp"))), "--out", str(run_dir)]
        )
    finally:
        os.close(holder)
    assert result.exit_code == 2
    assert "another chronoprobe run is working in" in result.output
    assert list(run_dir.iterdir()) == []  # it wrote nothing
    run_experiment(write_config(CONFIG.format(name="exp")), run_dir, console=quiet())
