"""Every model's batched scores against its formula written out with Python complex numbers."""

from __future__ import annotations

import math

import pytest
import torch

from chronoprobe.tkg.models import build_model
from chronoprobe.tkg.params import TKG_MODELS
from chronoprobe.tkg.regularizers import n3, temporal_smoothness

N_ENTITIES, N_RELATIONS, N_TIMES, RANK = 4, 3, 5, 2


def _c(row: torch.Tensor) -> list[complex]:
    """A real-form [re | im] row as complex numbers."""
    values = row.tolist()
    return [complex(values[k], values[k + RANK]) for k in range(RANK)]


def _tri(a, b, c) -> float:
    return sum(x * y * z for x, y, z in zip(a, b, c, strict=True)).real


def _quad(a, b, c, d) -> float:
    return sum(x * y * z * w for x, y, z, w in zip(a, b, c, d, strict=True)).real


def _conj(v):
    return [x.conjugate() for x in v]


def direct(model, s: int, r: int, o: int, t: int) -> float:
    u_s, u_o = _c(model.entity[s]), _c(model.entity[o])
    if model.name == "complex":
        return _tri(u_s, _c(model.relation[r]), _conj(u_o))
    w_t = _c(model.time[t])
    if model.name == "tcomplex":
        return _quad(u_s, _c(model.relation[r]), _conj(u_o), w_t)
    if model.name == "tntcomplex":
        timed = _quad(u_s, _c(model.relation[r]), _conj(u_o), w_t)
        return timed + _tri(u_s, _c(model.relation_static[r]), _conj(u_o))
    a, b, c = model.weights
    return (
        _tri(u_s, _c(model.relation_so[r]), _conj(u_o))
        + a * _tri(u_s, _c(model.relation_st[r]), _conj(w_t))
        + b * _tri(u_o, _c(model.relation_ot[r]), _conj(w_t))
        + c * _tri(u_s, u_o, _conj(w_t))
    )


def _model(name: str):
    config = {
        "model": name,
        "rank": RANK,
        "n_entities": N_ENTITIES,
        "n_relations": N_RELATIONS,
        "n_times": N_TIMES,
    }
    if name == "timeplex":
        config["weights"] = [0.5, 2.0, 1.5]  # unequal, so a swapped term would show
    model = build_model(config, init_scale=1.0, seed=7).double()
    return model


@pytest.mark.parametrize("name", TKG_MODELS.names())
def test_scores_equal_the_direct_formula(name):
    model = _model(name)
    cases = [(s, r, o, t) for s in range(4) for r in range(3) for o in range(4) for t in (0, 4)]
    s, r, o, t = (torch.tensor(column) for column in zip(*cases, strict=True))
    expected = torch.tensor([direct(model, *case) for case in cases], dtype=torch.float64)
    with torch.no_grad():
        torch.testing.assert_close(model.score(s, r, o, t), expected)
        every_object = model.object_scores(s, r, t)
        for e in range(N_ENTITIES):
            want = torch.tensor([direct(model, a, b, e, d) for a, b, _, d in cases])
            torch.testing.assert_close(every_object[:, e], want.double())
        if model.has_time:
            every_time = model.time_scores(s, r, o)
            for year in range(N_TIMES):
                want = torch.tensor([direct(model, a, b, c, year) for a, b, c, _ in cases])
                torch.testing.assert_close(every_time[:, year], want.double())


def test_complex_cannot_predict_times():
    model = _model("complex")
    with pytest.raises(ValueError, match="no time embeddings"):
        model.time_scores(torch.tensor([0]), torch.tensor([0]), torch.tensor([1]))


def test_tcomplex_penalties_equal_their_definitions():
    model = _model("tcomplex")
    s, r, o, t = (
        torch.tensor([0, 1]),
        torch.tensor([2, 0]),
        torch.tensor([3, 3]),
        torch.tensor([1, 4]),
    )
    expected = 0.0
    for i in range(2):
        rt = [x * y for x, y in zip(_c(model.relation[r[i]]), _c(model.time[t[i]]), strict=True)]
        for vector in (_c(model.entity[s[i]]), rt, _c(model.entity[o[i]])):
            expected += sum(abs(x) ** 3 for x in vector)
    with torch.no_grad():
        assert n3(model.factors(s, r, o, t), 0.1).item() == pytest.approx(0.1 * expected / 2)
        steps = [
            sum(
                abs(a - b) ** 3
                for a, b in zip(_c(model.time[k + 1]), _c(model.time[k]), strict=True)
            )
            for k in range(N_TIMES - 1)
        ]
        smooth = temporal_smoothness(model.time, 0.3).item()
        assert smooth == pytest.approx(0.3 * sum(steps) / (N_TIMES - 1))


def test_unknown_model_names_list_the_known_ones():
    with pytest.raises(ValueError, match="unknown TKG model 'transe'; known: complex, tcomplex"):
        build_model({"model": "transe", "rank": 2, "n_entities": 1, "n_relations": 1, "n_times": 1})


def test_initialisation_is_seeded_and_scaled():
    a = build_model(_model("tcomplex").config(), init_scale=1e-2, seed=3)
    b = build_model(_model("tcomplex").config(), init_scale=1e-2, seed=3)
    assert torch.equal(a.entity, b.entity) and torch.equal(a.time, b.time)
    assert a.entity.abs().max().item() < 1e-2 * 6 and not math.isclose(a.entity.std().item(), 0)
