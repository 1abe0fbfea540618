"""TemporalKG: the one structure every probe-set builder reads.

Three Arrow tables (entities, relations, facts) on disk as Parquet plus a JSON manifest, which
records the KG's fingerprint (a digest of its Parquet files as written): every artefact derived
from the KG (probe sets, embeddings) carries it, so mismatched inputs are caught. Every
query is columnar: intervals become two int64 day-number arrays once, and a period filter is two
vectorised comparisons, so a million facts answer in milliseconds.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from chronoprobe.atomic import atomic_path, atomic_write_text
from chronoprobe.errors import UserError
from chronoprobe.kg.records import (
    ENTITY_SCHEMA,
    FACT_SCHEMA,
    RELATION_SCHEMA,
    SPLIT_COLUMN,
    SPLIT_FIELD,
    SPLIT_NAMES,
    BoundColumns,
    Entity,
    Fact,
    Relation,
    bound_points,
)
from chronoprobe.time import OPEN_END, OPEN_START, Period, TimePoint, day_number

FORMAT = "chronoprobe-kg"
FORMAT_VERSION = 1
_FILES = {
    "entities": "entities.parquet",
    "relations": "relations.parquet",
    "facts": "facts.parquet",
}
_SCHEMAS = {"entities": ENTITY_SCHEMA, "relations": RELATION_SCHEMA, "facts": FACT_SCHEMA}

# Mean answers per query above which a side counts as "many" (the usual 1.5 threshold).
MANY_THRESHOLD = 1.5


class KGFormatError(UserError):
    """A KG directory that is missing, incomplete or of another format."""


def table_rows(table: pa.Table, *names: str) -> Iterable[tuple]:
    """The rows of ``table`` as tuples of the values (Python objects) of columns ``names``."""
    return zip(*(table.column(name).to_pylist() for name in names), strict=True)


def _bound_days(table: pa.Table, prefix: str, last: bool) -> np.ndarray:
    """Vectorised first (or last) day numbers of a bound column group; open bounds -> sentinel."""
    precision = table.column(f"{prefix}_precision").to_numpy(zero_copy_only=False)
    present = ~np.isnan(precision.astype(np.float64))
    year = table.column(f"{prefix}_year").fill_null(0).to_numpy().astype(np.int64)
    month = table.column(f"{prefix}_month").fill_null(0).to_numpy().astype(np.int64)
    day = table.column(f"{prefix}_day").fill_null(0).to_numpy().astype(np.int64)
    if last:
        month = np.where(month == 0, 12, month)
        # The last day of a month is the day before the first of the next month.
        next_year = np.where(month == 12, year + 1, year)
        next_month = np.where(month == 12, 1, month + 1)
        month_end = day_number(next_year, next_month, np.ones_like(year)) - 1
        days = np.where(day == 0, month_end, day_number(year, month, np.maximum(day, 1)))
        return np.where(present, days, OPEN_END)
    days = day_number(year, np.maximum(month, 1), np.maximum(day, 1))
    return np.where(present, days, OPEN_START)


@dataclass
class KGBuilder:
    """Collects entities, relations and facts one at a time, as streaming loaders produce them.

    Later entity/relation records with the same id replace earlier ones; facts are kept as given
    (duplicates are dropped by :meth:`build`).
    """

    name: str = "kg"
    _entities: dict[str, Entity] = field(default_factory=dict)
    _relations: dict[str, Relation] = field(default_factory=dict)
    _subjects: list[str] = field(default_factory=list)
    _relation_ids: list[str] = field(default_factory=list)
    _objects: list[str] = field(default_factory=list)
    _starts: BoundColumns = field(default_factory=BoundColumns)
    _ends: BoundColumns = field(default_factory=BoundColumns)

    def add_entity(self, entity: Entity) -> None:
        self._entities[entity.id] = entity

    def add_relation(self, relation: Relation) -> None:
        self._relations[relation.id] = relation

    def add_fact(self, fact: Fact) -> None:
        self._subjects.append(fact.subject)
        self._relation_ids.append(fact.relation)
        self._objects.append(fact.object)
        self._starts.append(fact.start)
        self._ends.append(fact.end)

    def has_entity(self, entity_id: str) -> bool:
        return entity_id in self._entities

    def build(self, meta: dict | None = None) -> TemporalKG:
        facts = pa.table(
            {
                "subject": self._subjects,
                "relation": self._relation_ids,
                "object": self._objects,
                **self._starts.columns("start"),
                **self._ends.columns("end"),
            },
            schema=FACT_SCHEMA,
        )
        return TemporalKG.from_tables(
            entities=entities_table(self._entities.values()),
            relations=relations_table(self._relations.values()),
            facts=facts,
            name=self.name,
            meta=meta,
        )


def entities_table(entities: Iterable[Entity]) -> pa.Table:
    rows = list(entities)
    starts, ends = BoundColumns(), BoundColumns()
    for entity in rows:
        starts.append(entity.start)
        ends.append(entity.end)
    return pa.table(
        {
            "id": [e.id for e in rows],
            "label": [e.label for e in rows],
            "aliases": [list(e.aliases) for e in rows],
            "description": [e.description for e in rows],
            **starts.columns("start"),
            **ends.columns("end"),
            "type": [e.type for e in rows],
        },
        schema=ENTITY_SCHEMA,
    )


def relations_table(relations: Iterable[Relation]) -> pa.Table:
    rows = list(relations)
    return pa.table(
        {"id": [r.id for r in rows], "label": [r.label for r in rows]}, schema=RELATION_SCHEMA
    )


class TemporalKG:
    """Entities, relations and time-scoped facts, with the queries probe-set builders need."""

    def __init__(
        self,
        entities: pa.Table,
        relations: pa.Table,
        facts: pa.Table,
        name: str = "kg",
        meta: dict | None = None,
    ) -> None:
        self.entities = entities
        self.relations = relations
        self.facts = facts
        self.name = name
        self.meta = dict(meta or {})
        self.fingerprint: str | None = None  # set by save() and load(); None for older KGs

    @classmethod
    def from_tables(
        cls, entities: pa.Table, relations: pa.Table, facts: pa.Table, **options: Any
    ) -> TemporalKG:
        """Normalise tables: cast to the schemas, drop duplicate facts, add missing relations;
        ``options`` (``name``, ``meta``) go to the constructor.

        Relations used by facts but never declared get their id as label, so every fact's
        relation can be looked up; entities without a record are left out (use ``label()``,
        which falls back to the id). A ``split`` column of the facts is kept (see
        :data:`SPLIT_COLUMN`); a fact given twice keeps its first row, and so its first split.
        """
        schema = FACT_SCHEMA
        if SPLIT_COLUMN in facts.column_names:
            schema = FACT_SCHEMA.append(SPLIT_FIELD)
        facts = _distinct_rows(facts.select(schema.names).cast(schema), FACT_SCHEMA.names)
        relations = relations.select(RELATION_SCHEMA.names).cast(RELATION_SCHEMA)
        declared = set(relations.column("id").to_pylist())
        used = pc.unique(facts.column("relation")).to_pylist()
        missing = sorted(r for r in used if r not in declared)
        if missing:
            relations = pa.concat_tables(
                [relations, relations_table(Relation(r, r) for r in missing)]
            )
        entities = entities.select(ENTITY_SCHEMA.names).cast(ENTITY_SCHEMA)
        return cls(entities, relations, facts, **options)

    @classmethod
    def from_records(
        cls,
        facts: Iterable[Fact],
        entities: Iterable[Entity] = (),
        relations: Iterable[Relation] = (),
        name: str = "kg",
    ) -> TemporalKG:
        builder = KGBuilder(name=name)
        for entity in entities:
            builder.add_entity(entity)
        for relation in relations:
            builder.add_relation(relation)
        for fact in facts:
            builder.add_fact(fact)
        return builder.build()

    # ----- persistence -----------------------------------------------------------------------

    def save(self, directory: str | Path) -> Path:
        """Write Parquet files and the manifest; each file atomically, the manifest last."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        digest = hashlib.blake2b(digest_size=12)
        for key, filename in _FILES.items():
            with atomic_path(out / filename) as tmp:
                pq.write_table(getattr(self, key), tmp, compression="zstd")
                with open(tmp, "rb") as written:
                    for block in iter(lambda: written.read(1 << 20), b""):
                        digest.update(block)
        self.fingerprint = digest.hexdigest()
        manifest = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "name": self.name,
            "fingerprint": self.fingerprint,
            "counts": {
                "entities": self.entities.num_rows,
                "relations": self.relations.num_rows,
                "facts": self.facts.num_rows,
            },
            "meta": self.meta,
        }
        atomic_write_text(out / "manifest.json", json.dumps(manifest, indent=2) + "\n")
        return out

    @classmethod
    def load(cls, directory: str | Path) -> TemporalKG:
        """The KG of a directory :meth:`save` wrote. Every part is checked before it is used,
        so that each reader of KGs refuses a damaged or forged one alike, in one line naming
        the file: the manifest (:func:`read_manifest`), each table's columns and types, and
        every row by the rules the loaders apply (ids, years, months, days, precisions, an
        end not before its start; see :mod:`chronoprobe.kg.io.checks`)."""
        path = Path(directory)
        manifest = read_manifest(path)
        tables = {}
        for key, filename in _FILES.items():
            file = path / filename
            if not file.is_file():
                raise KGFormatError(f"{file}: missing; the KG directory is incomplete")
            try:
                tables[key] = pq.read_table(file)
            except (pa.ArrowException, OSError) as err:
                raise KGFormatError(f"{file}: not a readable Parquet file: {err}") from err
            absent = [n for n in _SCHEMAS[key].names if n not in tables[key].column_names]
            if absent:
                raise KGFormatError(f"{file}: missing columns {', '.join(absent)}")
            tables[key] = _cast(tables[key], key, file)
        _check_split(tables["facts"], path / _FILES["facts"])
        for key, table in tables.items():
            _check_rows(table, key, path / _FILES[key])
        kg = cls.from_tables(**tables, name=manifest["name"], meta=manifest["meta"])
        kg.fingerprint = manifest["fingerprint"]
        return kg

    @property
    def has_split(self) -> bool:
        """Whether the facts come with their own train/valid/test split."""
        return SPLIT_COLUMN in self.facts.column_names

    # ----- lookups ---------------------------------------------------------------------------

    def __len__(self) -> int:
        return self.facts.num_rows

    def __repr__(self) -> str:
        return (
            f"TemporalKG({self.name!r}: {self.entities.num_rows} entities, "
            f"{self.relations.num_rows} relations, {self.facts.num_rows} facts)"
        )

    @cached_property
    def _labels(self) -> dict[str, str]:
        return dict(table_rows(self.entities, "id", "label"))

    @cached_property
    def _relation_labels(self) -> dict[str, str]:
        return dict(table_rows(self.relations, "id", "label"))

    @cached_property
    def _aliases(self) -> dict[str, list[str]]:
        ids, aliases = self.entities.column("id").to_pylist(), self.entities.column("aliases")
        return {i: a for i, a in zip(ids, aliases.to_pylist(), strict=True) if a}

    def aliases(self, entity_id: str) -> list[str]:
        """An entity's other names (none when the KG has no record of it)."""
        return list(self._aliases.get(entity_id, ()))

    def label(self, entity_id: str) -> str:
        """An entity's label, or its id when the KG has no record of it."""
        return self._labels.get(entity_id, entity_id)

    def relation_label(self, relation_id: str) -> str:
        return self._relation_labels.get(relation_id, relation_id)

    @cached_property
    def start_days(self) -> np.ndarray:
        """First day of each fact's start span (int64; OPEN_START when unknown)."""
        return _bound_days(self.facts, "start", last=False)

    @cached_property
    def end_days(self) -> np.ndarray:
        """Last day of each fact's end span (int64; OPEN_END when the fact still holds)."""
        return _bound_days(self.facts, "end", last=True)

    def fact_points(self, row: int) -> tuple[TimePoint | None, TimePoint | None]:
        one = self.facts.slice(row, 1)
        return bound_points(one, "start")[0], bound_points(one, "end")[0]

    # ----- queries ---------------------------------------------------------------------------

    def holding_mask(self, period: Period | str) -> np.ndarray:
        """Boolean mask of the facts whose interval overlaps ``period``."""
        p = Period.parse(period) if isinstance(period, str) else period
        return (self.start_days <= p.last_day()) & (self.end_days >= p.first_day())

    def facts_in(self, period: Period | str, relations: Sequence[str] | None = None) -> pa.Table:
        """The facts holding in ``period`` (optionally of some relations only)."""
        mask = self.holding_mask(period)
        if relations is not None:
            mask &= self._relation_mask(relations)
        return self.facts.filter(pa.array(mask))

    def _relation_mask(self, relations: Sequence[str]) -> np.ndarray:
        return pc.is_in(
            self.facts.column("relation"), pa.array(list(relations), type=pa.string())
        ).to_numpy(zero_copy_only=False)

    def answer_sets(
        self,
        period: Period | str | None = None,
        relations: Sequence[str] | None = None,
        ask: str = "object",
    ) -> pa.Table:
        """Every query's answer set at once.

        ``ask="object"`` groups (subject, relation) -> sorted distinct objects; ``ask="subject"``
        groups (object, relation) -> subjects. With a period, only facts overlapping it count.
        """
        if ask not in ("object", "subject"):
            raise UserError(f"ask must be 'object' or 'subject', not {ask!r}")
        key = "subject" if ask == "object" else "object"
        mask = np.ones(len(self), dtype=bool)
        if period is not None:
            mask &= self.holding_mask(period)
        if relations is not None:
            mask &= self._relation_mask(relations)
        table = self.facts.filter(pa.array(mask)).select([key, "relation", ask])
        # Arrow's "distinct" aggregation does not keep input order on large groups, so the lists
        # are cut from the sorted distinct triples instead: one sort, then offsets at key changes.
        triples = table.group_by([key, "relation", ask]).aggregate([])
        triples = triples.sort_by(
            [("relation", "ascending"), (key, "ascending"), (ask, "ascending")]
        ).combine_chunks()
        starts = _run_starts(triples, ["relation", key])
        offsets = pa.array(np.append(starts, triples.num_rows), type=pa.int32())
        return pa.table(
            {
                key: triples.column(key).take(pa.array(starts)),
                "relation": triples.column("relation").take(pa.array(starts)),
                "answers": pa.ListArray.from_arrays(offsets, triples.column(ask).combine_chunks()),
            }
        )

    def answers(
        self,
        subject: str | None = None,
        relation: str | None = None,
        object: str | None = None,
        period: Period | str | None = None,
    ) -> list[str]:
        """One query's answers: give the relation and exactly one of subject or object."""
        if relation is None or (subject is None) == (object is None):
            raise UserError("give a relation and exactly one of subject or object")
        given, asked = ("subject", "object") if subject is not None else ("object", "subject")
        mask = pc.and_(
            pc.equal(self.facts.column(given), subject if subject is not None else object),
            pc.equal(self.facts.column("relation"), relation),
        ).to_numpy(zero_copy_only=False)
        if period is not None:
            mask &= self.holding_mask(period)
        return sorted(set(self.facts.column(asked).filter(pa.array(mask)).to_pylist()))

    def time_answers(
        self, subject: str, relation: str, object: str
    ) -> list[tuple[TimePoint | None, TimePoint | None]]:
        """The intervals of (subject, relation, object), earliest first (repeated terms kept)."""
        mask = pc.and_(
            pc.and_(
                pc.equal(self.facts.column("subject"), subject),
                pc.equal(self.facts.column("relation"), relation),
            ),
            pc.equal(self.facts.column("object"), object),
        )
        rows = self.facts.filter(mask)
        spans = list(zip(bound_points(rows, "start"), bound_points(rows, "end"), strict=True))
        # Unknown starts first, then by start; a still-open end sorts after every known one.
        return sorted(
            spans,
            key=lambda s: (
                s[0] is not None,
                s[0] or TimePoint(0),
                s[1] is None,
                s[1] or TimePoint(0),
            ),
        )

    def facts_per_relation(self) -> dict[str, int]:
        counts = self.facts.group_by("relation").aggregate([("relation", "count")])
        pairs = table_rows(counts, "relation", "relation_count")
        return dict(sorted(pairs, key=lambda kv: (-kv[1], kv[0])))

    def cardinality(self) -> dict[str, str]:
        """Each relation's class (1-1, 1-N, N-1, N-M) among facts holding at the same time.

        Time matters: a footballer plays for many clubs over a career but usually one at a time,
        so we count answers per (subject, relation, start year) and per (object, relation, start
        year): mean objects per subject > 1.5 makes the object side "N", and likewise subjects.
        """
        start_year = self.facts.column("start_year")
        table = pa.table(
            {
                "subject": self.facts.column("subject"),
                "relation": self.facts.column("relation"),
                "object": self.facts.column("object"),
                "year": start_year,
            }
        )

        def mean_fanout(key: str, value: str) -> dict[str, float]:
            per_query = table.group_by([key, "relation", "year"]).aggregate(
                [(value, "count_distinct")]
            )
            means = per_query.group_by("relation").aggregate([(f"{value}_count_distinct", "mean")])
            return dict(table_rows(means, "relation", f"{value}_count_distinct_mean"))

        objects_per_subject = mean_fanout("subject", "object")
        subjects_per_object = mean_fanout("object", "subject")
        classes = {}
        for relation in sorted(objects_per_subject):
            many_subjects = subjects_per_object[relation] > MANY_THRESHOLD
            many_objects = objects_per_subject[relation] > MANY_THRESHOLD
            classes[relation] = f"{'N' if many_subjects else '1'}-{'N' if many_objects else '1'}"
            classes[relation] = classes[relation].replace("N-N", "N-M")
        return classes

    def popularity(self) -> pa.Table:
        """Facts per entity (as subject or object), most popular first."""
        ids = pa.chunked_array(
            self.facts.column("subject").chunks + self.facts.column("object").chunks
        )
        counts = pa.table({"entity": ids}).group_by("entity").aggregate([("entity", "count")])
        counts = counts.rename_columns(["entity", "facts"])
        return counts.sort_by([("facts", "descending"), ("entity", "ascending")])

    def multi_answer_share(self) -> float:
        """Share of facts whose masked-object statement (s, r, start, end) has several answers."""
        if not len(self):
            return 0.0
        keys = ["subject", "relation", "start_year", "end_year"]
        grouped = self.facts.group_by(keys).aggregate([("object", "count_distinct")])
        sizes = grouped.column("object_count_distinct").to_numpy()
        return float(sizes[sizes > 1].sum() / sizes.sum())

    def year_range(self) -> tuple[int | None, int | None]:
        years = pa.chunked_array(
            self.facts.column("start_year").chunks + self.facts.column("end_year").chunks
        )
        bounds = pc.min_max(years).as_py()
        return bounds["min"], bounds["max"]


