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

from chronoprobe.templates import MASK
from chronoprobe.train.entity_vocab import EntityVocab

_YEAR = re.compile(r"(?<![\w+-])[+-]?\d{4,}(?!\w)")
_MASK_PIECE = -1  # stands for the mask token in a segmented text


def _find(text: str, label: str, taken: tuple[int, int] | None) -> tuple[int, int] | None:
    start = text.find(label)
    while start >= 0 and taken and start < taken[1] and start + len(label) > taken[0]:
        start = text.find(label, start + 1)
    return (start, start + len(label)) if start >= 0 else None


def segment(row: dict, text: str, vocab: EntityVocab) -> list[str | int]:
    """``text`` as word pieces (str) and symbol indices into ``vocab`` (int; -1: the mask).

    The subject is looked for first (templates name it first), then the object outside it.
    A mention the row names but the text lacks is fine when that slot is the masked one.
    """
    if text.count(MASK) != 1:
        raise ValueError(f"row {row.get('id')}: text must hold exactly one {MASK}: {text!r}")
    spans: list[tuple[int, int, int]] = [(text.index(MASK), text.index(MASK) + len(MASK), -1)]
    taken = spans[0][:2]
    subject_span = None
    for key in ("subject", "object"):
        entity = row.get(key)
        index = vocab.entity(entity) if entity else None
        if index is None or row.get("slot") == key:
            continue
        span = _find(text, vocab.labels[entity], subject_span)
        if span is None or (span[0] < taken[1] and span[1] > taken[0]):
            raise ValueError(
                f"row {row.get('id')}: {key} {entity} ({vocab.labels[entity]!r}) is not in "
                f"its text {text!r} (labels are read off the statements; give the KG with --kg "
                "to take them from there)"
            )
        spans.append((*span, index))
        subject_span = span if key == "subject" else subject_span
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
                yield " ".join(p for p in segment(row, text, vocab) if isinstance(p, str))


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

    def encode(self, rows: Sequence[dict], texts: Sequence[str], max_length: int) -> Encoded:
        segmented = [segment(row, text, self.vocab) for row, text in zip(rows, texts, strict=True)]
        self._word_ids({p for pieces in segmented for p in pieces if isinstance(p, str)})
        bos, eos = self.tokenizer.bos_token_id, self.tokenizer.eos_token_id
        mask, pad = self.tokenizer.mask_token_id, self.tokenizer.pad_token_id
        sequences = []
        mask_at = np.empty(len(rows), dtype=np.int64)
        for n, (row, pieces) in enumerate(zip(rows, segmented, strict=True)):
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
                raise ValueError(
                    f"row {row.get('id')}: {len(ids)} tokens, more than the model's {max_length}"
                )
            sequences.append(ids)
        lengths = np.fromiter(map(len, sequences), dtype=np.int64, count=len(sequences))
        padded = np.full((len(rows), int(lengths.max(initial=1))), pad, dtype=np.int64)
        for n, ids in enumerate(sequences):
            padded[n, : len(ids)] = ids
        targets = np.fromiter(
            (
                -1 if (t := self.vocab.target(row["slot"], row["target"])) is None else t
                for row in rows
            ),
            dtype=np.int64,
            count=len(rows),
        )
        return Encoded(padded, lengths, mask_at, targets)
