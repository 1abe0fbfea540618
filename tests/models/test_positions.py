"""Requests longer than the model's positions: context cut on the side away from the gap, the
gap never cut (such a request is answered None), against full forwards on hand-cut inputs."""

from __future__ import annotations

import pytest
import torch

from chronoprobe.models.base import fit_window, position_limit
from chronoprobe.models.requests import (
    Cloze,
    GenerateRequest,
    PromptRequest,
    RankRequest,
    ScoreRequest,
)
from chronoprobe.models.tiny import random_model
from chronoprobe.models.tokenizer import train_tokenizer

from .conftest import ADAPTERS, CORPUS

ATOL = 1e-4
N = 16  # the tiny models' positions (RoBERTa's numbering from its padding id gives it 17)
LONG = (
    "In 2012, Dmitri Ivanov, who plays for Umbrella since 2001, was employed by Initech, "
    "then by Globex and by Acme Corp; in 2019, Alice Smith was employed by "
)
LONG_SPAN = "Acme Corp, Globex, Initech, Umbrella, New York Times, Acme Corp and Globex"


@pytest.fixture(scope="module")
def short():
    """Adapters of tiny models with 16 positions, by architecture."""
    cache: dict = {}

    def get(architecture: str):
        if architecture not in cache:
            tokenizer = train_tokenizer(CORPUS, architecture)
            model = random_model(architecture, tokenizer, max_positions=N)
            cache[architecture] = ADAPTERS[architecture](model, tokenizer, batch_size=2)
        return cache[architecture]

    return get


def logprobs(adapter, ids: list[int], decoder: list[int] | None = None) -> torch.Tensor:
    """Log-probabilities at every position of one unpadded row (the decoder's, for seq2seq)."""
    with torch.no_grad():
        if decoder is None:
            logits = adapter.model(input_ids=torch.tensor([ids])).logits
        else:
            logits = adapter.model(
                input_ids=torch.tensor([ids]), decoder_input_ids=torch.tensor([decoder])
            ).logits
    return torch.log_softmax(logits[0].float(), -1)


def tokens(adapter, text: str, special: bool = False) -> list[int]:
    return adapter.tokenizer(text, add_special_tokens=special)["input_ids"]


def test_fit_window_keeps_frame_and_gap_and_cuts_the_farthest_context():
    ids = [100, 1, 2, 3, 4, 5, 50, 6, 7, 200]  # frame 100 ... 200, gap 50
    assert fit_window(ids, (6, 7), (1, 1), 10) == (ids, 0)
    assert fit_window(ids, (6, 7), (1, 1), None) == (ids, 0)
    # room 4: two tokens each side of the gap
    assert fit_window(ids, (6, 7), (1, 1), 7) == ([100, 4, 5, 50, 6, 7, 200], 3)
    # room 6: the right side has only two, the left takes the rest
    assert fit_window(ids, (6, 7), (1, 1), 9) == ([100, 2, 3, 4, 5, 50, 6, 7, 200], 1)
    # context on one side only (a causal prefix): its end is kept
    assert fit_window(list(range(6)), (5, 6), (0, 0), 3) == ([3, 4, 5], 3)
    # an odd room gives the extra token to the left
    assert fit_window(list(range(21)), (10, 11), (0, 0), 6) == ([7, 8, 9, 10, 11, 12], 7)
    # the frame and the gap alone: no context left; one more id than that: None
    assert fit_window(ids, (6, 7), (1, 1), 3) == ([100, 50, 200], 5)
    assert fit_window(ids, (2, 8), (1, 1), 7) is None


@pytest.mark.parametrize("architecture", ["roberta", "bert", "gpt2", "bart"])
def test_position_limit_is_the_longest_input_the_model_takes(short, architecture):
    adapter = short(architecture)
    limit = position_limit(adapter.model)
    assert limit == N  # RoBERTa: two more embeddings, as its positions start past <pad>=1
    assert adapter.max_positions == limit
    ids = [adapter.tokenizer.unk_token_id] * limit
    decoder = ids if architecture == "bart" else None
    logprobs(adapter, ids, decoder)
    with pytest.raises((IndexError, RuntimeError)):
        logprobs(adapter, ids + ids[:1], None if decoder is None else decoder + decoder[:1])


