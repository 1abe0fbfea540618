"""The synthetic world: the embedded default that lets everything run offline.

``synthesize(SynthConfig(seed=0, facts=100_000))`` returns a seeded, deterministic world of
people, teams, companies, universities, offices, awards, countries, parties and events, as a
TemporalKG plus per-entity articles and dated text snippets (the corpus models are trained on).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from chronoprobe.atomic import atomic_path
from chronoprobe.errors import UserError
from chronoprobe.kg.graph import TemporalKG, relations_table
from chronoprobe.kg.records import ENTITY_SCHEMA, FACT_SCHEMA, Relation
from chronoprobe.kg.synth.generate import WorldBuilder
from chronoprobe.kg.synth.world import RELATION_LABELS, Dates, EntityTable, FactChunk

PEOPLE_PER_FACT = 0.23  # about how many people a world of N facts has, for --people


MAX_FACTS = 2_500_000  # the invented place names run out at about 2.8 million facts


@dataclass(frozen=True)
class SynthConfig:
    seed: int = 0
    facts: int | None = 20_000  # approximate number of facts
    people: int | None = None  # alternatively, size the world by its number of people
    start_year: int = 1950
    end_year: int = 2024
    text: bool = True  # also write articles and dated snippets

    def target_facts(self) -> int:
        if self.people is not None:
            return max(200, round(self.people / PEOPLE_PER_FACT))
        if self.facts is None:
            raise UserError("give facts or people")
        return self.facts

    def __post_init__(self) -> None:
        if self.end_year - self.start_year < 20:
            raise UserError("the world needs at least 20 years between its first and last year")
        if (self.facts is not None and self.facts < 200) or (
            self.people is not None and self.people < 50
        ):
            raise UserError("a world needs at least 200 facts (or 50 people)")
        if self.target_facts() > MAX_FACTS:
            people = round(MAX_FACTS * PEOPLE_PER_FACT)
            raise UserError(
                f"a world holds at most {MAX_FACTS:,} facts (about {people:,} people): beyond, "
                "its invented names run out"
            )


@dataclass
class SynthWorld:
    kg: TemporalKG
    articles: pa.Table | None = None  # id, title, text
    snippets: pa.Table | None = None  # id, entity, date, year, text

    def save(self, directory: str | Path) -> Path:
        out = self.kg.save(directory)
        for name in ("articles", "snippets"):
            table = getattr(self, name)
            if table is not None:
                with atomic_path(out / f"{name}.parquet") as tmp:
                    pq.write_table(table, tmp, compression="zstd")
        return out

    @classmethod
    def load(cls, directory: str | Path) -> SynthWorld:
        path = Path(directory)
        texts = {
            name: pq.read_table(path / f"{name}.parquet")
            for name in ("articles", "snippets")
            if (path / f"{name}.parquet").is_file()
        }
        return cls(TemporalKG.load(path), **texts)


def _bound_arrays(dates: Dates, prefix: str) -> dict[str, pa.Array]:
    absent = dates.precision == 0
    return {
        f"{prefix}_year": pa.array(dates.year, pa.int32(), mask=absent),
        f"{prefix}_month": pa.array(dates.month, pa.int8(), mask=absent | (dates.month == 0)),
        f"{prefix}_day": pa.array(dates.day, pa.int8(), mask=absent | (dates.day == 0)),
        f"{prefix}_precision": pa.array(dates.precision, pa.int8(), mask=absent),
    }


def entity_id(index) -> np.ndarray:
    """Synthetic ids: "E" + number, never confused with Wikidata's Q ids."""
    return np.char.add("E", np.asarray(index).astype(str))


def facts_table(chunks: list[FactChunk]) -> pa.Table:
    tables = []
    for chunk in chunks:
        n = len(chunk.subject)
        if n == 0:
            continue
        columns = {
            "subject": pa.array(entity_id(chunk.subject)),
            "relation": pa.array(np.full(n, chunk.relation)),
            "object": pa.array(entity_id(chunk.object)),
            **_bound_arrays(chunk.start, "start"),
            **_bound_arrays(chunk.end, "end"),
        }
        tables.append(pa.table(columns).cast(FACT_SCHEMA))
    return pa.concat_tables(tables) if tables else FACT_SCHEMA.empty_table()


def entity_arrow(entities: EntityTable) -> pa.Table:
    def bound(rows, prefix):
        array = np.array(rows, dtype=np.int64).reshape(-1, 4)
        return _bound_arrays(Dates(array[:, 0], array[:, 1], array[:, 2], array[:, 3]), prefix)

    n = len(entities.label)
    return pa.table(
        {
            "id": pa.array(entity_id(np.arange(n))),
            "label": entities.label,
            "aliases": [list(a) for a in entities.aliases],
            "description": entities.description,
            **bound(entities.start, "start"),
            **bound(entities.end, "end"),
            "type": entities.type,
        }
    ).cast(ENTITY_SCHEMA)


def synthesize(config: SynthConfig | None = None) -> SynthWorld:
    """Generate a world; the same config always gives the same world."""
    config = config or SynthConfig()
    builder = WorldBuilder(config.seed, config.target_facts(), config.start_year, config.end_year)
    entities, chunks = builder.build()
    kg = TemporalKG.from_tables(
        entities=entity_arrow(entities),
        relations=relations_table(Relation(r, label) for r, label in RELATION_LABELS.items()),
        facts=facts_table(chunks),
        name="synthetic-world",
        meta={"generator": "chronoprobe.kg.synth", "config": asdict(config)},
    )
    if not config.text:
        return SynthWorld(kg)
    from chronoprobe.kg.synth.text import write_articles, write_snippets

    return SynthWorld(kg, write_articles(kg), write_snippets(kg, config.seed))
