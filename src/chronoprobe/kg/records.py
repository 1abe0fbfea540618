"""The row types of a temporal KG, and the Arrow schemas they are stored in.

A time bound is stored as four columns (``<bound>_year``, ``_month``, ``_day``,
``_precision``) so that Parquet files stay readable in any tool and Wikidata's precision codes
survive a round trip. A null precision means the bound is absent.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

from chronoprobe.time import TimePoint


@dataclass(frozen=True)
class Entity:
    id: str
    label: str
    aliases: tuple[str, ...] = ()
    description: str | None = None
    start: TimePoint | None = None  # origination: inception, birth of the event, first date
    end: TimePoint | None = None
    type: str | None = None  # coarse kind (person, team, office, event...), where known


@dataclass(frozen=True)
class Relation:
    id: str
    label: str


@dataclass(frozen=True)
class Fact:
    subject: str
    relation: str
    object: str
    start: TimePoint | None = None
    end: TimePoint | None = None


def _bound_fields(prefix: str) -> list[pa.Field]:
    return [
        pa.field(f"{prefix}_year", pa.int32()),
        pa.field(f"{prefix}_month", pa.int8()),
        pa.field(f"{prefix}_day", pa.int8()),
        pa.field(f"{prefix}_precision", pa.int8()),
    ]


FACT_SCHEMA = pa.schema(
    [
        pa.field("subject", pa.string(), nullable=False),
        pa.field("relation", pa.string(), nullable=False),
        pa.field("object", pa.string(), nullable=False),
        *_bound_fields("start"),
        *_bound_fields("end"),
    ]
)

# A KG may carry its own train/valid/test split of the facts (as released KGs do): an optional
# column of the facts table, null for a fact in no split.
SPLIT_COLUMN = "split"
SPLIT_NAMES = ("train", "valid", "test")
SPLIT_FIELD = pa.field(SPLIT_COLUMN, pa.string())

ENTITY_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("label", pa.string(), nullable=False),
        pa.field("aliases", pa.list_(pa.string())),
        pa.field("description", pa.string()),
        *_bound_fields("start"),
        *_bound_fields("end"),
        pa.field("type", pa.string()),
    ]
)

RELATION_SCHEMA = pa.schema(
    [pa.field("id", pa.string(), nullable=False), pa.field("label", pa.string(), nullable=False)]
)


@dataclass
class BoundColumns:
    """Column buffers for one time bound while rows are appended."""

    year: list[int | None] = field(default_factory=list)
    month: list[int | None] = field(default_factory=list)
    day: list[int | None] = field(default_factory=list)
    precision: list[int | None] = field(default_factory=list)

    def append(self, point: TimePoint | None) -> None:
        if point is None:
            self.year.append(None)
            self.month.append(None)
            self.day.append(None)
            self.precision.append(None)
        else:
            self.year.append(point.year)
            self.month.append(point.month)
            self.day.append(point.day)
            self.precision.append(int(point.precision))

    def columns(self, prefix: str) -> dict[str, list[int | None]]:
        return {
            f"{prefix}_year": self.year,
            f"{prefix}_month": self.month,
            f"{prefix}_day": self.day,
            f"{prefix}_precision": self.precision,
        }


def bound_at(table: pa.Table, prefix: str, row: int) -> TimePoint | None:
    """The TimePoint of one row's bound, or None when absent."""
    if table.column(f"{prefix}_precision")[row].as_py() is None:
        return None
    return TimePoint(
        table.column(f"{prefix}_year")[row].as_py(),
        table.column(f"{prefix}_month")[row].as_py(),
        table.column(f"{prefix}_day")[row].as_py(),
    )


def bound_points(table: pa.Table, prefix: str) -> list[TimePoint | None]:
    """Every row's bound as TimePoints (for export and small tables, not for hot paths)."""
    years = table.column(f"{prefix}_year").to_pylist()
    months = table.column(f"{prefix}_month").to_pylist()
    days = table.column(f"{prefix}_day").to_pylist()
    precisions = table.column(f"{prefix}_precision").to_pylist()
    return [
        None if p is None else TimePoint(y, m, d)
        for y, m, d, p in zip(years, months, days, precisions, strict=True)
    ]
