"""Seeds: trained steps (and the steps that read them) run once per seed, each copy its own
step with its own cache key; results give mean ± sd over the seeds; configs without seeds are
unchanged."""

from __future__ import annotations

import json

import pytest
import yaml
from rich.console import Console
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.runs.config import ConfigError, load_experiment
from chronoprobe.runs.engine import run_experiment
from chronoprobe.runs.results import figure_rows, open_results

CONFIG = """
name: exp
seed: 0
plugins: [chronoprobe_test_steps]
steps:
  - id: kg
    kind: tiny_kg
  - id: fit
    kind: fit
    inputs: {kg: kg}
  - id: scores
    kind: reads_fit
    inputs: {model: fit}
  - id: sq
    kind: squares
    params: {shards: 2, rows_per_shard: 2}
"""
QUIET = Console(file=open("/dev/null", "w"))  # noqa: SIM115
runner = CliRunner()


def _record(run_dir, step_id: str) -> dict:
    return json.loads((run_dir / "steps" / step_id / "step.json").read_text())


def _metrics(run_dir, step_id: str) -> dict:
    return json.loads((run_dir / "steps" / step_id / "metrics.json").read_text())


def test_trained_steps_and_their_readers_run_once_per_seed(write_config, tmp_path):
    config = write_config(CONFIG.replace("seed: 0\n", "seed: 0\nseeds: [0, 1, 2]\n"))
    result = run_experiment(config, tmp_path / "run", console=QUIET)
    run_dir = result.run_dir
    assert [s.id for s in result.steps] == [
        "kg",
        "fit-seed0",
        "fit-seed1",
        "fit-seed2",
        "scores-seed0",
        "scores-seed1",
        "scores-seed2",
        "sq",
    ]
    assert sorted(p.name for p in (run_dir / "steps").iterdir()) == sorted(
        s.id for s in result.steps
    )
    # each copy reads the copy of its own seed; the world is made once
    for seed in (0, 1, 2):
        assert _metrics(run_dir, f"scores-seed{seed}") == {"weights_seed": seed}
        record = _record(run_dir, f"scores-seed{seed}")
        assert record["inputs"] == {"model": f"fit-seed{seed}"}
        assert (record["step"], record["seed"]) == ("scores", seed)
    assert "seed" not in _record(run_dir, "kg") and "step" not in _record(run_dir, "sq")
    keys = {s.key for s in result.steps}
    assert len(keys) == len(result.steps)  # no two copies share a cache entry
    assert yaml.safe_load((run_dir / "config.yaml").read_text())["seeds"] == [0, 1, 2]

    again = run_experiment(config, tmp_path / "run", console=QUIET)
    assert all(s.cached for s in again.steps)  # the seed is part of each copy's key

    con = open_results(run_dir)
    mean, sd, runs = con.execute(
        "select mean, sd, runs from seeds where step = 'fit' and metric = 'accuracy'"
    ).fetchone()
    assert (mean, sd, runs) == (pytest.approx(0.6), pytest.approx(0.1), 3)
    # a figure's interval and n sit in its own row, not in rows of their own
    row = con.execute(
        "select value, ci_low, ci_high, n from metrics where step_id = 'fit-seed1' "
        "and metric = 'accuracy'"
    ).fetchone()
    assert row == (0.6, pytest.approx(0.31267, abs=5e-5), pytest.approx(0.83182, abs=5e-5), 10)
    names = [r[0] for r in con.execute("select metric from metrics where step = 'fit'").fetchall()]
    assert sorted(set(names)) == ["accuracy", "n"]
    # whole values: the sd of 0.5, 0.6, 0.7 is 0.1 up to float error, not rounded to it
    assert figure_rows(con, "accuracy") == [
        (
            "fit",
            "fit",
            "accuracy",
            pytest.approx(0.6),
            None,
            None,
            10,
            None,
            None,
            None,
            pytest.approx(0.1),
            {0: 0.5, 1: 0.6, 2: 0.7},
        )
    ]
    con.close()

    shown = runner.invoke(app, ["results", str(run_dir), "--metric", "accuracy", "--json"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout) == [
        {
            "step": "fit",
            "kind": "fit",
            "metric": "accuracy",
            "value": pytest.approx(0.6),
            "ci_low": None,
            "ci_high": None,
            "n": 10,
            "rows": None,
            "left_out": None,
            "no_interval": None,
            "sd": pytest.approx(0.1),
            "per_seed": {"0": 0.5, "1": 0.6, "2": 0.7},
        }
    ]


def test_a_config_without_seeds_is_unchanged(write_config, tmp_path):
    config = write_config(CONFIG)
    plain = run_experiment(config, tmp_path / "plain", console=QUIET)
    assert [s.id for s in plain.steps] == ["kg", "fit", "scores", "sq"]
    assert "seed" not in _record(plain.run_dir, "fit")
    assert "seeds" not in yaml.safe_load((plain.run_dir / "config.yaml").read_text())
    con = open_results(plain.run_dir)
    assert con.execute("select count(*) from seeds").fetchone() == (0,)
    # Wilson's interval of 5 of 10, whole (0.236593..., not rounded to 0.2366)
    wilson = [pytest.approx(0.2365931, abs=1e-7), pytest.approx(0.7634069, abs=1e-7)]
    assert figure_rows(con, "accuracy") == [
        ("fit", "fit", "accuracy", 0.5, *wilson, 10, None, None, None, None, None)
    ]
    con.close()
    # the copy of the config's own seed is the very step a run without seeds computes
    seeded = run_experiment(config, tmp_path / "seeded", console=QUIET, seeds=[0, 1])
    assert seeded.step("fit-seed0").key == plain.step("fit").key
    assert seeded.step("fit-seed0").cached and not seeded.step("fit-seed1").cached
    assert seeded.step("sq").key == plain.step("sq").key


def test_one_seed_gives_its_runs_interval_and_programs_get_whole_values(write_config, tmp_path):
    """--seeds 5 repeats over one seed: no sd, so --metric gives that run's own interval and
    n (7 of 10 right for seed 5: Wilson [0.39678, 0.89221]); csv and json are not rounded."""
    out = tmp_path / "run"
    ran = runner.invoke(app, ["run", str(write_config(CONFIG)), "--out", str(out), "--seeds", "5"])
    assert ran.exit_code == 0, ran.output
    shown = runner.invoke(app, ["results", str(out), "--metric", "accuracy", "--json"])
    assert shown.exit_code == 0, shown.output
    (row,) = json.loads(shown.stdout)
    assert (row["step"], row["value"], row["n"], row["sd"]) == ("fit", 0.7, 10, None)
    interval = [row["ci_low"], row["ci_high"]]  # two columns, as SQL gives them
    assert interval == [pytest.approx(0.396778, abs=1e-6), pytest.approx(0.892208, abs=1e-6)]
    assert row["ci_low"] != round(row["ci_low"], 4)
    table = runner.invoke(app, ["results", str(out), "--metric", "accuracy"])
    assert "0.700 [0.397, 0.892]" in table.output


def test_run_cli_takes_seeds(write_config, tmp_path):
    config = write_config(CONFIG)
    out = tmp_path / "run"
    result = runner.invoke(app, ["run", str(config), "--out", str(out), "--seeds", "3,4"])
    assert result.exit_code == 0, result.output
    assert _metrics(out, "fit-seed4")["accuracy"] == 0.6  # 5 + 4 % 3 of 10
    assert not (out / "steps" / "fit").exists()
    result = runner.invoke(app, ["run", str(config), "--out", str(out), "--seeds", "0,x"])
    assert result.exit_code == 2
    assert "--seeds '0,x': 'x' is not a seed; give integers separated by commas" in result.output


def _problems(path, **options) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_experiment(path, **options)
    return caught.value.problems


def test_seed_problems_name_the_line(write_config):
    twice = write_config(CONFIG.replace("seed: 0\n", "seed: 0\nseeds: [1, 2, 1]\n"))
    assert _problems(twice) == ["exp.yaml:3: seeds: seed 1 is listed twice; each seed runs once"]
    empty = write_config(CONFIG.replace("seed: 0\n", "seed: 0\nseeds: []\n"))
    assert _problems(empty)[0].startswith("exp.yaml:3: seeds: List should have at least 1 item")
    fixed = write_config(
        CONFIG.replace("inputs: {kg: kg}", "inputs: {kg: kg}\n    params: {seed: 4}")
    )
    assert _problems(fixed, seeds=[0, 1]) == [
        "exp.yaml:10: steps[1].params.seed: fixed at 4, so every seed would repeat the same "
        "run; leave it out to let `seeds` set it"
    ]
    assert load_experiment(fixed).params["fit"].seed == 4  # fine without seeds
    clash = write_config(CONFIG + "  - id: fit-seed1\n    kind: tiny_kg\n")
    assert _problems(clash, seeds=[1]) == [
        "exp.yaml:7: steps[1].id: its copies over seeds would be named like the step "
        "'fit-seed1'; rename one of them"
    ]
    assert _problems(twice, seeds=[0, 0]) == [
        "--seeds: seeds: seed 0 is listed twice; each seed runs once"
    ]
