"""Rows longer than the model's positions: read with their context cut, or skipped and counted
with the reason when their gap or label cannot fit; never a crash."""

from __future__ import annotations

import pytest

import chronoprobe
from chronoprobe.jsonl import write_jsonl
from chronoprobe.models.masked import MaskedLM
from chronoprobe.models.requests import ScoreRequest
from chronoprobe.models.tiny import random_model
from chronoprobe.models.tokenizer import train_tokenizer
from chronoprobe.probes import read_rows

from .conftest import CORPUS

LONG = (
    "In 2016, Bob Jones, who was employed by Umbrella, then by Initech, by Globex and by "
    "Acme Corp, and in 2017 by New York Times, was employed by [MASK]."
)
LONG_LABEL = "Acme Corp, Globex, Initech, Umbrella, New York Times and Acme Corp"
REASON = "longer than the model's 13 positions"


@pytest.fixture(scope="module")
def model():
    tokenizer = train_tokenizer(CORPUS, "roberta")
    weights = random_model("roberta", tokenizer, max_positions=13, seed=1)
    return MaskedLM(weights, tokenizer, batch_size=2, name="tiny-short")


@pytest.fixture
def rows_file(tmp_path):
    path = tmp_path / "examples.jsonl"
    rows = [
        ("short", "Alice Smith was employed by [MASK].", ["Globex"]),
        ("long", LONG, ["Globex"]),
        ("long-label", "Bob Jones was employed by [MASK].", [LONG_LABEL, "Initech"]),
    ]
    write_jsonl(path, [{"id": i, "query": q, "answer_labels": a} for i, q, a in rows])
    return path


def test_pll_cuts_long_context_and_skips_a_label_that_cannot_fit(model, rows_file, tmp_path):
    assert model.max_positions == 13
    rows = read_rows(rows_file)
    assert len(model.tokenizer(rows[1].cloze.filled("Globex"))["input_ids"]) > 2 * 13
    result = chronoprobe.probe("pll", rows_file, model=model)
    metrics = result.model()
    assert (metrics["predicted"], metrics["skipped"]) == (2, {REASON: 1})
    [skipped] = result.skipped.to_pylist()
    assert (skipped["model"], skipped["id"], skipped["skipped"]) == (
        model.name,
        "long-label",
        REASON,
    )
    predicted = {p["id"]: p for p in result.rows()}
    (score,) = model.score([ScoreRequest(rows[1].cloze, "Globex", right_context=True)])
    assert predicted["long"]["label_scores"] == {"Globex": score.logprob}


def test_rank_and_generate_skip_what_cannot_fit(model, rows_file, tmp_path):
    single = chronoprobe.probe("single-token", rows_file, model=model).model()
    assert (single["predicted"], single["skipped"]) == (3, {})
    # eleven masks and the sentence's two special tokens fit in 13 positions, twelve do not
    fits = chronoprobe.probe("multi-token", rows_file, model=model, max_tokens=11).model()
    assert (fits["predicted"], fits["skipped"]) == (3, {})
    over = chronoprobe.probe("multi-token", rows_file, model=model, max_tokens=12).model()
    assert (over["predicted"], over["skipped"]) == (0, {REASON: 3})


def test_span_ppl_skips_an_example_once_for_all_its_conditions(model, tmp_path):
    sentence = f"Globex hired {LONG_LABEL}."
    long_span = {
        "id": "e-long",
        "entity": "Q1",
        "year": "2019",
        "span_type": "np",
        "sentence": sentence,
        "mention_start": 0,
        "mention_end": 6,
        "span_start": 13,
        "span_end": 13 + len(LONG_LABEL),
        "span": LONG_LABEL,
        "definition": "Globex is a company in Springfield, employer of Alice Smith since 2015.",
    }
    short = {
        **long_span,
        "id": "e-short",
        "entity": "Q2",
        "sentence": "Globex hired Alice Smith in 2019.",
        "span_end": 24,
        "span": "Alice Smith",
        "definition": "Alice Smith was employed by Initech, by Umbrella and by Acme Corp.",
    }
    path = tmp_path / "examples.jsonl"
    write_jsonl(path, [long_span, short])
    result = chronoprobe.probe("span-ppl", path, model=model, seed=1)
    metrics = result.model()
    assert (metrics["predicted"], metrics["skipped"]) == (4, {REASON: 1})
    predicted = result.rows()
    assert {(p["id"], p["condition"]) for p in predicted} == {
        ("e-short", c) for c in ("original", "no-ent", "random-def", "definition")
    }
    assert metrics["overall"]["definition"]["n"] == 1
