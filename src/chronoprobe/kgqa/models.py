"""CronKGQA, EmbedKGQA and an LM-only baseline: a question vector turned into answer scores.

Each model scores every candidate (entities, then years; see :mod:`chronoprobe.kgqa.data`), and
one softmax runs over them all, as in the paper and its code: the model itself must tell entity
questions from time questions. Only under the answer-type-given protocol (an explicit option,
off by default) is the gold answer type passed in, and the candidates of the other type are
masked to -inf.

- CronKGQA (Saxena et al., 2021): the question vector, projected twice, takes the place of the
  relation in TComplEx: entities score as Re<u_s, q_ent, conj(u_e), w_t> and years as
  Re<u_s, q_time, conj(u_o), w_y>, with the frozen entity and year tables of a TKG checkpoint.
  A ComplEx checkpoint has no year table: the years are then learned, starting near the complex
  identity, so that a year first changes nothing (ComplEx's scoring) and training learns what it
  means (CronKGQA over ComplEx).
- EmbedKGQA (Saxena et al., 2020) as the paper adapts it: ComplEx scoring Re<u_s, q, conj(c)>
  of every candidate c, entities from a ComplEx checkpoint and learned year embeddings; the
  question's time mention is only text.
- LM baseline: a linear classifier over all candidates on top of the encoder.

The dummy entity and time (no head, no tail, no time, or one the embeddings never saw) are
learned vectors that start as the complex identity (1 + 0i): a missing time makes TComplEx's
score ComplEx's, a missing tail drops out of the time score.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

import torch
from torch import Tensor, nn

from chronoprobe.errors import UserError
from chronoprobe.kgqa.encoder import QuestionEncoder
from chronoprobe.tkg.models import cmul, conj


def _identity(width: int) -> nn.Parameter:
    return nn.Parameter(torch.cat([torch.ones(width // 2), torch.zeros(width // 2)]))


class QAModel(nn.Module, ABC):
    """An encoder and a way to turn its question vector into candidate scores."""

    name: ClassVar[str]
    needs_time_table: ClassVar[bool] = False  # True: only checkpoints with years will do
    # True: it scores with the TKG's own tables, so the oracle-relation ceiling applies to it
    scores_with_tkg: ClassVar[bool] = False

    def __init__(
        self,
        encoder: QuestionEncoder,
        entity: Tensor,
        time: Tensor | None,
        n_times: int,
        dropout: float = 0.1,
    ) -> None:
        super().__init__()
        self.encoder = encoder
        self.question = encoder.model  # registered, so its weights train and save with ours
        self.n_entities, self.n_times = entity.shape[0], n_times
        self.width = entity.shape[1]
        self.dropout = nn.Dropout(dropout)

    @property
    def n_candidates(self) -> int:
        return self.n_entities + self.n_times

    @abstractmethod
    def candidate_scores(self, q: Tensor, head: Tensor, tail: Tensor, time: Tensor) -> Tensor:
        """(B, E + T) raw scores from (B, hidden) question vectors and the annotations."""

    def forward(
        self,
        tokens: dict[str, Tensor],
        head: Tensor,
        tail: Tensor,
        time: Tensor,
        is_time: Tensor | None = None,
    ) -> Tensor:
        """(B, E + T) scores; with ``is_time`` (the answer type given), the other type masked."""
        scores = self.candidate_scores(self.encoder(tokens), head, tail, time)
        return scores if is_time is None else mask_answer_type(scores, is_time, self.n_entities)


def mask_answer_type(scores: Tensor, is_time: Tensor, n_entities: int) -> Tensor:
    """-inf on the entity part for time questions and on the year part for entity questions."""
    is_year = torch.arange(scores.shape[1], device=scores.device) >= n_entities
    return scores.masked_fill(is_year[None, :] != is_time[:, None], -torch.inf)


class _EmbeddingQA(QAModel):
    """Frozen entity (and year) tables from a TKG checkpoint, and the dummy rows."""

    scores_with_tkg = True

    # Where learned years start: the complex identity plus noise (True), or noise alone.
    years_from_identity: ClassVar[bool] = True

    def __init__(self, encoder, entity, time, n_times, dropout=0.1) -> None:
        super().__init__(encoder, entity, time, n_times, dropout)
        self.register_buffer("entity", entity.detach().clone())
        if time is None:
            # Noise at the scale of the pretrained entity rows.
            start = torch.randn(n_times, self.width) * entity.std().clamp_min(1e-3)
            if self.years_from_identity:
                start = start + _identity(self.width).detach()
            self.time = nn.Parameter(start)
        else:
            self.register_buffer("time", time.detach().clone())
        self.no_entity = _identity(self.width)
        self.no_time = _identity(self.width)

    def lookup_entity(self, index: Tensor) -> Tensor:
        rows = self.entity[index.clamp(max=self.n_entities - 1)]
        return torch.where((index == self.n_entities)[:, None], self.no_entity, rows)

    def lookup_time(self, index: Tensor) -> Tensor:
        rows = self.time[index.clamp(max=self.n_times - 1)]
        return torch.where((index == self.n_times)[:, None], self.no_time, rows)

    def project(self, hidden: int) -> nn.Sequential:
        """Question vector to a relation-like vector; batch norm puts it on the tables' scale."""
        return nn.Sequential(nn.Linear(hidden, self.width), nn.BatchNorm1d(self.width))


