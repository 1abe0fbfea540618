"""Gold ranks and the Tables 5-6 breakdown on hand-worked numbers."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from chronoprobe.kgqa.data import AnswerVocab, encode
from chronoprobe.kgqa.evaluate import breakdown, evaluate
from chronoprobe.kgqa.models import QAModel
from chronoprobe.metrics.ranking import gold_ranks


def test_gold_rank_is_the_best_answer_with_other_answers_set_aside_and_ties_against():
    inf = float("-inf")
    scores = torch.tensor(
        [
            [0.1, 0.9, 0.5, 0.7, inf],  # answers {2, 3}: best 0.7, only 0.9 above -> rank 2
            [0.3, 0.3, 0.2, 0.1, inf],  # answer {1}: a tie with 0 counts against -> rank 2
            [0.9, 0.8, 0.7, 0.6, inf],  # answers {0, 1}: rank 1
            [0.9, 0.8, 0.7, 0.6, inf],  # no known answer: never a hit
        ]
    )
    gold = torch.zeros(4, 5, dtype=torch.bool)
    gold[0, [2, 3]] = True
    gold[1, 1] = True
    gold[2, [0, 1]] = True
    ranks = gold_ranks(scores, gold)
    assert ranks[:3].tolist() == [2, 2, 1]
    assert ranks[3] > 10**9


def test_breakdown_groups_as_the_paper():
    ranks = np.array([1, 3, 1, 20, 2, 1])
    types = [
        "simple_entity",
        "simple_time",
        "before_after",
        "first_last",
        "time_join",
        "first_last",
    ]
    answers = ["entity", "time", "entity", "time", "entity", "entity"]
    metrics = breakdown(ranks, types, answers)
    assert metrics["questions"] == 6
    assert metrics["hits@1"] == pytest.approx(3 / 6)
    assert metrics["hits@10"] == pytest.approx(5 / 6)
    assert metrics["mrr"] == pytest.approx((1 + 1 / 3 + 1 + 1 / 20 + 1 / 2 + 1) / 6)
    simple = {k: metrics["simple"][k] for k in ("questions", "n", "hits@1", "hits@10", "mrr")}
    assert simple == pytest.approx(
        {"questions": 2, "n": 2, "hits@1": 0.5, "hits@10": 1.0, "mrr": (1 + 1 / 3) / 2}
    )
    # 95% intervals: Wilson for Hits@k (1 of 2, 2 of 2), the bootstrap for MRR
    assert metrics["simple"]["hits@1_ci95"] == pytest.approx([0.09453, 0.90547], abs=5e-5)
    assert metrics["simple"]["hits@10_ci95"] == pytest.approx([0.34238, 1.0], abs=5e-5)
    assert metrics["simple"]["mrr_ci95"] == [1 / 3, 1.0]  # resamples of {1/3, 1}
    assert "hits@1_n" not in metrics["simple"]  # the group's n is theirs
    assert metrics["complex"]["hits@1"] == pytest.approx(2 / 4)
    assert metrics["types"]["first_last"]["hits@10"] == pytest.approx(0.5)
    time = metrics["answer_types"]["time"]
    assert {k: time[k] for k in ("questions", "hits@1", "hits@10", "mrr")} == pytest.approx(
        {"questions": 2, "hits@1": 0.0, "hits@10": 0.5, "mrr": (1 / 3 + 1 / 20) / 2}
    )
    assert metrics["answer_types"]["entity"]["hits@1"] == pytest.approx(3 / 4)


def test_breakdown_leaves_out_types_without_questions():
    metrics = breakdown(np.array([1]), ["simple_entity"], ["entity"])
    assert list(metrics["types"]) == ["simple_entity"]
    # no complex question: no figure (None), not a Hits@1 of 0
    assert metrics["complex"] == {
        "questions": 0,
        "n": 0,
        **{k: None for k in ("mrr", "hits@1", "hits@10")},
        **{f"{k}_ci95": None for k in ("mrr", "hits@1", "hits@10")},
    }


def test_breakdown_of_no_question_has_no_figure():
    metrics = breakdown(np.zeros(0, np.int64), [], [])
    assert metrics["n"] == 0
    assert [metrics[k] for k in ("mrr", "hits@1", "hits@10")] == [None, None, None]
    assert metrics["simple"]["hits@1"] is None and metrics["types"] == {}


class Lookup:
    """An encoder whose "question" is the index of a scripted score row."""

    hidden_size = 1
    model = torch.nn.Module()

    def tokenize(self, texts, device):
        return {"row": torch.tensor([int(t) for t in texts], device=device)}

    def __call__(self, tokens):
        return tokens["row"]


class Scripted(QAModel):
    name = "scripted"
    SCORES = torch.tensor(
        [
            [0.1, 0.5, 0.2, 0.9, 0.0, 0.0],  # entity question, gold E2: a year scores above it
            [0.9, 0.8, 0.0, 0.1, 0.2, 0.7],  # time question, gold 2002: two entities above it
        ]
    )

    def candidate_scores(self, q, head, tail, time):
        return self.SCORES[q]


def test_one_softmax_over_entities_and_years_unless_the_answer_type_is_given():
    vocab = AnswerVocab(("E1", "E2", "E3"), (2000, 2001, 2002))
    base = {"type": "simple_entity", "entities": [], "times": []}
    rows = [
        {**base, "id": "a", "question": "0", "answer_type": "entity", "answers": ["E2"]},
        {**base, "id": "b", "question": "1", "answer_type": "time", "answers": [2002]},
    ]
    model = Scripted(Lookup(), torch.zeros(3, 2), torch.zeros(3, 2), n_times=3)
    questions = encode(rows, vocab)
    paper, table = evaluate(model, questions, vocab)
    assert table.column("rank").to_pylist() == [2, 3]
    assert table.column("predictions").to_pylist()[0][:2] == ["2000", "E2"]
    assert table.column("answer_type_given").to_pylist() == [False, False]
    given, table = evaluate(model, questions, vocab, answer_type_given=True)
    assert table.column("rank").to_pylist() == [1, 1]
    assert table.column("predictions").to_pylist() == [["E2", "E3", "E1"], ["2002", "2001", "2000"]]
    assert given["hits@1"] == 1.0 and paper["hits@1"] == 0.0