def test_relative_positions_set_no_limit(short):
    assert short("t5").max_positions is None
    assert short("llama").max_positions == N  # rotary, but trained to N: cut as the others


@pytest.mark.parametrize("architecture", ["llama", "gpt2"])
def test_causal_context_loses_its_start(short, architecture):
    adapter = short(architecture)
    cloze = Cloze(LONG, " since 2015.")
    left = tokens(adapter, LONG.rstrip())
    assert len(left) > 2 * N and adapter.lead == []
    (ranking,) = adapter.rank([RankRequest(cloze, candidates=(7,))], top_k=3)
    expected = logprobs(adapter, left[-N:])[-1]
    order = torch.argsort(expected, descending=True).tolist()
    assert ranking.token_ids == order[:3]
    assert ranking.logprobs == pytest.approx(expected[order[:3]].tolist(), abs=ATOL)
    assert ranking.candidate_ranks == [order.index(7) + 1]

    # the continuation (span and right context) stays whole: the window is the last N ids
    filled = tokens(adapter, cloze.filled("Globex"))
    span = tokens(adapter, " Globex since 2015.")
    assert filled[-len(span) :] == span
    window = filled[-N:]
    row = logprobs(adapter, window)
    expected_score = sum(row[p - 1, window[p]].item() for p in range(N - len(span), N))
    (score,) = adapter.score([ScoreRequest(cloze, "Globex", right_context=True)])
    assert score.n_tokens == len(span)
    assert score.logprob == pytest.approx(expected_score, abs=ATOL)


@pytest.mark.parametrize("architecture", ["llama", "gpt2"])
def test_causal_generation_leaves_room_for_its_tokens(short, architecture):
    adapter = short(architecture)
    cloze = Cloze(LONG, ".")
    closing = tokens(adapter, ".")
    (candidates,) = adapter.generate([GenerateRequest(cloze, max_tokens=3)])
    prefix = tokens(adapter, LONG.rstrip())[-(N - 3 - len(closing)) :]
    first = logprobs(adapter, prefix)[-1]
    first[adapter._special] = float("-inf")
    assert candidates[0].token_ids == [int(first.argmax())]
    assert len(prefix) + 3 + len(closing) == N
    assert adapter.generate([GenerateRequest(cloze, max_tokens=N)]) == [None]


@pytest.mark.parametrize("architecture", ["llama", "gpt2"])
def test_a_long_prompt_loses_its_start_and_leaves_room_for_the_answer(short, architecture):
    adapter = short(architecture)
    (answer,) = adapter.complete([PromptRequest(Cloze(LONG, ""), max_tokens=3)])
    window = adapter.prompt_row(PromptRequest(Cloze(LONG, ""))).ids[-(N - 3) :]
    first = logprobs(adapter, window)[-1]
    first[adapter._special] = float("-inf")
    assert answer.token_ids[:1] == [int(first.argmax())]
    assert adapter.complete([PromptRequest(Cloze(LONG, ""), max_tokens=N)]) == [None]


@pytest.mark.parametrize("architecture", ["llama", "gpt2", "roberta", "bert", "bart"])
def test_a_span_longer_than_the_positions_is_not_scored(short, architecture):
    adapter = short(architecture)
    assert len(tokens(adapter, LONG_SPAN)) > N
    requests = [
        ScoreRequest(Cloze("In 2019, Bob Jones was employed by ", "."), LONG_SPAN),
        ScoreRequest(Cloze(LONG, "."), "Globex"),
    ]
    unfit, fit = adapter.score(requests)
    assert unfit is None and fit is not None and fit.n_tokens >= 1
    assert adapter.unfit_reason == f"longer than the model's {adapter.max_positions} positions"