def read_manifest(directory: str | Path) -> dict[str, Any]:
    """The manifest of a KG directory, checked: JSON of at most the record limit that is an
    object of this format and version, with a text ``name``, an object ``meta``, a text
    ``fingerprint`` and whole ``counts`` where it has them (``name`` defaults to the folder's,
    the others to none). A KGFormatError names the file and says what is wrong: nesting too
    deep, a value of the wrong type, another format."""
    from chronoprobe.inputs import max_record_bytes
    from chronoprobe.jsonl import read_json_object

    path = Path(directory)
    manifest_path = path / "manifest.json"
    if path.is_file():
        raise KGFormatError(_file_is_no_kg(path))
    if not path.is_dir():
        raise KGFormatError(f"{path}: no such KG directory")
    if not manifest_path.is_file():
        raise KGFormatError(
            f"{path}: not a chronoprobe KG directory (no manifest.json); "
            "create one with `chronoprobe kg convert FILE -o DIR` or "
            "`chronoprobe kg synth -o DIR`"
        )
    if manifest_path.stat().st_size > max_record_bytes():
        raise KGFormatError(
            f"{manifest_path}: {manifest_path.stat().st_size:,} bytes, more than any manifest "
            f"holds (at most {max_record_bytes():,})"
        )
    try:
        manifest = read_json_object(manifest_path, "a KG's manifest")
    except ValueError as err:
        raise KGFormatError(str(err)) from None
    if manifest.get("format") != FORMAT:
        found = manifest.get("format")
        shown = repr(found) if isinstance(found, str | None) else f"a {type(found).__name__}"
        raise KGFormatError(f"{manifest_path}: format is {shown[:80]}, not {FORMAT!r}")
    version = manifest.get("version", 0)
    if isinstance(version, bool) or not isinstance(version, int):
        raise KGFormatError(f"{manifest_path}: version {str(version)[:40]!r} is not an integer")
    if version > FORMAT_VERSION:
        raise KGFormatError(
            f"{manifest_path}: KG format version {version} is newer than this "
            f"chronoprobe reads ({FORMAT_VERSION}); upgrade chronoprobe"
        )
    expected = {"name": str, "meta": dict, "fingerprint": str, "counts": dict}
    for key, kind in expected.items():
        value = manifest.get(key)
        if value is not None and not isinstance(value, kind):
            raise KGFormatError(
                f"{manifest_path}: {key!r} must be {'text' if kind is str else 'an object'}, "
                f"not {type(value).__name__}"
            )
    for key, count in (manifest.get("counts") or {}).items():
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise KGFormatError(f"{manifest_path}: counts {str(key)[:40]!r} is no whole count")
    return {
        **manifest,
        "name": manifest.get("name") or path.name,
        "meta": manifest.get("meta") or {},
        "fingerprint": manifest.get("fingerprint"),
        "counts": manifest.get("counts") or {},
    }


