from __future__ import annotations

import numpy as np
import pytest
import torch

from chronoprobe.metrics.ranking import filtered_ranks
from chronoprobe.tkg.data import split_kg, with_reciprocals
from chronoprobe.tkg.evaluate import KnownAnswers, entity_ranks, evaluate, rank_metrics, time_ranks
from chronoprobe.tkg.models import build_model


def test_filtered_ranks_by_hand():
    scores = torch.tensor(
        [
            [3.0, 5.0, 1.0, 4.0],  # gold 0; 1 is another known answer, 3 is not: rank 2
            [2.0, 2.0, 0.0, 9.0],  # gold 1; ties with 0 count against it; 3 filtered: rank 2
            [7.0, 1.0, 8.0, 6.0],  # gold 2; nothing else known: rank 1
        ]
    )
    rows, cols = torch.tensor([0, 0, 1, 1]), torch.tensor([1, 0, 3, 1])  # the gold itself too
    ranks = filtered_ranks(scores, torch.tensor([0, 1, 2]), rows, cols)
    assert ranks.tolist() == [2, 2, 1]
    metrics = rank_metrics(ranks)
    assert metrics["mrr"] == (0.5 + 0.5 + 1) / 3
    assert (metrics["hits@1"], metrics["hits@3"]) == (1 / 3, 1.0)
    assert metrics["hits@1_n"] == 3
    assert metrics["hits@1_ci95"] == pytest.approx([0.06149, 0.79230], abs=5e-5)  # Wilson 1/3
    assert metrics["hits@3_ci95"] == pytest.approx([0.43849, 1.0], abs=5e-5)  # Wilson 3/3


def test_known_answers_lookup_returns_every_answer_of_every_query():
    index = KnownAnswers(torch.tensor([5, 2, 5, 9, 5]), torch.tensor([10, 20, 30, 40, 50]))
    rows, answers = index.lookup(torch.tensor([5, 7, 2, 5]))
    pairs = sorted(zip(rows.tolist(), answers.tolist(), strict=True))
    assert pairs == [(0, 10), (0, 30), (0, 50), (2, 20), (3, 10), (3, 30), (3, 50)]


def _naive_entity_ranks(model, test, known, n_relations):
    """One query at a time, the filter as a Python set: what the batched code must equal."""
    facts = with_reciprocals(known, n_relations)
    answers: dict[tuple, set] = {}
    for s, r, o, t in facts.tolist():
        answers.setdefault((s, r, t), set()).add(o)
    ranks = []
    for s, r, o, t in with_reciprocals(test, n_relations).tolist():
        scores = model.object_scores(*(torch.tensor([x]) for x in (s, r, t)))[0].tolist()
        others = answers[(s, r, t)] - {o}
        ranks.append(
            1
            + sum(1 for e, v in enumerate(scores) if e not in others and e != o and v >= scores[o])
        )
    return ranks


def _naive_time_ranks(model, test, known):
    answers: dict[tuple, set] = {}
    for s, r, o, t in known.tolist():
        answers.setdefault((s, r, o), set()).add(t)
    ranks = []
    for s, r, o, t in test.tolist():
        scores = model.time_scores(*(torch.tensor([x]) for x in (s, r, o)))[0].tolist()
        others = answers[(s, r, o)] - {t}
        ranks.append(
            1
            + sum(1 for y, v in enumerate(scores) if y not in others and y != t and v >= scores[t])
        )
    return ranks


@torch.no_grad()
def test_batched_filtered_ranking_equals_a_per_query_loop(tiny_kg):
    data = split_kg(tiny_kg, valid_fraction=0.0, test_fraction=0.5, seed=1)
    n_relations = len(data.vocab.relations)
    config = {
        "model": "tntcomplex",
        "rank": 3,
        "n_entities": len(data.vocab.entities),
        "n_relations": 2 * n_relations,
        "n_times": data.vocab.n_times,
    }
    model = build_model(config, init_scale=1.0, seed=2)
    test = data.queries("test")
    got = entity_ranks(model, test, data.known, n_relations, batch_size=2)
    assert got.tolist() == _naive_entity_ranks(model, test, data.known, n_relations)
    years = time_ranks(model, test, data.known, batch_size=2)
    assert years.tolist() == _naive_time_ranks(model, test, data.known)
    metrics = evaluate(model, data, "test", batch_size=2)
    assert metrics["queries"] == 2 * len(test)
    assert metrics["time_accuracy"] == float(np.mean(np.array(years.tolist()) == 1))
    # every figure carries its n and a 95% interval around it
    assert metrics["n"] == 2 * len(test) and metrics["time_accuracy_n"] == len(test)
    assert metrics["object_mrr_n"] == metrics["subject_mrr_n"] == len(test)
    for name in ("mrr", "hits@1", "hits@10", "object_mrr", "time_accuracy", "time_mrr"):
        if metrics[f"{name}_ci95"] is None:  # every resample the same: it says why instead
            assert metrics[f"{name}_no_interval"].startswith("no spread"), name
            continue
        low, high = metrics[f"{name}_ci95"]
        assert 0.0 <= low <= metrics[name] <= high <= 1.0, name
    # the two queries of a fact are resampled together: clustered MRR interval by hand
    from chronoprobe.metrics.uncertainty import mean

    reciprocal = 1.0 / np.array(got.tolist(), dtype=float)
    facts = np.tile(np.arange(len(test)), 2)
    clustered = mean(reciprocal, facts)
    assert metrics["mrr_ci95"] == [clustered.low, clustered.high]


def test_an_empty_split_has_no_figure(tiny_kg):
    """valid_fraction 0: the valid split holds no fact, so it has no MRR (not an MRR of 0),
    like its object_mrr."""
    data = split_kg(tiny_kg, valid_fraction=0.0, test_fraction=0.5, seed=1)
    config = {
        "model": "tcomplex",
        "rank": 3,
        "n_entities": len(data.vocab.entities),
        "n_relations": 2 * len(data.vocab.relations),
        "n_times": data.vocab.n_times,
    }
    metrics = evaluate(build_model(config, init_scale=1.0, seed=2), data, "valid")
    assert metrics["n"] == metrics["queries"] == 0
    for name in ("mrr", "hits@1", "hits@3", "hits@10", "object_mrr", "time_accuracy"):
        assert metrics[name] is None and metrics[f"{name}_ci95"] is None, name


@torch.no_grad()
def test_a_known_answer_in_the_query_year_is_filtered(tiny_kg):
    """Obama held the presidency in 2012 through a fact that began in 2009: a query for the
    holder in 2012 must not count obama's object as a mistake when ranking another's."""
    data = split_kg(tiny_kg, valid_fraction=0.0, test_fraction=0.2, seed=0)
    vocab = data.vocab
    e = {name: i for i, name in enumerate(vocab.entities)}
    held = vocab.relations.index("held")
    known = {tuple(row) for row in data.known.tolist()}
    assert (e["obama"], held, e["president"], 2012 - vocab.first_year) in known
