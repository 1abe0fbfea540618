"""The other entities a generated answer may name instead of the gold ones: the probe set's KG.

Judging (:mod:`chronoprobe.probes.judging`) needs, for each answer, the names of entities it
could mean instead of a gold answer. They come from the ``answer_names.jsonl`` file beside the
rows, the probe set's KG: ``build drift`` writes every entity that answers a probed relation
anywhere in the KG, and ``import templama`` every answer of the released files (with their
aliases, from ``--aliases KG``), each with its label and aliases. Nothing else of the file
counts, so an answer's verdict depends on its row, the KG and the answer alone, never on which
other rows the file holds: a file and any subset of it are judged alike. Rows without a names
file are judged against their own answers alone, with no other entity to refuse.

Of the entities of the row's relation, an answer is judged against

- those sharing a distinctive word with it (a word in at most :data:`COMMON` names of the
  relation), the :data:`MOST_SIMILAR` that share the most words;
- those named exactly as a gold answer (homonyms: the KG's four parties called "Democratic
  Party"), so that a rule can tell when a gold name alone does not say which entity is meant.

The subject's answers of the file's other periods (:class:`History`) say whether an answer is
stale (``other_period`` in the generate view); they are no part of any verdict.

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
    """Every answer entity of a probe set's KG (its names file), by relation."""

    names: dict[str, tuple[str, ...]] = field(default_factory=dict)  # key -> label, aliases
    # relation -> word of a name (or of its paraphrases) -> keys
    words: dict[str | None, dict[str, set[str]]] = field(default_factory=dict)
    # relation -> a normalised name -> keys
    exact: dict[str | None, dict[str, set[str]]] = field(default_factory=dict)

    def add_entity(self, relation: str | None, key: str, names: Sequence[str]) -> None:
        known = self.names.setdefault(key, tuple(n for n in names if n))
        index = self.words.setdefault(relation, {})
        exact = self.exact.setdefault(relation, {})
        for name in known:
            exact.setdefault(normalize(name), set()).add(key)
            for form in name_forms(name):
                for word in form.words:
                    index.setdefault(word, set()).add(key)

    @classmethod
    def read(cls, path: Path) -> KnownAnswers:
        """The entities of a names file; a bad line raises ValueError naming file and line."""
        from chronoprobe.jsonl import numbered_lines

        known = cls()
        for _, entity in numbered_lines(path, NamedEntity, "not an answer name"):
            known.add_entity(entity.relation, entity.id, entity.names)
        return known

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

    def homonyms(self, relation: str | None, names: Sequence[str], current: set[str]) -> list[str]:
        """The keys of the relation's other answers named exactly as one of ``names``."""
        exact = self.exact.get(relation, {})
        found = {k for name in names for k in exact.get(normalize(name), ())}
        return sorted(found - current)

    def named(self, keys: Sequence[str]) -> list[tuple[str, ...]]:
        return [self.names[k] for k in keys if self.names.get(k)]


@dataclass
class History:
    """The answers of each (subject, relation) in each period of one probe file, and their
    names: what tells a stale answer (another period's) from a wrong one."""

    periods: dict[tuple[str | None, str | None], dict[str | None, set[str]]] = field(
        default_factory=dict
    )
    names: dict[str, tuple[str, ...]] = field(default_factory=dict)

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
            names = [label, *(aliases[i] if i < len(aliases) else [])]
            self.names.setdefault(key, tuple(n for n in names if n))
        self.periods.setdefault((subject, relation), {}).setdefault(period, set()).update(keys)

    def other_periods(
        self, subject: str | None, relation: str | None, period: str | None, current: set[str]
    ) -> list[str]:
        """The keys of the subject's answers of the relation in other periods, not current."""
        periods = self.periods.get((subject, relation), {})
        return sorted({k for p, keys in periods.items() if p != period for k in keys} - current)

    def named(self, keys: Sequence[str]) -> list[tuple[str, ...]]:
        return [self.names[k] for k in keys if self.names.get(k)]
