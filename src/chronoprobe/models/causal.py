"""Causal LMs (GPT-2, Llama, SmolLM2...): the gap is whatever follows the left context.

Rank: the next-token distribution after the left context. Score: log p(span | left context),
the span's tokens located by character offsets in the filled sentence, so a byte-level BPE's
" Paris" (space included) is the token scored; a request with ``right_context`` scores
log p(span + right | left), the tokens after the span as the filled sentence tokenizes them, so
that "[MASK] is the head of the government of France." is scored with France in it. Generate:
greedy tokens after the left context; a candidate of m tokens is scored with the right context
that must follow it. The backbone runs over every position, the LM head only where a request
reads logits. Rank and generate read the left context only (``reads_left_only``). A context
longer than the model's positions loses its beginning (the BOS a tokenizer frames text with
stays), as lm-eval truncates loglikelihood requests.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence

import torch

from chronoprobe.errors import UserError
from chronoprobe.models.base import locate_spans, logits_at_positions
from chronoprobe.models.decoding import DecoderLM, DecoderRow, Scored, kv_cache, with_kv_cache
from chronoprobe.models.requests import Cloze, PromptRequest, ScoreRequest

# config fields that transform logits after the output projection: the head-only path would
# skip them, so such models take the full forward instead
_LOGIT_TRANSFORMS = ("final_logit_softcapping", "logit_scale", "logits_scaling")


class CausalLM(DecoderLM):
    """A decoder-only model (GPT-2, Llama, SmolLM2): a gap ranked or scored from the text to
    its left, answers generated after the prompt."""

    family = "causal"

    auto_class = "AutoModelForCausalLM"

    reads_left_only = True

    def __init__(self, model, tokenizer, **kwargs) -> None:
        super().__init__(model, tokenizer, **kwargs)
        start = tokenizer.bos_token_id
        start = tokenizer.eos_token_id if start is None else start
        if start is None and not self.lead:
            raise UserError(f"{self.name}: the tokenizer has neither a BOS nor an EOS token")
        self.start = [start] if start is not None else []
        base = getattr(model, model.base_model_prefix, None)
        head = model.get_output_embeddings()
        plain = not any(getattr(model.config, a, None) for a in _LOGIT_TRANSFORMS)
        self._split = (base, head) if base is not None and head is not None and plain else None
        # the prompt's forward needs the logits of its last position only
        self._keeps_logits = "logits_to_keep" in inspect.signature(model.forward).parameters

    def _context(self, ids: list[int]) -> list[int]:
        """Context ids as the tokenizer frames them; an empty context becomes the start token."""
        framed = self.lead + ids
        return framed or self.start

    def rank_row(self, cloze: Cloze) -> DecoderRow:
        left = cloze.left.rstrip()
        ids = self.tokenizer(left, add_special_tokens=False)["input_ids"] if left else []
        return DecoderRow(self._context(ids), head=len(self.lead))

    def score_rows(self, requests: Sequence[ScoreRequest]) -> list[Scored]:
        scored = []
        located = locate_spans(self.tokenizer, requests, special_tokens=False)
        for r, (ids, positions) in zip(requests, located, strict=True):
            context = self._context(ids[: positions[0]])
            span = ids[positions[0] : positions[-1] + 1]
            right = ids[positions[-1] + 1 :] if r.right_context else []
            row = DecoderRow(context + span + right, head=len(self.lead))
            scored.append(Scored(row, len(context), span))
        return scored

    def generate_row(self, cloze: Cloze) -> tuple[DecoderRow, list[int]]:
        right = self.tokenizer(cloze.right, add_special_tokens=False)["input_ids"]
        return self.rank_row(cloze), right

    @property
    def speaks_chat(self) -> bool:  # type: ignore[override]
        """An instruct or chat model: its tokenizer carries a chat template."""
        return bool(getattr(self.tokenizer, "chat_template", None))

    def prompt_row(self, request: PromptRequest) -> DecoderRow:
        """The prompt's ids; with ``chat``, framed as one user turn by the chat template."""
        if not (request.chat and getattr(self.tokenizer, "chat_template", None)):
            return self.rank_row(request.cloze)
        turn = [{"role": "user", "content": request.cloze.left.strip()}]
        text = self.tokenizer.apply_chat_template(turn, tokenize=False, add_generation_prompt=True)
        return DecoderRow(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    @torch.inference_mode()
    def start_decoding(self, rows: Sequence[DecoderRow]):
        from chronoprobe.models.completion import left_pad

        ids, mask = left_pad([r.ids for r in rows], self.pad_id)
        ids, mask = ids.to(self.device), mask.to(self.device)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        out = self.model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True)
        return out.logits[:, -1], (mask, positions[:, -1:], kv_cache(out))

    @torch.inference_mode()
    def continue_decoding(self, tokens: torch.Tensor, state):
        mask, last, past = state
        mask = torch.cat([mask, mask.new_ones((len(mask), 1))], dim=-1)
        last = last + 1
        out = self.model(
            input_ids=tokens.to(self.device)[:, None],
            attention_mask=mask,
            position_ids=last,
            **with_kv_cache(self.model, past),
            use_cache=True,
        )
        return out.logits[:, -1], (mask, last, kv_cache(out))

    def encode(self, ids: torch.Tensor, attention: torch.Tensor):
        return None

    def logits_at(self, ids, attention, rows, cols, encoded=None) -> torch.Tensor:
        return logits_at_positions(self.model, self._split, self.device, ids, attention, rows, cols)
