"""Causal and seq2seq requests: batched answers against one-example full forwards."""

from __future__ import annotations

import pytest
import torch

from chronoprobe.models.requests import Cloze, GenerateRequest, RankRequest, ScoreRequest

from .conftest import CLOZES, SPANS

ATOL = 1e-4
DECODERS = ["llama", "gpt2", "t5", "bart"]


def full_logprobs(adapter, row) -> torch.Tensor:
    """Log-probabilities at every decoder position of one unpadded row, full LM head."""
    with torch.no_grad():
        if row.encoder is None:
            logits = adapter.model(input_ids=torch.tensor([row.ids])).logits
        else:
            logits = adapter.model(
                input_ids=torch.tensor([row.encoder]), decoder_input_ids=torch.tensor([row.ids])
            ).logits
    return torch.log_softmax(logits[0].float(), -1)


@pytest.mark.parametrize("architecture", DECODERS)
def test_rank_matches_one_at_a_time(adapters, architecture):
    adapter = adapters(architecture)
    requests = [RankRequest(c, candidates=(11, 42)) for c in CLOZES]
    for request, got in zip(requests, adapter.rank(requests, top_k=4), strict=True):
        logprobs = full_logprobs(adapter, adapter.rank_row(request.cloze))[-1]
        order = torch.argsort(logprobs, descending=True).tolist()
        assert got.token_ids == order[:4]
        assert got.logprobs == pytest.approx(logprobs[order[:4]].tolist(), abs=ATOL)
        assert got.candidate_ranks == [order.index(c) + 1 for c in request.candidates]


@pytest.mark.parametrize("architecture", DECODERS)
def test_score_matches_one_at_a_time(adapters, architecture):
    adapter = adapters(architecture)
    requests = [ScoreRequest(c, s) for c in CLOZES for s in SPANS[:3]]
    rows = adapter.score_rows(requests)
    for got, scored in zip(adapter.score(requests), rows, strict=True):
        logprobs = full_logprobs(adapter, scored.row)
        ids = scored.row.ids
        expected = sum(logprobs[p - 1, ids[p]].item() for p in range(scored.first, len(ids)))
        assert ids[scored.first :] == scored.span_ids
        assert got.n_tokens == len(scored.span_ids) > 0
        assert got.logprob == pytest.approx(expected, abs=ATOL)


def naive_continuation(adapter, cloze, span) -> tuple[float, int]:
    """log p(span + right | left) of a causal model, from one full forward over the filled
    sentence as the tokenizer frames it (the start token when nothing precedes the span)."""
    filled = cloze.filled(span)
    encoded = adapter.tokenizer(filled, add_special_tokens=False, return_offsets_mapping=True)
    start = len(cloze.left)
    first = next(p for p, (a, b) in enumerate(encoded["offset_mapping"]) if b > a and b > start)
    context = adapter.lead + encoded["input_ids"][:first] or [adapter.tokenizer.bos_token_id]
    ids = context + encoded["input_ids"][first:]
    logprobs = full_logprobs(adapter, type(adapter.rank_row(cloze))(ids))
    total = sum(logprobs[p - 1, ids[p]].item() for p in range(len(context), len(ids)))
    return total, len(ids) - len(context)


@pytest.mark.parametrize("architecture", ["llama", "gpt2"])
def test_causal_score_with_right_context_is_the_whole_continuation(adapters, architecture):
    adapter = adapters(architecture)
    requests = [ScoreRequest(c, s, right_context=True) for c in CLOZES for s in SPANS[:3]]
    for request, got in zip(requests, adapter.score(requests), strict=True):
        expected, count = naive_continuation(adapter, request.cloze, request.span)
        assert got.n_tokens == count
        assert got.logprob == pytest.approx(expected, abs=ATOL)
    # the gap-first cloze: the span alone is scored after the start token whatever follows it,
    # the continuation reads the right context
    alone = [ScoreRequest(Cloze("", right), "Carla Diaz") for right in (" plays for Globex.", ".")]
    a, b = adapter.score(alone)
    assert a.logprob == pytest.approx(b.logprob, abs=ATOL)
    a, b = adapter.score([ScoreRequest(r.cloze, r.span, right_context=True) for r in alone])
    assert abs(a.logprob - b.logprob) > 1e-3


@pytest.mark.parametrize("architecture", ["roberta", "t5", "bart"])
def test_right_context_changes_nothing_for_families_that_read_it(adapters, architecture):
    adapter = adapters(architecture)
    plain = [ScoreRequest(c, s) for c in CLOZES for s in SPANS[:2]]
    with_right = [ScoreRequest(r.cloze, r.span, right_context=True) for r in plain]
    assert adapter.score(with_right) == adapter.score(plain)


