"""Small random models of real architectures, for tests, benchmarks and demos.

Nothing is downloaded: pair :func:`chronoprobe.models.tokenizer.train_tokenizer` (milliseconds on
a few sentences) with a randomly initialised RoBERTa, BERT, Llama, GPT-2, T5 or BART sized by a
few numbers. Random weights give arbitrary but fixed scores, which is all a parity test or a
throughput measurement needs.
"""

from __future__ import annotations

import torch
from transformers import PreTrainedModel, PreTrainedTokenizerFast

from chronoprobe.errors import UserError
from chronoprobe.models.tokenizer import ARCHITECTURES

_CLASSES = {  # transformers config and model classes
    "roberta": ("RobertaConfig", "RobertaForMaskedLM"),
    "bert": ("BertConfig", "BertForMaskedLM"),
    "llama": ("LlamaConfig", "LlamaForCausalLM"),
    "gpt2": ("GPT2Config", "GPT2LMHeadModel"),
    "t5": ("T5Config", "T5ForConditionalGeneration"),
    "bart": ("BartConfig", "BartForConditionalGeneration"),
}
_BERT_NAMES = (
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "intermediate_size",
    "max_position_embeddings",
)
_NAMES = {  # each config's fields for: width, layers, heads, feed-forward width, positions
    "roberta": _BERT_NAMES,
    "bert": _BERT_NAMES,
    "llama": _BERT_NAMES,
    "gpt2": ("n_embd", "n_layer", "n_head", "n_inner", "n_positions"),
    "t5": ("d_model", "num_layers", "num_heads", "d_ff", ""),  # relative positions: no limit
    "bart": (  # encoder and decoder alike
        "d_model",
        "encoder_layers decoder_layers",
        "encoder_attention_heads decoder_attention_heads",
        "encoder_ffn_dim decoder_ffn_dim",
        "max_position_embeddings",
    ),
}


def random_model(
    architecture: str,
    tokenizer: PreTrainedTokenizerFast,
    *,
    hidden: int = 32,
    layers: int = 2,
    heads: int = 2,
    max_positions: int = 128,
    seed: int = 0,
) -> PreTrainedModel:
    """A randomly initialised model of ``architecture`` for ``tokenizer`` (eval mode, fp32)."""
    import transformers as tf

    if architecture not in _CLASSES:
        raise UserError(f"unknown architecture {architecture!r}; choose one of {ARCHITECTURES}")
    # RoBERTa numbers positions from past the padding id, so it needs two more
    positions = max_positions + 2 if architecture == "roberta" else max_positions
    values = (hidden, layers, heads, 4 * hidden, positions)
    config = {
        field: value
        for names, value in zip(_NAMES[architecture], values, strict=True)
        for field in names.split()
    }
    config.update(
        _own_settings(architecture, tokenizer, hidden, heads),
        vocab_size=len(tokenizer),
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    config_class, model_class = (getattr(tf, name) for name in _CLASSES[architecture])
    torch.manual_seed(seed)
    return model_class(config_class(**config)).eval()


def _own_settings(
    architecture: str, tokenizer: PreTrainedTokenizerFast, hidden: int, heads: int
) -> dict:
    """What one architecture sets beyond the common shape."""
    if architecture in ("roberta", "bert"):
        return {"type_vocab_size": 1}
    if architecture == "llama":
        return {"num_key_value_heads": heads, "tie_word_embeddings": True}
    if architecture == "t5":
        return {"d_kv": hidden // heads, "decoder_start_token_id": tokenizer.pad_token_id}
    if architecture == "bart":
        return {"decoder_start_token_id": tokenizer.eos_token_id, "forced_eos_token_id": None}
    return {}
