"""Tokenizers learned from the text at hand, one kind per architecture, for models built in-tool.

Offline there is no roberta-base or bert-base-uncased tokenizer to download, so the model series,
the tiny question encoder and the small test models learn theirs from their own text. Each
architecture gets the kind of tokenizer its released models use, with their special tokens, in
their id order where that is practical:

- ``roberta``, ``bart``: byte-level BPE; ``<s>``=0 ``<pad>``=1 ``</s>``=2 ``<unk>``=3
  ``<mask>``=4, ``<s> ... </s>`` around every input (Liu et al., "RoBERTa: A Robustly Optimized
  BERT Pretraining Approach", 2019). The mask absorbs the space before it, so "plays for
  <mask>." asks for the token " Ajax" exactly as "plays for Ajax." spells it.
- ``bert``: lowercasing WordPiece; ``[PAD]``=0 ``[UNK]``=1 ``[CLS]``=2 ``[SEP]``=3 ``[MASK]``=4,
  ``[CLS] ... [SEP]`` around every input (Devlin et al., "BERT: Pre-training of Deep
  Bidirectional Transformers for Language Understanding", 2019, uncased). The vocabulary is
  every character, alone and as a ``##`` continuation, so any word can be spelled, then the most
  frequent whole words (ties by spelling); the library's WordPiece trainer is not used, as it
  breaks ties between equally frequent merges differently from run to run.
- ``t5``: byte-level BPE (T5's own is a SentencePiece model); ``<pad>``=0 ``</s>``=1 ``<unk>``=2
  and the sentinels ``<extra_id_0>``, ``<extra_id_1>``; ``... </s>`` closes every input.
- ``llama``, ``gpt2``: byte-level BPE with ``<pad> <s> </s> <unk> <mask>`` as ids 0-4, of which
  only ``<s>``, ``</s>`` and ``<unk>`` are declared: no padding token, as theirs have none, and
  nothing added around an input.

Saved with ``save_pretrained``, every one loads again with ``AutoTokenizer``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from tokenizers import (
    AddedToken,
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)
from transformers import PreTrainedTokenizerFast

from chronoprobe.errors import UserError
from chronoprobe.models.seq2seq import SENTINELS

_ROBERTA = ("<s>", "<pad>", "</s>", "<unk>", "<mask>")
_DECODER = ("<pad>", "<s>", "</s>", "<unk>", "<mask>")
SPECIAL_TOKENS = {  # in id order from 0; regular tokens follow
    "roberta": _ROBERTA,
    "bart": _ROBERTA,
    "bert": ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"),
    "t5": ("<pad>", "</s>", "<unk>", *SENTINELS),
    "llama": _DECODER,
    "gpt2": _DECODER,
}
ARCHITECTURES = tuple(SPECIAL_TOKENS)

_ROBERTA_ROLES = {
    "bos_token": "<s>",
    "cls_token": "<s>",
    "eos_token": "</s>",
    "sep_token": "</s>",
    "pad_token": "<pad>",
    "unk_token": "<unk>",
    "mask_token": "<mask>",
}
_ROLES = {
    "roberta": _ROBERTA_ROLES,
    "bart": _ROBERTA_ROLES,
    "bert": {
        "cls_token": "[CLS]",
        "sep_token": "[SEP]",
        "pad_token": "[PAD]",
        "unk_token": "[UNK]",
        "mask_token": "[MASK]",
    },
    "t5": {"eos_token": "</s>", "pad_token": "<pad>", "unk_token": "<unk>"},
    "llama": {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"},
    "gpt2": {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"},
}
_TEMPLATES = {  # single, pair, the specials they add; roberta and bart have RoBERTa's processor
    "bert": ("[CLS] $A [SEP]", "[CLS] $A [SEP] $B [SEP]", ("[CLS]", "[SEP]")),
    "t5": ("$A </s>", "$A </s> $B </s>", ("</s>",)),
}


def train_tokenizer(
    texts: Iterable[str], architecture: str, *, vocab_size: int = 1000, min_frequency: int = 1
) -> PreTrainedTokenizerFast:
    """The tokenizer ``architecture`` uses, learned from ``texts``: at most ``vocab_size`` tokens,
    merges (BPE) or words (WordPiece) seen fewer than ``min_frequency`` times left out."""
    if architecture not in SPECIAL_TOKENS:
        raise UserError(f"unknown architecture {architecture!r}; choose one of {ARCHITECTURES}")
    specials = SPECIAL_TOKENS[architecture]
    roles = _ROLES[architecture]
    if architecture == "bert":
        core = _wordpiece(texts, specials, vocab_size, min_frequency)
    else:  # a byte-level mask absorbs the space before it, as RoBERTa's does
        mask = roles.get("mask_token")
        added = [AddedToken(t, special=True, lstrip=t == mask) for t in specials]
        core = _byte_level_bpe(texts, added, vocab_size, min_frequency)
    ids = {t: core.token_to_id(t) for t in specials}
    if architecture in ("roberta", "bart"):
        core.post_processor = processors.RobertaProcessing(
            ("</s>", ids["</s>"]), ("<s>", ids["<s>"])
        )
    elif architecture in _TEMPLATES:
        single, pair, framing = _TEMPLATES[architecture]
        core.post_processor = processors.TemplateProcessing(
            single=single, pair=pair, special_tokens=[(t, ids[t]) for t in framing]
        )
    extra = {"extra_special_tokens": list(SENTINELS)} if architecture == "t5" else {}
    return PreTrainedTokenizerFast(tokenizer_object=core, model_max_length=512, **roles, **extra)


def _byte_level_bpe(
    texts: Iterable[str], specials: list[AddedToken], vocab_size: int, min_frequency: int
) -> Tokenizer:
    core = Tokenizer(models.BPE(unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    core.train_from_iterator(texts, trainer=trainer)
    return core


def _wordpiece(
    texts: Iterable[str], specials: tuple[str, ...], vocab_size: int, min_frequency: int
) -> Tokenizer:
    normalizer = normalizers.BertNormalizer(lowercase=True)
    splitter = pre_tokenizers.BertPreTokenizer()
    counts = Counter(
        word
        for text in texts
        for word, _ in splitter.pre_tokenize_str(normalizer.normalize_str(text))
    )
    chars = sorted({c for word in counts for c in word})
    pieces = [*specials, *chars, *(f"##{c}" for c in chars)]
    words = sorted(
        (w for w, n in counts.items() if len(w) > 1 and n >= min_frequency),
        key=lambda w: (-counts[w], w),
    )
    tokens = [*pieces, *words[: max(0, vocab_size - len(pieces))]]
    core = Tokenizer(models.WordPiece({t: i for i, t in enumerate(tokens)}, unk_token="[UNK]"))
    core.normalizer = normalizer
    core.pre_tokenizer = splitter
    core.decoder = decoders.WordPiece()
    return core
