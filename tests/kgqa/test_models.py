"""Scoring against direct complex-number formulas, and answer-type masking."""

from __future__ import annotations

import pytest
import torch

from chronoprobe.kgqa.models import CronKGQA, EmbedKGQA, LMBaseline, mask_answer_type
from chronoprobe.tkg.models import TComplEx


def complex_of(real_form: torch.Tensor) -> torch.Tensor:
    re, im = real_form.double().chunk(2, -1)
    return torch.complex(re, im)


@pytest.fixture
def tables():
    generator = torch.Generator().manual_seed(3)
    entity = torch.randn(5, 6, generator=generator)  # 5 entities, rank 3
    time = torch.randn(4, 6, generator=generator)  # 4 years
    q = torch.randn(2, 6, generator=generator)  # two questions' relation-like vectors
    return entity, time, q


def test_entity_scores_are_tcomplex_with_the_question_as_relation(tables, stub):
    entity, time, q = tables
    model = CronKGQA(stub, entity, time, n_times=4)
    head, when = torch.tensor([1, 4]), torch.tensor([2, 0])
    scores = model.entity_scores(q, head, when)
    u, w, r = complex_of(entity), complex_of(time), complex_of(q)
    for b in range(2):
        for e in range(5):
            direct = (u[head[b]] * r[b] * u[e].conj() * w[when[b]]).sum().real
            assert scores[b, e].item() == pytest.approx(direct.item(), rel=1e-5, abs=1e-5)


def test_entity_scores_match_tcomplex_object_scores(tables, stub):
    entity, time, q = tables
    tkg = TComplEx(5, 2, 4, rank=3)
    with torch.no_grad():
        tkg.entity.copy_(entity)
        tkg.time.copy_(time)
        tkg.relation.copy_(q)
    model = CronKGQA(stub, entity, time, n_times=4)
    s, r, t = torch.tensor([0, 3]), torch.tensor([0, 1]), torch.tensor([1, 3])
    expected = tkg.object_scores(s, r, t)
    assert torch.allclose(model.entity_scores(q[r], s, t), expected, atol=1e-6)


def test_time_scores_are_tcomplex_over_years(tables, stub):
    entity, time, q = tables
    model = CronKGQA(stub, entity, time, n_times=4)
    head, tail = torch.tensor([0, 2]), torch.tensor([3, 1])
    scores = model.time_scores(q, head, tail)
    u, w, r = complex_of(entity), complex_of(time), complex_of(q)
    for b in range(2):
        for y in range(4):
            direct = (u[head[b]] * r[b] * u[tail[b]].conj() * w[y]).sum().real
            assert scores[b, y].item() == pytest.approx(direct.item(), rel=1e-5, abs=1e-5)


def test_missing_time_and_tail_start_as_the_complex_identity(tables, stub):
    entity, time, q = tables
    model = CronKGQA(stub, entity, time, n_times=4)
    none_entity, none_time = torch.tensor([5, 5]), torch.tensor([4, 4])
    head = torch.tensor([0, 2])
    u, r = complex_of(entity), complex_of(q)
    # No time: ComplEx's score Re<u_s, q, conj(u_e)>.
    scores = model.entity_scores(q, head, none_time)
    direct = torch.stack([(u[head[b]] * r[b] * u.conj()).sum(-1).real for b in range(2)])
    assert torch.allclose(scores.double(), direct, atol=1e-5)
    # No tail: Re<u_s, q, w_y>.
    years = model.time_scores(q, head, none_entity)
    w = complex_of(time)
    direct = torch.stack([(u[head[b]] * r[b] * w).sum(-1).real for b in range(2)])
    assert torch.allclose(years.double(), direct, atol=1e-5)


def test_embedkgqa_scores_every_candidate_with_complex_and_learns_years(tables, stub):
    entity, time, q = tables
    model = EmbedKGQA(stub, entity, time, n_times=4)
    assert isinstance(model.time, torch.nn.Parameter) and not torch.equal(model.time, time)
    model.eval()
    head = torch.tensor([1, 2])
    relation = model.to_relation(q := torch.randn(2, 4))
    scores = model.candidate_scores(q, head, head, head)
    u, r = complex_of(entity), complex_of(relation.detach())
    candidates = torch.cat([u, complex_of(model.time.detach())])
    direct = torch.stack([(u[head[b]] * r[b] * candidates.conj()).sum(-1).real for b in range(2)])
    assert scores.shape == (2, 9)
    assert torch.allclose(scores.detach().double(), direct, atol=1e-5)


def test_cronkgqa_keeps_pretrained_tables_frozen_and_learns_missing_years(tables, stub):
    entity, time, _ = tables
    temporal = CronKGQA(stub, entity, time, n_times=4)
    trainable = {name for name, p in temporal.named_parameters() if p.requires_grad}
    assert "entity" not in trainable and "time" not in trainable
    assert torch.equal(temporal.time, time)
    static = CronKGQA(stub, entity, None, n_times=4)
    assert "time" in {name for name, _ in static.named_parameters()}
    assert static.time.shape == (4, 6)


def test_mask_answer_type_keeps_only_the_questions_kind_of_candidate():
    scores = torch.arange(12, dtype=torch.float32).reshape(2, 6)
    masked = mask_answer_type(scores, torch.tensor([False, True]), n_entities=4)
    inf = float("-inf")
    assert masked.tolist() == [[0, 1, 2, 3, inf, inf], [inf, inf, inf, inf, 10, 11]]


def test_forward_masks_by_answer_type(tables, stub):
    entity, time, _ = tables

    class Fixed:
        hidden_size = 4
        model = stub.model

        def __call__(self, tokens):
            return tokens["q"]

    model = LMBaseline(Fixed(), entity, time, n_times=4)
    scores = model(
        {"q": torch.randn(3, 4)},
        *[torch.zeros(3, dtype=torch.long)] * 3,
        torch.tensor([True, False, True]),
    )
    assert torch.isinf(scores[0, :5]).all() and torch.isfinite(scores[0, 5:]).all()
    assert torch.isfinite(scores[1, :5]).all() and torch.isinf(scores[1, 5:]).all()
