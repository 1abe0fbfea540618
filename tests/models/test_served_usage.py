"""Token counts and cost of a served run: what the server's `usage` says, summed; unknown
(null) when a reply gave none, rather than a sum that leaves those replies out."""

from __future__ import annotations

import pytest

from chronoprobe.models.requests import Cloze, PromptRequest
from chronoprobe.models.served import ServedLM

from .served_stub import StubServer, completion

ASK = [PromptRequest(Cloze(f"In 2019, person {i} works for ", ""), max_tokens=4) for i in range(3)]
PRICES = {"price_prompt": 2.0, "price_completion": 10.0}


def record_of(reply: dict, **options) -> dict:
    with StubServer(lambda path, body, headers: (200, reply, {})) as stub:
        model = ServedLM("openai:tiny", base_url=stub.url, backoff=0.01, **options)
        model.complete(ASK)
    return model.record()


def test_counted_replies_are_summed_and_priced():
    record = record_of(completion(" Acme"), **PRICES)  # 7 prompt and 2 completion tokens each
    assert (record["prompt_tokens"], record["completion_tokens"]) == (21, 6)
    assert record["cost"] == pytest.approx((21 * 2.0 + 6 * 10.0) / 1e6)


def test_a_server_that_sends_no_usage_leaves_tokens_and_cost_unknown():
    silent = {k: v for k, v in completion(" Acme").items() if k != "usage"}
    record = record_of(silent, **PRICES)
    assert record["requests"] == 3
    assert (record["prompt_tokens"], record["completion_tokens"]) == (None, None)
    assert record["cost"] is None


def test_a_cost_needs_only_the_counts_it_prices():
    half = {**completion(" Acme"), "usage": {"prompt_tokens": 5}}
    record = record_of(half, price_prompt=2.0)
    assert (record["prompt_tokens"], record["completion_tokens"]) == (15, None)
    assert record["cost"] == pytest.approx(15 * 2.0 / 1e6)
    assert record_of(half, **PRICES)["cost"] is None
