"""What `chronoprobe probe` refuses before any row is scored: no rows, rows with nothing to
score against or no period, a model family the config contradicts; each in one line naming the
user's file and line (never the cache's copy of the rows)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.jsonl import write_jsonl

from .conftest import as_dicts


def probe(tmp_path: Path, rows: Path, model: Path, *options: str, view: str = "single-token"):
    out = tmp_path / "out"
    command = ["probe", view, str(rows), "-m", str(model), "-o", str(out), "--device", "cpu"]
    result = CliRunner().invoke(app, [*command, *options])
    return result, " ".join(result.output.split()), out


def rows_file(tmp_path: Path, rows: list[dict]) -> Path:
    path = tmp_path / "examples.jsonl"
    write_jsonl(path, rows)
    return path


@pytest.mark.parametrize("view", ["single-token", "pll"])
def test_an_empty_rows_file_is_refused_not_a_run_of_no_predictions(tmp_path, model_dirs, view):
    path = tmp_path / "examples.jsonl"
    path.write_text("\n\n")
    result, said, out = probe(tmp_path, path, model_dirs[0], view=view)
    assert result.exit_code == 2  # was 0, with 0 predictions
    assert f"error: {path}: no probe rows in it; nothing to probe" in said
    assert not (out / "metrics.json").exists()


def test_an_empty_file_of_a_view_without_drift_rows_is_refused(tmp_path, model_dirs):
    path = tmp_path / "examples.jsonl"
    path.write_text("")
    result, said, _ = probe(tmp_path, path, model_dirs[0], view="span-ppl")
    assert result.exit_code == 2
    assert f"error: {path}: no rows in it; nothing to probe" in said


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"answer_labels": []}, "answer_labels holds no answer, or an empty one: nothing to score"),
        ({"answer_labels": ["Globex", " "]}, "answer_labels holds no answer, or an empty one"),
        ({"period": "abc"}, "period: not a period: 'abc'"),
        ({"period": "0000"}, "period '0000': year 0 does not exist (1 BCE is -1)"),
        # a query the distinct-query copy in the cache used to be blamed for
        (
            {"query": "[MASK] was employed by [MASK]."},
            "query must hold exactly one [MASK], found 2",
        ),
    ],
)
def test_a_row_that_cannot_be_scored_names_the_users_file_and_line(
    tmp_path, model_dirs, change, reason
):
    rows = as_dicts()
    rows[3] = {**rows[3], **change}
    path = rows_file(tmp_path, rows)
    for view in ("single-token", "pll"):
        result, said, _ = probe(tmp_path, path, model_dirs[0], view=view)
        assert result.exit_code == 2 and "Traceback" not in result.output
        assert f"error: {path}:4: {reason}" in said
        assert ".shards" not in said and "cache" not in said


def test_a_duplicate_row_id_names_its_line(tmp_path, model_dirs):
    rows = as_dicts()
    rows[5]["id"] = rows[1]["id"]
    path = rows_file(tmp_path, rows)
    result, said, _ = probe(tmp_path, path, model_dirs[0])
    assert result.exit_code == 2
    assert f"error: {path}:6: duplicate id 'q2'" in said


def test_a_masked_model_asked_as_causal_is_refused(tmp_path, model_dirs):
    path = rows_file(tmp_path, as_dicts())
    result, said, out = probe(tmp_path, path, model_dirs[0], "--family", "causal")
    assert result.exit_code == 2  # ran without a word
    assert "is a masked model (RobertaForMaskedLM), not causal" in said
    assert not (out / "metrics.json").exists()
    result, _, out = probe(tmp_path, path, model_dirs[0], "--family", "masked")
    assert result.exit_code == 0, result.output
    assert json.loads((out / "metrics.json").read_text())["rows"] == len(as_dicts())
