"""The project's own JSONL: hand-made KGs in, exports out, one JSON object per line.

Rows of any kind may be mixed in any number of files:

- a fact: ``{"subject", "relation", "object", "start", "end"}`` with times as ISO strings at
  their precision (``"2009"``, ``"2021-08"``, ``"2009-01-20"``, ``"-0059"``) or null;
- an entity: ``{"id", "label", "aliases", "description", "start", "end"}`` (``"type"``
  optional);
- a relation: ``{"kind": "relation", "id", "label"}``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import lru_cache
from pathlib import Path

import msgspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from chronoprobe.atomic import atomic_path
from chronoprobe.errors import UserError
from chronoprobe.inputs import bounded_lines, open_binary
from chronoprobe.jsonl import BOM, DECODE_ERRORS, duplicate_key, json_problem, twice_said
from chronoprobe.kg.graph import KGBuilder, TemporalKG
from chronoprobe.kg.io.checks import Invalid, check_id, check_interval, check_point, json_type
from chronoprobe.kg.io.options import LoadOptions
from chronoprobe.kg.io.problems import Problems
from chronoprobe.kg.io.shapes import expect
from chronoprobe.kg.records import Entity, Fact, Relation
from chronoprobe.time import TimePoint

FACT_KEYS = ("subject", "relation", "object", "start", "end")
ENTITY_KEYS = ("id", "label", "aliases", "description", "start", "end", "type")
RELATION_KEYS = ("kind", "id", "label")


# Dates repeat across rows (terms start on the same days), and TimePoints are immutable.
_parse_time = lru_cache(maxsize=1 << 16)(TimePoint.parse)


def _lines(path: Path) -> Iterator[bytes]:
    """The lines of a plain or gzip file, each within the record limit (chronoprobe.inputs)."""
    with open_binary(path) as stream:
        for number, line in bounded_lines(stream, path):
            yield line.removeprefix(BOM) if number == 1 else line


def _time(row: dict, key: str) -> TimePoint | None:
    value = row.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise Invalid(f"{key!r} must be an ISO date string or null, not {value!r}", "bad date")
    try:
        point = _parse_time(value)
    except ValueError as err:
        raise Invalid(str(err), str(err).split(":")[0]) from None
    return check_point(point, repr(key))


def _text(row: dict, key: str, optional: bool = False) -> str | None:
    """A string member; an ``optional`` one may be missing or null."""
    value = row.get(key)
    if optional and value is None:
        return None
    if not isinstance(value, str) or not value:
        kind = "a string" if optional else "a non-empty string"
        raise Invalid(f"{key!r} must be {kind}, not {json_type(value)}", "bad text")
    return value


def _check_keys(row: dict, allowed: Sequence[str], kind: str) -> None:
    unknown = sorted(set(row) - set(allowed))
    if unknown:
        message = f"unknown key {', '.join(map(repr, unknown))} in a {kind} row"
        raise Invalid(message, message)


def parse_row(row: dict) -> Fact | Entity | Relation:
    """One decoded line as a record; :class:`~chronoprobe.kg.io.checks.Invalid` says what is
    wrong with it."""
    if "subject" in row:
        _check_keys(row, FACT_KEYS, "fact")
        ids = [check_id(row.get(key), repr(key)) for key in ("subject", "relation", "object")]
        start, end = _time(row, "start"), _time(row, "end")
        if start is None and end is None:
            reason = "a fact needs a start or an end: with neither it is no time-scoped fact"
            raise Invalid(reason, "no time")
        check_interval(start, end)
        return Fact(*ids, start, end)
    if row.get("kind") == "relation":
        _check_keys(row, RELATION_KEYS, "relation")
        return Relation(check_id(row.get("id"), "'id'"), _text(row, "label"))
    if "id" in row:
        _check_keys(row, ENTITY_KEYS, "entity")
        entity_id = check_id(row["id"], "'id'")
        aliases = row.get("aliases") or []
        if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
            raise Invalid("'aliases' must be a list of strings", "bad text")
        return Entity(
            entity_id,
            _text(row, "label", optional=True) or entity_id,
            tuple(aliases),
            _text(row, "description", optional=True),
            _time(row, "start"),
            _time(row, "end"),
            _text(row, "type", optional=True),
        )
    reason = "a row needs 'subject' (fact), 'id' (entity) or kind 'relation'"
    raise Invalid(reason, reason)


def load(paths: Sequence[Path], options: LoadOptions, problems: Problems) -> TemporalKG:
    paths = [Path(p) for p in paths]
    for path in paths:
        expect(path, "jsonl", "chronoprobe JSONL rows", ("subject", "relation", "object"))
    builder = KGBuilder()
    for path in paths:
        bad: tuple[bytes, str] = (b"", "")  # the last bad line and its kind
        for number, line in enumerate(_lines(path), start=1):
            if line == bad[0]:  # the same bad line again (a file of one, repeated): counted
                problems.counted(bad[1])
                continue
            if not line.strip():
                continue
            try:
                row = msgspec.json.decode(line)
                if not isinstance(row, dict):
                    raise Invalid("a line must be a JSON object", "a line must be a JSON object")
                twice = duplicate_key(line)
                if twice is not None:
                    raise Invalid(twice_said(twice), "a key given twice")
                record = parse_row(row)
            except Invalid as err:
                problems.report(str(path), number, str(err), kind=err.kind)
                bad = (line, err.kind)
                continue
            except DECODE_ERRORS as err:
                _, reason, kind = json_problem(line, err)
                problems.report(str(path), number, reason, kind=kind)
                bad = (line, kind)
                continue
            if isinstance(record, Fact):
                if options.relations is None or record.relation in options.relations:
                    builder.add_fact(record)
            elif isinstance(record, Relation):
                builder.add_relation(record)
            else:
                builder.add_entity(record)
    return builder.build(meta={"source": {"format": "jsonl", "inputs": [str(p) for p in paths]}})


# ----- export ---------------------------------------------------------------------------------

# Rows are formatted a batch at a time by Arrow kernels: no per-row dict, TimePoint or encoder call.
_BATCH = 1 << 18
# Only these characters need escaping in a JSON string; most ids and labels have none, so they
# are quoted by concatenation and only a column that has one is encoded value by value.
_NEEDS_ESCAPE = r'["\\\x00-\x1f]'
_encode = msgspec.json.Encoder().encode


def iso_column(table: pa.Table, prefix: str) -> pa.Array:
    """A bound as ISO strings at its precision ("2009", "2021-08", "-0059"), null when absent."""
    year = table.column(f"{prefix}_year")
    # As format_year: a minus for BCE, a plus for years past 9999 (ISO's expanded years).
    sign = pc.if_else(pc.less(year, 0), "-", pc.if_else(pc.greater(year, 9999), "+", ""))
    digits = pc.ascii_lpad(pc.cast(pc.abs(year), pa.string()), 4, "0")
    year_text = pc.binary_join_element_wise(sign, digits, "")
    month = pc.ascii_lpad(pc.cast(table.column(f"{prefix}_month"), pa.string()), 2, "0")
    day = pc.ascii_lpad(pc.cast(table.column(f"{prefix}_day"), pa.string()), 2, "0")
    with_month = pc.binary_join_element_wise(year_text, month, "-")
    with_day = pc.binary_join_element_wise(with_month, day, "-")
    precision = table.column(f"{prefix}_precision")
    text = pc.if_else(
        pc.equal(precision, 11),
        with_day,
        pc.if_else(pc.equal(precision, 10), with_month, year_text),
    )
    return pc.if_else(precision.is_valid(), text, pa.scalar(None, pa.string()))


def fact_tuples(kg: TemporalKG) -> list[tuple[str, str, str, str | None, str | None]]:
    """Facts as sorted (subject, relation, object, start, end) tuples with ISO bounds.

    The form in which people read and compare small KGs (tests, fixtures, examples).
    """
    table = kg.facts
    columns = [table.column(k).to_pylist() for k in ("subject", "relation", "object")]
    columns += [iso_column(table, "start").to_pylist(), iso_column(table, "end").to_pylist()]
    # A missing bound sorts first (None and a string do not compare).
    return sorted(zip(*columns, strict=True), key=lambda row: [(v is not None, v) for v in row])


def _member(key: str, values, first: bool = False, optional: bool = False) -> pa.Array:
    """``,"key":<JSON string or null>`` per row (``{`` for the first member of an object).

    An ``optional`` member is left out (empty text) where the value is null.
    """
    head = ("{" if first else ",") + f'"{key}":'
    if pc.any(pc.match_substring_regex(values, _NEEDS_ESCAPE)).as_py():
        texts = [None if v is None else head + _encode(v).decode() for v in values.to_pylist()]
        member = pa.array(texts, pa.string())
    else:
        member = pc.binary_join_element_wise(head + '"', values, '"', "")
    return member.fill_null("" if optional else head + "null")


def _bounds(table: pa.Table) -> list[pa.Array]:
    return [_member(bound, iso_column(table, bound)) for bound in ("start", "end")]


def _fact_members(table: pa.Table) -> list[pa.Array]:
    return [
        _member("subject", table.column("subject"), first=True),
        _member("relation", table.column("relation")),
        _member("object", table.column("object")),
        *_bounds(table),
    ]


def _entity_members(table: pa.Table) -> list[pa.Array]:
    aliases = [',"aliases":' + _encode(a or []).decode() for a in table["aliases"].to_pylist()]
    return [
        _member("id", table.column("id"), first=True),
        _member("label", table.column("label")),
        pa.array(aliases, pa.string()),
        _member("description", table.column("description")),
        *_bounds(table),
        _member("type", table.column("type"), optional=True),
    ]


def _relation_members(table: pa.Table) -> list[pa.Array]:
    return [
        _member("kind", pa.repeat("relation", table.num_rows), first=True),
        _member("id", table.column("id")),
        _member("label", table.column("label")),
    ]


_MEMBERS = {"facts": _fact_members, "entities": _entity_members, "relations": _relation_members}


def _text_bytes(lines: pa.Array) -> memoryview:
    """The concatenated UTF-8 of a string array without nulls, straight from its data buffer."""
    if isinstance(lines, pa.ChunkedArray):
        lines = lines.combine_chunks()
    offsets = np.frombuffer(lines.buffers()[1], dtype=np.int32)
    first, last = offsets[lines.offset], offsets[lines.offset + len(lines)]
    return memoryview(lines.buffers()[2])[first:last]


def export_jsonl(kg: TemporalKG, out: str | Path, what: str = "facts") -> int:
    """Write one table of ``kg`` as JSONL, atomically; returns the number of rows."""
    if what not in _MEMBERS:
        raise UserError(f"what must be facts, entities or relations, not {what!r}")
    if Path(out).is_dir():
        raise UserError(f"{out}: a folder; pass the path of the JSONL file to write")
    table = getattr(kg, what)
    with atomic_path(out) as tmp, open(tmp, "wb") as stream:
        for start in range(0, table.num_rows, _BATCH):
            members = _MEMBERS[what](table.slice(start, _BATCH))
            stream.write(_text_bytes(pc.binary_join_element_wise(*members, "}\n", "")))
    return table.num_rows
