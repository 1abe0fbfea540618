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
    with pytest.raises(ValueError, match=r"^--seeds '1,x': 'x' is not a seed; give integers"):
        parse_seeds(["0", "1,x"])


def test_run_repeats_the_trained_steps_for_every_seed_given(write_config, tmp_path):
    out = tmp_path / "run"
    args = ["run", str(write_config(CONFIG)), "--out", str(out), "--seeds", "0", "--seeds", "1"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert yaml.safe_load((out / "config.yaml").read_text())["seeds"] == [0, 1]
    assert (out / "steps" / "fit-seed0").is_dir() and (out / "steps" / "fit-seed1").is_dir()


@pytest.mark.parametrize(
    ("seeds", "reason"),
    [
        ("-1", "seeds[0]: Input should be greater than or equal to 0"),
        ("0,4294967296", "seeds[1]: Input should be less than 4294967296"),
        ("99999999999999999999", "seeds[0]: Input should be less than 4294967296"),
    ],
)
def test_a_seed_numpy_cannot_take_is_refused_naming_the_option(
    write_config, tmp_path, seeds, reason
):
    """numpy's generators take seeds in [0, 2**32): one outside it is refused before any step
    runs, not halfway through the run."""
    out = tmp_path / "run"
    result = runner.invoke(
        app, ["run", str(write_config(CONFIG)), "--out", str(out), "--seeds", seeds]
    )
    assert result.exit_code == 2, result.output
    assert f"--seeds: {reason}" in " ".join(result.output.split())
    assert not (out / "steps").exists()


@pytest.mark.parametrize(
    ("seeds", "where"),
    [
        ("[-1]", "seeds[0]: Input should be greater than or equal to 0"),
        ("[true, false]", "seeds[0]: Input should be a valid integer"),
        ('[0, "1"]', "seeds[1]: Input should be a valid integer"),
        ("[0, 1.0]", "seeds[1]: Input should be a valid integer"),
        ("[99999999999999999999]", "seeds[0]: Input should be less than 4294967296"),
    ],
)
def test_seeds_in_a_config_are_whole_numbers_numpy_takes(write_config, seeds, where):
    """A bool, a string or a float is refused, not coerced to a seed."""
    from chronoprobe.runs.config import ConfigError, load_experiment

    config = write_config(CONFIG.replace("seed: 0\n", f"seed: 0\nseeds: {seeds}\n"))
    with pytest.raises(ConfigError) as refused:
        load_experiment(config)
    assert f"exp.yaml:3: {where}" in str(refused.value)
    assert load_experiment(
        write_config(CONFIG.replace("seed: 0\n", "seed: 4294967295\nseeds: [0, 4294967295]\n"))
    ).config.seeds == [0, 4294967295]


def test_a_steps_seed_is_refused_when_the_options_load(tmp_path):
    """`--seed -1` of a training command is refused before its inputs are even read."""
    args = ["kgqa", "train", str(tmp_path), "--tkg", str(tmp_path), "--seed", "-1"]
    result = runner.invoke(app, [*args, "-o", str(tmp_path / "qa")])
    assert result.exit_code == 2, result.output
    assert "error: --seed: Input should be greater than or equal to 0 (got -1)" in result.output
    result = runner.invoke(app, [*args[:-1], "99999999999999999999", "-o", str(tmp_path / "qa")])
    assert "--seed: Input should be less than 4294967296" in result.output
