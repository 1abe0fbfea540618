"""Reciting: Acc@K and Hit@K as the paper defines them, checked by hand and against the per-row
reference functions, and the per-statement Parquet."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pyarrow.parquet as pq
import pytest

from chronoprobe.metrics.ranking import acc_at_k, hit_at_k
from chronoprobe.train import checkpoint as ckpt
from chronoprobe.train.entity_vocab import EntityVocab
from chronoprobe.train.recite import Predictions, prediction_table, recite, summarize

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


def ranked(*keys: str) -> list[int]:
    return [VOCAB.keys.index(k) for k in keys]


@pytest.fixture
def case():
    rows = [
        row(0, SHARED, "object", "B", ["B", "C"]),  # two rows, one query, two answers
        row(1, SHARED, "object", "C", ["B", "C"]),
        row(2, "X played for B from [MASK] to 2001.", "start", "2000", ["2000"]),
        row(3, "X received D in [MASK].", "time", "2009", ["2009"], relation="P166"),
    ]
    shared = ranked("C", "A", "D", "2000", "2001", "2002", "B", "2003", "2004", "2005")
    top = np.array(
        [
            shared,
            shared,
            ranked("2001", "2002", "2000", "A", "B", "C", "D", "2003", "2004", "2005"),
            ranked("2001", "2002", "2000", "A", "B", "C", "D", "2003", "2004", "2005"),
        ]
    )
    ranks = np.array([7, 1, 3, 0])  # the last target (2009) has no token
    predictions = Predictions(top, np.full(top.shape, 0.1, dtype=np.float32), ranks)
    return rows, predictions


def test_acc_and_hit_on_a_hand_computed_case(case):
    rows, predictions = case
    table = prediction_table(SimpleNamespace(vocab=VOCAB), rows, predictions)
    assert table.column("acc_at_1").to_pylist() == [True, True, False, False]
    assert table.column("acc_at_5").to_pylist() == [True, True, True, False]
    assert table.column("hit_at_5").to_pylist() == [False, True, True, False]  # B is 7th
    assert table.column("hit_at_10").to_pylist() == [True, True, True, False]
    assert table.column("target_rank").to_pylist() == [7, 1, 3, None]
    metrics = summarize(table)
    # Acc@K over the 3 distinct queries, Hit@K over the 4 rows (answers)
    assert (metrics["statements"], metrics["queries"]) == (4, 3)
    assert metrics["acc@1"] == pytest.approx(1 / 3)
    assert metrics["acc@5"] == pytest.approx(2 / 3)
    assert metrics["hit@5"] == pytest.approx(2 / 4)
    assert metrics["hit@10"] == pytest.approx(3 / 4)
    multi = metrics["by_answers"]["multi"]
    assert (multi["queries"], multi["acc@1"], multi["hit@5"]) == (1, 1.0, 0.5)
    assert metrics["by_answers"]["single"]["acc@5"] == pytest.approx(0.5)
    assert metrics["by_relation"]["P166"] == {
        "statements": 1,
        "queries": 1,
        "acc@1": 0.0,
        "acc@5": 0.0,
        "hit@5": 0.0,
        "hit@10": 0.0,
    }
    assert set(metrics["by_slot"]) == {"object", "start", "time"}
    assert "by_template" not in metrics
    assert table.column("predictions").to_pylist()[0][:3] == ["C", "A", "D"]


def test_vectorised_metrics_match_the_reference_functions():
    rng = np.random.default_rng(0)
    keys = VOCAB.keys
    rows, tops = [], []
    for n in range(300):
        slot = "object" if n % 2 else "start"
        pool = list(VOCAB.entities) if slot == "object" else list(VOCAB.years)
        answers = sorted(rng.choice(pool, size=rng.integers(1, 3), replace=False).tolist())
        text = f"query {n // 3} {slot} [MASK]"  # three rows share a text...
        rows.append(row(n, text, slot, answers[0], answers))
        tops.append(rng.permutation(len(keys))[:10])
    for n in range(300):  # ...and so share their predictions, as a model's would
        tops[n] = tops[n - n % 3]
        rows[n]["answers"] = rows[n - n % 3]["answers"]
        rows[n]["slot"] = rows[n - n % 3]["slot"]
        rows[n]["target"] = rows[n]["answers"][n % len(rows[n]["answers"])]
    top = np.array(tops)
    table = prediction_table(
        SimpleNamespace(vocab=VOCAB),
        rows,
        Predictions(top, np.zeros(top.shape, dtype=np.float32), np.ones(300, dtype=np.int64)),
    )
    for n, r in enumerate(rows):
        names = [keys[i] for i in top[n]]
        for k in (1, 5):
            assert table.column(f"acc_at_{k}")[n].as_py() == bool(acc_at_k(names, r["answers"], k))
        for k in (5, 10):
            assert table.column(f"hit_at_{k}")[n].as_py() == bool(hit_at_k(names, r["target"], k))


def test_recite_writes_parquet_consistent_with_ranks(memorized, world_rows, tmp_path):
    loaded, _ = ckpt.load(memorized)
    out = tmp_path / "predictions.parquet"
    metrics, _ = recite(loaded, world_rows, batch_size=50, out=out)
    written = pq.read_table(out)
    assert written.num_rows == len(world_rows)
    assert written.column("id").to_pylist() == [r["id"] for r in world_rows]
    ranks = np.array(written.column("target_rank").to_pylist())
    assert np.array_equal(written.column("hit_at_10").to_numpy(), ranks <= 10)
    first = written.column("predictions").to_pylist()
    hit1 = [p[0] == r["target"] for p, r in zip(first, world_rows, strict=True)]
    assert np.array_equal(ranks == 1, hit1)
    probabilities = np.array(written.column("probabilities").to_pylist())
    assert (np.diff(probabilities, axis=1) <= 1e-6).all()  # best first
    assert metrics == summarize(written)
    again, _ = recite(loaded, world_rows, batch_size=7)  # batching does not change the answer
    assert again == metrics
