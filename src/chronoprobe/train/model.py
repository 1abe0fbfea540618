"""The masked LM whose vocabulary is words plus one token per entity and per year.

Symbol tokens sit after the word vocabulary (ids ``offset ..``), so "softmax over the entity
vocabulary" is a slice of the output layer. Models are RoBERTa-shaped: built from a preset, or
any Hugging Face masked-LM checkpoint with its embeddings resized to hold the symbols.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
from transformers import (
    AutoModelForMaskedLM,
    AutoTokenizer,
    PreTrainedModel,
    PreTrainedTokenizerFast,
    RobertaConfig,
    RobertaForMaskedLM,
)

from chronoprobe.errors import UserError

# the paper's RoBERTa(6L) and (12L) have RoBERTa-base's width; tiny is for CPU tests
PRESETS: dict[str, dict[str, int | float]] = {
    "tiny": {
        "num_hidden_layers": 2,
        "hidden_size": 128,
        "num_attention_heads": 2,
        "intermediate_size": 512,
        "hidden_dropout_prob": 0.0,
        "attention_probs_dropout_prob": 0.0,
    },
    "6L": {"num_hidden_layers": 6, "hidden_size": 768, "num_attention_heads": 12},
    "12L": {"num_hidden_layers": 12, "hidden_size": 768, "num_attention_heads": 12},
}


@contextmanager
def quiet_transformers() -> Iterator[None]:
    """Hide transformers' own per-call bars ("Loading weights") under our progress display."""
    from transformers.utils import logging

    was = logging.is_progress_bar_enabled()
    logging.disable_progress_bar()
    try:
        yield
    finally:
        if was:
            logging.enable_progress_bar()


def build_model(
    preset: str, tokenizer: PreTrainedTokenizerFast, symbols: int, max_length: int = 128
) -> RobertaForMaskedLM:
    """A randomly initialised RoBERTa MLM for ``tokenizer``'s words and ``symbols`` symbols."""
    if preset not in PRESETS:
        raise UserError(f"unknown preset {preset!r}; choose one of {', '.join(PRESETS)}")
    shape = dict(PRESETS[preset])
    shape.setdefault("intermediate_size", 4 * int(shape["hidden_size"]))
    pad = tokenizer.pad_token_id
    config = RobertaConfig(
        vocab_size=len(tokenizer) + symbols,
        max_position_embeddings=max_length + pad + 1,  # RoBERTa counts positions after pad
        type_vocab_size=1,
        pad_token_id=pad,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        **shape,
    )
    return RobertaForMaskedLM(config)


def from_pretrained(init: str, symbols: int) -> tuple[PreTrainedModel, PreTrainedTokenizerFast]:
    """A Hugging Face masked LM (path or id) and its tokenizer, with room for the symbols."""
    tokenizer = AutoTokenizer.from_pretrained(init)
    if tokenizer.mask_token_id is None:
        raise UserError(f"{init}: the tokenizer has no mask token; give a masked LM")
    with quiet_transformers():
        model = AutoModelForMaskedLM.from_pretrained(init)
    model.resize_token_embeddings(len(tokenizer) + symbols)
    return model, tokenizer


def max_positions(model: PreTrainedModel) -> int:
    """The longest input the model takes (RoBERTa reserves positions up to the pad id)."""
    config = model.config
    reserved = (config.pad_token_id or 0) + 1 if config.model_type == "roberta" else 0
    return int(config.max_position_embeddings) - reserved


def symbol_logits(
    model: PreTrainedModel,
    ids: torch.Tensor,
    attention: torch.Tensor,
    mask_at: torch.Tensor,
    offset: int,
) -> torch.Tensor:
    """Scores of every symbol (entities and years) at each row's mask: [rows, symbols].

    Only the masked position goes through the output layer when the model exposes its head
    (RoBERTa's ``lm_head``), which keeps a 50k-word vocabulary off the memory bill.
    """
    rows = torch.arange(ids.shape[0], device=ids.device)
    head = getattr(model, "lm_head", None)
    if head is None:
        logits = model(input_ids=ids, attention_mask=attention).logits[rows, mask_at]
    else:
        hidden = model.base_model(input_ids=ids, attention_mask=attention).last_hidden_state
        logits = head(hidden[rows, mask_at])
    return logits[:, offset:].float()
