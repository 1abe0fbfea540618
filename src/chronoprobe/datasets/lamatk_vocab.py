"""The symbolic vocabulary: one token per entity and per year (LAMA-TK, "symbolic representation").

An entity such as "Barack Obama" is one token whatever its name's length, so a masked slot is one
mask token and prediction is a softmax over entities and years. The vocabulary also keeps each
entity's label: the input text mentions entities by label, and the encoder replaces each mention
by its entity token. Labels come from the KG, through the labels file the builder writes beside
its statements (``vocab.jsonl``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import msgspec

from chronoprobe.atomic import atomic_write_text
from chronoprobe.errors import UserError
from chronoprobe.jsonl import numbered_lines, write_jsonl
from chronoprobe.time import format_year

FORMAT = "chronoprobe-entity-vocab/1"
ENTITY_SLOTS = frozenset({"subject", "object"})
YEAR_SLOTS = frozenset({"start", "end", "time"})


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
            raise UserError(f"{path}: not a chronoprobe entity vocabulary ({FORMAT})")
        entities = tuple(e for e, _ in data["entities"])
        return cls(entities, dict(data["entities"]), tuple(data["years"]))


LABELS_FILE = "vocab.jsonl"  # written by the LAMA-TK builder beside its statements


class _Label(msgspec.Struct):
    id: str
    label: str


def write_labels(path: str | Path, labels: Mapping[str, str]) -> None:
    """One ``{"id", "label"}`` line per entity, in id order."""
    write_jsonl(path, ({"id": e, "label": labels[e]} for e in sorted(labels)))


def read_labels(path: str | Path) -> dict[str, str]:
    """Entity id -> label from a labels file; a bad line raises ValueError naming it."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"{path}: no such file; the statements' entity labels come from it "
            "(`chronoprobe build lamatk` writes it beside statements.jsonl)"
        )
    return {line.id: line.label for _, line in numbered_lines(path, _Label, "not an entity label")}
