"""Seq2seq LMs: T5-style sentinels or BART-style denoising, chosen by the tokenizer.

T5 (the tokenizer knows ``<extra_id_0>``): the encoder reads ``left <extra_id_0> right``; the
span is the decoder target after ``<extra_id_0>``, closed by ``<extra_id_1>``. BART (a mask
token): the encoder reads ``left <mask> right``; the decoder rewrites the whole sentence, so the
span's tokens are scored in place, after the left context. Targets are a few tokens long, so the
full decoder logits are cheap and read as they are (T5's tied-head scaling and BART's logit bias
stay the model's business). BART's learned positions bound both sides: the encoder's input is
cut around the mask, the decoder's context from its start (see ``base.fit_window``).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from transformers.modeling_outputs import BaseModelOutput

from chronoprobe.errors import UserError
from chronoprobe.models.base import Progress, fit_window, length_buckets, locate_spans, pad
from chronoprobe.models.decoding import DecoderLM, DecoderRow, Scored, kv_cache, with_kv_cache
from chronoprobe.models.requests import NO_BEAM_SPANS, Cloze, ScoreRequest

SENTINELS = ("<extra_id_0>", "<extra_id_1>")


class Seq2SeqLM(DecoderLM):
    """An encoder-decoder model (T5, BART): the gap as a sentinel or mask in the encoder's
    input, its filler decoded."""

    family = "seq2seq"

    auto_class = "AutoModelForSeq2SeqLM"

    def __init__(self, model, tokenizer, **kwargs) -> None:
        super().__init__(model, tokenizer, **kwargs)
        vocab = tokenizer.get_vocab()
        self.sentinels = (
            [vocab[s] for s in SENTINELS] if all(s in vocab for s in SENTINELS) else None
        )
        if self.sentinels is None and tokenizer.mask_token_id is None:
            raise UserError(f"{self.name}: the tokenizer has neither T5 sentinels nor a mask token")
        self._special = sorted(set(self._special) | set(self.sentinels or ()))
        start = getattr(model.config, "decoder_start_token_id", None)
        if start is None:
            start = model.generation_config.decoder_start_token_id
        if start is None:
            raise UserError(f"{self.name}: the model config names no decoder start token")
        self.start = int(start)

    def _tokens(self, texts: list[str]):
        return self.tokenizer(texts, add_special_tokens=False)

    def _encoder_ids(self, cloze: Cloze) -> list[int]:
        gap = SENTINELS[0] if self.sentinels else self.tokenizer.mask_token
        return (
            self.lead + self._tokens([cloze.left + gap + cloze.right])["input_ids"][0] + self.trail
        )

    def fit_encoder(self, ids: list[int]) -> list[int] | None:
        gap = ids.index(self.sentinels[0] if self.sentinels else self.tokenizer.mask_token_id)
        frame = (len(self.lead), len(self.trail))
        fitted = fit_window(ids, (gap, gap + 1), frame, self.max_positions)
        return None if fitted is None else fitted[0]

    def rank_row(self, cloze: Cloze) -> DecoderRow:
        if self.sentinels:
            return DecoderRow([self.start, self.sentinels[0]], self._encoder_ids(cloze), head=2)
        left = cloze.left.rstrip()
        ids = self._tokens([left])["input_ids"][0] if left else []
        head = 1 + len(self.lead)
        return DecoderRow([self.start, *self.lead, *ids], self._encoder_ids(cloze), head)

    def score_rows(self, requests: Sequence[ScoreRequest]) -> list[Scored]:
        if self.sentinels:
            spans = self._tokens([r.span for r in requests])["input_ids"]
            scored = []
            for r, span in zip(requests, spans, strict=True):
                if not span:
                    raise UserError(f"span {r.span!r} has no tokens")
                encoder = self._encoder_ids(r.cloze)
                row = DecoderRow([self.start, self.sentinels[0], *span], encoder, head=2)
                scored.append(Scored(row, 2, span))
            return scored
        scored = []
        located = locate_spans(self.tokenizer, requests, special_tokens=False)
        for r, (ids, positions) in zip(requests, located, strict=True):
            context = [self.start, *self.lead, *ids[: positions[0]]]
            span = ids[positions[0] : positions[-1] + 1]
            row = DecoderRow(context + span, self._encoder_ids(r.cloze), head=1 + len(self.lead))
            scored.append(Scored(row, len(context), span))
        return scored

    def generate_row(self, cloze: Cloze) -> tuple[DecoderRow, list[int]]:
        if self.sentinels:
            return self.rank_row(cloze), [self.sentinels[1]]
        right = self._tokens([cloze.right])["input_ids"][0] if cloze.right else []
        return self.rank_row(cloze), right + self.trail

    @torch.inference_mode()
    def encode(self, ids: torch.Tensor, attention: torch.Tensor):
        ids, attention = ids.to(self.device), attention.to(self.device)
        hidden = self.model.get_encoder()(input_ids=ids, attention_mask=attention).last_hidden_state
        return hidden, attention

    @torch.inference_mode()
    def logits_at(self, ids, attention, rows, cols, encoded=None) -> torch.Tensor:
        hidden, enc_attention = encoded
        logits = self.model(
            encoder_outputs=BaseModelOutput(last_hidden_state=hidden),
            attention_mask=enc_attention,
            decoder_input_ids=ids.to(self.device),
            decoder_attention_mask=attention.to(self.device),
        ).logits
        return logits[rows.to(self.device), cols.to(self.device)]

    def prompt_batches(self, rows: Sequence[DecoderRow]):
        """Rows of one decoder prefix length per batch (a decoder's positions follow the index,
        so its prefixes are never padded), by encoder length within a length."""
        by_length: dict[int, list[int]] = {}
        for i, row in enumerate(rows):
            by_length.setdefault(len(row.ids), []).append(i)
        for members in by_length.values():
            lengths = [len(rows[i].encoder or ()) for i in members]
            for batch in length_buckets(lengths, self.batch_size):
                yield [members[j] for j in batch]

    @torch.inference_mode()
    def start_decoding(self, rows: Sequence[DecoderRow]):
        enc_ids, enc_attention = pad([r.encoder for r in rows], self.pad_id)  # type: ignore[misc]
        hidden, enc_attention = self.encode(enc_ids, enc_attention)
        out = self.model(
            encoder_outputs=BaseModelOutput(last_hidden_state=hidden),
            attention_mask=enc_attention,
            decoder_input_ids=torch.tensor([r.ids for r in rows], device=self.device),
            use_cache=True,
        )
        return out.logits[:, -1], (hidden, enc_attention, kv_cache(out))

    @torch.inference_mode()
    def continue_decoding(self, tokens: torch.Tensor, state):
        hidden, enc_attention, past = state
        out = self.model(
            encoder_outputs=BaseModelOutput(last_hidden_state=hidden),
            attention_mask=enc_attention,
            decoder_input_ids=tokens.to(self.device)[:, None],
            **with_kv_cache(self.model, past),
            use_cache=True,
        )
        return out.logits[:, -1], (hidden, enc_attention, kv_cache(out))

    @property
    def fills_spans(self) -> bool:
        return self.sentinels is not None

    @torch.inference_mode()
    def beam_spans(
        self,
        clozes: Sequence[Cloze],
        beams: int,
        top_k: int = 10,
        max_tokens: int = 16,
        progress: Progress = None,
    ) -> list[list[str]]:
        """The ``top_k`` distinct spans beam search fills each gap with, best first.

        ECBD's Recall@K (its appendix): decode with ``beams`` beams from ``<extra_id_0>`` and
        read each finished beam up to ``<extra_id_1>`` (or any other special token, or
        ``max_tokens`` tokens). Spans are whitespace-normalised; empty ones are dropped. Every
        gap costs ``beams`` decoder rows, so a batch holds ``batch_size // beams`` gaps (at
        least one).
        """
        if not self.fills_spans:
            raise UserError(f"{self.name}: {NO_BEAM_SPANS}")
        if beams < top_k:
            raise UserError(f"{beams} beams cannot give {top_k} distinct spans; use >= {top_k}")
        encoder_rows = [self._encoder_ids(c) for c in clozes]
        stops = set(self._special)
        results: list[list[str]] = [[] for _ in clozes]
        done = 0
        gaps_per_batch = max(1, self.batch_size // beams)
        for batch in length_buckets([len(r) for r in encoder_rows], gaps_per_batch):
            ids, attention = pad([encoder_rows[i] for i in batch], self.pad_id)
            prefix = torch.tensor([[self.start, self.sentinels[0]]] * len(batch))
            made = self.model.generate(
                input_ids=ids.to(self.device),
                attention_mask=attention.to(self.device),
                decoder_input_ids=prefix.to(self.device),
                num_beams=beams,
                num_return_sequences=beams,
                max_new_tokens=max_tokens + 1,  # room for the closing sentinel
                eos_token_id=[self.sentinels[1], *self.trail],
                pad_token_id=self.pad_id,
                do_sample=False,
            )[:, prefix.shape[1] :].tolist()
            for b, i in enumerate(batch):
                spans: dict[str, None] = {}
                for tokens in made[b * beams : (b + 1) * beams]:
                    end = next((j for j, t in enumerate(tokens) if t in stops), len(tokens))
                    text = " ".join(self.decode(tokens[:end]).split())
                    if text:
                        spans.setdefault(text)
                results[i] = list(spans)[:top_k]
            done += len(batch)
            if progress:
                progress(done, len(clozes))
        return results
