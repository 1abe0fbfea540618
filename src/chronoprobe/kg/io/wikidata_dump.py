"""The official Wikidata JSON dump (``.json``, ``.json.gz``, ``.json.bz2``) as a temporal KG.

The layout is a line ``[``, then one entity per line followed by ``,`` (the last without),
then ``]``. Each line is decoded by msgspec into structs that hold only what the extraction
reads: labels, aliases and descriptions of one language (a struct with a single field named
after the language, so the other hundreds of languages are skipped unbuilt), and of each
statement its main snak, rank and three qualifiers; references, sitelinks and every other key
are skipped. Values stay raw bytes until a statement proves relevant.

A fact is a statement whose main value is an item and whose qualifiers give P580 (start)
and/or P582 (end), or P585 (point in time: start = end). Parsing is a pure function of a block
of lines that returns Arrow tables, so blocks go to a process pool unchanged (and would go to a
distributed map the same way) and come back cheap to send. Normal data that is not a fact
(deprecated rank, unknown values, statements with no usable time) is counted in
``kg.meta["skipped"]``; bad input goes to :class:`Problems`.

Memory stays bounded by the output, not the input: entity rows go to a Parquet spool on disk
(``TMPDIR``) as they are parsed, and only those a fact refers to or that have a time span of
their own are read back at the end; a full dump has a hundred million items, most of them
neither.
"""

from __future__ import annotations

import re
import tempfile
from collections import Counter, deque
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Annotated, NamedTuple

import msgspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from chronoprobe.kg.graph import TemporalKG
from chronoprobe.kg.io.compressed import line_blocks
from chronoprobe.kg.io.options import LoadOptions
from chronoprobe.kg.io.problems import Problems
from chronoprobe.kg.records import ENTITY_SCHEMA, FACT_SCHEMA, RELATION_SCHEMA, BoundColumns
from chronoprobe.time import TimePoint, civil_from_day_number

START, END, POINT = "P580", "P582", "P585"
# An entity's own span: the first of these properties with a usable value wins.
ENTITY_START = ("P580", "P571", "P585", "P577", "P575")  # start, inception, point, pub., discovery
ENTITY_END = ("P582", "P576", "P585")  # end, dissolved, point in time
JULIAN = "http://www.wikidata.org/entity/Q1985786"

_ITEM_ID = re.compile(r"Q[1-9][0-9]*")
_PROPERTY_ID = re.compile(r"P[1-9][0-9]*")
_MERGE_EVERY = 64  # parsed blocks of facts or relations held before they are combined


class _Value(msgspec.Struct, gc=False):
    type: str
    value: msgspec.Raw  # decoded only when the statement is relevant


class _Snak(msgspec.Struct, gc=False):
    snaktype: str
    datatype: str | None = None
    datavalue: _Value | None = None


class _TimeQualifiers(
    msgspec.Struct, gc=False, rename={"start": START, "end": END, "point": POINT}
):
    start: list[_Snak] = []
    end: list[_Snak] = []
    point: list[_Snak] = []


class _Statement(msgspec.Struct, gc=False):
    mainsnak: _Snak
    rank: str = "normal"
    qualifiers: _TimeQualifiers | None = None


class _Time(msgspec.Struct, gc=False):
    time: str
    precision: int
    calendarmodel: str = ""


class _EntityId(
    msgspec.Struct, gc=False, rename={"entity_type": "entity-type", "numeric_id": "numeric-id"}
):
    id: str | None = None
    entity_type: str | None = None
    numeric_id: int | None = None


class _Text(msgspec.Struct, gc=False):
    value: str


_EmptyMap = Annotated[list, msgspec.Meta(max_length=0)]
_TIME = msgspec.json.Decoder(_Time)
_ENTITY_ID = msgspec.json.Decoder(_EntityId)


