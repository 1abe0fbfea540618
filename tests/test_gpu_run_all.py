"""benchmarks/gpu/run_all.sh, the GPU figures in one call: its CPU dry run end to end, and the
parts a machine without a GPU or vLLM cannot run are said to be skipped, with why."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from argparse import Namespace
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "gpu" / "run_all.sh"


def run_all():
    spec = importlib.util.spec_from_file_location("run_all", SCRIPT.with_suffix(".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_last_json_a_benchmark_prints_is_read_among_its_other_lines():
    module = run_all()
    printed = 'loading...\n{"a": 1}\nmore\n{\n  "speed": 2.5,\n  "n": {"x": 1}\n}\n'
    assert module.last_json(printed) == {"speed": 2.5, "n": {"x": 1}}
    assert module.last_json('{"only": true}') == {"only": True}


def test_the_dummy_model_has_llama_8b_layers_and_smollm2s_vocabulary(tmp_path):
    module = run_all()
    tokenizer = tmp_path / "tok"
    tokenizer.mkdir()
    (tokenizer / "tokenizer.json").write_text("{}")
    model = module.vllm_model(tmp_path, tokenizer)
    config = json.loads((model / "config.json").read_text())
    hidden, layers, vocab = config["hidden_size"], config["num_hidden_layers"], 49152
    kv = hidden // config["num_attention_heads"] * config["num_key_value_heads"]
    per_layer = 2 * hidden * hidden + 2 * hidden * kv + 3 * hidden * config["intermediate_size"]
    parameters = layers * per_layer + 2 * vocab * hidden
    assert config["vocab_size"] == vocab and 7.3e9 < parameters < 7.5e9
    assert (model / "tokenizer.json").is_file()


def test_without_vllm_or_prompts_the_vllm_part_is_skipped_with_its_reason(tmp_path, monkeypatch):
    module = run_all()
    args = Namespace(templama=[], dry_run=False, tokenizer=None, concurrency=8)
    assert module.vllm_part(args, tmp_path, dict(os.environ)) == {
        "status": "skipped",
        "reason": "no --templama files given",
    }
    monkeypatch.setattr(module.shutil, "which", lambda name: None)
    monkeypatch.setattr(
        module, "templama_prompts", lambda *a: module.synthetic_prompts(tmp_path, 3)
    )
    args.templama = ["train.jsonl"]
    part = module.vllm_part(args, tmp_path, dict(os.environ))
    assert part == {"status": "skipped", "reason": "vllm is not installed (pip install vllm)"}


@pytest.mark.slow  # four benchmarks at tiny sizes, each a few processes: about a minute idle
def test_the_dry_run_runs_every_part_on_the_cpu_and_writes_one_json(tmp_path):
    out = tmp_path / "figures.json"
    env = {**os.environ, "PYTHON": sys.executable}
    done = subprocess.run(
        ["bash", str(SCRIPT), "--dry-run", "--out", str(out)],
        capture_output=True, text=True, env=env, timeout=1800,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(out.read_text())
    assert report["dry_run"] and report["card"] == "CPU (no GPU)"
    parts = report["parts"]
    assert {name: part["status"] for name, part in parts.items()} == {
        "vllm": "stubbed",
        "mlm": "measured",
        "span_ppl": "measured",
        "tkg": "measured",
    }, {name: part.get("output") for name, part in parts.items()}
    stub = parts["vllm"]["figures"]
    assert stub["prompts"] == 200 and stub["chronoprobe_requests_per_s"] > 0
    assert parts["tkg"]["figures"]["device"] == "cpu"
    assert parts["tkg"]["figures"]["train_speedup_same_run"] > 0
