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
    args += ["--arch", "lm", "--epochs", "1", "--device", "cpu"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "time answers" in result.output and "simple_entity" in result.output
    assert {"metrics.json", "predictions.parquet", "model.safetensors"} <= {
        p.name for p in out.iterdir()
    }
    trained = json.loads((out / "metrics.json").read_text())

    evaluated = tmp_path / "eval"
    args = ["kgqa", "eval", str(out), str(world.cronq), "--split", "test", "--json"]
    result = runner.invoke(app, [*args, "-o", str(evaluated)])
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    predictions = evaluated / "predictions.parquet"
    assert printed["model"] == "lm" and printed["split"] == "test"
    assert printed["hits@1"] == trained["hits@1"]
    assert printed["types"] == trained["types"]
    assert pq.read_table(predictions).num_rows == trained["questions"]
    assert printed["answer_type_given"] is trained["answer_type_given"] is False
    assert printed["question_input"] == trained["question_input"] == "question"
    assert printed["departures"] == trained["departures"] == []
    assert "oracle_relation" not in printed

    # The TKG ceiling on demand, from the TKG checkpoint the model was trained over; and the
    # other protocol on demand, named in the output.
    args += ["--oracle-relation", "--answer-type-given"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    assert printed["answer_type_given"] is True
    oracle = printed["oracle_relation"]
    assert oracle["questions"] == trained["simple"]["questions"]
    assert set(oracle["types"]) == {"simple_entity", "simple_time"}
    result = runner.invoke(app, ["kgqa", "eval", str(out), str(world.cronq), "--oracle-relation"])
    assert result.exit_code == 0, result.output
    assert "simple_entity, oracle relation" in result.output
    assert "Oracle relation (TKG ceiling)" in result.output
    assert "one softmax over entities and years" in result.output
    assert "the encoder read the question text, as the paper" in " ".join(result.output.split())


def test_errors_are_one_line_messages(world, tmp_path):
    result = runner.invoke(app, ["kgqa", "eval", str(tmp_path), str(world.cronq)])
    assert result.exit_code == 2
    assert "not a KGQA checkpoint" in result.output
    out = tmp_path / "out"
    args = ["kgqa", "train", str(tmp_path), "--tkg", str(world.tcomplex), "--out", str(out)]
    result = runner.invoke(app, [*args, "--epochs", "1"])
    assert result.exit_code == 2
    assert "no train.jsonl; QUESTIONS must be a question directory" in " ".join(
        result.output.split()
    )


def test_help_teaches_the_commands():
    result = runner.invoke(app, ["kgqa", "train", "--help"])
    assert result.exit_code == 0
    assert "cronkgqa" in result.output and "--encoder" in result.output


def test_a_split_without_a_question_has_no_figure(world, tmp_path):
    """An empty test split has no Hits@1 (null in metrics.json, "-" in the table), not 0."""
    import shutil

    questions = tmp_path / "cronq"
    shutil.copytree(world.cronq, questions)
    (questions / "test.jsonl").write_text("")
    out = tmp_path / "qa"
    args = ["kgqa", "train", str(questions), "--tkg", str(world.tcomplex), "--out", str(out)]
    result = runner.invoke(app, [*args, "--arch", "lm", "--epochs", "1", "--device", "cpu"])
    assert result.exit_code == 0, result.output
    assert "test: no question" in result.output
    trained = json.loads((out / "metrics.json").read_text())
    assert trained["n"] == 0 and trained["hits@1"] is None and trained["mrr"] is None
    assert trained["simple"]["hits@10"] is None and trained["simple"]["hits@10_ci95"] is None

    result = runner.invoke(app, ["kgqa", "eval", str(out), str(questions), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["hits@1"] is None
    result = runner.invoke(app, ["kgqa", "eval", str(out), str(questions)])
    assert result.exit_code == 0, result.output
    assert "No question in the split to answer: no figure" in " ".join(result.output.split())
    assert "0.000" not in result.output