@lru_cache
def _entity_decoder(lang: str) -> msgspec.json.Decoder:
    """A decoder of dump entities that builds only ``lang``'s labels, aliases and descriptions.

    Wikibase writes an empty map as ``[]``, hence the empty list allowed for every map.
    """
    labels = msgspec.defstruct("Labels", [("text", _Text | None, None)], rename={"text": lang})
    aliases = msgspec.defstruct("Aliases", [("texts", list[_Text], [])], rename={"texts": lang})
    entity = msgspec.defstruct(
        "DumpEntity",
        [
            ("id", str),
            ("type", str),
            ("datatype", str | None, None),  # properties only: the type of their values
            ("labels", labels | _EmptyMap | None, None),
            ("descriptions", labels | _EmptyMap | None, None),
            ("aliases", aliases | _EmptyMap | None, None),
            ("claims", dict[str, list[_Statement]] | _EmptyMap, {}),
        ],
    )
    return msgspec.json.Decoder(entity)


class Parsed(NamedTuple):
    """What one block of dump lines yields: Arrow tables pickle as buffers, cheap to send."""

    entities: pa.Table
    relations: pa.Table
    facts: pa.Table
    skipped: Counter
    problems: list[tuple[int, str, str]]  # line, reason, kind


@dataclass
class _Rows:
    """Column buffers filled while a block is parsed."""

    entity_ids: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    aliases: list[list[str]] = field(default_factory=list)
    descriptions: list[str | None] = field(default_factory=list)
    entity_starts: BoundColumns = field(default_factory=BoundColumns)
    entity_ends: BoundColumns = field(default_factory=BoundColumns)
    relation_ids: list[str] = field(default_factory=list)
    relation_labels: list[str] = field(default_factory=list)
    subjects: list[str] = field(default_factory=list)
    relations: list[str] = field(default_factory=list)
    objects: list[str] = field(default_factory=list)
    starts: BoundColumns = field(default_factory=BoundColumns)
    ends: BoundColumns = field(default_factory=BoundColumns)
    skipped: Counter = field(default_factory=Counter)
    problems: list[tuple[int, str, str]] = field(default_factory=list)

    def parsed(self) -> Parsed:
        entities = pa.table(
            {
                "id": self.entity_ids,
                "label": self.labels,
                "aliases": self.aliases,
                "description": self.descriptions,
                **self.entity_starts.columns("start"),
                **self.entity_ends.columns("end"),
                "type": [None] * len(self.entity_ids),
            },
            schema=ENTITY_SCHEMA,
        )
        relations = pa.table(
            {"id": self.relation_ids, "label": self.relation_labels}, schema=RELATION_SCHEMA
        )
        facts = pa.table(
            {
                "subject": self.subjects,
                "relation": self.relations,
                "object": self.objects,
                **self.starts.columns("start"),
                **self.ends.columns("end"),
            },
            schema=FACT_SCHEMA,
        )
        return Parsed(entities, relations, facts, self.skipped, self.problems)


class _BadValue(ValueError):
    """A value inside a statement that cannot be read; only that statement is skipped."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind


def _gregorian(point: TimePoint) -> TimePoint:
    """A day-precision date of the Julian calendar on the proleptic Gregorian axis.

    Dump years are historical (no year 0, -0044 is 44 BCE): the Julian day number wants the
    astronomical year, so BCE years shift by one on the way in and back on the way out.
    """
    year = point.year + 1 if point.year < 0 else point.year
    shift = (14 - point.month) // 12
    y, m = year + 4800 - shift, point.month + 12 * shift - 3
    julian_day = point.day + (153 * m + 2) // 5 + 365 * y + y // 4 - 32083
    year, month, day = civil_from_day_number(julian_day - 2440588)  # 2440588: 1970-01-01
    return TimePoint(year - 1 if year <= 0 else year, month, day)


def _time_of(snak: _Snak) -> TimePoint | None:
    value = snak.datavalue
    if value is None or value.type != "time":
        found = "no value" if value is None else f"a {value.type} value"
        raise _BadValue("bad time value", f"a time is expected, found {found}")
    try:
        return _time_value(bytes(value.value))
    except (msgspec.DecodeError, ValueError) as err:
        raise _BadValue("bad time value", str(err)) from None


@lru_cache(maxsize=1 << 16)
def _time_value(raw: bytes) -> TimePoint | None:
    """A time value's JSON as a point; cached, as the same dates recur all over a dump."""
    time = _TIME.decode(raw)
    point = TimePoint.from_wikidata(time.time, time.precision)
    if point is not None and time.calendarmodel == JULIAN and point.day is not None:
        point = _gregorian(point)
    return point


