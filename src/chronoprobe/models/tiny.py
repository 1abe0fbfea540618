"""Small random models with a tokenizer trained on the spot, for tests, benchmarks and demos.

Nothing is downloaded: a byte-level BPE is trained on the given sentences in milliseconds, and
each family gets a randomly initialised model of a real architecture (RoBERTa, Llama, GPT-2, T5,
BART) sized by a few numbers. Random weights give arbitrary but fixed scores, which is all a
parity test or a throughput measurement needs.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import PreTrainedModel, PreTrainedTokenizerFast

SPECIALS = ["<pad>", "<s>", "</s>", "<unk>"]
SENTINELS = ["<extra_id_0>", "<extra_id_1>"]
ARCHITECTURES = ("roberta", "bert", "llama", "gpt2", "t5", "bart")


def train_tokenizer(
    sentences: Iterable[str], architecture: str, vocab_size: int = 1000
) -> PreTrainedTokenizerFast:
    """A byte-level BPE with the special tokens and post-processing ``architecture`` expects."""
    if architecture not in ARCHITECTURES:
        raise ValueError(f"unknown architecture {architecture!r}; choose one of {ARCHITECTURES}")
    specials = SPECIALS + (SENTINELS if architecture == "t5" else ["<mask>"])
    raw = Tokenizer(models.BPE(unk_token="<unk>"))
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    raw.train_from_iterator(
        sentences,
        trainers.BpeTrainer(
            vocab_size=vocab_size,
            special_tokens=specials,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        ),
    )
    ids = {t: raw.token_to_id(t) for t in specials}
    if architecture in ("roberta", "bert", "bart"):
        # a mask token swallows the space before it, as RoBERTa's does, so "by <mask>" and
        # "by Paris" put the gap and " Paris" at the same position
        raw.add_special_tokens([AddedToken("<mask>", lstrip=True, special=True)])
        raw.post_processor = processors.RobertaProcessing(
            ("</s>", ids["</s>"]), ("<s>", ids["<s>"]), trim_offsets=True
        )
        return PreTrainedTokenizerFast(
            tokenizer_object=raw,
            bos_token="<s>",
            eos_token="</s>",
            pad_token="<pad>",
            unk_token="<unk>",
            cls_token="<s>",
            sep_token="</s>",
            mask_token=AddedToken("<mask>", lstrip=True, special=True),
        )
    if architecture == "t5":
        raw.post_processor = processors.TemplateProcessing(
            single="$A </s>", special_tokens=[("</s>", ids["</s>"])]
        )
        return PreTrainedTokenizerFast(
            tokenizer_object=raw,
            eos_token="</s>",
            pad_token="<pad>",
            unk_token="<unk>",
            extra_special_tokens=SENTINELS,
        )
    return PreTrainedTokenizerFast(  # llama, gpt2: no padding token, as theirs have none
        tokenizer_object=raw, bos_token="<s>", eos_token="</s>", unk_token="<unk>"
    )


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

    vocab = len(tokenizer)
    special = {
        "pad_token_id": tokenizer.pad_token_id,
        "bos_token_id": tokenizer.bos_token_id,
        "eos_token_id": tokenizer.eos_token_id,
    }
    bert_like = {
        "vocab_size": vocab,
        "hidden_size": hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "intermediate_size": 4 * hidden,
        "type_vocab_size": 1,
        **special,
    }
    builders = {
        "roberta": lambda: tf.RobertaForMaskedLM(
            tf.RobertaConfig(max_position_embeddings=max_positions + 2, **bert_like)
        ),
        "bert": lambda: tf.BertForMaskedLM(
            tf.BertConfig(max_position_embeddings=max_positions, **bert_like)
        ),
        "llama": lambda: tf.LlamaForCausalLM(
            tf.LlamaConfig(
                vocab_size=vocab,
                hidden_size=hidden,
                intermediate_size=4 * hidden,
                num_hidden_layers=layers,
                num_attention_heads=heads,
                num_key_value_heads=heads,
                max_position_embeddings=max_positions,
                tie_word_embeddings=True,
                **special,
            )
        ),
        "gpt2": lambda: tf.GPT2LMHeadModel(
            tf.GPT2Config(
                vocab_size=vocab,
                n_embd=hidden,
                n_layer=layers,
                n_head=heads,
                n_positions=max_positions,
                **special,
            )
        ),
        "t5": lambda: tf.T5ForConditionalGeneration(
            tf.T5Config(
                vocab_size=vocab,
                d_model=hidden,
                d_kv=hidden // heads,
                d_ff=4 * hidden,
                num_layers=layers,
                num_heads=heads,
                decoder_start_token_id=tokenizer.pad_token_id,
                **special,
            )
        ),
        "bart": lambda: tf.BartForConditionalGeneration(
            tf.BartConfig(
                vocab_size=vocab,
                d_model=hidden,
                encoder_layers=layers,
                decoder_layers=layers,
                encoder_attention_heads=heads,
                decoder_attention_heads=heads,
                encoder_ffn_dim=4 * hidden,
                decoder_ffn_dim=4 * hidden,
                max_position_embeddings=max_positions,
                decoder_start_token_id=tokenizer.eos_token_id,
                forced_eos_token_id=None,
                **special,
            )
        ),
    }
    if architecture not in builders:
        raise ValueError(f"unknown architecture {architecture!r}; choose one of {ARCHITECTURES}")
    torch.manual_seed(seed)
    return builders[architecture]().eval()
