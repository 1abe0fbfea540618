"""Options of the root `chronoprobe` command."""

from __future__ import annotations

import pytest
import torch
from typer.testing import CliRunner

from chronoprobe.cli.main import app

from .test_build_cli import save_kg


@pytest.fixture
def restore_threads():
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


@pytest.mark.parametrize("how", ["option", "environment"])
def test_threads_sets_torch_threads_for_the_command(tmp_path, restore_threads, how):
    save_kg(tmp_path / "kg")
    torch.set_num_threads(2)
    args, env = ["kg", "info", str(tmp_path / "kg")], {}
    if how == "option":
        args = ["--threads", "1", *args]
    else:
        env = {"CHRONOPROBE_THREADS": "1"}
    result = CliRunner().invoke(app, args, env=env)
    assert result.exit_code == 0, result.output
    assert torch.get_num_threads() == 1


def test_threads_must_be_positive(restore_threads):
    result = CliRunner().invoke(app, ["--threads", "0", "kg", "info", "x"])
    assert result.exit_code == 2
    assert "--threads" in result.output
    result = CliRunner().invoke(app, ["kg", "info", "x", "--threads", "0"])
    assert result.exit_code == 2 and "--threads" in result.output


def test_threads_after_the_command_sets_torch_threads_too(tmp_path, restore_threads, monkeypatch):
    """`chronoprobe COMMAND ... --threads N` on an operation, run, results, report and the KG
    tools, as before the command; given in both places, the command's own wins."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CHRONOPROBE_CACHE", str(tmp_path / "cache"))
    save_kg(tmp_path / "kg")
    (tmp_path / "tiny.yaml").write_text(
        "name: tiny\nsteps:\n  - {id: kg, kind: kg, params: {source: sample}}\n"
    )
    commands = [
        ["kg", "info", "kg"],
        ["build", "lamatk", "kg", "-o", "lamatk"],
        ["run", "tiny.yaml", "--out", "run"],
        ["results", "run"],
        ["report", "run"],
    ]
    for threads, command in enumerate(commands, start=1):
        torch.set_num_threads(8)
        result = CliRunner().invoke(app, [*command, "--threads", str(threads)])
        assert result.exit_code == 0, (command, result.output)
        assert torch.get_num_threads() == threads, command
    result = CliRunner().invoke(app, ["--threads", "3", "kg", "info", "kg", "--threads", "2"])
    assert result.exit_code == 0 and torch.get_num_threads() == 2


def test_hugging_face_progress_bars_stay_out_of_piped_logs(tmp_path):
    """A command whose stderr is a pipe loads a model without transformers' weight bars."""
    import subprocess
    import sys

    from chronoprobe.jsonl import write_jsonl
    from chronoprobe.models.tiny import random_model
    from chronoprobe.models.tokenizer import train_tokenizer

    tokenizer = train_tokenizer(["Alice works for Acme.", "Bob works for Globex."], "roberta")
    random_model("roberta", tokenizer, seed=0).save_pretrained(tmp_path / "model")
    tokenizer.save_pretrained(tmp_path / "model")
    row = {"id": "q", "query": "Alice works for [MASK].", "answer_labels": ["Acme"]}
    write_jsonl(tmp_path / "rows.jsonl", [row])
    code = "from chronoprobe.cli.main import app; app()"
    args = ["probe", "pll", str(tmp_path / "rows.jsonl"), "-m", str(tmp_path / "model")]
    args += ["--device", "cpu", "-o", str(tmp_path / "out")]
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("HF_HUB_DIS")}
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    assert "Loading weights" not in done.stderr and "it/s]" not in done.stderr


def test_running_out_of_memory_is_one_line_and_leaves_no_output(tmp_path, monkeypatch):
    """A world too big for the machine: numpy's MemoryError ended in a traceback."""
    from chronoprobe.kg import synth

    def too_big(config):
        raise MemoryError("Unable to allocate 9.24 GiB for an array with shape (1240000000,)")

    monkeypatch.setattr(synth, "synthesize", too_big)
    out = tmp_path / "world"
    result = CliRunner().invoke(app, ["kg", "synth", "--facts", "1000", "-o", str(out)])
    assert result.exit_code == 2
    said = " ".join(result.output.split())
    assert "error: out of memory: Unable to allocate 9.24 GiB" in said
    assert "Traceback" not in result.output and not out.exists()
    huge = ["kg", "synth", "--facts", "9" * 20, "-o", str(out)]  # refused before any work
    refused = CliRunner().invoke(app, huge)
    assert refused.exit_code == 2 and not out.exists()
    assert "a world holds at most 2,500,000 facts" in " ".join(refused.output.split())


def test_an_interrupted_command_says_how_to_resume(tmp_path, monkeypatch):
    """Ctrl-C during a command ended without a word (exit 130)."""

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("chronoprobe.runs.single.run_operation", interrupted)
    out = tmp_path / "world"
    result = CliRunner().invoke(app, ["kg", "synth", "--facts", "300", "-o", str(out)])
    assert result.exit_code == 130
    said = " ".join(result.output.split())
    assert f"interrupted: run the same command again to resume; nothing written to {out}" in said