def _item_of(snak: _Snak) -> str:
    value = snak.datavalue
    if value is None or value.type != "wikibase-entityid":
        found = "no value" if value is None else f"a {value.type} value"
        raise _BadValue("bad item value", f"an item is expected, found {found}")
    try:
        entity = _ENTITY_ID.decode(value.value)
    except msgspec.DecodeError as err:
        raise _BadValue("bad item value", str(err)) from None
    item = entity.id
    if item is None and entity.entity_type == "item" and entity.numeric_id is not None:
        item = f"Q{entity.numeric_id}"  # dumps before 2016 carry only the numeric id
    if item is None or not _ITEM_ID.fullmatch(item):
        raise _BadValue("bad item value", repr(item or bytes(value.value).decode()))
    return item


def _is_item_claim(snak: _Snak) -> bool:
    if snak.datatype is not None:
        return snak.datatype == "wikibase-item"
    value = snak.datavalue  # older dumps: no datatype on snaks
    return value is not None and value.type == "wikibase-entityid"


def _times(snaks: list[_Snak]) -> tuple[list[TimePoint], bool]:
    """The usable times of some qualifier snaks, and whether one was given but is unknown.

    An unknown value (somevalue) or one coarser than a year says that the time exists but not
    when; "novalue" says there is none, which is simply no bound.
    """
    times, unknown = [], False
    for snak in snaks:
        time = _time_of(snak) if snak.snaktype == "value" else None
        if time is not None:
            times.append(time)
        elif snak.snaktype != "novalue":
            unknown = True
    return times, unknown


def _ends_before(end: TimePoint, start: TimePoint) -> bool:
    """Whether ``end``'s span is over before ``start``'s begins: compared at the coarser
    precision of the two (scalar day numbers go through numpy, too slow per statement)."""
    parts = min(end.precision, start.precision) - 8  # year: 1, month: 2, day: 3
    return (end.year, end.month, end.day)[:parts] < (start.year, start.month, start.day)[:parts]


def _bounds(qualifiers: _TimeQualifiers) -> tuple[TimePoint | None, TimePoint | None] | str:
    """A statement's (start, end), or why it has none (a skip category)."""
    starts, start_unknown = _times(qualifiers.start)
    ends, end_unknown = _times(qualifiers.end)
    if starts or ends:
        if end_unknown and not ends:
            # It ended, but when is unknown: a missing end would wrongly mean "still true".
            return "unknown end time"
        # Several values of one qualifier: the widest interval they describe.
        start, end = min(starts, default=None), max(ends, default=None)
        if start is not None and end is not None and _ends_before(end, start):
            raise _BadValue("end before start", f"end {end.iso()} is before start {start.iso()}")
        return start, end
    points, point_unknown = _times(qualifiers.point)
    if points:
        return min(points), min(points)
    if start_unknown or end_unknown or point_unknown:
        return "unknown or imprecise time"
    return "no time qualifier"


def _add_facts(entity, number: int, relations: frozenset[str] | None, out: _Rows) -> None:
    for pid, statements in entity.claims.items():
        if relations is not None and pid not in relations:
            continue
        datatype = statements[0].mainsnak.datatype if statements else None
        if datatype is not None and datatype != "wikibase-item":
            continue  # one property, one datatype: most lists are skipped here whole
        for statement in statements:
            snak = statement.mainsnak
            if not _is_item_claim(snak):
                continue
            if statement.rank == "deprecated":
                out.skipped["deprecated"] += 1
                continue
            if snak.snaktype != "value":
                out.skipped["somevalue/novalue"] += 1
                continue
            if statement.qualifiers is None:
                out.skipped["no time qualifier"] += 1
                continue
            try:
                obj = _item_of(snak)
                bounds = _bounds(statement.qualifiers)
            except _BadValue as err:
                out.problems.append((number, f"{entity.id} {pid}: {err}", err.kind))
                continue
            if isinstance(bounds, str):
                out.skipped[bounds] += 1
                continue
            out.subjects.append(entity.id)
            out.relations.append(pid)
            out.objects.append(obj)
            out.starts.append(bounds[0])
            out.ends.append(bounds[1])


