"""Free-text continuation: batched with left padding and the cache equals one prompt at a time,
equals ``model.generate``, stops where it should, and samples reproducibly."""

from __future__ import annotations

import warnings

import pytest
import torch
from tests.models.conftest import make_adapter

from chronoprobe.models.completion import cut_answer, left_pad, nucleus_sample
from chronoprobe.models.requests import Cloze, PromptRequest

PROMPTS = [
    "In 2019, Alice Smith was employed by",
    "Bob Jones plays for",
    "In 2012, Dmitri Ivanov, who plays for Umbrella since 2001, was employed by",
    "Carla",
    "In 2010, New York Times employed",
]


def _requests(**options) -> list[PromptRequest]:
    return [PromptRequest(Cloze(p + " ", "."), seed=n, **options) for n, p in enumerate(PROMPTS)]


def talkative(architecture: str, batch_size: int):
    """A tiny adapter whose output layer never favours a special token (a random seq2seq model
    would otherwise end every answer at once)."""
    adapter = make_adapter(architecture, batch_size=batch_size)
    with torch.no_grad():
        adapter.model.get_output_embeddings().weight[adapter._special] = 0.0
    return adapter


@pytest.mark.parametrize("architecture", ["llama", "gpt2", "t5", "bart"])
def test_batched_greedy_equals_one_by_one(architecture):
    batched = talkative(architecture, 3)  # batch size 3: prompts of different lengths share one
    alone = talkative(architecture, 1)
    requests = _requests(max_tokens=6)
    together = batched.complete(requests)
    single = [alone.complete([r])[0] for r in requests]
    assert [c.token_ids for c in together] == [c.token_ids for c in single]
    for a, b in zip(together, single, strict=True):
        assert a.logprob == pytest.approx(b.logprob, abs=1e-4)
    assert all(len(c.token_ids) <= 6 for c in together)
    assert all(c.token_ids for c in together)


@pytest.mark.parametrize("architecture", ["llama", "t5"])
def test_the_cache_is_handed_over_by_the_name_transformers_reads(adapters, architecture, caplog):
    # transformers that name the cache `cache` warn, on every step, about `past_key_values`.
    adapter = adapters(architecture)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        adapter.complete(_requests(max_tokens=3))
    told = [str(w.message) for w in caught] + [r.getMessage() for r in caplog.records]
    assert not [text for text in told if "past_key_values" in text]


@pytest.mark.parametrize("architecture", ["llama", "gpt2"])
def test_greedy_equals_model_generate(adapters, architecture):
    """The same tokens as transformers' own greedy generate, up to where ours stopped."""
    adapter = adapters(architecture)
    requests = _requests(max_tokens=6)
    for request, got in zip(requests, adapter.complete(requests), strict=True):
        prompt = adapter.prompt_row(request).ids
        ids = torch.tensor([prompt])
        made = adapter.model.generate(
            input_ids=ids,
            attention_mask=torch.ones_like(ids),
            max_new_tokens=6,
            do_sample=False,
            pad_token_id=adapter.pad_id,
        )[0, len(prompt) :].tolist()
        assert made[: len(got.token_ids)] == got.token_ids


@pytest.mark.parametrize("architecture", ["llama", "t5"])
def test_sampling_is_seeded_per_request(adapters, architecture):
    batched = adapters(architecture)
    alone = make_adapter(architecture, batch_size=1)
    requests = _requests(max_tokens=5, temperature=1.0, top_p=0.9)
    first = [c.token_ids for c in batched.complete(requests)]
    assert first == [c.token_ids for c in batched.complete(requests)]
    assert first == [alone.complete([r])[0].token_ids for r in requests]
    reseeded = [PromptRequest(r.cloze, 5, 1.0, 0.9, seed=r.seed + 100) for r in requests]
    assert first != [c.token_ids for c in batched.complete(reseeded)]


def test_masked_models_do_not_continue_prompts(adapters):
    with pytest.raises(ValueError, match="needs a causal or seq2seq model"):
        adapters("roberta").complete(_requests())


def test_cut_answer_stops_at_newline_and_sentence_end():
    assert cut_answer(" Acme Corp. She left") == ("Acme Corp", True)
    assert cut_answer(" Globex\nIn 2019") == ("Globex", True)
    assert cut_answer(" the U.S. Army. Later") == ("the U.S. Army", True)
    assert cut_answer(" J. Smith! yes") == ("J. Smith", True)
    assert cut_answer(" Acme Corp.") == ("Acme Corp.", False)  # no space yet: not finished
    assert cut_answer(" New York Times") == ("New York Times", False)


def test_left_pad_puts_every_prompt_at_the_end():
    ids, mask = left_pad([[5, 6, 7], [8]], pad_id=0)
    assert ids.tolist() == [[5, 6, 7], [0, 0, 8]]
    assert mask.tolist() == [[1, 1, 1], [0, 0, 1]]


def test_nucleus_keeps_only_the_top_tokens():
    logits = torch.log(torch.tensor([0.5, 0.3, 0.15, 0.05]))
    drawn = {nucleus_sample(logits, 1.0, 0.7, torch.Generator().manual_seed(s)) for s in range(200)}
    assert drawn == {0, 1}  # 0.5 < 0.7 <= 0.8: the nucleus is the first two tokens
