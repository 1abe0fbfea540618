"""Metric functions on hand-computed cases."""

from __future__ import annotations

import math

import pytest

from chronoprobe.metrics.perplexity import entity_averaged_perplexity
from chronoprobe.metrics.ranking import (
    acc_at_k,
    best_rank,
    hit_at_k,
    mean_reciprocal_rank,
    precision_at_k,
)
from chronoprobe.metrics.text import exact_match, normalize, rouge_l, token_f1


def test_acc_and_hit_differ_on_multi_answer_queries():
    # "John Bardeen received Nobel Prize in Physics in [MASK]." -> 1956, 1972 (the paper's case)
    ranked = ["1956", "1957", "1955", "1960", "1950", "1970", "1971", "1973", "1980", "1990"]
    answers = ["1956", "1972"]
    assert acc_at_k(ranked, answers, 1) == 1.0
    assert hit_at_k(ranked, "1956", 10) == 1.0
    assert hit_at_k(ranked, "1972", 10) == 0.0  # the other correct answer is not recalled
    assert acc_at_k(["x", "y"], answers, 5) == 0.0


def test_ranks_precision_and_mrr():
    assert best_rank(["a", "b", "c"], ["c", "b"]) == 2
    assert best_rank(["a"], ["z"]) is None
    ranks = [1, 3, None, 10]
    assert precision_at_k(ranks, 1) == 0.25
    assert precision_at_k(ranks, 10) == 0.75
    assert mean_reciprocal_rank(ranks) == pytest.approx((1 + 1 / 3 + 0 + 0.1) / 4)
    assert precision_at_k([], 1) == 0.0 and mean_reciprocal_rank([]) == 0.0


def test_text_metrics_take_the_best_answer():
    assert normalize("The  Chicago Bulls!") == "chicago bulls"
    assert exact_match("the Chicago Bulls", ["Chicago Bulls", "Bulls"]) == 1.0
    assert exact_match("Chicago", ["Chicago Bulls"]) == 0.0
    # prediction "chicago" vs "chicago bulls": P=1, R=1/2 -> F1 = 2/3
    assert token_f1("Chicago", ["Chicago Bulls", "Boston"]) == pytest.approx(2 / 3)
    assert token_f1("", [""]) == 1.0
    # LCS("bulls of chicago", "chicago bulls") = 1 token -> P=1/3, R=1/2 -> F=0.4
    assert rouge_l("Bulls of Chicago", ["Chicago Bulls"]) == pytest.approx(0.4)
    assert rouge_l("Manchester United F.C.", ["Manchester United FC"]) == 1.0  # "F.C." -> "fc"


def test_entity_averaging_by_hand():
    # Entity A: two examples with NLL/token 1.0 and 3.0 -> mean 2.0; entity B: one with 0.5.
    examples = [("A", -2.0, 2), ("A", -9.0, 3), ("B", -0.5, 1)]
    assert entity_averaged_perplexity(examples) == pytest.approx(math.exp((2.0 + 0.5) / 2))
    # Per-example averaging would give exp((1 + 3 + 0.5) / 3): a different number.
    assert entity_averaged_perplexity(examples) != pytest.approx(math.exp(4.5 / 3))
    assert math.isnan(entity_averaged_perplexity([]))
    with pytest.raises(ValueError, match="no span tokens"):
        entity_averaged_perplexity([("A", -1.0, 0)])