def _cast(table: pa.Table, key: str, file: Path) -> pa.Table:
    """``table`` in its schema's types (a split column kept); a column that does not cast (a
    year past 32 bits, a month past a byte, text where numbers go) names the file."""
    schema = _SCHEMAS[key]
    if key == "facts" and SPLIT_COLUMN in table.column_names:
        schema = schema.append(SPLIT_FIELD)
    for wanted in schema:  # text for text, integers for integers: no cast of one to the other
        found = table.schema.field(wanted.name).type
        if _kind(found) != _kind(wanted.type) and not pa.types.is_null(found):
            raise KGFormatError(
                f"{file}: a column of the wrong type or range: {wanted.name!r} holds {found}, "
                f"not {wanted.type}"
            )
    try:
        return table.select(schema.names).cast(schema)
    except (pa.ArrowException, ValueError, TypeError) as err:  # nulls where none go, too
        raise KGFormatError(f"{file}: a column of the wrong type or range: {err}") from None


def _kind(kind: pa.DataType) -> str:
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return "text"
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return f"a list of {_kind(kind.value_type)}"
    return "integer" if pa.types.is_integer(kind) else str(kind)


# the columns of each table holding ids, which must be non-null ids by the loaders' rule
_ID_COLUMNS = {
    "facts": ("subject", "relation", "object"),
    "entities": ("id",),
    "relations": ("id",),
}


