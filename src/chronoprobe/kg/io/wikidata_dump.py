"""The official Wikidata JSON dump (``.json``, ``.json.gz``, ``.json.bz2``) as a temporal KG.

The layout is a line ``[``, then one entity per line followed by ``,`` (the last without),
then ``]``. The lines of a block are read by a compiled scanner (``_dumpscan.c``, the
:class:`Scanner` here, None where no C compiler built it): one pass over each line validates
it, does the per-statement work and appends the item's rows, and Python finishes only the
lines that need it (properties, spans of their own, statements with no usable bounds). Every
line the scanner does not fully understand, and every line where it is not built, is read as
below, to the same rows.

Without the scanner, each line is decoded by msgspec, straight from a view into its block,
into structs that hold only what the extraction reads: labels, aliases and descriptions of one
language (a struct with a single field named after the language, so the other hundreds of
languages are skipped unbuilt), and of each statement its main snak's type, its rank, and its
value and qualifiers as raw bytes; references, sitelinks and every other key are skipped. Only item
statements with qualifiers get their value read (one typed decode) and their qualifiers read,
through caches keyed by their bytes (the same dates and terms recur all over a dump), so most
statements cost Python nothing beyond a type check. What is read lazily is validated when
read: a malformed statement that is read rejects its line as a full decode would (same message
and JSON path); one that is never read (an external id, say) no longer does.

A fact is a statement whose main value is an item and whose qualifiers give P580 (start)
and/or P582 (end), or P585 (point in time: start = end). Parsing is a pure function of a block
of lines that returns Arrow tables (the caches only remember), so blocks go to a process pool
unchanged (through shared memory, see :class:`SharedBlocks`; they would go to a distributed map
the same way) and come back cheap to send. Normal data that is not a fact
(deprecated rank, unknown values, statements with no usable time) is counted in
``kg.meta["skipped"]``; bad input goes to :class:`Problems`.

Loading whole dumps (a pool, Ray, bounded memory) is :mod:`chronoprobe.kg.io.wikidata_load`.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Annotated, Literal, NamedTuple

import msgspec
import pyarrow as pa

from chronoprobe.errors import UserError
from chronoprobe.jsonl import json_problem
from chronoprobe.kg.io.checks import Invalid, check_interval, check_point
from chronoprobe.kg.io.compressed import (
    shared_block,
)
from chronoprobe.kg.records import ENTITY_SCHEMA, FACT_SCHEMA, RELATION_SCHEMA
from chronoprobe.time import TimePoint, civil_from_day_number

try:
    from chronoprobe.kg.io._dumpscan import BoundsCache, Scanner
except ImportError:  # installed where no C compiler was: the msgspec decoder reads every line
    BoundsCache = Scanner = None

START, END, POINT = "P580", "P582", "P585"
# An entity's own span: the first of these properties with a usable value wins.
ENTITY_START = ("P580", "P571", "P585", "P577", "P575")  # start, inception, point, pub., discovery
ENTITY_END = ("P582", "P576", "P585")  # end, dissolved, point in time
ITEM = "wikibase-item"
JULIAN = "http://www.wikidata.org/entity/Q1985786"

_ITEM_ID = re.compile(r"Q[1-9][0-9]*")
_PROPERTY_ID = re.compile(r"P[1-9][0-9]*")


class _Snak(msgspec.Struct, gc=False):
    snaktype: str
    datatype: str | None = None
    datavalue: msgspec.Raw = msgspec.Raw()  # absent: empty; read only when relevant


class _Statement(msgspec.Struct, gc=False):
    mainsnak: _Snak
    rank: str = "normal"
    qualifiers: msgspec.Raw = msgspec.Raw()  # absent: empty; read only for item statements


class _Value(msgspec.Struct, gc=False):
    type: str
    value: msgspec.Raw


class _TimeQualifiers(
    msgspec.Struct, gc=False, rename={"start": START, "end": END, "point": POINT}
):
    start: list[_Snak] = []
    end: list[_Snak] = []
    point: list[_Snak] = []


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


class _UsualEntityId(
    msgspec.Struct, gc=False, rename={"entity_type": "entity-type", "numeric_id": "numeric-id"}
):
    """An item's id as it normally is: a string (checked after the decode, which is faster
    than a pattern in the decoder), whatever else is there well typed."""

    id: str
    entity_type: str | None = None
    numeric_id: int | None = None


class _UsualItem(msgspec.Struct, gc=False):
    """An item datavalue as it normally is, read and checked in one go (see ``_item``)."""

    type: Literal["wikibase-entityid"]
    value: _UsualEntityId


class _Text(msgspec.Struct, gc=False):
    value: str


_EmptyMap = Annotated[list, msgspec.Meta(max_length=0)]
_VALUE = msgspec.json.Decoder(_Value | None)
_QUALIFIERS = msgspec.json.Decoder(_TimeQualifiers)
_TIME = msgspec.json.Decoder(_Time)
_ENTITY_ID = msgspec.json.Decoder(_EntityId)
_USUAL_ITEM = msgspec.json.Decoder(_UsualItem)
_STATEMENTS = msgspec.json.Decoder(list[_Statement])
_SPACE = frozenset(b" \t\n\r\x0b\x0c")  # what bytes.strip() strips
_COMMA, _OPEN, _CLOSE = ord(","), ord("["), ord("]")
_NO_BOUND = (None, None, None, None)
_NO_TIME = (None, False)  # no snaks of a time qualifier: no time, none unknown
_SPAN_PIDS = frozenset(ENTITY_START + ENTITY_END)
_SPAN_BYTES = tuple(pid.encode() for pid in sorted(_SPAN_PIDS))  # the scanner returns them raw
# The item statements that are no fact, as the compiled scanner counts them.
_SCANNED_SKIPS = ("no time qualifier", "deprecated", "somevalue/novalue")
# The compiled scanner's cache of _time_bounds: 32 MiB at most (its keys' bytes + 200 each).
_SCANNED_BOUNDS_BYTES = 32 << 20
_SCANNED_BOUNDS = {} if BoundsCache is None else BoundsCache(_SCANNED_BOUNDS_BYTES)


@lru_cache
def _entity_decoder(lang: str, some_claims: bool = False) -> msgspec.json.Decoder:
    """A decoder of dump entities that builds only ``lang``'s labels, aliases and descriptions.

    With ``some_claims`` (a load of some relations) each property's statements are left as
    their raw JSON, for :func:`_wanted_claims` to decode only those the load reads. Wikibase
    writes an empty map as ``[]``, hence the empty list allowed for every map.
    """
    statements = msgspec.Raw if some_claims else list[_Statement]
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
            ("claims", dict[str, statements] | _EmptyMap, {}),
        ],
        gc=False,
    )
    return msgspec.json.Decoder(entity)


DESCRIBED_PER_BLOCK = 1000  # bad records of a block described by line and reason


class Parsed(NamedTuple):
    """What one block of dump lines yields: Arrow tables pickle as buffers, cheap to send."""

    entities: pa.Table
    relations: pa.Table
    facts: pa.Table
    skipped: Counter
    problems: list[tuple[int, str, str]]  # line, reason, kind
    lines: int  # how many lines the block holds
    more_problems: Counter  # by kind, problems past those described (see _Rows.problem)


def _table(rows: list[tuple], schema: pa.Schema) -> pa.Table:
    """Rows (tuples in the schema's column order) as a table, built column by column."""
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(schema)
    return pa.table(dict(zip(schema.names, columns, strict=True)), schema=schema)


@dataclass
class _Rows:
    """Rows gathered while a block is parsed, as tuples in their table's column order."""

    entities: list[tuple] = field(default_factory=list)
    relations: list[tuple[str, str]] = field(default_factory=list)
    facts: list[tuple] = field(default_factory=list)
    skips: list[str] = field(default_factory=list)  # one skip category per statement skipped
    # entities skipped, by type; statements the compiled scanner counted, by skip category
    skipped: Counter = field(default_factory=Counter)
    problems: list[tuple[int, str, str]] = field(default_factory=list)
    more_problems: Counter = field(default_factory=Counter)
    described: set[str] = field(default_factory=set)  # the kinds in ``problems``
    last_bad: tuple = (None, "", "")  # the last short line that was a problem: its reason, kind

    def problem(self, problem: tuple[int, str, str]) -> None:
        """Note one bad record: described (line, reason, kind) while the block has described
        fewer than DESCRIBED_PER_BLOCK, and always the first of a kind; past that only
        counted, so that a block of millions of bad lines (a compressed file of ``{},``
        lines) holds a count, not millions of messages."""
        kind = problem[2]
        if len(self.problems) < DESCRIBED_PER_BLOCK or kind not in self.described:
            self.problems.append(problem)
            self.described.add(kind)
        else:
            self.more_problems[kind] += 1

    def mark(self) -> tuple:
        counted = Counter(self.more_problems) if self.more_problems else None
        return len(self.facts), len(self.skips), len(self.problems), counted

    def undo(self, mark: tuple) -> None:
        """Forget the facts, skips and problems added since ``mark``."""
        del self.facts[mark[0] :], self.skips[mark[1] :]
        if len(self.problems) > mark[2]:
            del self.problems[mark[2] :]
            self.described = {described[2] for described in self.problems}
        self.more_problems = mark[3] or Counter()

    def parsed(self, lines: int) -> Parsed:
        return Parsed(
            _table(self.entities, ENTITY_SCHEMA),
            _table(self.relations, RELATION_SCHEMA),
            _table(self.facts, FACT_SCHEMA),
            self.skipped + Counter(self.skips),
            self.problems,
            lines,
            self.more_problems,
        )


class _BadValue(UserError):
    """A value inside a statement that cannot be read; only that statement is skipped.

    The cached readers below return it rather than raise it, so that it is cached too.
    """

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind


def _remembered(maxsize: int, most_bytes: int, key_bytes=len):
    """An ``lru_cache`` bounded by bytes as well as entries: a call whose first argument holds
    more than ``most_bytes`` raw bytes (``key_bytes`` counts them) is worked out each time,
    not remembered, so the cache holds some ``maxsize * most_bytes`` bytes of keys at most
    whatever the input; the keys of a real dump are a few hundred bytes."""

    def remember(function):
        cached = lru_cache(maxsize=maxsize)(function)

        @functools.wraps(function)
        def call(key, *args):
            if key_bytes(key) <= most_bytes:
                return cached(key, *args)
            return function(key, *args)

        call.cache_clear, call.cache_info = cached.cache_clear, cached.cache_info
        return call

    return remember


def _located(err: msgspec.ValidationError, prefix: str) -> msgspec.ValidationError:
    """``err`` of a part decoded on its own, with the path it has within the enclosing JSON."""
    head, found, path = str(err).partition(" - at `$")
    return msgspec.ValidationError(f"{head} - at `${prefix}{path if found else '`'}")


def _value(datavalue: bytes) -> _Value | None:
    """A snak's raw datavalue, decoded; malformed ones fail as the whole line would."""
    if not datavalue:
        return None
    try:
        return _VALUE.decode(datavalue)
    except msgspec.ValidationError as err:
        raise _located(err, ".datavalue") from None


def _found(value: _Value | None) -> str:
    return "no value" if value is None else f"a {value.type} value"


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


# A time as (its order, its bound columns, itself): the order is TimePoint's (year, month or 0,
# day or 0), so min and max compare plain tuples, and the columns (year, month, day, precision)
# go to the tables as they are.
_Point = tuple[tuple[int, int, int], tuple[int, int | None, int | None, int], TimePoint]


def _point(point: TimePoint) -> _Point:
    order = (point.year, point.month or 0, point.day or 0)
    return order, (point.year, point.month, point.day, int(point.precision)), point


@_remembered(1 << 16, 1 << 10)
def _time(datavalue: bytes) -> _Point | _BadValue | None:
    """A time snak's raw datavalue as a point (None: coarser than a year), or why it is none.

    Cached, as the same dates recur all over a dump.
    """
    value = _value(datavalue)
    if value is None or value.type != "time":
        return _BadValue("bad time value", f"a time is expected, found {_found(value)}")
    try:
        time = _TIME.decode(value.value)
        point = TimePoint.from_wikidata(time.time, time.precision)
        if point is not None and time.calendarmodel == JULIAN and point.day is not None:
            point = _gregorian(point)
        if point is not None:
            check_point(point, repr(time.time))
    except (msgspec.DecodeError, ValueError) as err:  # Invalid included
        return _BadValue("bad time value", str(err))
    return None if point is None else _point(point)


def _item(datavalue: msgspec.Raw) -> str | _BadValue:
    """An item snak's raw datavalue as an item id, or why it is none.

    The usual value is checked whole by one typed decode; anything else takes the way that
    explains it.
    """
    try:
        item = _USUAL_ITEM.decode(datavalue).value.id
    except msgspec.DecodeError:
        pass
    else:
        if _ITEM_ID.fullmatch(item):
            return item
    value = _main_value(datavalue)
    if value is None or value.type != "wikibase-entityid":
        return _BadValue("bad item value", f"an item is expected, found {_found(value)}")
    try:
        entity = _ENTITY_ID.decode(value.value)
    except msgspec.DecodeError as err:
        return _BadValue("bad item value", str(err))
    item = entity.id
    if item is None and entity.entity_type == "item" and entity.numeric_id is not None:
        item = f"Q{entity.numeric_id}"  # dumps before 2016 carry only the numeric id
    if item is None or not _ITEM_ID.fullmatch(item):
        return _BadValue(
            "bad item value", repr(item or bytes(value.value).decode(errors="replace"))
        )
    return item


def _main_value(datavalue: msgspec.Raw) -> _Value | None:
    """A statement's main snak's raw datavalue, decoded, errors located in the statement."""
    try:
        return _value(bytes(datavalue))
    except msgspec.ValidationError as err:
        raise _located(err, ".mainsnak") from None


def _is_item_claim(snak: _Snak) -> bool:
    if snak.datatype is not None:
        return snak.datatype == ITEM
    value = _main_value(snak.datavalue)  # older dumps: no datatype on snaks
    return value is not None and value.type == "wikibase-entityid"


# The snaks of one time qualifier, as (snaktype, raw datavalue or b"" where none) pairs.
_Snaks = tuple[tuple[str, bytes], ...]


def _snaks(snaks: list[_Snak]) -> _Snaks:
    return tuple((snak.snaktype, bytes(snak.datavalue)) for snak in snaks)


def _snaks_bytes(snaks: _Snaks) -> int:
    if len(snaks) == 1:  # nearly always: counted without a generator, on every cache miss
        return len(snaks[0][1])
    return sum(len(datavalue) for _, datavalue in snaks)


def _times_bytes(times: tuple[_Snaks, _Snaks, _Snaks]) -> int:
    return sum(map(_snaks_bytes, times))


def _times(snaks: _Snaks, pid: str) -> tuple[list[_Point], bool]:
    """The usable times of some qualifier snaks, and whether one was given but is unknown.

    An unknown value (somevalue) or one coarser than a year says that the time exists but not
    when; "novalue" says there is none, which is simply no bound.
    """
    times, unknown = [], False
    for index, (snaktype, datavalue) in enumerate(snaks):
        time = None
        if snaktype == "value":
            try:
                time = _time(datavalue)
            except msgspec.ValidationError as err:
                raise _located(err, f".{pid}[{index}]") from None
            if isinstance(time, _BadValue):
                raise time
        if time is not None:
            times.append(time)
        elif snaktype != "novalue":
            unknown = True
    return times, unknown


@_remembered(1 << 16, 1 << 10, _snaks_bytes)
def _extreme(snaks: _Snaks, pid: str, latest: bool) -> tuple[_Point | None, bool]:
    """The latest (or earliest) usable time of one time qualifier's snaks, or None, and whether
    one was given but is unknown (see ``_times``). Cached: a statement's start (or end) recurs
    far more often than its start and end together."""
    times, unknown = _times(snaks, pid)
    return (max(times) if latest else min(times)) if times else None, unknown


def _bounds(
    start_snaks: _Snaks, end_snaks: _Snaks, point_snaks: _Snaks
) -> tuple[_Point | None, _Point | None] | str:
    """A statement's (start, end) from its time qualifiers, or why it has none (a skip
    category)."""
    # Several values of one qualifier: the widest interval they describe.
    start, start_unknown = _extreme(start_snaks, START, False) if start_snaks else _NO_TIME
    end, end_unknown = _extreme(end_snaks, END, True) if end_snaks else _NO_TIME
    if start is not None or end is not None:
        if end_unknown and end is None:
            # It ended, but when is unknown: a missing end would wrongly mean "still true".
            return "unknown end time"
        # Only an end ordered before the start can end before it (see check_interval).
        if start is not None and end is not None and end[0] < start[0]:
            try:
                check_interval(start[2], end[2])
            except Invalid as err:
                raise _BadValue(err.kind, str(err)) from None
        return start, end
    point, point_unknown = _extreme(point_snaks, POINT, False) if point_snaks else _NO_TIME
    if point is not None:
        return point, point
    if start_unknown or end_unknown or point_unknown:
        return "unknown or imprecise time"
    return "no time qualifier"


def _bound_columns(point: _Point | None) -> tuple:
    """One bound's (year, month, day, precision) columns."""
    return _NO_BOUND if point is None else point[1]


@_remembered(1 << 14, 1 << 12)  # all of a statement's qualifiers, not only its times
def _qualifier_bounds(qualifiers: bytes) -> tuple | str | _BadValue:
    """A statement's start and end columns from its raw qualifiers (see ``_time_bounds``).
    Cached for the msgspec parser, which reads qualifiers as raw bytes."""
    try:
        decoded = _QUALIFIERS.decode(qualifiers)
        return _time_bounds((_snaks(decoded.start), _snaks(decoded.end), _snaks(decoded.point)))
    except msgspec.ValidationError as err:
        raise _located(err, ".qualifiers") from None


def _time_bounds(times: tuple[_Snaks, _Snaks, _Snaks]) -> tuple | str | _BadValue:
    """A statement's start and end columns from the snaks of its time qualifiers (start, end,
    point in time), why it has no bounds (a skip category), or the bad value that drops it.

    Remembered by ``_remembered_bounds``, and by the compiled scanner in a cache of its own:
    the same dates (a term's start and end) recur all over a dump, whatever other qualifiers
    the statements have. Raises msgspec.ValidationError for a time value of the wrong shape
    (the line's problem, which the msgspec parser reports); the scanner gives such a line
    back to Python, and lets any other exception through.
    """
    try:
        bounds = _bounds(*times)
    except _BadValue as err:
        # Cached, so it keeps no traceback nor the exception it was raised from: their frames
        # reach up to the parser, whose raw values are views of the block being parsed.
        err.__context__ = None
        return err.with_traceback(None)
    if isinstance(bounds, str):
        return bounds
    return _bound_columns(bounds[0]) + _bound_columns(bounds[1])


_remembered_bounds = _remembered(1 << 14, 1 << 11, _times_bytes)(_time_bounds)


def _problem(number: int, subject: str, pid: str, err: _BadValue) -> tuple[int, str, str]:
    return number, f"{subject} {pid}: {err}", err.kind


def _add_facts(subject: str, pid: str, statements: list[_Statement], number: int, out: _Rows):
    """The facts of one property's statements, and the skip category of each item statement
    that is none. Most item statements have no qualifiers: they cost a few attribute reads."""
    skips = out.skips
    for index, statement in enumerate(statements):
        snak = statement.mainsnak
        try:
            if snak.datatype != ITEM and not _is_item_claim(snak):
                continue
            if statement.rank == "deprecated":
                skips.append("deprecated")
            elif snak.snaktype != "value":
                skips.append("somevalue/novalue")
            elif not statement.qualifiers:
                skips.append("no time qualifier")
            else:
                _add_fact(subject, pid, statement, number, out)
        except msgspec.ValidationError as err:
            raise _located(err, f".claims[...][{index}]") from None


def _add_fact(subject: str, pid: str, statement: _Statement, number: int, out: _Rows):
    """The fact of an item statement with qualifiers, or why it is none."""
    qualifiers = bytes(statement.qualifiers)
    if qualifiers == b"null":
        out.skips.append("no time qualifier")
        return
    obj = _item(statement.mainsnak.datavalue)
    bounds = _qualifier_bounds(qualifiers)
    if isinstance(obj, _BadValue):
        out.problem(_problem(number, subject, pid, obj))
    else:
        _add_bounded(subject, pid, obj, bounds, number, out)


def _add_bounded(subject: str, pid: str, obj: str, bounds, number: int, out: _Rows):
    """The fact of an item statement with its qualifiers read (see ``_qualifier_bounds``)."""
    if isinstance(bounds, _BadValue):
        out.problem(_problem(number, subject, pid, bounds))
    elif isinstance(bounds, str):
        out.skips.append(bounds)
    else:
        out.facts.append((subject, pid, obj, *bounds))


def _entity_bound(
    claims: dict[str, list[_Statement]],
    pids: tuple[str, ...],
    latest: bool,
    number: int,
    out: _Rows,
    subject: str,
) -> _Point | None:
    """The widest best-ranked value of the first property in ``pids`` that has a usable one."""
    for pid in pids:
        statements = claims.get(pid)
        if not statements:
            continue
        numbered = list(enumerate(statements))
        best = [(i, s) for i, s in numbered if s.rank == "preferred"] or [
            (i, s) for i, s in numbered if s.rank == "normal"
        ]
        times = []
        for index, statement in best:
            if statement.mainsnak.snaktype != "value":
                continue
            try:
                time = _time(bytes(statement.mainsnak.datavalue))
            except msgspec.ValidationError as err:
                raise _located(err, f".claims[...][{index}].mainsnak") from None
            if isinstance(time, _BadValue):
                out.problem(_problem(number, subject, pid, time))
            elif time is not None:
                times.append(time)
        if times:
            return max(times) if latest else min(times)
    return None


def _text(texts) -> str | None:
    return texts.text.value if texts and texts.text is not None else None


def _wanted_claims(
    claims: dict[str, msgspec.Raw], relations: frozenset[str]
) -> dict[str, list[_Statement]]:
    """The statements a load of ``relations`` reads, decoded: those of the relations and of
    the span properties. The others stay unread, unchecked, and cost only the decoder's skip."""
    wanted = {}
    for pid, statements in claims.items():
        if pid in relations or pid in _SPAN_PIDS:
            try:
                wanted[pid] = _STATEMENTS.decode(statements)
            except msgspec.ValidationError as err:
                raise _located(err, ".claims[...]") from None
    return wanted


def _add_item(entity, label: str, number: int, relations: frozenset[str] | None, out: _Rows):
    """An item's row, facts, skips and problems; nothing at all if a statement it reads is
    malformed (the decoder's error propagates)."""
    claims = entity.claims or {}  # Wikibase writes no claims as [] as well as {}
    mark = out.mark()
    start = end = None
    try:
        if relations is not None:
            claims = _wanted_claims(claims, relations)
        if not _SPAN_PIDS.isdisjoint(claims):
            start = _entity_bound(claims, ENTITY_START, False, number, out, entity.id)
            end = _entity_bound(claims, ENTITY_END, True, number, out, entity.id)
        for pid, statements in claims.items():
            if (relations is None or pid in relations) and statements:
                datatype = statements[0].mainsnak.datatype
                if datatype is None or datatype == ITEM:  # one property, one datatype
                    _add_facts(entity.id, pid, statements, number, out)
    except Exception:
        out.undo(mark)
        raise
    aliases = [alias.value for alias in entity.aliases.texts] if entity.aliases else []
    _add_row(entity.id, label, aliases, _text(entity.descriptions), start, end, out)


def _add_row(item: str, label: str, aliases: list, description, start, end, out: _Rows) -> None:
    row = (item, label, aliases, description, *_bound_columns(start), *_bound_columns(end))
    out.entities.append((*row, None))  # no type


def _add_relation(pid: str, datatype, label: str, relations, out: _Rows) -> None:
    """A property's row: only properties with item values can be fact relations."""
    if datatype in (None, ITEM) and (relations is None or pid in relations):
        out.relations.append((pid, label))


def _add_scanned(scanned: tuple | None, number: int, relations, out: _Rows) -> bool:
    """The rows of a line the compiled scanner read but left to finish here (see ``Scanner.scan``
    in ``_dumpscan.c``); False, adding nothing, for a line the Python parser reads: one the
    scanner left whole, an entity of another type or with a bad id, or a statement the scanner
    returned raw that turns out malformed."""
    if scanned is None:
        return False
    kind, entity_id, datatype, label, description, aliases, facts, *counts, spans = scanned
    if kind == "property" and _PROPERTY_ID.fullmatch(entity_id):
        _add_relation(entity_id, datatype, label or entity_id, relations, out)
        return True
    if kind != "item" or not _ITEM_ID.fullmatch(entity_id):
        return False
    start = end = None
    if facts or spans is not None:
        mark = out.mark()
        try:
            if spans is not None:
                claims = {pid: _STATEMENTS.decode(raw) for pid, raw in spans.items()}
                start = _entity_bound(claims, ENTITY_START, False, number, out, entity_id)
                end = _entity_bound(claims, ENTITY_END, True, number, out, entity_id)
            rows = out.facts
            for pid, obj, times in facts:
                bounds = _remembered_bounds(times)
                if type(bounds) is tuple:  # the usual case, inline
                    rows.append((entity_id, pid, obj, *bounds))
                else:
                    _add_bounded(entity_id, pid, obj, bounds, number, out)
        except msgspec.DecodeError:  # a malformed statement: the msgspec parser reports it
            out.undo(mark)
            return False
    _add_counts(counts, out)
    _add_row(entity_id, label or entity_id, aliases, description, start, end, out)
    return True


def _add_counts(counts: Sequence[int], out: _Rows) -> None:
    """The scanner's counts of item statements that are no fact (see ``_SCANNED_SKIPS``)."""
    for category, count in zip(_SCANNED_SKIPS, counts, strict=True):
        if count:
            out.skipped[category] += count


def _add_entity(entity, number: int, relations: frozenset[str] | None, out: _Rows) -> None:
    if entity.type not in ("item", "property"):
        out.skipped[f"{entity.type} entity"] += 1
        return
    pattern = _ITEM_ID if entity.type == "item" else _PROPERTY_ID
    if not pattern.fullmatch(entity.id):
        out.problem((number, f"bad {entity.type} id {entity.id!r}", "bad entity id"))
        return
    label = _text(entity.labels) or entity.id
    if entity.type == "item":
        _add_item(entity, label, number, relations, out)
    else:
        _add_relation(entity.id, entity.datatype, label, relations, out)


def _entity_span(block: bytes | bytearray, start: int, stop: int) -> tuple[int, int] | None:
    """Where the entity of the line ``block[start:stop]`` is: blanks and the trailing comma
    left out; None for a line holding none (blank, or the dump's ``[`` and ``]``)."""
    while start < stop and block[start] in _SPACE:
        start += 1
    while stop > start and block[stop - 1] in _SPACE:
        stop -= 1
    if stop > start and block[stop - 1] == _COMMA:
        stop -= 1
    if stop - start > 1 or (stop > start and block[start] not in (_OPEN, _CLOSE)):
        return start, stop
    return None


def parse_block(
    block: bytes | bytearray,
    first_line: int,
    lang: str = "en",
    relations: frozenset[str] | None = None,
    *,
    compiled: bool = True,
) -> Parsed:
    """Everything the dump lines in ``block`` yield; ``first_line`` numbers its first line.

    The compiled scanner, where it was built and ``compiled`` is on, goes through the lines
    itself, finishing most of them; the lines it leaves, and all lines otherwise, go to the
    msgspec decoder, as views into the block, uncopied. Both give the same rows for every
    line.
    """
    decoder = _entity_decoder(lang, relations is not None)
    out = _Rows()
    view = memoryview(block)
    if not compiled or Scanner is None:
        size, number, start = len(block), first_line, 0
        while start < size:
            stop = block.find(b"\n", start)
            if stop < 0:
                stop = size
            span = _entity_span(block, start, stop)
            if span is not None:
                _add_line(decoder, view[span[0] : span[1]], number, relations, out)
            number, start = number + 1, stop + 1
        return out.parsed(number - first_line)
    scanner = Scanner(
        lang.encode(), _SPAN_BYTES, relations, _time_bounds, msgspec.ValidationError,
        _SCANNED_BOUNDS, out.entities, out.facts, len(ENTITY_SCHEMA),
    )  # fmt: skip
    position, lines = 0, 0
    while True:  # the scanner goes on until a line it leaves to Python
        position, passed, start, stop, scanned = scanner.scan_lines(block, position)
        lines += passed
        if start < 0:
            break
        number = first_line + lines - 1
        if not _add_scanned(scanned, number, relations, out):
            _add_line(decoder, view[start:stop], number, relations, out)
    _add_counts(scanner.counts, out)
    return out.parsed(lines)


def _add_line(decoder, line: memoryview, number: int, relations, out: _Rows) -> None:
    """The rows of one line read by the msgspec decoder, or the problem that rejects it (the
    last one's again, undecoded, for the same bad line again)."""
    if out.last_bad[0] == line:
        out.problem((number, *out.last_bad[1:]))
        return
    try:
        _add_entity(decoder.decode(line), number, relations, out)
        return
    except msgspec.ValidationError as err:
        kind = "entity without id" if "field `id`" in str(err) else "not a Wikidata entity"
        problem = (number, f"not a Wikidata entity: {err}", kind)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError) as err:
        found = json_problem(bytes(line), err)
        if isinstance(err, msgspec.DecodeError) and found.kind == "invalid JSON":
            found = found._replace(reason=f"malformed JSON: {err}", kind="malformed JSON")
        problem = (number, found.reason, found.kind)
    out.problem(problem)
    if len(line) <= 4096:  # a short line, which a file may repeat millions of times cheaply
        out.last_bad = (bytes(line), *problem[1:])


def parse_task(args: tuple) -> Parsed:
    ticket, lang, relations = args
    return parse_block(shared_block(ticket), 1, lang, relations)