def _entity_bound(
    entity, pids: tuple[str, ...], latest: bool, number: int, out: _Rows
) -> TimePoint | None:
    """The widest best-ranked value of the first property in ``pids`` that has a usable one."""
    for pid in pids:
        statements = entity.claims.get(pid)
        if not statements:
            continue
        best = [s for s in statements if s.rank == "preferred"] or [
            s for s in statements if s.rank == "normal"
        ]
        times = []
        for statement in best:
            if statement.mainsnak.snaktype != "value":
                continue
            try:
                time = _time_of(statement.mainsnak)
            except _BadValue as err:
                out.problems.append((number, f"{entity.id} {pid}: {err}", err.kind))
                continue
            if time is not None:
                times.append(time)
        if times:
            return max(times) if latest else min(times)
    return None


def _text(texts) -> str | None:
    return texts.text.value if texts and texts.text is not None else None


def _add_entity(entity, number: int, relations: frozenset[str] | None, out: _Rows) -> None:
    if entity.type not in ("item", "property"):
        out.skipped[f"{entity.type} entity"] += 1
        return
    pattern = _ITEM_ID if entity.type == "item" else _PROPERTY_ID
    if not pattern.fullmatch(entity.id):
        out.problems.append((number, f"bad {entity.type} id {entity.id!r}", "bad entity id"))
        return
    label = _text(entity.labels) or entity.id
    if entity.type == "property":
        # Only properties with item values can be fact relations.
        if entity.datatype in (None, "wikibase-item") and (
            relations is None or entity.id in relations
        ):
            out.relation_ids.append(entity.id)
            out.relation_labels.append(label)
        return
    if not entity.claims:  # Wikibase writes no claims as [] as well as {}
        entity.claims = {}
    out.entity_ids.append(entity.id)
    out.labels.append(label)
    out.aliases.append([alias.value for alias in entity.aliases.texts] if entity.aliases else [])
    out.descriptions.append(_text(entity.descriptions))
    out.entity_starts.append(_entity_bound(entity, ENTITY_START, False, number, out))
    out.entity_ends.append(_entity_bound(entity, ENTITY_END, True, number, out))
    _add_facts(entity, number, relations, out)


def parse_block(
    block: bytes, first_line: int, lang: str = "en", relations: frozenset[str] | None = None
) -> Parsed:
    """Everything the dump lines in ``block`` yield; ``first_line`` numbers its first line."""
    decoder = _entity_decoder(lang)
    out = _Rows()
    for number, line in enumerate(block.split(b"\n"), start=first_line):
        line = line.strip()
        if line.endswith(b","):
            line = line[:-1]
        if not line or line in (b"[", b"]"):
            continue
        try:
            entity = decoder.decode(line)
        except msgspec.ValidationError as err:
            kind = "entity without id" if "field `id`" in str(err) else "not a Wikidata entity"
            out.problems.append((number, f"not a Wikidata entity: {err}", kind))
            continue
        except msgspec.DecodeError as err:
            out.problems.append((number, f"malformed JSON: {err}", "malformed JSON"))
            continue
        _add_entity(entity, number, relations, out)
    return out.parsed()


def _parse_task(args: tuple[bytes, int, str, frozenset[str] | None]) -> Parsed:
    return parse_block(*args)


def _parsed_blocks(path: Path, options: LoadOptions, pool) -> Iterator[tuple[Parsed, int]]:
    """Parsed blocks of one file in order, with the compressed bytes read so far.

    With a pool, at most two blocks per worker are in flight, so memory stays bounded
    however far the reader runs ahead of the parsers.
    """
    threads = max(2, options.processes)  # bz2 decompression threads
    first = 1
    pending: deque = deque()
    for block, position in line_blocks(path, threads=threads):
        task = (block, first, options.lang, options.relations)
        first += block.count(b"\n")
        if pool is None:
            yield parse_block(*task), position
            continue
        pending.append((pool.apply_async(_parse_task, (task,)), position))
        if len(pending) >= 2 * options.processes:
            result, done = pending.popleft()
            yield result.get(), done
    while pending:
        result, done = pending.popleft()
        yield result.get(), done


class _Tables:
    """Small tables appended one by one, combined now and then so chunk counts stay low."""

    def __init__(self, schema: pa.Schema) -> None:
        self.schema, self.parts = schema, [schema.empty_table()]

    def append(self, table: pa.Table) -> None:
        if table.num_rows:
            self.parts.append(table)
        if len(self.parts) >= _MERGE_EVERY:
            self.parts = [pa.concat_tables(self.parts).combine_chunks()]

    def table(self) -> pa.Table:
        return pa.concat_tables(self.parts).combine_chunks()