def naive_generate(adapter, cloze, max_tokens):
    prefix, closing = adapter.generate_row(cloze)
    special = set(adapter._special)
    made, made_lp, candidates = [], [], []
    for m in range(max_tokens + 1):
        row = type(prefix)(prefix.ids + made + closing, prefix.encoder)
        logprobs = full_logprobs(adapter, row)
        at = len(prefix.ids) + m - 1
        if m:
            close = sum(logprobs[at + j, t].item() for j, t in enumerate(closing))
            candidates.append((list(made), sum(made_lp) + close))
        if m < max_tokens:
            best = max(
                (t for t in range(logprobs.shape[1]) if t not in special),
                key=lambda t: logprobs[at, t],
            )
            made.append(best)
            made_lp.append(logprobs[at, best].item())
    return candidates


@pytest.mark.parametrize("architecture", DECODERS)
def test_generate_matches_one_at_a_time(adapters, architecture):
    adapter = adapters(architecture)
    requests = [GenerateRequest(c, max_tokens=3) for c in CLOZES[:5]]
    for request, got in zip(requests, adapter.generate(requests), strict=True):
        expected = naive_generate(adapter, request.cloze, 3)
        assert [c.token_ids for c in got] == [ids for ids, _ in expected]
        assert [c.logprob for c in got] == pytest.approx([lp for _, lp in expected], abs=ATOL)
        closing = len(adapter.generate_row(request.cloze)[1])
        assert [c.n_scored for c in got] == [m + closing for m in (1, 2, 3)]
        assert [c.mean_logprob for c in got] == pytest.approx(
            [lp / (len(ids) + closing) for ids, lp in expected], abs=ATOL
        )


def test_causal_rows_follow_the_left_context(adapters):
    adapter = adapters("llama")
    tokenize = adapter.tokenizer
    cloze = Cloze("Bob Jones plays for ", " since 2015.")
    left = tokenize("Bob Jones plays for", add_special_tokens=False)["input_ids"]
    assert adapter.rank_row(cloze).ids == left
    (scored,) = adapter.score_rows([ScoreRequest(cloze, "Globex")])
    assert scored.row.ids == left + tokenize(" Globex", add_special_tokens=False)["input_ids"]
    # an empty left context is the start token, so the first span token still has a context
    assert adapter.rank_row(Cloze("", " plays for Globex.")).ids == [tokenize.bos_token_id]
    assert (
        adapter.generate_row(cloze)[1]
        == tokenize(" since 2015.", add_special_tokens=False)["input_ids"]
    )


def test_t5_rows_use_sentinels(adapters):
    adapter = adapters("t5")
    vocab = adapter.tokenizer.get_vocab()
    s0, s1 = vocab["<extra_id_0>"], vocab["<extra_id_1>"]
    cloze = Cloze("Bob Jones plays for ", ".")
    (scored,) = adapter.score_rows([ScoreRequest(cloze, "Globex")])
    span = adapter.tokenizer("Globex", add_special_tokens=False)["input_ids"]
    assert scored.row.ids == [adapter.start, s0, *span] and scored.first == 2
    assert s0 in scored.row.encoder and scored.row.encoder[-1] == adapter.tokenizer.eos_token_id
    assert adapter.generate_row(cloze)[1] == [s1]


def test_bart_rows_rewrite_the_sentence(adapters):
    adapter = adapters("bart")
    tok = adapter.tokenizer
    cloze = Cloze("Bob Jones plays for ", ".")
    (scored,) = adapter.score_rows([ScoreRequest(cloze, "Globex")])
    filled = tok("Bob Jones plays for Globex", add_special_tokens=False)["input_ids"]
    assert scored.row.ids == [adapter.start, tok.bos_token_id, *filled]
    assert tok.mask_token_id in scored.row.encoder
    assert adapter.generate_row(cloze)[1][-1] == tok.eos_token_id


def test_causal_head_only_equals_full_head(adapters):
    adapter = adapters("llama")
    rows = [adapter.rank_row(c).ids for c in CLOZES]
    from chronoprobe.models.base import pad

    ids, attention = pad(rows, adapter.pad_id)
    r, c = torch.tensor([0, 1, 2, 6]), torch.tensor([2, 0, 11, 5])
    with torch.no_grad():
        full = adapter.model(input_ids=ids, attention_mask=attention).logits[r, c]
    assert adapter._split is not None
    assert torch.allclose(adapter.logits_at(ids, attention, r, c), full, atol=1e-5)


@pytest.mark.parametrize("architecture", ["roberta", "llama", "t5"])
def test_empty_request_lists_answer_empty(adapters, architecture):
    adapter = adapters(architecture)
    assert adapter.rank([]) == adapter.score([]) == adapter.generate([]) == []
    assert adapter.label_token_ids([]) == []
