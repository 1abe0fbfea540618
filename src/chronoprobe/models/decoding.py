"""Requests answered left to right by a decoder: causal LMs, and seq2seq LMs' decoders.

Each family only says how a request becomes decoder ids (plus encoder ids for seq2seq); the
rest is shared. Ranking reads the distribution after a prefix. Scoring reads the log-probability
of target positions given everything before them. Generation extends the prefix greedily and,
after every token, scores the "closing" ids that must follow a finished span (a causal LM's
right context, T5's next sentinel, BART's right context and end token), so that candidates of
different lengths are compared as whole sentences. Step ``m`` runs one forward over
``prefix + generated[:m] + closing``: the causal mask makes it serve both purposes at once.

A row longer than the model's positions loses context from its start, after its frame (the
start and special tokens that open it); what is scored (the span, and a causal request's right
context) or generated after stays whole, or the request is answered ``None``.
"""

from __future__ import annotations

import inspect
from abc import abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

import torch

from chronoprobe.models.base import LanguageModel, Progress, fit_window, length_buckets, pad
from chronoprobe.models.requests import (
    Candidate,
    Cloze,
    Completion,
    GenerateRequest,
    PromptRequest,
    ScoreRequest,
    SpanScore,
)


def kv_cache(out) -> object:
    """The key/value cache a forward pass returned: ``cache`` where transformers names it so
    (recent releases, which deprecate ``past_key_values``), ``past_key_values`` before."""
    cache = getattr(out, "cache", None)  # the old name is not read where it is deprecated
    return cache if cache is not None else out.past_key_values


def with_kv_cache(model, cache: object) -> dict[str, object]:
    """The keyword argument that hands ``cache`` back to ``model``'s forward (see kv_cache)."""
    return {_cache_keyword(type(model)): cache}


@lru_cache
def _cache_keyword(model_class: type) -> str:
    parameters = inspect.signature(model_class.forward).parameters
    return "cache" if "cache" in parameters else "past_key_values"


@dataclass(frozen=True)
class DecoderRow:
    """Decoder ids and, for seq2seq models, the encoder ids they attend to; the first ``head``
    ids are the frame (start and special tokens) a row cut to fit keeps."""

    ids: list[int]
    encoder: list[int] | None = None
    head: int = 0


@dataclass(frozen=True)
class Scored:
    row: DecoderRow
    first: int  # positions first..len(row.ids)-1 are scored: the span's tokens (then the right
    span_ids: list[int]  # context's, when a causal request asks for it)


