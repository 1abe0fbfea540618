"""Question encoders: any Hugging Face encoder, or a tiny BERT built here when offline.

The QA models read one vector per question: the final hidden state of the first token ([CLS]
for BERT and DistilBERT, <s> for RoBERTa), as CronKGQA does. Users with a model hub pass an id
(bert-base-uncased, distilbert-base-uncased, roberta-base) or a local path; offline, the
default ``tiny`` builds a two-layer BERT from a config and trains a WordPiece tokenizer on the
training questions, since no pretrained weights can be fetched. Either way the tokenizer and the
encoder's config are saved beside the QA checkpoint, and its weights inside it, so a trained
model loads again without the hub.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor, nn

from chronoprobe.atomic import atomic_write_text
from chronoprobe.errors import UserError

TINY = "tiny"
TOKENIZER_DIR = "tokenizer"
ENCODER_CONFIG = "encoder.json"
# A small BERT: enough to tell question templates apart, trained from scratch in minutes on CPU.
TINY_SHAPE = {
    "hidden_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "intermediate_size": 256,
    "max_position_embeddings": 128,
}
TINY_VOCAB = 4000


@dataclass
class QuestionEncoder:
    """A tokenizer and an encoder module that map question texts to (B, hidden) vectors."""

    tokenizer: object  # a transformers PreTrainedTokenizerBase
    model: nn.Module
    spec: str
    max_length: int = 64

    @property
    def hidden_size(self) -> int:
        config = self.model.config
        return int(getattr(config, "hidden_size", None) or config.dim)

    def tokenize(self, texts: Sequence[str], device: torch.device) -> dict[str, Tensor]:
        batch = self.tokenizer(
            list(texts),
            padding=True,
            truncation=True,
            max_length=self.max_length,
            return_tensors="pt",
        )
        return {k: batch[k].to(device) for k in ("input_ids", "attention_mask")}

    def __call__(self, tokens: dict[str, Tensor]) -> Tensor:
        return self.model(**tokens).last_hidden_state[:, 0]

    def save(self, directory: Path) -> None:
        """Tokenizer files and the encoder config (weights travel in the QA checkpoint)."""
        self.tokenizer.save_pretrained(str(directory / TOKENIZER_DIR))
        body = {
            "spec": self.spec,
            "max_length": self.max_length,
            "config": self.model.config.to_dict(),
        }
        atomic_write_text(directory / ENCODER_CONFIG, json.dumps(body, indent=2) + "\n")


def build_encoder(spec: str, texts: Sequence[str], seed: int = 0) -> QuestionEncoder:
    """A fresh encoder: ``tiny`` (tokenizer trained on ``texts``) or a Hugging Face id/path."""
    if spec == TINY:
        from transformers import BertConfig, BertModel

        from chronoprobe.models.tokenizer import train_tokenizer

        tokenizer = train_tokenizer(texts, "bert", vocab_size=TINY_VOCAB)
        config = BertConfig(vocab_size=len(tokenizer), **TINY_SHAPE)
        torch.manual_seed(seed)  # the config-built weights are the only unseeded draw here
        return QuestionEncoder(tokenizer, BertModel(config, add_pooling_layer=False), spec)
    from transformers import AutoModel, AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(spec)
        model = AutoModel.from_pretrained(spec)
    except OSError as err:
        raise UserError(
            f"encoder {spec!r}: cannot load it ({err}); pass a local model directory, a Hugging "
            f"Face id while online, or {TINY!r} for the in-tool encoder"
        ) from err
    return QuestionEncoder(tokenizer, model, spec)


def load_encoder(directory: Path) -> QuestionEncoder:
    """The encoder saved by :meth:`QuestionEncoder.save`, with untrained weights to overwrite."""
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    path = directory / ENCODER_CONFIG
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
        config = dict(body["config"])
        kind = config.pop("model_type")
    except FileNotFoundError as err:
        raise FileNotFoundError(f"{path}: missing; not a complete KGQA checkpoint") from err
    except (json.JSONDecodeError, KeyError, TypeError) as err:
        raise UserError(f"{path}: not an encoder description ({err!r})") from err
    config = AutoConfig.for_model(kind, **config)
    if body["spec"] == TINY:
        from transformers import BertModel

        model = BertModel(config, add_pooling_layer=False)  # as built: no pooler weights
    else:
        model = AutoModel.from_config(config)
    tokenizer = AutoTokenizer.from_pretrained(str(directory / TOKENIZER_DIR))
    return QuestionEncoder(tokenizer, model, body["spec"], int(body["max_length"]))
