"""ComplEx, TComplEx, TNTComplEx and TimePlex: embedding tables plus a scoring function each.

Complex vectors are stored in real form, real parts then imaginary parts ([re | im], width 2D),
the layout CronKGQA reads. Every model's score is linear in the object (and in the time), so a
model only says how to build a query vector; scoring all entities is then one matmul against the
entity table, and ranking, training and filtering are written once, in the base class and in
:mod:`chronoprobe.tkg.evaluate`. In real form Re(<x, conj(o)>) is the plain dot product x . o,
and Re(<x, t>) is conj(x) . t.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import ClassVar

import torch
from torch import Tensor, nn

from chronoprobe.errors import UserError


def cmul(a: Tensor, b: Tensor) -> Tensor:
    """Elementwise complex product of real-form vectors."""
    ar, ai = a.chunk(2, -1)
    br, bi = b.chunk(2, -1)
    return torch.cat([ar * br - ai * bi, ar * bi + ai * br], -1)


def conj(a: Tensor) -> Tensor:
    re, im = a.chunk(2, -1)
    return torch.cat([re, -im], -1)


def modulus(a: Tensor) -> Tensor:
    re, im = a.chunk(2, -1)
    return torch.sqrt(re * re + im * im)


class TKGModel(nn.Module, ABC):
    """Entity, relation (reciprocals included) and time tables, and the queries scored on them."""

    name: ClassVar[str]
    has_time: ClassVar[bool] = True
    # the tables besides the entities', made in this order (the seeded draws follow it): a
    # table named "time" has a row per year, any other a row per relation
    tables: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self,
        n_entities: int,
        n_relations: int,
        n_times: int,
        rank: int,
        init_scale: float = 1e-2,
        seed: int = 0,
    ) -> None:
        super().__init__()
        self.sizes = {"n_entities": n_entities, "n_relations": n_relations, "n_times": n_times}
        self.rank = rank
        self._generator = torch.Generator().manual_seed(seed)
        self._init_scale = init_scale
        self.entity = self._table(n_entities)
        for table in self.tables:
            setattr(self, table, self._table(n_times if table == "time" else n_relations))

    def _table(self, rows: int) -> nn.Parameter:
        """A table initialised as tkbc does: standard normal times a small scale."""
        weights = torch.randn(rows, 2 * self.rank, generator=self._generator)
        return nn.Parameter(weights * self._init_scale)

    @abstractmethod
    def object_query(self, s: Tensor, r: Tensor, t: Tensor) -> Tensor:
        """(B, 2D) vectors whose dot product with an entity's row is its score as object."""

    def object_offset(self, s: Tensor, r: Tensor, t: Tensor) -> Tensor | None:
        """The part of the score that does not depend on the object (None when there is none)."""
        return None

    def time_query(self, s: Tensor, r: Tensor, o: Tensor) -> Tensor:
        """(B, 2D) vectors whose dot product with a time's row is the score at that time."""
        raise UserError(f"{self.name} has no time embeddings; it cannot predict times")

    def time_offset(self, s: Tensor, r: Tensor, o: Tensor) -> Tensor | None:
        return None

    @abstractmethod
    def factors(self, s: Tensor, r: Tensor, o: Tensor, t: Tensor) -> tuple[Tensor, ...]:
        """Moduli of the factors of each quadruple's score, for the N3 regulariser."""

    def time_table(self) -> Tensor | None:
        """Time embeddings in year order, for the temporal smoothness regulariser."""
        return getattr(self, "time", None)

    def object_scores(self, s: Tensor, r: Tensor, t: Tensor) -> Tensor:
        """(B, n_entities): the score of every entity as the object of (s, r, ?, t)."""
        scores = self.object_query(s, r, t) @ self.entity.t()
        offset = self.object_offset(s, r, t)
        return scores if offset is None else scores + offset[:, None]

    def time_scores(self, s: Tensor, r: Tensor, o: Tensor) -> Tensor:
        """(B, n_times): the score of (s, r, o) at every year."""
        scores = self.time_query(s, r, o) @ self.time.t()
        offset = self.time_offset(s, r, o)
        return scores if offset is None else scores + offset[:, None]

    def score(self, s: Tensor, r: Tensor, o: Tensor, t: Tensor) -> Tensor:
        """(B,) scores of whole quadruples."""
        scores = (self.object_query(s, r, t) * self.entity[o]).sum(-1)
        offset = self.object_offset(s, r, t)
        return scores if offset is None else scores + offset

    def config(self) -> dict:
        """What :func:`build_model` needs to rebuild this model's shape."""
        return {"model": self.name, "rank": self.rank, **self.sizes}


