"""The names of a KG's entities (label, then aliases) by id, from any KG chronoprobe reads.

``import templama --aliases KG`` joins released answers to a KG by their Wikidata ids. The KG
may be a KG directory (``chronoprobe kg convert``), or a source file that a ``kg convert``
format reads, told from its contents: a Wikidata dump slice, SPARQL JSON results (facts with
``?subjectAltLabel`` / ``?objectAltLabel``, or labels and ``skos:altLabel`` alone, see
``docs/templama.md``) or a JSONL file of entities with an ``aliases`` field. Records of the
file it cannot read are skipped and counted, as ``kg convert`` skips them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from chronoprobe.errors import UserError


@dataclass(frozen=True)
class EntityNames:
    """id -> (label, alias, ...), the source they came from, and what was skipped reading it."""

    names: dict[str, tuple[str, ...]]
    source: str
    skipped: list[str] = field(default_factory=list)

    @property
    def with_aliases(self) -> int:
        return sum(len(n) > 1 for n in self.names.values())


def read_entity_names(path: str | Path, lang: str = "en") -> EntityNames:
    """The names of every entity of the KG at ``path``; ValueError says why it is no KG."""
    from chronoprobe.kg.graph import TemporalKG, table_rows

    path = Path(path)
    skipped: list[str] = []
    if path.is_dir():
        kg = TemporalKG.load(path)
        what = "KG directory"
    else:
        kg, skipped, what = _load_source(path, lang)
    names = {}
    for entity, label, aliases in table_rows(kg.entities, "id", "label", "aliases"):
        known = [n for n in [label, *(aliases or [])] if n and n != entity]
        names[entity] = tuple(dict.fromkeys(known))
    return EntityNames({k: v for k, v in names.items() if v}, f"{path} ({what})", skipped)


def _load_source(path: Path, lang: str):
    from chronoprobe.kg.io.options import LOADERS, LoadOptions
    from chronoprobe.kg.io.problems import Problems
    from chronoprobe.kg.io.shapes import sniff

    shape = sniff(path)
    if shape is None or shape.format is None:
        raise UserError(
            f"{path}: not a KG directory, and no KG source format chronoprobe reads "
            "(a Wikidata dump slice, SPARQL JSON results, JSONL entities); convert it with "
            "`chronoprobe kg convert FILE --format FORMAT -o DIR` and give DIR"
        )
    problems = Problems(strict=False)
    kg = LOADERS.get(shape.format)([path], LoadOptions(lang=lang), problems)
    return kg, [line.strip() for line in problems.summary()], f"{shape.format} file"