class _EntitySpool:
    """Entity rows on disk until the facts tell which of them to keep."""

    def __init__(self, stack: ExitStack) -> None:
        folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="chronoprobe-"))
        self.path = Path(folder) / "entities.parquet"
        self.writer = stack.enter_context(pq.ParquetWriter(self.path, ENTITY_SCHEMA))

    def write(self, entities: pa.Table) -> None:
        if entities.num_rows:
            self.writer.write_table(entities)

    def kept(self, facts: pa.Table) -> pa.Table:
        """Entities a fact refers to or with a span of their own, the last record of each id."""
        self.writer.close()
        referenced = pc.unique(
            pa.chunked_array(facts["subject"].chunks + facts["object"].chunks, pa.string())
        )
        kept = _Tables(ENTITY_SCHEMA)
        for batch in pq.ParquetFile(self.path).iter_batches(batch_size=1 << 18):
            keep = pc.or_(
                pc.is_in(batch["id"], value_set=referenced),
                pc.or_(pc.is_valid(batch["start_precision"]), pc.is_valid(batch["end_precision"])),
            )
            kept.append(pa.Table.from_batches([batch.filter(keep)]))
        return _last_per_id(kept.table())


def _last_per_id(table: pa.Table) -> pa.Table:
    """Keep the last row of each id, as a later record of an entity replaces an earlier one."""
    ids = table.column("id")
    if pc.count_distinct(ids).as_py() == len(ids):
        return table
    rows = pa.table({"id": ids, "row": np.arange(len(ids))})
    last = rows.group_by("id", use_threads=False).aggregate([("row", "max")])["row_max"]
    return table.take(np.sort(last.to_numpy()))


def load(paths: Sequence[Path], options: LoadOptions, problems: Problems) -> TemporalKG:
    """Load Wikidata JSON dumps (plain, gzip or bzip2) into one temporal KG.

    Items become entities when a fact refers to them or they have a span of their own;
    properties with item values become relations.
    """
    paths = [Path(p) for p in paths]
    skipped: Counter = Counter()
    relations, facts = _Tables(RELATION_SCHEMA), _Tables(FACT_SCHEMA)
    with ExitStack() as stack:
        spool = _EntitySpool(stack)
        pool = None
        if options.processes > 1:
            import multiprocessing

            # spawn: workers must not inherit the decompressor threads of this process.
            context = multiprocessing.get_context("spawn")
            pool = stack.enter_context(context.Pool(options.processes))
        advance = _progress(stack, paths) if options.progress else None
        for path in paths:
            for parsed, position in _parsed_blocks(path, options, pool):
                for number, reason, kind in parsed.problems:
                    problems.report(str(path), number, reason, kind=kind)
                skipped.update(parsed.skipped)
                spool.write(parsed.entities)
                relations.append(parsed.relations)
                facts.append(parsed.facts)
                if advance is not None:
                    advance(path, position)
        fact_table = facts.table()
        entities = spool.kept(fact_table)
    meta = {
        "source": {
            "format": "wikidata-json",
            "inputs": [str(p) for p in paths],
            "lang": options.lang,
        },
        "skipped": dict(sorted(skipped.items())),
    }
    return TemporalKG.from_tables(entities, _last_per_id(relations.table()), fact_table, meta=meta)


def _progress(stack: ExitStack, paths: list[Path]):
    """A rich progress bar over the (compressed) bytes of all inputs; returns its updater."""
    from rich.console import Console
    from rich.progress import DownloadColumn, Progress, TransferSpeedColumn

    progress = stack.enter_context(
        Progress(
            *Progress.get_default_columns(),
            DownloadColumn(),
            TransferSpeedColumn(),
            console=Console(stderr=True),
        )
    )
    sizes = {path: path.stat().st_size for path in paths}
    offsets = dict(zip(paths, np.cumsum([0, *sizes.values()])[:-1].tolist(), strict=True))
    task = progress.add_task("reading the Wikidata dump", total=sum(sizes.values()))

    def advance(path: Path, position: int) -> None:
        progress.update(task, completed=offsets[path] + min(position, sizes[path]))

    return advance
