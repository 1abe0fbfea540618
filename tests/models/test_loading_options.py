"""--dtype, --revision and --trust-remote-code, as lm-evaluation-harness's model_args offer
them: each reaches transformers' loading calls and keys both caches."""

from __future__ import annotations

import json

import pytest
import torch
import transformers
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.jsonl import write_jsonl
from chronoprobe.models.request_cache import model_fingerprint
from chronoprobe.models.spec import LoadOptions, load_model, parse_spec
from chronoprobe.models.tiny import random_model
from chronoprobe.models.tokenizer import train_tokenizer

from .conftest import CORPUS

runner = CliRunner()


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("tiny-roberta")
    tokenizer = train_tokenizer(CORPUS, "roberta")
    random_model("roberta", tokenizer, seed=0).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.mark.parametrize(
    ("dtype", "expected"),
    [("auto", torch.float32), ("float32", torch.float32), ("bfloat16", torch.bfloat16),
     ("float16", torch.float16)],
)  # fmt: skip
def test_dtype_names_the_weights_precision(model_dir, dtype, expected):
    model = load_model(str(model_dir), device="cpu", dtype=dtype)
    assert {p.dtype for p in model.model.parameters()} == {expected}


def test_a_revision_of_a_local_model_is_refused(model_dir):
    with pytest.raises(
        ValueError, match="is a local one; a revision picks a branch, tag or commit"
    ):
        load_model(str(model_dir), device="cpu", revision="v1")


class Asked(Exception):
    pass


def test_revision_and_remote_code_reach_every_loading_call(monkeypatch):
    """A hub id, loaded offline: every from_pretrained call gets the revision and the
    remote-code setting the user gave (off unless given)."""
    calls = []

    def config(location, **kwargs):
        calls.append(("config", location, kwargs))
        return transformers.RobertaConfig(architectures=["RobertaForMaskedLM"])

    def model(location, **kwargs):
        calls.append(("model", location, kwargs))
        raise Asked

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(transformers.AutoConfig, "from_pretrained", config)
    monkeypatch.setattr(transformers.AutoModelForMaskedLM, "from_pretrained", model)
    for given in ({}, {"revision": "0123abc", "trust_remote_code": True}):
        calls.clear()
        with pytest.raises(Asked):
            load_model("someone/some-model", device="cpu", dtype="bfloat16", **given)
        assert [(what, where) for what, where, _ in calls] == [
            ("config", "someone/some-model"),
            ("model", "someone/some-model"),
        ]
        for _, _, kwargs in calls:
            assert kwargs["revision"] == given.get("revision")
            assert kwargs["trust_remote_code"] is given.get("trust_remote_code", False)
        assert calls[1][2]["dtype"] is torch.bfloat16


def test_the_answer_cache_keys_on_revision_and_remote_code(model_dir):
    model = load_model(str(model_dir), device="cpu")
    spec = parse_spec("org/m")
    plain = model_fingerprint(spec, model)
    assert model_fingerprint(spec, model, LoadOptions()) == plain
    revised = model_fingerprint(spec, model, LoadOptions(revision="abc"))
    trusted = model_fingerprint(spec, model, LoadOptions(trust_remote_code=True))
    assert len({plain, revised, trusted}) == 3


def test_the_probe_command_takes_them_and_a_new_dtype_is_a_new_step(model_dir, tmp_path):
    row = {
        "id": "q",
        "query": "Alice Smith was employed by [MASK].",
        "answer_labels": ["Acme Corp"],
    }
    write_jsonl(tmp_path / "rows.jsonl", [row])
    base = ["probe", "pll", str(tmp_path / "rows.jsonl"), "-m", str(model_dir), "--device", "cpu"]
    keys = []
    for dtype in ("float32", "bfloat16", "float32"):
        out = tmp_path / f"out-{dtype}"
        result = runner.invoke(app, [*base, "--dtype", dtype, "-o", str(out)])
        assert result.exit_code == 0, result.output
        metrics = json.loads((out / "metrics.json").read_text())
        options = metrics["models"][str(model_dir)]["options"]
        assert options["dtype"] == dtype and options["trust_remote_code"] is False
        keys.append(json.loads((out / "step.json").read_text())["key"])
    assert keys[0] != keys[1] and keys[0] == keys[2]
    revised = runner.invoke(app, [*base, "--revision", "v2", "-o", str(tmp_path / "r")])
    assert revised.exit_code == 2
    assert "--revision v2: model" in " ".join(revised.output.split())