class CronKGQA(_EmbeddingQA):
    """CronKGQA (Saxena et al., 2021): the question's vector as the relation of TComplEx's
    frozen entity and year tables, scoring entities and years alike."""

    name = "cronkgqa"

    def __init__(self, encoder, entity, time, n_times, dropout=0.1) -> None:
        super().__init__(encoder, entity, time, n_times, dropout)
        self.to_entity = self.project(encoder.hidden_size)
        self.to_time = self.project(encoder.hidden_size)

    def entity_scores(self, q_ent: Tensor, head: Tensor, time: Tensor) -> Tensor:
        """TComplEx's object scores with q_ent as the relation: Re<u_s, q, conj(u_e), w_t>."""
        query = cmul(self.lookup_entity(head), cmul(q_ent, self.lookup_time(time)))
        return query @ self.entity.t()

    def time_scores(self, q_time: Tensor, head: Tensor, tail: Tensor) -> Tensor:
        """TComplEx's time scores with q_time as the relation: Re<u_s, q, conj(u_o), w_y>."""
        pair = cmul(cmul(self.lookup_entity(head), q_time), conj(self.lookup_entity(tail)))
        return conj(pair) @ self.time.t()

    def candidate_scores(self, q, head, tail, time):
        q = self.dropout(q)
        entities = self.entity_scores(self.to_entity(q), head, time)
        return torch.cat([entities, self.time_scores(self.to_time(q), head, tail)], 1)


class EmbedKGQA(_EmbeddingQA):
    """EmbedKGQA (Saxena et al., 2020) as CronQuestions runs it: the question's vector as a
    ComplEx relation over the frozen entity table, years learned as candidates like entities."""

    name = "embedkgqa"
    years_from_identity = False  # years are candidates like entities, not relation modifiers

    def __init__(self, encoder, entity, time, n_times, dropout=0.1) -> None:
        # The paper's EmbedKGQA has ComplEx entities and *learned* years, whatever the checkpoint.
        super().__init__(encoder, entity, None, n_times, dropout)
        self.to_relation = self.project(encoder.hidden_size)

    def candidate_scores(self, q, head, tail, time):
        query = cmul(self.lookup_entity(head), self.to_relation(self.dropout(q)))
        return torch.cat([query @ self.entity.t(), query @ self.time.t()], 1)


class LMBaseline(QAModel):
    """The encoder alone with a softmax head over every candidate, as the paper's BERT rows."""

    name = "lm"

    def __init__(self, encoder, entity, time, n_times, dropout=0.1) -> None:
        super().__init__(encoder, entity, time, n_times, dropout)
        self.classifier = nn.Linear(encoder.hidden_size, self.n_candidates)

    def candidate_scores(self, q, head, tail, time):
        return self.classifier(self.dropout(q))


def build_qa_model(
    name: str,
    encoder: QuestionEncoder,
    entity: Tensor,
    time: Tensor | None,
    n_times: int,
    dropout: float = 0.1,
) -> QAModel:
    from chronoprobe.kgqa.params import QA_MODELS

    try:
        cls = QA_MODELS.get(name)
    except KeyError as err:
        raise UserError(err.args[0]) from None
    return cls(encoder, entity, time, n_times, dropout)
