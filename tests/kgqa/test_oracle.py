"""The oracle-relation ceiling ranks simple questions exactly as the TKG evaluator ranks their
queries, on a hand-made KG: filtered ranks, and unfiltered ones where a query has one answer."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from chronoprobe.datasets.cronq import generate_questions
from chronoprobe.kg import Fact, TemporalKG
from chronoprobe.kgqa.data import AnswerVocab, encode
from chronoprobe.kgqa.oracle import MISS, load_tkg, oracle_ranks
from chronoprobe.time import TimePoint
from chronoprobe.tkg.data import split_kg
from chronoprobe.tkg.evaluate import entity_ranks, time_ranks
from chronoprobe.tkg.params import TKGTrainParams
from chronoprobe.tkg.train import train

SPELLS = [  # (subject, relation, object, first year, last year)
    ("P1", "P39", "O1", 2000, 2003),
    ("P2", "P39", "O1", 2002, 2005),  # O1 has two holders in 2002 and 2003
    ("P3", "P39", "O2", 2001, 2004),
    ("P5", "P39", "O2", 2004, 2005),
    ("P1", "P54", "T1", 2000, 2001),
    ("P4", "P54", "T1", 2001, 2003),
    ("P4", "P54", "T2", 2003, 2005),  # P4 plays for two teams in 2003
    ("P5", "P54", "T2", 2000, 2002),
]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    facts = [
        Fact(s, r, o, TimePoint.parse(str(a)), TimePoint.parse(str(b))) for s, r, o, a, b in SPELLS
    ]
    kg = TemporalKG.from_records(facts, [])
    data = split_kg(kg, valid_fraction=0.0, test_fraction=0.1, seed=0)
    out = tmp_path_factory.mktemp("oracle") / "tcomplex"
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    config = TKGTrainParams(arch="tcomplex", rank=4, epochs=3, batch_size=8, device="cpu")
    train(data, config, out, progress=False)
    torch.set_num_threads(threads)
    vocab = AnswerVocab(data.vocab.entities, tuple(data.vocab.years))
    rows, _ = generate_questions(kg, exhaustive=True)
    return data, vocab, out, rows


def tkg_ranks(model, data, quads: list[tuple[int, int, int, int]], asks: str, known) -> list[int]:
    """The TKG evaluator's rank of each quadruple's asked slot: its object, its subject (through
    the reciprocal relation) or its year."""
    test = np.array(quads, dtype=np.int64)
    n_relations = len(data.vocab.relations)
    if asks == "time":
        return time_ranks(model, test, known).tolist()
    ranks = entity_ranks(model, test, known, n_relations).tolist()
    return ranks[: len(quads)] if asks == "object" else ranks[len(quads) :]


def test_oracle_ranks_are_the_tkg_evaluators_ranks(tiny):
    data, vocab, out, rows = tiny
    model, relations = load_tkg(out, vocab)
    questions = encode(rows, vocab, "template")
    ranked = oracle_ranks(model, relations, questions)
    index, ranks = ranked.index, ranked.ranks
    assert not ranked.unscored
    entity = {e: i for i, e in enumerate(vocab.entities)}
    first = vocab.years[0]
    seen = {"object": 0, "subject": 0, "time": 0, "several answers": 0}
    for i, rank in zip(index.tolist(), ranks.tolist(), strict=True):
        row = rows[i]
        relation = relations.index(row["relations"][0])
        slots = row["annotation"]
        if row["answer_type"] == "time":
            s, o = entity[slots["head"]], entity[slots["tail"]]
            quads = [(s, relation, o, int(year) - first) for year in row["answers"]]
            asks = "time"
        elif "head" in slots:  # (s, r, ?, t)
            s, t = entity[slots["head"]], int(slots["time"]) - first
            quads = [(s, relation, entity[a], t) for a in row["answers"]]
            asks = "object"
        else:  # (?, r, o, t): the TKG's subject query, through the reciprocal relation
            o, t = entity[slots["tail"]], int(slots["time"]) - first
            quads = [(entity[a], relation, o, t) for a in row["answers"]]
            asks = "subject"
        seen[asks] += 1
        filtered = tkg_ranks(model, data, quads, asks, data.known)
        assert rank == min(filtered), (row["question"], rank, filtered)
        if len(quads) == 1:  # one answer: nothing to filter, the raw rank
            alone = tkg_ranks(model, data, quads, asks, np.array(quads, dtype=np.int64))
            assert rank == alone[0]
        else:
            seen["several answers"] += 1
    assert all(seen.values()), seen
    assert len(set(ranks.tolist())) > 1  # not a degenerate all-first ranking


def test_metrics_and_questions_the_oracle_cannot_score(tiny):
    _, vocab, out, rows = tiny
    model, relations = load_tkg(out, vocab)
    simple = [r for r in rows if r["type"] in ("simple_entity", "simple_time")]
    bare = {**simple[0], "annotation": {}}  # which slot does its entity fill? unknown
    questions = encode([bare, *simple], vocab, "template")
    ranked = oracle_ranks(model, relations, questions)
    ranks = ranked.ranks
    assert ranks[0] == MISS and ranked.unscored == {"no annotation of the head's slot": 1}
    metrics = ranked.metrics(questions)
    assert metrics["questions"] == len(simple) + 1
    assert metrics["hits@10"] == pytest.approx(float((ranks <= 10).mean()))
    assert set(metrics["types"]) == {"simple_entity", "simple_time"}
    assert metrics["unscored"] == {"no annotation of the head's slot": 1}
    with pytest.raises(ValueError, match="not the QA model's candidates"):
        load_tkg(out, AnswerVocab(vocab.entities[1:], vocab.years))
