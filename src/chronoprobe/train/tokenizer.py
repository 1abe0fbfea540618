"""The RoBERTa tokenizer ``train memorize`` learns from its statements' words.

One call of :func:`chronoprobe.models.tokenizer.train_tokenizer`, which builds the tokenizers of
every architecture trained in-tool.
"""

from __future__ import annotations

from collections.abc import Iterable

from transformers import PreTrainedTokenizerFast

from chronoprobe.models.tokenizer import train_tokenizer


def train_bpe_tokenizer(
    texts: Iterable[str], vocab_size: int, min_frequency: int
) -> PreTrainedTokenizerFast:
    """RoBERTa's byte-level BPE over ``texts`` (see ``train_tokenizer``)."""
    return train_tokenizer(texts, "roberta", vocab_size=vocab_size, min_frequency=min_frequency)
