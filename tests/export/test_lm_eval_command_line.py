"""What `chronoprobe export lm-eval` says on the command line: a bad --template is one line,
word for word what `probe generate` says of it, and the lm_eval command to run names the folder
given as --out."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.jsonl import write_jsonl

from .test_lm_eval import ROWS

runner = CliRunner()


@pytest.fixture
def data(tmp_path):
    write_jsonl(tmp_path / "drift" / "examples.jsonl", ROWS)
    return tmp_path / "drift"


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("Q: {nosuch}", "--template: unknown placeholder {nosuch}; use period, statement, query"),
        ("In {period}:", "--template: the template must hold {statement} or {query}"),
    ],
)
def test_a_bad_template_is_the_one_line_probe_generate_gives(data, tmp_path, template, expected):
    export = ["export", "lm-eval", str(data), "--out", str(tmp_path / "x")]
    generate = ["probe", "generate", str(data), "-m", "openai:x", "--out", str(tmp_path / "g")]
    said = [runner.invoke(app, [*args, "--template", template]) for args in (export, generate)]
    assert [result.exit_code for result in said] == [2, 2]
    assert "validation error" not in said[0].output
    assert said[0].output.startswith(f"error: {expected} (got {template!r})")
    assert said[1].output.startswith(f"error: {expected} (got {template!r})")
    assert not (tmp_path / "x").exists()


def test_the_command_to_run_names_the_out_folder(data, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["export", "lm-eval", str(data), "--out", "my tasks/"])
    assert result.exit_code == 0, result.output
    assert "run: lm_eval --include_path 'my tasks' --tasks chronoprobe_drift" in result.output
    assert "OUT" not in result.output
