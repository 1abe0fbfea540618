"""Statement text to model input: words through a word tokenizer, entities and years as symbols.

A row's text is split at what the row says it mentions (its subject's and object's labels, its
years) and at its one [MASK]; the mentions become single symbol tokens, the mask one mask token,
and only the text in between goes through the word tokenizer. Encoding is done once per
distinct text piece (statements repeat a handful of template words millions of times).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from transformers import PreTrainedTokenizerFast

from chronoprobe.datasets.lamatk_vocab import EntityVocab
from chronoprobe.errors import UserError
from chronoprobe.templates import MASK

_YEAR = re.compile(r"(?<![\w+-])[+-]?\d{4,}(?!\w)")
_MASK_PIECE = -1  # stands for the mask token in a segmented text


def _find(text: str, label: str, taken: tuple[int, int] | None) -> tuple[int, int] | None:
    start = text.find(label)
    while start >= 0 and taken and start < taken[1] and start + len(label) > taken[0]:
        start = text.find(label, start + 1)
    return (start, start + len(label)) if start >= 0 else None


def mentioned(row: dict) -> tuple[str, ...]:
    """The entities a statement's text names: its subject and object, less the masked one."""
    return tuple(
        row[key] for key in ("subject", "object") if row.get(key) and row.get("slot") != key
    )


def segment(
    text: str, mentions: Sequence[str], vocab: EntityVocab, where: object = None
) -> list[str | int]:
    """``text`` as word pieces (str) and symbol indices into ``vocab`` (int; -1: the mask).

    ``mentions`` are the entity ids the text names, looked for in order (a statement names its
    subject first) and each outside the ones found before; ids outside the vocabulary are
    ignored. ``where`` names the row in errors.
    """
    if text.count(MASK) != 1:
        raise UserError(f"row {where}: text must hold exactly one {MASK}: {text!r}")
    spans: list[tuple[int, int, int]] = [(text.index(MASK), text.index(MASK) + len(MASK), -1)]
    taken = spans[0][:2]
    first = None
    for entity in mentions:
        index = vocab.entity(entity)
        if index is None:
            continue
        span = _find(text, vocab.labels[entity], first)
        if span is None or (span[0] < taken[1] and span[1] > taken[0]):
            raise UserError(
                f"row {where}: {entity} ({vocab.labels[entity]!r}) is not in its text {text!r}"
            )
        spans.append((*span, index))
        first = first or span
    spans.sort()
    pieces: list[str | int] = []
    at = 0
    for start, end, symbol in spans:
        pieces.extend(_years(text[at:start], vocab))
        pieces.append(symbol)
        at = end
    pieces.extend(_years(text[at:], vocab))
    return pieces


def _years(text: str, vocab: EntityVocab) -> list[str | int]:
    """Word text with every year of the vocabulary turned into its symbol."""
    pieces: list[str | int] = []
    at = 0
    for match in _YEAR.finditer(text):
        index = vocab.year(match.group())
        if index is None:
            continue
        pieces.append(text[at : match.start()])
        pieces.append(index)
        at = match.end()
    pieces.append(text[at:])
    # a word piece keeps its leading space (byte-level BPE spells " for" as one token) and drops
    # the trailing one, which belongs to the symbol after it
    return [p.rstrip() if isinstance(p, str) else p for p in pieces if p != "" and p != " "]


def word_texts(rows: Iterable[dict], vocab: EntityVocab) -> Iterable[str]:
    """The word pieces of the rows' texts: what a word tokenizer needs to learn."""
    for row in rows:
        for text in (row["text"], row.get("text_alone")):
            if text:
                pieces = segment(text, mentioned(row), vocab, row.get("id"))
                yield " ".join(p for p in pieces if isinstance(p, str))


@dataclass
class Encoded:
    """Padded token ids and, per row, where the mask is and which symbol it should be."""

    ids: np.ndarray  # int64 [rows, longest], padded
    lengths: np.ndarray  # int64 [rows]
    mask_at: np.ndarray  # int64 [rows]
    targets: np.ndarray  # int64 [rows], index into the vocabulary; -1 when outside it


class StatementEncoder:
    """Turns rows into model input for a word tokenizer extended by ``vocab`` from ``offset``."""

    def __init__(self, tokenizer: PreTrainedTokenizerFast, vocab: EntityVocab, offset: int):
        self.tokenizer = tokenizer
        self.vocab = vocab
        self.offset = offset
        self._pieces: dict[str, list[int]] = {}

    def _word_ids(self, pieces: set[str]) -> None:
        new = sorted(pieces - self._pieces.keys())
        if new:
            encoded = self.tokenizer(new, add_special_tokens=False)["input_ids"]
            self._pieces.update(zip(new, encoded, strict=True))

    def encode_texts(
        self, texts: Sequence[str], mentions: Sequence[Sequence[str]], max_length: int, names=None
    ) -> Encoded:
        """Model input for texts naming the given entities (targets all -1); ``names`` name the
        texts in errors (default: their positions)."""
        names = names if names is not None else range(len(texts))
        segmented = [
            segment(text, named, self.vocab, where)
            for text, named, where in zip(texts, mentions, names, strict=True)
        ]
        self._word_ids({p for pieces in segmented for p in pieces if isinstance(p, str)})
        bos, eos = self.tokenizer.bos_token_id, self.tokenizer.eos_token_id
        mask, pad = self.tokenizer.mask_token_id, self.tokenizer.pad_token_id
        sequences = []
        mask_at = np.empty(len(texts), dtype=np.int64)
        for n, (where, pieces) in enumerate(zip(names, segmented, strict=True)):
            ids = [bos]
            for piece in pieces:
                if isinstance(piece, str):
                    ids.extend(self._pieces[piece])
                elif piece == _MASK_PIECE:
                    mask_at[n] = len(ids)
                    ids.append(mask)
                else:
                    ids.append(self.offset + piece)
            ids.append(eos)
            if len(ids) > max_length:
                raise UserError(
                    f"row {where}: {len(ids)} tokens, more than the model's {max_length}"
                )
            sequences.append(ids)
        lengths = np.fromiter(map(len, sequences), dtype=np.int64, count=len(sequences))
        padded = np.full((len(texts), int(lengths.max(initial=1))), pad, dtype=np.int64)
        for n, ids in enumerate(sequences):
            padded[n, : len(ids)] = ids
        return Encoded(padded, lengths, mask_at, np.full(len(texts), -1, dtype=np.int64))

    def encode(self, rows: Sequence[dict], texts: Sequence[str], max_length: int) -> Encoded:
        """Model input for statement rows (their ``texts``), with each row's target symbol."""
        encoded = self.encode_texts(
            texts, [mentioned(row) for row in rows], max_length, [row.get("id") for row in rows]
        )
        encoded.targets[:] = [
            -1 if (t := self.vocab.target(row["slot"], row["target"])) is None else t
            for row in rows
        ]
        return encoded