class ComplEx(TKGModel):
    """Re(<u_s, v_r, conj(u_o)>): no time at all, the baseline the temporal models must beat."""

    name = "complex"
    has_time = False
    tables = ("relation",)

    def object_query(self, s: Tensor, r: Tensor, t: Tensor) -> Tensor:
        return cmul(self.entity[s], self.relation[r])

    def factors(self, s, r, o, t):
        return modulus(self.entity[s]), modulus(self.relation[r]), modulus(self.entity[o])


class TComplEx(ComplEx):
    """Re(<u_s, v_r, conj(u_o), w_t>) (Lacroix et al., 2020)."""

    name = "tcomplex"
    has_time = True
    tables = ("relation", "time")

    def object_query(self, s: Tensor, r: Tensor, t: Tensor) -> Tensor:
        return cmul(self.entity[s], cmul(self.relation[r], self.time[t]))

    def time_query(self, s: Tensor, r: Tensor, o: Tensor) -> Tensor:
        return conj(cmul(cmul(self.entity[s], self.relation[r]), conj(self.entity[o])))

    def factors(self, s, r, o, t):
        rt = cmul(self.relation[r], self.time[t])
        return modulus(self.entity[s]), modulus(rt), modulus(self.entity[o])


class TNTComplEx(TComplEx):
    """Re(<u_s, v_r^T * w_t + v_r, conj(u_o)>): a time-sensitive plus a time-free relation."""

    name = "tntcomplex"
    tables = ("relation", "time", "relation_static")

    def object_query(self, s: Tensor, r: Tensor, t: Tensor) -> Tensor:
        relation = cmul(self.relation[r], self.time[t]) + self.relation_static[r]
        return cmul(self.entity[s], relation)

    def time_offset(self, s: Tensor, r: Tensor, o: Tensor) -> Tensor:
        return (cmul(self.entity[s], self.relation_static[r]) * self.entity[o]).sum(-1)

    def factors(self, s, r, o, t):
        # As tkbc: the entity terms weigh 2^(1/3) since they occur in both parts of the score.
        both = math.pow(2, 1 / 3)
        rt = cmul(self.relation[r], self.time[t])
        return (
            both * modulus(self.entity[s]),
            modulus(rt),
            modulus(self.relation_static[r]),
            both * modulus(self.entity[o]),
        )


class TimePlex(TKGModel):
    """<u_s, v_r^SO, conj(u_o)> + a <u_s, v_r^ST, conj(u_t)> + b <u_o, v_r^OT, conj(u_t)>
    + c <u_s, u_o, conj(u_t)> (real parts; Jain et al., 2020, the base score without the
    recurrence features)."""

    name = "timeplex"
    tables = ("relation_so", "relation_st", "relation_ot", "time")

    def __init__(self, *sizes: int, weights: Sequence[float] = (1.0, 1.0, 1.0), **kw) -> None:
        super().__init__(*sizes, **kw)
        self.weights = tuple(float(w) for w in weights)

    def object_query(self, s: Tensor, r: Tensor, t: Tensor) -> Tensor:
        # Re(<x, conj(o)>) = x . o but Re(<o, y>) = conj(y) . o: the time terms enter conjugated.
        _, b, c = self.weights
        u_s, conj_t = self.entity[s], conj(self.time[t])
        with_time = b * cmul(self.relation_ot[r], conj_t) + c * cmul(u_s, conj_t)
        return cmul(u_s, self.relation_so[r]) + conj(with_time)

    def object_offset(self, s: Tensor, r: Tensor, t: Tensor) -> Tensor:
        a = self.weights[0]
        return a * (cmul(self.entity[s], self.relation_st[r]) * self.time[t]).sum(-1)

    def time_query(self, s: Tensor, r: Tensor, o: Tensor) -> Tensor:
        a, b, c = self.weights
        u_s, u_o = self.entity[s], self.entity[o]
        return (
            a * cmul(u_s, self.relation_st[r])
            + b * cmul(u_o, self.relation_ot[r])
            + c * cmul(u_s, u_o)
        )

    def time_offset(self, s: Tensor, r: Tensor, o: Tensor) -> Tensor:
        return (cmul(self.entity[s], self.relation_so[r]) * self.entity[o]).sum(-1)

    def factors(self, s, r, o, t):
        tables = (self.relation_so, self.relation_st, self.relation_ot)
        return (
            modulus(self.entity[s]),
            modulus(self.entity[o]),
            modulus(self.time[t]),
            *(modulus(table[r]) for table in tables),
        )

    def config(self) -> dict:
        return {**super().config(), "weights": list(self.weights)}


def build_model(config: dict, init_scale: float = 1e-2, seed: int = 0) -> TKGModel:
    """A model from :meth:`TKGModel.config`, by its name in ``TKG_MODELS``."""
    from chronoprobe.tkg.params import TKG_MODELS

    options = dict(config)
    name = options.pop("model")
    try:
        cls = TKG_MODELS.get(name)
    except KeyError as err:
        raise UserError(err.args[0]) from None
    return cls(**options, init_scale=init_scale, seed=seed)
