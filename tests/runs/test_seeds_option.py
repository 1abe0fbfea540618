"""`chronoprobe run --seeds`: seeds given with commas, by repeating the option, or both, add up
(as -m and --relations do); a value that is no integer is refused naming it."""

from __future__ import annotations

import pytest
import yaml
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.cli.run import parse_seeds

from .test_seeds import CONFIG

runner = CliRunner()


def test_repeated_and_comma_separated_seeds_add_up():
    assert parse_seeds(["0", "1"]) == [0, 1]
    assert parse_seeds(["0,1", "5"]) == [0, 1, 5]
    assert parse_seeds([" 2 , 3"]) == [2, 3]


def test_a_value_that_is_no_seed_is_named():
    with pytest.raises(ValueError, match=r"^--seeds 1,x: 'x' is not a seed; give integers"):
        parse_seeds(["0", "1,x"])


def test_run_repeats_the_trained_steps_for_every_seed_given(write_config, tmp_path):
    out = tmp_path / "run"
    args = ["run", str(write_config(CONFIG)), "--out", str(out), "--seeds", "0", "--seeds", "1"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert yaml.safe_load((out / "config.yaml").read_text())["seeds"] == [0, 1]
    assert (out / "steps" / "fit-seed0").is_dir() and (out / "steps" / "fit-seed1").is_dir()