def _check_rows(table: pa.Table, key: str, file: Path) -> None:
    """A KGFormatError naming ``file``, the first row that breaks a rule of the loaders, the
    rule and how many rows break one, for a table whose rows a loader would not have written
    (a forged or damaged file)."""
    from chronoprobe.kg.io.checks import ID_PATTERN, bound_problems, interval_problems

    bad: list[tuple[np.ndarray, str]] = []
    for name in _ID_COLUMNS[key]:
        column = table.column(name)
        valid = pc.fill_null(pc.match_substring_regex(column, ID_PATTERN), False)
        bad.append((~valid.to_numpy(zero_copy_only=False), f"{name} is not an id"))
    if key != "relations":
        for prefix in ("start", "end"):
            bad += [(rows, f"{prefix} holds {why}") for rows, why in bound_problems(table, prefix)]
        if not any(rows.any() for rows, _ in bad):
            bad.append((interval_problems(table), "its end is before its start"))
    broken = [(np.flatnonzero(rows), why) for rows, why in bad if rows.any()]
    if not broken:
        return
    first = min(int(rows[0]) for rows, _ in broken)
    reason = next(why for rows, why in broken if rows[0] == first)
    count = int(np.logical_or.reduce([rows for rows, _ in bad]).sum())
    row = {name: table.column(name)[first].as_py() for name in table.column_names}
    shown = ", ".join(f"{name} {value!r}"[:80] for name, value in row.items() if name in _SHOWN)
    others = f"; {count - 1:,} more rows break the KG's rules" if count > 1 else ""
    raise KGFormatError(f"{file}: row {first + 1:,} ({shown}): {reason}{others}")


