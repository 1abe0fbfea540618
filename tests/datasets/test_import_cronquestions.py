"""`chronoprobe import cronquestions`: the released pickles (sets, integer years) and JSON rows,
one row per question, through `kgqa train` and `kgqa eval` over the released KG's embeddings."""

from __future__ import annotations

import json
import pickle
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.jsonl import read_jsonl

FIXTURES = Path(__file__).parents[1] / "fixtures" / "cronquestions"
runner = CliRunner()

# the released pickles' shape: sets of ids and of integer years
TRAIN = [
    {
        "question": "Who was the President of the United States in 2010",
        "answers": {"Q76"},
        "answer_type": "entity",
        "template": "Who was the {tail} in {time}",
        "entities": {"Q11696"},
        "times": {2010},
        "relations": {"P39"},
        "type": "simple_entity",
        "annotation": {"tail": "Q11696", "time": "2010"},
        "uniq_id": 0,
        "paraphrases": ["Who was President of the United States in 2010"],
    },
    {
        "question": "When did Lionel Messi play for FC Barcelona",
        "answers": {2004},
        "answer_type": "time",
        "template": "When did {head} play for {tail}",
        "entities": {"Q7156", "Q615"},
        "times": set(),
        "relations": {"P54"},
        "type": "simple_time",
        "annotation": {"head": "Q615", "tail": "Q7156"},
        "uniq_id": 1,
        "paraphrases": [],
    },
    {
        "question": "Who was the President of the United States before Donald Trump",
        "answers": {"Q76"},
        "answer_type": "entity",
        "template": "Who was the {tail} before {head}",
        "entities": {"Q11696", "Q22686"},
        "times": set(),
        "relations": {"P39"},
        "type": "before_after",
        "annotation": {"head": "Q22686", "tail": "Q11696", "type": "before"},
        "uniq_id": 2,
        "paraphrases": [],
    },
]


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture
def released(tmp_path) -> list[Path]:
    train = tmp_path / "train.pickle"
    train.write_bytes(pickle.dumps(TRAIN, protocol=4))
    return [train, FIXTURES / "questions" / "test.json"]


def test_pickles_and_json_rows_import_one_row_per_question(tmp_path, released):
    out = tmp_path / "cronq"
    result = invoke("import", "cronquestions", *released, "-o", out)
    assert result.exit_code == 0, result.output
    train = list(read_jsonl(out / "train.jsonl"))
    test = list(read_jsonl(out / "test.jsonl"))
    assert list(read_jsonl(out / "valid.jsonl")) == []
    assert [r["id"] for r in read_jsonl(out / "questions.jsonl")] == ["0", "1", "2", "3", "4"]
    # head first, then tail, as annotated (the sets hold no order; sorting would put Q11696
    # before Q22686 and Q7156 before Q615)
    assert [(r["id"], r["entities"], r["times"], r["answers"]) for r in train] == [
        ("0", ["Q11696"], [2010], ["Q76"]),
        ("1", ["Q615", "Q7156"], [], [2004]),
        ("2", ["Q22686", "Q11696"], [], ["Q76"]),
    ]
    assert [(r["id"], r["entities"], r["direction"], r["answers"]) for r in test] == [
        ("3", ["Q76", "Q11696"], "after", ["Q22686"]),
        ("4", ["Q6279", "Q11696"], None, [2021]),
    ]
    assert (
        train[2]["direction"] == "before" and train[0]["template"] == "Who was the {tail} in {time}"
    )
    stats = json.loads((out / "stats.json").read_text())
    assert (stats["all"]["questions"], stats["train"]["questions"], stats["test"]["questions"]) == (
        5,
        3,
        2,
    )
    assert stats["all"]["answer_types"] == {"entity": 3, "time": 2}


def test_the_release_folder_stands_for_its_split_files(tmp_path, released):
    folder = tmp_path / "questions"
    folder.mkdir()
    for path in released:
        shutil.copy(path, folder / path.name)
    (folder / "README.txt").write_text("not questions")
    (folder / "train.txt").write_text("Q1\tP1\tQ2\t2000\t2001\n")  # a KG split, not questions
    files = invoke("import", "cronquestions", *released, "-o", tmp_path / "files")
    assert files.exit_code == 0, files.output
    result = invoke("import", "cronquestions", folder, "-o", tmp_path / "folder")
    assert result.exit_code == 0, result.output
    for name in ("questions.jsonl", "train.jsonl", "test.jsonl", "stats.json"):
        assert (tmp_path / "folder" / name).read_bytes() == (tmp_path / "files" / name).read_bytes()
    empty = tmp_path / "empty"
    empty.mkdir()
    result = invoke("import", "cronquestions", empty, "-o", tmp_path / "y")
    assert result.exit_code != 0
    assert f"{empty}: a folder with no .pickle or .pkl or .json or .jsonl file in it" in " ".join(
        result.output.split()
    )


def test_a_file_without_a_split_name_needs_split_and_bad_questions_name_their_place(tmp_path):
    rows = tmp_path / "questions.json"
    rows.write_text((FIXTURES / "questions" / "test.json").read_text())
    result = invoke("import", "cronquestions", rows, "-o", tmp_path / "out")
    assert result.exit_code != 0 and "its name gives no split" in result.output
    result = invoke("import", "cronquestions", rows, "--split", "valid", "-o", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert len(list(read_jsonl(tmp_path / "out" / "valid.jsonl"))) == 2
    bad = tmp_path / "test.pickle"
    bad.write_bytes(pickle.dumps([TRAIN[0], {**TRAIN[1], "type": "sometimes"}]))
    result = invoke("import", "cronquestions", bad, "-o", tmp_path / "bad")
    assert result.exit_code != 0
    assert f"{bad}: question:1: type 'sometimes' is not one of" in " ".join(result.output.split())
    ecbd = Path(__file__).parents[1] / "fixtures" / "ecbd" / "2019" / "np_spans_dev.json"
    result = invoke("import", "cronquestions", ecbd, "--split", "test", "-o", tmp_path / "bad")
    assert result.exit_code != 0
    assert "looks like ecbd rows" in " ".join(result.output.split())


def test_imported_questions_go_through_kgqa_train_and_eval(tmp_path, released):
    questions = tmp_path / "cronq"
    assert invoke("import", "cronquestions", *released, "-o", questions).exit_code == 0
    kg = tmp_path / "kg"
    result = invoke("kg", "convert", FIXTURES / "kg", "-f", "cronquestions", "-o", kg)
    assert result.exit_code == 0, result.output
    tkg = tmp_path / "tkg"
    args = ["--model", "tcomplex", "--rank", "8", "--epochs", "1", "--device", "cpu"]
    result = invoke("tkg", "train", kg, *args, "-o", tkg)
    assert result.exit_code == 0, result.output
    qa = tmp_path / "qa"
    args = ["--tkg", tkg, "--model", "lm", "--encoder", "tiny", "--epochs", "1", "--device", "cpu"]
    result = invoke("kgqa", "train", questions, *args, "-o", qa)
    assert result.exit_code == 0, result.output
    out = tmp_path / "eval"
    result = invoke("kgqa", "eval", qa, questions, "--split", "test", "--json", "-o", out)
    assert result.exit_code == 0, result.output
    predictions = pq.read_table(out / "predictions.parquet").to_pylist()
    assert sorted(p["id"] for p in predictions) == ["3", "4"]
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["questions"] == 2 and metrics["split"] == "test"
