"""A RoBERTa-shaped tokenizer trained on the corpus at hand, for models trained in-tool.

Offline there is no roberta-base tokenizer to download, so the model series learns its own
byte-level BPE from the world's text. It behaves like RoBERTa's where the probe views care:
``<s> ... </s>`` around every input, and a ``<mask>`` that absorbs the space before it, so
"plays for <mask>." asks for the token " Ajax" exactly as the training text "plays for Ajax."
spelled it. Saved with ``save_pretrained``, the directory loads with ``AutoTokenizer``.
"""

from __future__ import annotations

from collections.abc import Iterable

from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors
from tokenizers import trainers as bpe_trainers
from transformers import PreTrainedTokenizerFast

SPECIAL_TOKENS = ("<s>", "<pad>", "</s>", "<unk>", "<mask>")  # RoBERTa's ids 0..3, then mask


def train_bpe_tokenizer(
    texts: Iterable[str], vocab_size: int = 6000, min_frequency: int = 2
) -> PreTrainedTokenizerFast:
    """Byte-level BPE over ``texts``; names frequent in the corpus end up as one or few tokens."""
    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = bpe_trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        special_tokens=[AddedToken(t, special=True, lstrip=t == "<mask>") for t in SPECIAL_TOKENS],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(texts, trainer=trainer)
    bpe.post_processor = processors.RobertaProcessing(
        ("</s>", bpe.token_to_id("</s>")), ("<s>", bpe.token_to_id("<s>"))
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        bos_token="<s>",
        eos_token="</s>",
        sep_token="</s>",
        cls_token="<s>",
        pad_token="<pad>",
        unk_token="<unk>",
        mask_token=AddedToken("<mask>", lstrip=True, special=True),
        model_max_length=512,
    )
