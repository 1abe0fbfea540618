"""The project's own JSONL: hand-made KGs in, exports out, one JSON object per line.

Rows of any kind may be mixed in any number of files:

- a fact: ``{"subject", "relation", "object", "start", "end"}`` with times as ISO strings at
  their precision (``"2009"``, ``"2021-08"``, ``"2009-01-20"``, ``"-0059"``) or null;
- an entity: ``{"id", "label", "aliases", "description", "start", "end"}`` (``"type"``
  optional);
- a relation: ``{"kind": "relation", "id", "label"}``.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator, Sequence
from pathlib import Path

import msgspec
import pyarrow as pa
import pyarrow.compute as pc

from chronoprobe.jsonl import write_jsonl
from chronoprobe.kg.graph import KGBuilder, TemporalKG
from chronoprobe.kg.io.options import LoadOptions
from chronoprobe.kg.io.problems import Problems
from chronoprobe.kg.records import Entity, Fact, Relation
from chronoprobe.time import TimePoint

FACT_KEYS = ("subject", "relation", "object", "start", "end")
ENTITY_KEYS = ("id", "label", "aliases", "description", "start", "end", "type")
RELATION_KEYS = ("kind", "id", "label")


def _lines(path: Path) -> Iterator[bytes]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as stream:
        yield from stream


def _time(row: dict, key: str) -> TimePoint | None:
    value = row.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{key!r} must be an ISO date string or null, not {value!r}")
    return TimePoint.parse(value)


def _text(row: dict, key: str) -> str:
    value = row.get(key)
    if not isinstance(value, str) or not value:
        raise ValueError(f"{key!r} must be a non-empty string")
    return value


def _check_keys(row: dict, allowed: Sequence[str], kind: str) -> None:
    unknown = sorted(set(row) - set(allowed))
    if unknown:
        raise ValueError(f"unknown key {', '.join(map(repr, unknown))} in a {kind} row")


def parse_row(row: dict) -> Fact | Entity | Relation:
    """One decoded line as a record; ValueError says what is wrong with it."""
    if "subject" in row:
        _check_keys(row, FACT_KEYS, "fact")
        return Fact(
            _text(row, "subject"),
            _text(row, "relation"),
            _text(row, "object"),
            _time(row, "start"),
            _time(row, "end"),
        )
    if row.get("kind") == "relation":
        _check_keys(row, RELATION_KEYS, "relation")
        return Relation(_text(row, "id"), _text(row, "label"))
    if "id" in row:
        _check_keys(row, ENTITY_KEYS, "entity")
        aliases = row.get("aliases") or []
        if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
            raise ValueError("'aliases' must be a list of strings")
        return Entity(
            _text(row, "id"),
            row.get("label") or row["id"],
            tuple(aliases),
            row.get("description"),
            _time(row, "start"),
            _time(row, "end"),
            row.get("type"),
        )
    raise ValueError("a row needs 'subject' (fact), 'id' (entity) or kind 'relation'")


def load(paths: Sequence[Path], options: LoadOptions, problems: Problems) -> TemporalKG:
    builder = KGBuilder()
    for path in paths:
        for number, line in enumerate(_lines(Path(path)), start=1):
            if not line.strip():
                continue
            try:
                row = msgspec.json.decode(line)
                if not isinstance(row, dict):
                    raise ValueError("a line must be a JSON object")
                record = parse_row(row)
            except (msgspec.DecodeError, ValueError) as err:
                problems.report(str(path), number, str(err), kind=_kind(err))
                continue
            if isinstance(record, Fact):
                if options.relations is None or record.relation in options.relations:
                    builder.add_fact(record)
            elif isinstance(record, Relation):
                builder.add_relation(record)
            else:
                builder.add_entity(record)
    return builder.build(meta={"source": {"format": "jsonl", "inputs": [str(p) for p in paths]}})


def _kind(err: Exception) -> str:
    """Group problems by what went wrong, not by each message's details."""
    if isinstance(err, msgspec.DecodeError):
        return "invalid JSON"
    message = str(err)
    return message.split(":")[0] if "not a valid date" in message else message


# ----- export ---------------------------------------------------------------------------------


def iso_column(table: pa.Table, prefix: str) -> list[str | None]:
    """Vectorised ISO strings of a bound at its precision ("2009", "2021-08", "-0059")."""
    year = table.column(f"{prefix}_year")
    # As format_year: a minus for BCE, a plus for years past 9999 (ISO's expanded years).
    sign = pc.if_else(pc.less(year, 0), "-", pc.if_else(pc.greater(year, 9999), "+", ""))
    digits = pc.utf8_lpad(pc.cast(pc.abs(year), pa.string()), 4, "0")
    year_text = pc.binary_join_element_wise(sign, digits, "")
    month = pc.utf8_lpad(pc.cast(table.column(f"{prefix}_month"), pa.string()), 2, "0")
    day = pc.utf8_lpad(pc.cast(table.column(f"{prefix}_day"), pa.string()), 2, "0")
    with_month = pc.binary_join_element_wise(year_text, month, "-")
    with_day = pc.binary_join_element_wise(with_month, day, "-")
    precision = table.column(f"{prefix}_precision")
    text = pc.if_else(
        pc.equal(precision, 11),
        with_day,
        pc.if_else(pc.equal(precision, 10), with_month, year_text),
    )
    return pc.if_else(precision.is_valid(), text, pa.scalar(None, pa.string())).to_pylist()


def _rows(kg: TemporalKG, what: str) -> Iterator[dict]:
    if what == "facts":
        table = kg.facts
        columns = [table.column(k).to_pylist() for k in ("subject", "relation", "object")]
        columns += [iso_column(table, "start"), iso_column(table, "end")]
        for values in zip(*columns, strict=True):
            yield dict(zip(FACT_KEYS, values, strict=True))
    elif what == "entities":
        table = kg.entities
        keys = ("id", "label", "aliases", "description")
        columns = [table.column(k).to_pylist() for k in keys]
        columns += [iso_column(table, "start"), iso_column(table, "end")]
        types = table.column("type").to_pylist()
        for values, kind in zip(zip(*columns, strict=True), types, strict=True):
            row = dict(zip(ENTITY_KEYS[:6], values, strict=True))
            row["aliases"] = row["aliases"] or []
            if kind is not None:
                row["type"] = kind
            yield row
    elif what == "relations":
        for rid, label in zip(
            kg.relations.column("id").to_pylist(),
            kg.relations.column("label").to_pylist(),
            strict=True,
        ):
            yield {"kind": "relation", "id": rid, "label": label}
    else:
        raise ValueError(f"what must be facts, entities or relations, not {what!r}")


def export_jsonl(kg: TemporalKG, out: str | Path, what: str = "facts") -> int:
    """Write one table of ``kg`` as JSONL, atomically; returns the number of rows."""
    return write_jsonl(out, _rows(kg, what))