def masked_window(adapter, cloze: Cloze, n: int = 1) -> tuple[list[int], list[int]]:
    """The masked sentence as the tokenizer frames it, and its window as cut by hand: the
    left context is long and the right short, so the window is <s> + the last positions."""
    ids = tokens(adapter, cloze.left + adapter.tokenizer.mask_token * n + cloze.right, True)
    limit = adapter.max_positions
    return ids, ids[:1] + ids[-(limit - 1) :]


@pytest.mark.parametrize("architecture", ["roberta", "bert"])
def test_masked_sentence_is_cut_around_its_gap(short, architecture):
    adapter = short(architecture)
    cloze = Cloze(LONG, ".")
    ids, window = masked_window(adapter, cloze)
    assert len(ids) > 2 * adapter.max_positions
    (ranking,) = adapter.rank([RankRequest(cloze)], top_k=3)
    expected = logprobs(adapter, window)[window.index(adapter.mask_id)]
    order = torch.argsort(expected, descending=True).tolist()
    assert ranking.token_ids == order[:3]
    assert ranking.logprobs == pytest.approx(expected[order[:3]].tolist(), abs=ATOL)

    # PLL of a two-token span: each token masked in the same window
    span = tokens(adapter, " Acme Corp")
    assert len(span) == 2
    filled = tokens(adapter, cloze.filled("Acme Corp"), True)
    window = filled[:1] + filled[-(adapter.max_positions - 1) :]
    at = len(window) - 2 - len(span)  # the span, then "." and </s>
    assert window[at : at + 2] == span
    total = 0.0
    for p in (at, at + 1):
        masked = list(window)
        masked[p] = adapter.mask_id
        total += logprobs(adapter, masked)[p, window[p]].item()
    (score,) = adapter.score([ScoreRequest(cloze, "Acme Corp")])
    assert score.n_tokens == 2
    assert score.logprob == pytest.approx(total, abs=ATOL)


def test_masked_right_context_loses_its_end(short):
    adapter = short("roberta")
    cloze = Cloze("", " " + LONG)
    ids = tokens(adapter, adapter.tokenizer.mask_token + cloze.right, True)
    window = ids[: adapter.max_positions - 1] + ids[-1:]
    (ranking,) = adapter.rank([RankRequest(cloze)], top_k=3)
    expected = logprobs(adapter, window)[window.index(adapter.mask_id)]
    assert ranking.logprobs == pytest.approx(expected.topk(3).values.tolist(), abs=ATOL)


def test_masked_generation_needs_room_for_every_mask(short):
    adapter = short("roberta")
    cloze = Cloze(LONG, ".")
    fits, unfit = adapter.generate(
        [GenerateRequest(cloze, 3), GenerateRequest(cloze, adapter.max_positions)]
    )
    assert unfit is None and [len(c.token_ids) for c in fits] == [1, 2, 3]
    _, window = masked_window(adapter, cloze, 1)
    expected = logprobs(adapter, window)[window.index(adapter.mask_id)]
    expected[adapter._special] = float("-inf")
    assert fits[0].token_ids == [int(expected.argmax())]


def test_bart_cuts_encoder_and_decoder(short):
    adapter = short("bart")
    cloze = Cloze(LONG, ".")
    encoder, window = masked_window(adapter, cloze)
    assert len(encoder) > 2 * N
    decoder = [adapter.start, *adapter.lead, *tokens(adapter, LONG.rstrip())]
    decoder = decoder[:2] + decoder[-(N - 2) :]  # the start ids stay
    (ranking,) = adapter.rank([RankRequest(cloze)], top_k=3)
    expected = logprobs(adapter, window, decoder)[-1]
    assert ranking.logprobs == pytest.approx(expected.topk(3).values.tolist(), abs=ATOL)
    assert ranking.token_ids == expected.topk(3).indices.tolist()
