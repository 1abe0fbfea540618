"""Reciting through the recite view: Acc@K and Hit@K as the LAMA-TK paper defines them, checked
by hand, against the per-row reference functions, and on a trained model through the symbolic
adapter (batching does not change an answer)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from chronoprobe.datasets.lamatk_vocab import EntityVocab
from chronoprobe.metrics.ranking import acc_at_k, hit_at_k
from chronoprobe.models import load_model
from chronoprobe.models.requests import Ranking
from chronoprobe.probes.recite import ReciteParams, predict_recite, recite_metrics

VOCAB = EntityVocab(
    ("A", "B", "C", "D"), {e: e for e in "ABCD"}, tuple(str(y) for y in range(2000, 2008))
)
SHARED = "X played for [MASK] from 2000 to 2001."


def row(n, text, slot, target, answers, relation="P54"):
    return {
        "id": f"r{n}",
        "text": text,
        "slot": slot,
        "target": target,
        "answers": answers,
        "multi_answer": len(answers) > 1,
        "subject": "X",
        "relation": relation,
        "object": target if slot == "object" else "B",
        "start": "2000",
        "end": "2001",
    }


class Ranked:
    """A stand-in symbolic model that answers each request with a fixed ranking."""

    name = "fixed"

    def __init__(self, tops: list[list[str]], ranks: list[int | None]):
        self.tops, self.ranks = tops, ranks

    def symbol(self, slot, value):
        return VOCAB.target(slot, value)

    def token_text(self, index):
        return VOCAB.keys[index]

    def rank(self, requests, top_k=10, progress=None):
        assert len(requests) == len(self.tops)
        return [
            Ranking(
                [VOCAB.keys.index(k) for k in top],
                [math.log(0.1)] * len(top),
                [] if rank is None else [rank],
            )
            for top, rank in zip(self.tops, self.ranks, strict=True)
        ]


def recited(model, rows):
    predictions = predict_recite(model, rows, ReciteParams(model=["m"]), None)
    return predictions, recite_metrics(predictions)


def test_acc_and_hit_on_a_hand_computed_case():
    rows = [
        row(0, SHARED, "object", "B", ["B", "C"]),  # two rows, one query, two answers
        row(1, SHARED, "object", "C", ["B", "C"]),
        row(2, "X played for B from [MASK] to 2001.", "start", "2000", ["2000"]),
        row(3, "X received D in [MASK].", "time", "2009", ["2009"], relation="P166"),
    ]
    shared = ["C", "A", "D", "2000", "2001", "2002", "B", "2003", "2004", "2005"]
    years = ["2001", "2002", "2000", "A", "B", "C", "D", "2003", "2004", "2005"]
    model = Ranked([shared, shared, years, years], [7, 1, 3, None])  # 2009 has no symbol
    predictions, metrics = recited(model, rows)
    column = lambda name: [p[name] for p in predictions]  # noqa: E731
    assert column("acc_at_1") == [True, True, False, False]
    assert column("acc_at_5") == [True, True, True, False]
    assert column("hit_at_5") == [False, True, True, False]  # B is 7th
    assert column("hit_at_10") == [True, True, True, False]
    assert column("target_rank") == [7, 1, 3, None]
    assert predictions[0]["predictions"][:3] == ["C", "A", "D"]
    assert predictions[0]["probabilities"][0] == pytest.approx(0.1)
    # Acc@K over the 3 distinct queries, Hit@K over the 4 rows (answers)
    assert (metrics["statements"], metrics["queries"]) == (4, 3)
    assert metrics["acc@1"] == pytest.approx(1 / 3)
    assert metrics["acc@5"] == pytest.approx(2 / 3)
    assert metrics["hit@5"] == pytest.approx(2 / 4)
    assert metrics["hit@10"] == pytest.approx(3 / 4)
    multi = metrics["by_answers"]["multi"]
    assert (multi["queries"], multi["acc@1"], multi["hit@5"]) == (1, 1.0, 0.5)
    assert metrics["by_answers"]["single"]["acc@5"] == pytest.approx(0.5)
    none_of_one = [0.0, pytest.approx(0.79345, abs=5e-5)]  # Wilson, 0 of 1
    assert metrics["by_relation"]["P166"] == {
        "n": 1,
        "statements": 1,
        "queries": 1,
        **{m: 0.0 for m in ("acc@1", "acc@5", "hit@5", "hit@10")},
        **{f"{m}_ci95": none_of_one for m in ("acc@1", "acc@5", "hit@5", "hit@10")},
    }
    # Acc@K counts queries, Hit@K statements: each interval is over its own n
    assert (metrics["acc@1_n"], "hit@5_n" in metrics) == (3, False)
    assert metrics["acc@1_ci95"] == pytest.approx([0.06149, 0.79230], abs=5e-5)  # 1 of 3
    assert set(metrics["by_slot"]) == {"object", "start", "time"}
    assert "by_template" not in metrics


def test_metrics_match_the_reference_functions_on_random_rankings():
    rng = np.random.default_rng(0)
    keys = VOCAB.keys
    rows, tops = [], []
    for n in range(300):
        slot = "object" if n % 2 else "start"
        pool = list(VOCAB.entities) if slot == "object" else list(VOCAB.years)
        answers = sorted(rng.choice(pool, size=rng.integers(1, 3), replace=False).tolist())
        rows.append(row(n, f"query {n} {slot} [MASK]", slot, answers[0], answers))
        tops.append([keys[i] for i in rng.permutation(len(keys))[:10]])
    predictions, metrics = recited(Ranked(tops, [1] * 300), rows)
    for p, r, top in zip(predictions, rows, tops, strict=True):
        for k in (1, 5):
            assert p[f"acc_at_{k}"] == bool(acc_at_k(top, r["answers"], k))
        for k in (5, 10):
            assert p[f"hit_at_{k}"] == bool(hit_at_k(top, r["target"], k))
    assert metrics["acc@5"] == pytest.approx(
        np.mean([acc_at_k(t, r["answers"], 5) for t, r in zip(tops, rows, strict=True)])
    )


def test_a_word_level_model_is_refused_with_the_views_that_fit():
    with pytest.raises(ValueError, match=r"no entity and year symbols.*single-token"):
        predict_recite(SimpleNamespace(name="gpt"), [], ReciteParams(model=["m"]), None)


def test_the_symbolic_adapter_recites_a_trained_model(memorized, world_rows):
    model = load_model(str(memorized), device="cpu", batch_size=50)
    assert model.family == "symbolic" and len(model.symbols) == model.vocabulary_size()
    predictions, metrics = recited(model, world_rows)
    assert metrics["statements"] == len(world_rows) == len(predictions)
    assert metrics["acc@1"] >= 0.95  # it was trained to memorise these
    ranks = np.array([p["target_rank"] or 0 for p in predictions])
    hit1 = [p["predictions"][0] == p["target"] for p in predictions]
    assert np.array_equal(ranks == 1, hit1)
    assert all(np.diff(p["probabilities"]).max() <= 1e-6 for p in predictions)  # best first
    model.batch_size = 7  # batching does not change an answer
    assert recited(model, world_rows)[1] == metrics
