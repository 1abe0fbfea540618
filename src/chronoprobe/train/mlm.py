"""Masked-LM training batches: whole-word and salient-span (entity) masking, and the loss.

A masking *unit* is a word, except that a mention of a KG entity ("Manchester City", "Ann
Ash") is one unit, masked all at once. Units are chosen independently: entity mentions with
``entity_prob``, other words with ``prob`` (at least one unit per sentence). Masking names whole
is salient span masking (Guu et al., 2020, REALM): a small model trained on "X plays for Y."
with words masked at random mostly learns which clubs are frequent in the period, whatever the
subject; asking it for whole names often makes it learn which subject goes with which object,
which is what a fact probe asks. Chosen tokens become ``<mask>`` (80%), a random non-special
token (10%) or stay (10%), as in BERT.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import torch
from transformers import PreTrainedModel, PreTrainedTokenizerFast

from chronoprobe.models.tokenizer import train_tokenizer


class MentionFinder:
    """Finds KG labels in text, longest first, aligned to the tokenizer's words.

    Candidates are looked up by a mention's first word, so a sentence costs a few dict lookups
    per word, whatever the number of labels.
    """

    def __init__(self, tokenizer: PreTrainedTokenizerFast, labels: Iterable[str]) -> None:
        self.split = tokenizer.backend_tokenizer.pre_tokenizer.pre_tokenize_str
        by_first: dict[str, set[str]] = {}
        for label in labels:
            pieces = self.split(label) if label.strip() else []
            if pieces:
                by_first.setdefault(_bare(pieces[0][0]), set()).add(label)
        self.by_first = {k: sorted(v, key=len, reverse=True) for k, v in by_first.items()}

    def units(self, text: str) -> tuple[list[int], list[bool]]:
        """For each word of ``text``: its unit index, and whether the unit is a mention."""
        pieces = self.split(text)
        unit = list(range(len(pieces)))
        salient = [False] * len(pieces)
        n = 0
        while n < len(pieces):
            piece, (start, _) = pieces[n]
            start += piece.startswith("Ġ")  # past the space the word carries
            end = next(
                (
                    start + len(label)
                    for label in self.by_first.get(_bare(piece), ())
                    if text.startswith(label, start)
                    and not text[start + len(label) : start + len(label) + 1].isalnum()
                ),
                None,
            )
            if end is None:
                n += 1
                continue
            last = n
            while last + 1 < len(pieces) and pieces[last + 1][1][0] < end:
                last += 1
            for k in range(n, last + 1):
                unit[k], salient[k] = n, True
            n = last + 1
        return unit, salient


def _bare(piece: str) -> str:
    return piece.removeprefix("Ġ")  # the byte-level form of a leading space


def text_tokenizer(lines: Iterable[str], vocab_size: int) -> PreTrainedTokenizerFast:
    """The tokenizer the masked LMs trained here (model series, pretraining) learn from their
    text: RoBERTa's kind, a merge seen only once left out."""
    return train_tokenizer(lines, "roberta", vocab_size=vocab_size, min_frequency=2)


@dataclass
class Encoded:
    ids: list[list[int]]
    units: list[list[int]]  # masking unit per token, -1 for special tokens
    salient: list[list[bool]]  # token belongs to an entity mention

    def __len__(self) -> int:
        return len(self.ids)


def encode(
    tokenizer: PreTrainedTokenizerFast,
    texts: Sequence[str],
    max_length: int,
    mentions: MentionFinder | None = None,
) -> Encoded:
    batch = tokenizer(list(texts), truncation=True, max_length=max_length)
    out = Encoded(list(batch.input_ids), [], [])
    for row, text in enumerate(texts):
        words = batch.word_ids(row)
        unit, salient = mentions.units(text) if mentions else (None, None)
        out.units.append([-1 if w is None else (unit[w] if unit else w) for w in words])
        out.salient.append([w is not None and bool(salient and salient[w]) for w in words])
    return out


def pad_batch(encoded: Encoded, rows: Sequence[int], pad_id: int) -> tuple[torch.Tensor, ...]:
    """input ids, attention mask, units (-1 at specials and padding) and salience of some rows."""
    width = max(len(encoded.ids[r]) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    units = torch.full((len(rows), width), -1, dtype=torch.long)
    salient = torch.zeros((len(rows), width), dtype=torch.bool)
    for n, r in enumerate(rows):
        length = len(encoded.ids[r])
        ids[n, :length] = torch.tensor(encoded.ids[r])
        units[n, :length] = torch.tensor(encoded.units[r])
        salient[n, :length] = torch.tensor(encoded.salient[r])
    return ids, (ids != pad_id).long(), units, salient


def mask_units(
    ids: torch.Tensor,
    units: torch.Tensor,
    salient: torch.Tensor,
    *,
    mask_id: int,
    first_regular_id: int,
    vocab_size: int,
    prob: float,
    entity_prob: float,
    generator: torch.Generator,
) -> tuple[torch.Tensor, torch.Tensor]:
    """(masked inputs, labels with -100 where nothing is asked); see the module docstring."""
    n_rows, n_units = ids.shape[0], max(int(units.max()) + 1, 1)
    rows = torch.arange(n_rows).unsqueeze(1).expand_as(units)
    real = units >= 0
    present = torch.zeros(n_rows, n_units, dtype=torch.bool)
    present[rows[real], units[real]] = True
    mention = torch.zeros(n_rows, n_units, dtype=torch.bool)
    mention[rows[real & salient], units[real & salient]] = True
    draw = torch.rand(n_rows, n_units, generator=generator)
    chosen = (draw < torch.where(mention, entity_prob, prob)) & present
    empty = ~chosen.any(dim=1)  # rows that would ask nothing get their likeliest unit
    chosen[empty, draw.masked_fill(~present, 2.0).argmin(dim=1)[empty]] = True
    chosen &= present
    selected = chosen.gather(1, units.clamp(min=0)) & real
    labels = torch.where(selected, ids, torch.full_like(ids, -100))
    how = torch.rand(ids.shape, generator=generator)
    inputs = ids.clone()
    inputs[selected & (how < 0.8)] = mask_id
    swap = selected & (how >= 0.8) & (how < 0.9)
    randoms = torch.randint(first_regular_id, vocab_size, ids.shape, generator=generator)
    inputs[swap] = randoms[swap]
    return inputs, labels


def mlm_loss(
    model: PreTrainedModel, inputs: torch.Tensor, attention: torch.Tensor, labels: torch.Tensor
) -> torch.Tensor:
    """Cross-entropy at the masked positions; the output layer runs on those positions only
    (where the model exposes its head, as RoBERTa's ``lm_head``), a third of a tiny model's
    step otherwise spent on logits nobody reads."""
    head = getattr(model, "lm_head", None)
    if head is None:
        return model(input_ids=inputs, attention_mask=attention, labels=labels).loss
    hidden = model.base_model(input_ids=inputs, attention_mask=attention).last_hidden_state
    chosen = labels != -100
    return torch.nn.functional.cross_entropy(head(hidden[chosen]).float(), labels[chosen])
