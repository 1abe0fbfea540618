"""`chronoprobe kgqa train|eval` through typer's runner."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
from typer.testing import CliRunner

from chronoprobe.cli.main import app

runner = CliRunner()


def test_train_then_eval(world, tmp_path):
    out = tmp_path / "qa"
    args = ["kgqa", "train", str(world.cronq), "--tkg", str(world.tcomplex), "--out", str(out)]
    args += ["--model", "lm", "--epochs", "1", "--device", "cpu"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "time answers" in result.output and "simple_entity" in result.output
    assert {"metrics.json", "predictions.parquet", "model.safetensors"} <= {
        p.name for p in out.iterdir()
    }
    trained = json.loads((out / "metrics.json").read_text())

    predictions = tmp_path / "valid.parquet"
    args = ["kgqa", "eval", str(out), str(world.cronq), "--split", "test", "--json"]
    result = runner.invoke(app, [*args, "--predictions", str(predictions)])
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout.strip().splitlines()[-1])
    assert printed["model"] == "lm" and printed["split"] == "test"
    assert printed["hits@1"] == trained["hits@1"]
    assert printed["types"] == trained["types"]
    assert pq.read_table(predictions).num_rows == trained["questions"]


def test_errors_are_one_line_messages(world, tmp_path):
    result = runner.invoke(app, ["kgqa", "eval", str(tmp_path), str(world.cronq)])
    assert result.exit_code == 2
    assert "not a KGQA checkpoint" in result.output
    args = ["kgqa", "train", str(tmp_path), "--tkg", str(world.tcomplex), "--out", str(tmp_path)]
    result = runner.invoke(app, [*args, "--epochs", "1"])
    assert result.exit_code == 2
    assert "train.jsonl: no such question file" in result.output


def test_help_teaches_the_commands():
    result = runner.invoke(app, ["kgqa", "train", "--help"])
    assert result.exit_code == 0
    assert "cronkgqa" in result.output and "--encoder" in result.output
