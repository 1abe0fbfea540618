"""The other entities a generated answer may name instead of the gold ones, from the probe set.

Judging (:mod:`chronoprobe.probes.judging`) needs, for each answer, the names of entities it
could mean instead of a gold answer. A probe file holds them itself:

- the *other periods' answers* of the same subject and relation (a stale answer, or one from
  after the period asked): every row of the file counts, whatever part of it is probed;
- *similarly named answers*: every answer entity of the same relation in the file, for any
  subject, and every entity of the ``answer_names.jsonl`` file that ``build drift`` writes
  beside the rows (each entity that answers a probed relation anywhere in the KG, with its
  label and aliases). An imported TempLAMA set has no KG: its own answers serve.

Of the similarly named entities, an answer is judged against those sharing a distinctive word
with it (a word in at most :data:`COMMON` names of the relation), the :data:`MOST_SIMILAR` that
share the most words; the other periods' answers are always kept.

An entity is told apart by its id where the row gives the answers' ids, else by its
normalised label.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from chronoprobe.probes.judging import first_line, name_forms, normalize, split_words

COMMON = 50  # a word in more names of a relation than this finds no similar entity
MOST_SIMILAR = 20  # similar entities kept per answer, those sharing the most words first


class NamedEntity(msgspec.Struct):
    id: str
    relation: str
    names: list[str]


def answer_keys(ids: Sequence[str], labels: Sequence[str]) -> list[str]:
    """How the answers of a row are told apart: their ids when the row has one per label."""
    if len(ids) == len(labels) and all(ids):
        return list(ids)
    return ["=" + normalize(label) for label in labels]


@dataclass
class KnownAnswers:
    """Every answer entity a probe file (and its names file) knows, by relation and by
    (subject, relation, period)."""

    names: dict[str, tuple[str, ...]] = field(default_factory=dict)  # key -> label, aliases
    # relation -> word of a name (or of its paraphrases) -> keys
    words: dict[str | None, dict[str, set[str]]] = field(default_factory=dict)
    # (subject, relation) -> period -> keys
    history: dict[tuple[str | None, str | None], dict[str | None, set[str]]] = field(
        default_factory=dict
    )

    def add_entity(self, relation: str | None, key: str, names: Sequence[str]) -> None:
        known = self.names.setdefault(key, tuple(n for n in names if n))
        index = self.words.setdefault(relation, {})
        for name in known:
            for form in name_forms(name):
                for word in form.words:
                    index.setdefault(word, set()).add(key)

    def add_row(
        self,
        subject: str | None,
        relation: str | None,
        period: str | None,
        keys: Sequence[str],
        labels: Sequence[str],
        aliases: Sequence[Sequence[str]],
    ) -> None:
        for i, (key, label) in enumerate(zip(keys, labels, strict=True)):
            self.add_entity(relation, key, [label, *(aliases[i] if i < len(aliases) else [])])
        self.history.setdefault((subject, relation), {}).setdefault(period, set()).update(keys)

    def read_names(self, path: Path) -> None:
        """Add the entities of a names file; a bad line raises ValueError naming file and line."""
        from chronoprobe.jsonl import numbered_lines

        for _, entity in numbered_lines(path, NamedEntity, "not an answer name"):
            self.add_entity(entity.relation, entity.id, entity.names)

    def other_periods(
        self, subject: str | None, relation: str | None, period: str | None, current: set[str]
    ) -> list[str]:
        """The keys of the subject's answers of the relation in other periods, not current."""
        periods = self.history.get((subject, relation), {})
        return sorted({k for p, keys in periods.items() if p != period for k in keys} - current)

    def similar(self, relation: str | None, text: str, current: set[str]) -> list[str]:
        """The keys of the relation's answers named like ``text`` (see the module docstring)."""
        index = self.words.get(relation, {})
        shared: Counter[str] = Counter()
        for word in set(split_words(first_line(text)).words):
            keys = index.get(word, ())
            if len(keys) <= COMMON:
                shared.update(keys)
        ranked = sorted((k for k in shared if k not in current), key=lambda k: (-shared[k], k))
        return ranked[:MOST_SIMILAR]

    def named(self, keys: Sequence[str]) -> list[tuple[str, ...]]:
        return [self.names[k] for k in keys if self.names.get(k)]