# what a refused row is shown by: its ids and its bounds
_SHOWN = (
    "subject",
    "relation",
    "object",
    "id",
    *(f"{p}_{part}" for p in ("start", "end") for part in ("year", "month", "day", "precision")),
)


def same_kg(
    ours: tuple[str, str | None], theirs: tuple[str, str | None], warn: Callable[[str], None]
) -> None:
    """Stop when two artefacts, each ``(where, KG fingerprint)``, come from different KGs; an
    artefact of an older chronoprobe (no fingerprint) passes with a warning. ``where`` names
    them in the plural, as the callers do: "the questions (...)", "the embeddings (...)"."""
    (where, mine), (other, its) = ours, theirs
    if mine is None or its is None:
        older = where if mine is None else other
        warn(
            f"{older}: records no KG fingerprint (made by an older chronoprobe); cannot check "
            "that the inputs come from one KG"
        )
    elif mine != its:
        raise UserError(
            f"{where} come from KG {mine}, {other} from KG {its}: inputs of different KGs; "
            "build both from one KG directory"
        )


def _file_is_no_kg(path: Path) -> str:
    """Why a file given as a KG directory is none, and what to give instead."""
    if (
        path.name in ("manifest.json", *_FILES.values())
        and (path.parent / "manifest.json").is_file()
    ):
        return f"{path}: a file of the KG directory {path.parent}; give the directory"
    from chronoprobe.kg.io.shapes import sniff

    message = (
        f"{path}: a file, not a KG directory (one holds manifest.json and "
        f"{', '.join(_FILES.values())})"
    )
    try:
        shape = sniff(path)
    except (OSError, ValueError, EOFError):
        shape = None
    if shape is not None and shape.format is not None:
        import shlex

        kg_dir = path.with_name(path.name.split(".")[0] + "-kg")
        words = ["chronoprobe", "kg", "convert", str(path), "--format", shape.format]
        message += (
            f"; it looks like {shape.what}: make a KG of it with "
            f"`{shlex.join([*words, '-o', str(kg_dir)])}`"
        )
    return message


