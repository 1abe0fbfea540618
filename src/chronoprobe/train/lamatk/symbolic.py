"""LAMA-TK's symbolic masked LM behind the adapter interface: it ranks entities and years.

A ``train memorize`` model reads each entity and year as one symbol and predicts a masked slot
as one of them (Zhao et al., 2022, the symbolic representation). As an adapter it answers
:class:`~chronoprobe.models.requests.RankRequest`s whose token ids are symbol indices (see
:meth:`SymbolicLM.symbol`), so the ``recite`` view can rank any such model. It scores and
generates nothing: its outputs are symbols, not words.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch

from chronoprobe.errors import UserError
from chronoprobe.models.base import LanguageModel, Progress
from chronoprobe.models.requests import (
    Candidate,
    GenerateRequest,
    ScoreRequest,
    SpanScore,
)
from chronoprobe.templates import MASK
from chronoprobe.train.lamatk.checkpoint import load
from chronoprobe.train.model import max_positions, symbol_logits

ONLY_RANKS = "ranks its entity and year symbols only (the recite view); it has no words to {}"


class SymbolicLM(LanguageModel):
    """A `train memorize` model: it ranks the entity and year symbols it was trained on at a
    gap (the recite view), and has no words to score or generate."""

    family = "symbolic"

    def __init__(self, checkpoint, *, batch_size: int = 64, name: str = "") -> None:
        super().__init__(
            checkpoint.model, checkpoint.encoder.tokenizer, batch_size=batch_size, name=name
        )
        self.encoder = checkpoint.encoder

    @classmethod
    def load(cls, path: str | Path, device: torch.device, *, batch_size: int, name: str):
        checkpoint, _ = load(path, device, optimizer=False)
        return cls(checkpoint, batch_size=batch_size, name=name)

    @property
    def symbols(self) -> tuple[str, ...]:
        """What each symbol index predicts: an entity id, or a year as LAMA-TK writes it."""
        return self.encoder.vocab.keys

    def symbol(self, slot: str, value: str) -> int | None:
        """The symbol index a statement slot's value is predicted as (None: outside)."""
        return self.encoder.vocab.target(slot, value)

    def token_text(self, token_id: int) -> str:
        return self.symbols[token_id]

    def rank(self, requests, top_k=10, vocabulary=None, progress=None):  # see LanguageModel
        """Rank every symbol at each request's gap; ids and candidates are symbol indices."""
        texts = [r.cloze.left + MASK + r.cloze.right for r in requests]
        encoded = self.encoder.encode_texts(
            texts, [r.mentions for r in requests], max_positions(self.model)
        )
        pad, device = self.tokenizer.pad_token_id, self.device

        def gap_logits(batch: list[int]) -> torch.Tensor:
            width = int(encoded.lengths[batch].max())
            ids = torch.from_numpy(encoded.ids[batch, :width]).to(device)
            mask_at = torch.from_numpy(encoded.mask_at[batch]).to(device)
            return symbol_logits(self.model, ids, ids != pad, mask_at, self.encoder.offset)

        with torch.inference_mode():
            return self._ranked(
                requests, list(encoded.lengths), gap_logits, top_k, vocabulary, progress
            )

    def vocabulary_size(self) -> int:
        return len(self.symbols)

    def label_token_ids(self, requests: Sequence[ScoreRequest]) -> list[list[int]]:
        raise UserError(f"{self.name}: a symbolic model {ONLY_RANKS.format('score')}")

    def score(self, requests: Sequence[ScoreRequest], progress: Progress = None) -> list[SpanScore]:
        raise UserError(f"{self.name}: a symbolic model {ONLY_RANKS.format('score')}")

    def generate(
        self, requests: Sequence[GenerateRequest], progress: Progress = None
    ) -> list[list[Candidate]]:
        raise UserError(f"{self.name}: a symbolic model {ONLY_RANKS.format('generate')}")
