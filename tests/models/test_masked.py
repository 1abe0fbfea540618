"""The batched masked-LM requests against one-example-at-a-time loops over the full model."""

from __future__ import annotations

import pytest
import torch

from chronoprobe.models.base import length_buckets, pad
from chronoprobe.models.requests import GenerateRequest, RankRequest, ScoreRequest

from .conftest import CLOZES, SPANS

ATOL = 1e-4


def full_logits(adapter, ids: list[int]) -> torch.Tensor:
    with torch.no_grad():
        return adapter.model(input_ids=torch.tensor([ids])).logits[0].float()


def masked_text(adapter, cloze, n: int = 1) -> list[int]:
    text = cloze.left + adapter.tokenizer.mask_token * n + cloze.right
    return adapter.tokenizer(text)["input_ids"]


@pytest.mark.parametrize("architecture", ["roberta", "bert"])
def test_rank_matches_one_at_a_time(adapters, architecture):
    adapter = adapters(architecture)
    gold = adapter.tokenizer(" Globex", add_special_tokens=False)["input_ids"]
    requests = [RankRequest(c, candidates=(gold[0], 7)) for c in CLOZES]
    batched = adapter.rank(requests, top_k=5)
    for request, got in zip(requests, batched, strict=True):
        ids = masked_text(adapter, request.cloze)
        logprobs = torch.log_softmax(full_logits(adapter, ids)[ids.index(adapter.mask_id)], -1)
        order = torch.argsort(logprobs, descending=True).tolist()
        assert got.token_ids == order[:5]
        assert got.logprobs == pytest.approx(logprobs[order[:5]].tolist(), abs=ATOL)
        assert got.candidate_ranks == [order.index(c) + 1 for c in request.candidates]


def test_rank_restricted_vocabulary(adapters):
    adapter = adapters("roberta")
    vocabulary = [10, 20, 30, 40]
    (got,) = adapter.rank([RankRequest(CLOZES[0], candidates=(20, 50))], 10, vocabulary)
    assert sorted(got.token_ids[:4]) == vocabulary
    assert sum(torch.tensor(got.logprobs[:4]).exp().tolist()) == pytest.approx(1.0, abs=1e-5)
    assert got.candidate_ranks[0] <= 4 and got.candidate_ranks[1] == 5


def naive_pll(adapter, cloze, span) -> tuple[float, int]:
    """One forward per span token, locating tokens by character offsets as documented."""
    filled = cloze.filled(span)
    encoded = adapter.tokenizer(filled, return_offsets_mapping=True)
    start, end = len(cloze.left), len(cloze.left) + len(span)
    total, count = 0.0, 0
    for p, (a, b) in enumerate(encoded["offset_mapping"]):
        if b > a and a < end and b > start:
            ids = list(encoded["input_ids"])
            target, ids[p] = ids[p], adapter.mask_id
            total += torch.log_softmax(full_logits(adapter, ids)[p], -1)[target].item()
            count += 1
    return total, count


@pytest.mark.parametrize("architecture", ["roberta", "bert"])
def test_pll_matches_per_token_loop(adapters, architecture):
    adapter = adapters(architecture)
    requests = [ScoreRequest(c, s) for c in CLOZES for s in SPANS[:3]]
    for request, got in zip(requests, adapter.score(requests), strict=True):
        expected, count = naive_pll(adapter, request.cloze, request.span)
        assert got.n_tokens == count > 0
        assert got.logprob == pytest.approx(expected, abs=ATOL)


def naive_fill(adapter, cloze, m) -> tuple[list[int], float]:
    ids = masked_text(adapter, cloze, m)
    special = set(adapter.tokenizer.all_special_ids)
    tokens, total = [], 0.0
    while adapter.mask_id in ids:
        p = ids.index(adapter.mask_id)
        logprobs = torch.log_softmax(full_logits(adapter, ids)[p], -1)
        best = max((t for t in range(len(logprobs)) if t not in special), key=lambda t: logprobs[t])
        ids[p] = best
        tokens.append(best)
        total += logprobs[best].item()
    return tokens, total


def test_generate_matches_left_to_right_loop(adapters):
    adapter = adapters("roberta")
    requests = [GenerateRequest(c, max_tokens=3) for c in CLOZES]
    for request, candidates in zip(requests, adapter.generate(requests), strict=True):
        assert len(candidates) == 3
        for m, candidate in enumerate(candidates, start=1):
            tokens, total = naive_fill(adapter, request.cloze, m)
            assert candidate.token_ids == tokens
            assert candidate.logprob == pytest.approx(total, abs=ATOL)
            assert candidate.n_scored == m
            assert candidate.mean_logprob == pytest.approx(total / m, abs=ATOL)
            assert candidate.text == adapter.tokenizer.decode(tokens).strip()


def test_masked_only_head_equals_full_head(adapters):
    adapter = adapters("roberta")
    ids, attention = pad([masked_text(adapter, c) for c in CLOZES], adapter.pad_id)
    rows = torch.tensor([0, 2, 2, 5])
    cols = torch.tensor([3, 1, 9, 4])
    with torch.no_grad():
        full = adapter.model(input_ids=ids, attention_mask=attention).logits[rows, cols]
    assert adapter._split is not None
    assert torch.allclose(adapter.logits_at(ids, attention, rows, cols), full, atol=1e-5)


def test_length_buckets_sort_and_cover():
    lengths = [3, 9, 1, 9, 4, 2, 7]
    batches = list(length_buckets(lengths, 3))
    assert batches == [[1, 3, 6], [4, 0, 5], [2]]
    with pytest.raises(ValueError, match="batch size"):
        list(length_buckets(lengths, 0))


def test_results_come_back_in_request_order(adapters):
    adapter = adapters("roberta")
    requests = [ScoreRequest(c, "Globex") for c in CLOZES]
    forward = adapter.score(requests)
    backward = adapter.score(requests[::-1])
    assert [s.logprob for s in forward] == pytest.approx([s.logprob for s in backward][::-1])
    assert len({round(s.logprob, 4) for s in forward}) > 1


def test_span_without_tokens_is_an_error(adapters):
    with pytest.raises(ValueError, match="has no tokens"):
        adapters("roberta").score([ScoreRequest(CLOZES[0], "")])
