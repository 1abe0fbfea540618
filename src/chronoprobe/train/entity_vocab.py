"""The symbolic vocabulary: one token per entity and per year (LAMA-TK, "symbolic representation").

An entity such as "Barack Obama" is one token whatever its name's length, so a masked slot is one
mask token and prediction is a softmax over entities and years. The vocabulary also keeps each
entity's label: the input text mentions entities by label, and the encoder replaces each mention
by its entity token. Labels come from the KG, or are read back from the statements themselves
(every LAMA-TK statement is a template filled with labels, so the template gives them away).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path

from chronoprobe.atomic import atomic_write_text
from chronoprobe.datasets.lamatk import (
    LamaTKTemplates,
    StatementBuilder,
    YearFact,
    load_lamatk_templates,
)
from chronoprobe.templates import MASK
from chronoprobe.time import format_year

FORMAT = "chronoprobe-entity-vocab/1"
ENTITY_SLOTS = frozenset({"subject", "object"})
YEAR_SLOTS = frozenset({"start", "end", "time"})
_SUBJECT, _OBJECT = "\x00S\x00", "\x00O\x00"


def parse_year(text: str) -> int:
    """A year as LAMA-TK rows write it ("2009", "-0059", "+10000")."""
    return int(text)


@dataclass(frozen=True)
class EntityVocab:
    """Entities (ids, with labels) then years, in token order; years form one unbroken range.

    The range covers every year between the first and the last one seen, so a query about a year
    inside a fact (the implicit-knowledge set) finds a year token even if no fact starts or ends
    in that year. Entities are kept by id: two entities that share a label are two tokens.
    """

    entities: tuple[str, ...]
    labels: Mapping[str, str]
    years: tuple[str, ...]

    @classmethod
    def from_rows(cls, rows: Iterable[dict], labels: Mapping[str, str]) -> EntityVocab:
        ids: set[str] = set()
        years: set[int] = set()
        for row in rows:
            ids.update((row["subject"], row["object"]))
            years.update(parse_year(row[key]) for key in ("start", "end") if row.get(key))
            if row["slot"] in YEAR_SLOTS:
                years.add(parse_year(row["target"]))
        span = range(min(years), max(years) + 1) if years else range(0)
        # an entity only ever masked is never looked for in a text, so its id serves as label
        return cls(
            tuple(sorted(ids)),
            {e: labels.get(e, e) for e in sorted(ids)},
            tuple(map(format_year, span)),
        )

    @cached_property
    def keys(self) -> tuple[str, ...]:
        """What each token predicts, in token order: an entity id or a year."""
        return self.entities + self.years

    @cached_property
    def _entity_index(self) -> dict[str, int]:
        return {e: i for i, e in enumerate(self.entities)}

    @cached_property
    def _year_index(self) -> dict[str, int]:
        return {y: len(self.entities) + i for i, y in enumerate(self.years)}

    def __len__(self) -> int:
        return len(self.entities) + len(self.years)

    def entity(self, entity_id: str) -> int | None:
        return self._entity_index.get(entity_id)

    def year(self, year: str) -> int | None:
        return self._year_index.get(year)

    def target(self, slot: str, value: str) -> int | None:
        """The token a slot's value is predicted as (None: outside the vocabulary)."""
        return self.entity(value) if slot in ENTITY_SLOTS else self.year(value)

    def save(self, path: str | Path) -> None:
        data = {
            "format": FORMAT,
            "entities": [[e, self.labels[e]] for e in self.entities],
            "years": list(self.years),
        }
        atomic_write_text(path, json.dumps(data, ensure_ascii=False) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> EntityVocab:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"{path}: not a chronoprobe entity vocabulary ({FORMAT})")
        entities = tuple(e for e, _ in data["entities"])
        return cls(entities, dict(data["entities"]), tuple(data["years"]))


class _Placeholders:
    """Stands in for a KG: every entity's label is its id, so labels can be found in a sentence."""

    @staticmethod
    def label(entity_id: str) -> str:
        return entity_id


@lru_cache(maxsize=65536)
def _pattern(sentence: str) -> re.Pattern[str]:
    escaped = re.escape(sentence)
    escaped = escaped.replace(re.escape(_SUBJECT), "(?P<s>.+?)", 1)
    return re.compile(escaped.replace(re.escape(_OBJECT), "(?P<o>.+?)", 1))


def infer_labels(rows: Iterable[dict], templates: LamaTKTemplates | None = None) -> dict[str, str]:
    """Entity labels read off LAMA-TK statements by matching each text against its template.

    Only rows whose relation has a template can be read; an id read with two different labels
    is an error, as it means the statements were not built from one KG.
    """
    templates = templates or load_lamatk_templates()
    builder = StatementBuilder(_Placeholders(), templates)  # type: ignore[arg-type]
    labels: dict[str, str] = {}
    for row in rows:
        if row["relation"] not in templates.relations:
            continue
        fact = YearFact(
            row["relation"], _SUBJECT, _OBJECT, parse_year(row["start"]), parse_year(row["end"])
        )
        match = _pattern(builder.sentence(fact, row["slot"])).fullmatch(row["text"])
        if match is None:
            continue
        for group, key in (("s", "subject"), ("o", "object")):
            label = match.groupdict().get(group)
            if label is None or label == MASK:
                continue
            known = labels.setdefault(row[key], label)
            if known != label:
                raise ValueError(
                    f"row {row.get('id')}: entity {row[key]} is called {label!r} here "
                    f"and {known!r} elsewhere"
                )
    return labels
