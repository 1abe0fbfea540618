"""What a run records of its environment: chronoprobe's version (the package metadata's, one
source with pyproject.toml), every installed distribution, and how they depart from the
checkout's lock."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

from typer.testing import CliRunner

import chronoprobe
from chronoprobe.cli.main import app
from chronoprobe.runs.environment import environment, installed_versions, lock_record

ROOT = Path(__file__).parents[2]


def test_the_version_is_the_package_metadatas_one():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert chronoprobe.__version__ == metadata.version("chronoprobe") == declared
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output == f"chronoprobe {declared}\n"


def test_the_record_holds_the_whole_environment_and_its_departures_from_the_lock():
    installed = installed_versions()
    assert installed["torch"] == metadata.version("torch")
    assert installed["pyyaml"] == metadata.version("PyYAML")  # names normalised
    locked = dict(
        re.findall(r"^([a-z0-9-]+)==(\S+)", (ROOT / "lock/requirements.txt").read_text(), re.M)
    )
    record = lock_record({**installed, "numpy": "0.0.1", "rich": None})
    assert record["files"] == [str(ROOT / "lock/requirements.txt"), str(ROOT / "lock/no-deps.txt")]
    assert record["differs"]["numpy"] == [locked["numpy"], "0.0.1"]
    assert record["differs"]["rich"] == [locked["rich"], None]  # locked, not installed
    assert "chronoprobe" not in record["differs"]  # the lock holds what it depends on
    same = {name: locked.get(name, v) for name, v in installed.items()} | locked
    assert lock_record(same)["differs"] == {}

    record = environment(seed=3)
    assert record["chronoprobe"] == chronoprobe.__version__ and record["seed"] == 3
    assert record["installed"] == installed and isinstance(record["plugins"], dict)