class DecoderLM(LanguageModel):
    """Rank, score and generate on top of three row builders and one forward."""

    def __init__(self, model, tokenizer, **kwargs) -> None:
        super().__init__(model, tokenizer, **kwargs)
        self._special = sorted(set(tokenizer.all_special_ids))

    # --- what a family defines -------------------------------------------------------------
    @abstractmethod
    def rank_row(self, cloze: Cloze) -> DecoderRow:
        """Decoder ids whose last position predicts the gap's first token."""

    @abstractmethod
    def score_rows(self, requests: Sequence[ScoreRequest]) -> list[Scored]:
        """Decoder ids ending with the tokens to score (the span's, and for a causal request
        with ``right_context`` the right context's)."""

    @abstractmethod
    def generate_row(self, cloze: Cloze) -> tuple[DecoderRow, list[int]]:
        """The generation prefix and the closing ids that follow a finished span."""

    @abstractmethod
    def encode(self, ids: torch.Tensor, attention: torch.Tensor):
        """Encoder state for a batch (None for decoder-only models)."""

    def fit_encoder(self, ids: list[int]) -> list[int] | None:
        """Encoder ids cut to the model's positions around their gap (seq2seq families)."""
        return ids

    @abstractmethod
    def logits_at(
        self,
        ids: torch.Tensor,
        attention: torch.Tensor,
        rows: torch.Tensor,
        cols: torch.Tensor,
        encoded=None,
    ) -> torch.Tensor:
        """Vocabulary logits at ``(rows[i], cols[i])`` of the decoder."""

    @abstractmethod
    def start_decoding(self, rows: Sequence[DecoderRow]) -> tuple[torch.Tensor, object]:
        """Next-token logits after each prompt row of a batch, and the state (key/value cache)
        that ``continue_decoding`` extends."""

    @abstractmethod
    def continue_decoding(self, tokens: torch.Tensor, state) -> tuple[torch.Tensor, object]:
        """Next-token logits after appending one token per row, and the extended state."""

    def prompt_row(self, request: PromptRequest) -> DecoderRow:
        """Decoder ids (and encoder ids) whose last position predicts the first new token."""
        return self.rank_row(request.cloze)

    def prompt_batches(self, rows: Sequence[DecoderRow]) -> Iterator[list[int]]:
        """Batches of prompt rows that ``start_decoding`` can run together."""
        return length_buckets([self._cost(r) for r in rows], self.batch_size)

    def complete(
        self, requests: Sequence[PromptRequest], progress: Progress = None
    ) -> list[Completion | None]:
        from chronoprobe.models.completion import complete

        return complete(self, requests, progress)

    # --- shared ------------------------------------------------------------------------------
    def _batch(self, rows: Sequence[DecoderRow]):
        ids, attention = pad([r.ids for r in rows], self.pad_id)
        encoded = None
        if rows[0].encoder is not None:
            enc_ids, enc_attention = pad([r.encoder for r in rows], self.pad_id)  # type: ignore[misc]
            encoded = self.encode(enc_ids, enc_attention)
        return ids, attention, encoded

    @staticmethod
    def _cost(row: DecoderRow | None) -> int | None:
        """A row's tokens, for length bucketing (None: a row not run)."""
        return None if row is None else len(row.ids) + len(row.encoder or ())

    def _fit(self, row: DecoderRow, keep: int, room: int = 0) -> tuple[DecoderRow, int] | None:
        """``row`` cut to the model's positions less ``room`` (tokens a generation appends),
        ``ids[keep:]`` whole, and the number of ids cut before ``keep``; None if it cannot be."""
        if self.max_positions is None:
            return row, 0
        fitted = fit_window(row.ids, (keep, len(row.ids)), (row.head, 0), self.max_positions - room)
        encoder = row.encoder if row.encoder is None else self.fit_encoder(row.encoder)
        if fitted is None or (row.encoder is not None and encoder is None):
            return None
        ids, cut = fitted
        return DecoderRow(ids, encoder, row.head), cut

    def rank(self, requests, top_k=10, vocabulary=None, progress=None):  # see LanguageModel
        if not requests:
            return []
        rows: list[DecoderRow | None] = []
        for request in requests:
            row = self.rank_row(request.cloze)
            fitted = self._fit(row, len(row.ids) - 1)  # the last id predicts the gap
            rows.append(None if fitted is None else fitted[0])

        def gap_logits(batch: list[int]) -> torch.Tensor:
            ids, attention, encoded = self._batch([rows[i] for i in batch])
            cols = torch.tensor([len(rows[i].ids) - 1 for i in batch])
            return self.logits_at(ids, attention, torch.arange(len(batch)), cols, encoded)

        costs = [self._cost(r) for r in rows]
        return self._ranked(requests, costs, gap_logits, top_k, vocabulary, progress)

    def label_token_ids(self, requests: Sequence[ScoreRequest]) -> list[list[int]]:
        if not requests:
            return []
        return [s.span_ids for s in self.score_rows(requests)]

    def _fit_scored(self, scored: Scored) -> Scored | None:
        """``scored`` cut to fit, its targets and the id that predicts the first kept whole."""
        fitted = self._fit(scored.row, scored.first - 1)
        if fitted is None:
            return None
        row, cut = fitted
        return Scored(row, scored.first - cut, scored.span_ids)

    def score(
        self, requests: Sequence[ScoreRequest], progress: Progress = None
    ) -> list[SpanScore | None]:
        if not requests:
            return []
        scored = [self._fit_scored(s) for s in self.score_rows(requests)]
        costs = [None if s is None else self._cost(s.row) for s in scored]
        total = sum(c is not None for c in costs)
        results: list[SpanScore | None] = [None] * len(requests)
        done = 0
        for batch in length_buckets(costs, self.batch_size):
            ids, attention, encoded = self._batch([scored[i].row for i in batch])
            where = [
                (b, p)
                for b, i in enumerate(batch)
                for p in range(scored[i].first, len(scored[i].row.ids))
            ]
            rows = torch.tensor([b for b, _ in where])
            cols = torch.tensor([p - 1 for _, p in where])  # position p-1 predicts token p
            logits = self.logits_at(ids, attention, rows, cols, encoded)
            targets = ids[rows, cols + 1].to(logits.device)
            picked = torch.log_softmax(logits.float(), -1).gather(1, targets[:, None])[:, 0]
            totals = [0.0] * len(batch)
            for (b, _), v in zip(where, picked.tolist(), strict=True):
                totals[b] += v
            for b, i in enumerate(batch):
                n_tokens = len(scored[i].row.ids) - scored[i].first
                results[i] = SpanScore(logprob=totals[b], n_tokens=n_tokens)
            done += len(batch)
            if progress:
                progress(done, total)
        return results

    def _generation_start(self, request: GenerateRequest) -> tuple[DecoderRow, list[int]] | None:
        """The prefix, cut to leave room for the generated tokens and the closing ids, and the
        closing ids; None if they cannot fit with the prefix's last id."""
        prefix, closing = self.generate_row(request.cloze)
        fitted = self._fit(prefix, len(prefix.ids) - 1, request.max_tokens + len(closing))
        return None if fitted is None else (fitted[0], closing)

    def generate(
        self, requests: Sequence[GenerateRequest], progress: Progress = None
    ) -> list[list[Candidate] | None]:
        if not requests:
            return []
        starts = [self._generation_start(r) for r in requests]
        costs = [None if s is None else self._cost(s[0]) for s in starts]
        total = sum(c is not None for c in costs)
        results: list[list[Candidate] | None] = [None] * len(requests)
        done = 0
        for batch in length_buckets(costs, self.batch_size):
            prefixes = [starts[i][0] for i in batch]  # type: ignore[index]
            closings = [starts[i][1] for i in batch]  # type: ignore[index]
            limits = [requests[i].max_tokens for i in batch]
            made: list[list[int]] = [[] for _ in batch]
            made_lp: list[list[float]] = [[] for _ in batch]
            closing_lp: list[list[float]] = [[] for _ in batch]
            _, _, encoded = self._batch(prefixes)  # the encoder runs once per batch
            for step in range(max(limits) + 1):
                ids, attention = pad(
                    [p.ids + m + c for p, m, c in zip(prefixes, made, closings, strict=True)],
                    self.pad_id,
                )
                active = [b for b in range(len(batch)) if step <= limits[b]]
                where = [
                    (b, len(prefixes[b].ids) + step - 1 + j)
                    for b in active
                    for j in range(max(1, len(closings[b])))
                ]
                rows = torch.tensor([b for b, _ in where])
                cols = torch.tensor([c for _, c in where])
                logprobs = torch.log_softmax(
                    self.logits_at(ids, attention, rows, cols, encoded).float(), -1
                )
                offset = 0
                for b in active:
                    block = logprobs[offset : offset + max(1, len(closings[b]))]
                    offset += len(block)
                    if step > 0:
                        closing_lp[b].append(
                            sum(block[j, t].item() for j, t in enumerate(closings[b]))
                        )
                    if step < limits[b]:
                        token, lp = self._greedy(block[0])
                        made[b].append(token)
                        made_lp[b].append(lp)
            for b, i in enumerate(batch):
                results[i] = [
                    Candidate(
                        self.decode(made[b][:m]),
                        made[b][:m],
                        sum(made_lp[b][:m]) + closing_lp[b][m - 1],
                        m + len(closings[b]),
                    )
                    for m in range(1, limits[b] + 1)
                ]
            done += len(batch)
            if progress:
                progress(done, total)
        return results

    def _greedy(self, logprobs: torch.Tensor) -> tuple[int, float]:
        """The best token that is not a special one (an end token is a closing, not content)."""
        allowed = logprobs.clone()
        allowed[self._special] = float("-inf")
        token = int(allowed.argmax())
        return token, logprobs[token].item()
