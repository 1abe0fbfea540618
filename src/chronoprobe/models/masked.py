"""Masked LMs (BERT, RoBERTa, ...): the gap becomes the model's own mask token(s).

The encoder runs over the whole sentence, but the LM head (a vocabulary-sized projection, the
costliest layer for a small model) runs only at the positions a request asks about: for a
16-token query that is one row of logits instead of sixteen. A sentence longer than the model's
positions is cut around its gap, the context farthest from it first (``base.fit_window``).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from chronoprobe.errors import UserError
from chronoprobe.models.base import (
    LanguageModel,
    Progress,
    fit_window,
    length_buckets,
    locate_spans,
    logits_at_positions,
    pad,
)
from chronoprobe.models.requests import (
    Candidate,
    GenerateRequest,
    ScoreRequest,
    SpanScore,
)

# attribute names of the MLM head on top of ``model.base_model`` in transformers' masked LMs
_HEAD_NAMES = ("lm_head", "cls", "predictions")


class MaskedLM(LanguageModel):
    """Rank: the mask's distribution. Score: pseudo-log-likelihood. Generate: fill m masks."""

    family = "masked"

    auto_class = "AutoModelForMaskedLM"

    def __init__(self, model, tokenizer, **kwargs) -> None:
        super().__init__(model, tokenizer, **kwargs)
        if tokenizer.mask_token_id is None:
            raise UserError(f"{self.name}: the tokenizer has no mask token, not a masked LM")
        self.mask_id = int(tokenizer.mask_token_id)
        base = getattr(model, model.base_model_prefix, None)
        head = next((getattr(model, n) for n in _HEAD_NAMES if hasattr(model, n)), None)
        # without a recognised head, fall back to the full forward and pick positions after it
        self._split = (base, head) if base is not None and head is not None else None
        self._special = torch.tensor(sorted(set(tokenizer.all_special_ids)), dtype=torch.long)

    def logits_at(self, ids, attention, rows, cols) -> torch.Tensor:
        """Vocabulary logits at ``(rows[i], cols[i])`` only."""
        return logits_at_positions(self.model, self._split, self.device, ids, attention, rows, cols)

    def _fit(self, ids: list[int], start: int, end: int) -> tuple[list[int], int] | None:
        """``ids`` cut to the model's positions around ``ids[start:end]`` (kept whole), and the
        number of ids cut before it; None if the gap and special tokens alone do not fit."""
        frame = (len(self.lead), len(self.trail))
        return fit_window(ids, (start, end), frame, self.max_positions)

    def _masked_ids(self, clozes: Sequence, counts: Sequence[int]) -> list[list[int] | None]:
        """Token ids of each cloze with ``count`` mask tokens in its gap, cut to fit (None when
        the masks do not fit)."""
        mask = self.tokenizer.mask_token
        texts = [c.left + mask * n + c.right for c, n in zip(clozes, counts, strict=True)]
        encoded = self.tokenizer(texts, add_special_tokens=True)["input_ids"]
        fitted: list[list[int] | None] = []
        for text, ids, n in zip(texts, encoded, counts, strict=True):
            found = ids.count(self.mask_id)
            if found != n:
                raise UserError(f"{text!r}: expected {n} mask token(s), tokenized to {found}")
            first = ids.index(self.mask_id)
            window = self._fit(ids, first, first + n)
            fitted.append(None if window is None else window[0])
        return fitted

    def rank(self, requests, top_k=10, vocabulary=None, progress=None):  # see LanguageModel
        if not requests:
            return []
        encoded = self._masked_ids([r.cloze for r in requests], [1] * len(requests))

        def gap_logits(batch: list[int]) -> torch.Tensor:
            ids, attention = pad([encoded[i] for i in batch], self.pad_id)
            cols = torch.tensor([encoded[i].index(self.mask_id) for i in batch])
            return self.logits_at(ids, attention, torch.arange(len(batch)), cols)

        costs = [None if e is None else len(e) for e in encoded]
        return self._ranked(requests, costs, gap_logits, top_k, vocabulary, progress)

    def label_token_ids(self, requests: Sequence[ScoreRequest]) -> list[list[int]]:
        if not requests:
            return []
        return [[ids[p] for p in positions] for ids, positions in self._locate(requests)]

    def _locate(self, requests: Sequence[ScoreRequest]) -> list[tuple[list[int], list[int]]]:
        """Each filled sentence's ids (special tokens included) and its span's positions."""
        return locate_spans(self.tokenizer, requests, special_tokens=True)

    def _located_to_fit(
        self, requests: Sequence[ScoreRequest]
    ) -> list[tuple[list[int], list[int]] | None]:
        """``_locate``'s sentences cut to fit around their spans (None: a span that does not)."""
        fitted: list[tuple[list[int], list[int]] | None] = []
        for ids, positions in self._locate(requests):
            window = self._fit(ids, positions[0], positions[-1] + 1)
            if window is None:
                fitted.append(None)
            else:
                cut_ids, cut = window
                fitted.append((cut_ids, [p - cut for p in positions]))
        return fitted

    def score(
        self, requests: Sequence[ScoreRequest], progress: Progress = None
    ) -> list[SpanScore | None]:
        """PLL: each span token scored with only that token masked, every copy in one pool."""
        if not requests:
            return []
        located = self._located_to_fit(requests)
        sentences = {i: found[0] for i, found in enumerate(located) if found is not None}
        copies = [(i, p) for i in sentences for p in located[i][1]]  # type: ignore[index]
        values = [0.0] * len(copies)
        done = 0
        for batch in length_buckets([len(sentences[i]) for i, _ in copies], self.batch_size):
            rows, targets = [], []
            for c in batch:
                i, p = copies[c]
                ids = list(sentences[i])
                targets.append(ids[p])
                ids[p] = self.mask_id
                rows.append(ids)
            ids_t, attention = pad(rows, self.pad_id)
            cols = torch.tensor([copies[c][1] for c in batch])
            logits = self.logits_at(ids_t, attention, torch.arange(len(batch)), cols)
            logprobs = torch.log_softmax(logits.float(), dim=-1)
            picked = logprobs.gather(1, torch.tensor(targets, device=logprobs.device)[:, None])
            for c, v in zip(batch, picked[:, 0].tolist(), strict=True):
                values[c] = v
            done += len(batch)
            if progress:
                progress(done, len(copies))
        totals = [0.0] * len(requests)
        for (i, _), v in zip(copies, values, strict=True):  # summed in token order
            totals[i] += v
        return [
            None if found is None else SpanScore(logprob=t, n_tokens=len(found[1]))
            for t, found in zip(totals, located, strict=True)
        ]

    def generate(
        self, requests: Sequence[GenerateRequest], progress: Progress = None
    ) -> list[list[Candidate] | None]:
        """For m = 1..max_tokens, fill m masks left to right, each with its greedy token (None
        for a request whose max_tokens masks do not fit)."""
        if not requests:
            return []
        items = [(i, m) for i, r in enumerate(requests) for m in range(1, r.max_tokens + 1)]
        encoded = self._masked_ids([requests[i].cloze for i, _ in items], [m for _, m in items])
        unfit = {i for (i, _), e in zip(items, encoded, strict=True) if e is None}
        costs = [
            None if e is None or i in unfit else len(e)
            for (i, _), e in zip(items, encoded, strict=True)
        ]
        total = sum(c is not None for c in costs)
        found: dict[tuple[int, int], Candidate] = {}
        done = 0
        for batch in length_buckets(costs, self.batch_size):
            ids, attention = pad([encoded[c] for c in batch], self.pad_id)
            masks = [[p for p, t in enumerate(encoded[c]) if t == self.mask_id] for c in batch]
            filled: list[list[int]] = [[] for _ in batch]
            totals = [0.0] * len(batch)
            for step in range(max(len(m) for m in masks)):
                active = [b for b, m in enumerate(masks) if len(m) > step]
                rows = torch.tensor(active)
                cols = torch.tensor([masks[b][step] for b in active])
                logits = self.logits_at(ids[rows], attention[rows], torch.arange(len(active)), cols)
                tokens, logprobs = self._greedy(logits)
                for b, token, lp in zip(active, tokens, logprobs, strict=True):
                    ids[b, masks[b][step]] = token
                    filled[b].append(token)
                    totals[b] += lp
            for b, c in enumerate(batch):
                found[items[c]] = Candidate(
                    self.decode(filled[b]), filled[b], totals[b], len(filled[b])
                )
            done += len(batch)
            if progress:
                progress(done, total)
        return [
            None if i in unfit else [found[i, m] for m in range(1, r.max_tokens + 1)]
            for i, r in enumerate(requests)
        ]

    def _greedy(self, logits: torch.Tensor) -> tuple[list[int], list[float]]:
        """The best non-special token per row and its log-probability under the full softmax."""
        logprobs = torch.log_softmax(logits.float(), dim=-1)
        allowed = logprobs.clone()
        allowed[:, self._special.to(allowed.device)] = float("-inf")
        best = allowed.argmax(dim=-1)
        return best.tolist(), logprobs.gather(1, best[:, None])[:, 0].tolist()