def _run_starts(table: pa.Table, keys: Sequence[str]) -> np.ndarray:
    """Row indices where the values of ``keys`` change, in a table sorted by those keys."""
    n = table.num_rows
    changed = np.zeros(n, dtype=bool)
    changed[:1] = True
    if n > 1:
        for name in keys:
            column = table.column(name)
            differs = pc.not_equal(column.slice(1), column.slice(0, n - 1))
            changed[1:] |= differs.to_numpy(zero_copy_only=False)
    return np.flatnonzero(changed)


def _check_split(facts: pa.Table, file: Path) -> None:
    if SPLIT_COLUMN not in facts.column_names:
        return
    found = pc.unique(facts.column(SPLIT_COLUMN).drop_null()).to_pylist()
    unknown = sorted(str(name) for name in found if name not in SPLIT_NAMES)
    if unknown:
        raise KGFormatError(
            f"{file}: column {SPLIT_COLUMN!r} holds {', '.join(map(repr, unknown))}; a fact's "
            f"split is one of {', '.join(SPLIT_NAMES)} or null"
        )


def _distinct_rows(table: pa.Table, keys: Sequence[str]) -> pa.Table:
    """Keep the first row of each distinct value of ``keys``, in the rows' order."""
    if table.num_rows == 0:
        return table
    indexed = table.append_column("_row", pa.array(np.arange(table.num_rows)))
    first = indexed.group_by(list(keys), use_threads=False).aggregate([("_row", "min")])
    keep = np.sort(first.column("_row_min").to_numpy())
    if len(keep) == table.num_rows:
        return table
    return table.take(pa.array(keep))
