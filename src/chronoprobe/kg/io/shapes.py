"""What an input file looks like, told from its first megabyte: which source format, which
shape of it, and the fields of its first record.

Loaders look at every input before reading any (:func:`expect`), so that a file of another
format stops a conversion at once with one message naming the file, the line, the format it
looks like and the fields it lacks, instead of a problem on each of its lines after hours of
reading the files before it. Files that look like nothing known are left to the loader, which
reports their bad records one by one, and so are pipes (``<(zcat dump.json.gz)``,
``/dev/stdin``): what is read of a pipe is gone, and the loader must read it whole.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec

from chronoprobe.errors import UserError
from chronoprobe.inputs import is_pipe, open_binary
from chronoprobe.jsonl import BOM, DECODE_ERRORS

HEAD = 1 << 20  # bytes read to tell a file's shape
_ENTITY_KEYS = frozenset({"labels", "descriptions", "aliases", "claims", "sitelinks", "datatype"})
_JSONL_ENTITY_KEYS = frozenset({"id", "label", "aliases", "description", "start", "end", "type"})
# Keys of a large pretty-printed document, when its first megabyte is no whole JSON value.
_KEY = re.compile(rb'"([A-Za-z_-]{1,40})"\s*:')
_WIKIDATA_IRI = "http://www.wikidata.org/"


class WrongFormat(UserError):
    """An input that looks like another format than the one asked for."""


@dataclass(frozen=True)
class Shape:
    format: str | None  # the --format that reads it; None when no format does
    what: str  # in words, e.g. "SPARQL JSON results"
    line: int  # where the record that tells it starts
    fields: frozenset[str] = frozenset()  # that record's keys, for JSON
    document: bool = False  # one JSON document (an entity, a response, an array), not lines


def sniff(path: str | Path) -> Shape | None:
    """The shape of a (possibly compressed) file, or None when it looks like nothing known or
    is a pipe, which can be read only once."""
    if is_pipe(path):
        return None
    with open_binary(path) as stream:
        head = stream.read(HEAD)
    return sniff_bytes(head, complete=len(head) < HEAD)


def expect(path: str | Path, fmt: str, expected: str, fields: Sequence[str] = ()) -> Shape | None:
    """The shape of ``path``, which must be ``fmt`` (or unknown); :class:`WrongFormat` names
    the format it looks like and which of ``fields`` (what ``expected`` needs) it lacks."""
    shape = sniff(path)
    if shape is None or shape.format == fmt:
        return shape
    missing = [name for name in fields if name not in shape.fields]
    message = f"{path}:{shape.line}: this looks like {shape.what}, not {expected}"
    if missing:
        message += f" (no {', '.join(missing)})"
    if shape.format is not None:
        message += f"; read it with --format {shape.format}"
    raise WrongFormat(message)


def sniff_bytes(head: bytes, complete: bool) -> Shape | None:
    """The shape of a file from its first bytes (``complete``: they are the whole file)."""
    text = head.removeprefix(BOM)
    body = text.lstrip()
    if not body:
        return None
    line = text.count(b"\n", 0, len(text) - len(body)) + 1
    from chronoprobe.kg.io.safe_pickle import looks_pickled

    if looks_pickled(body):
        return Shape(None, "a Python pickle", line)
    if body[:4] == b"PAR1":
        return Shape(None, "a Parquet file (a KG directory's table?)", line)
    other = _not_text(head, complete)
    if other is not None:
        return Shape(None, other, 1)
    if body[:1] in (b"{", b"["):
        return _json_shape(body, line, complete)
    first = body.split(b"\n", 1)[0]
    tabs = first.count(b"\t")
    if tabs == 4:
        return Shape("cronquestions", "CronQuestions KG lines (head rel tail start end)", line)
    if tabs == 1:
        return Shape("cronquestions", "a CronQuestions label file (id, label)", line)
    return None


_WIDE_MARKS = (b"\xff\xfe", b"\xfe\xff")  # UTF-16's byte-order marks (UTF-32 LE starts alike)


def _not_text(text: bytes, complete: bool, least: int = 8) -> str | None:
    """What a file is when it is no UTF-8 text with newlines: UTF-16 or UTF-32 text, binary
    data (``/dev/urandom``, an image), text in another encoding (most of its first lines, at
    least ``least``, are no UTF-8), or text whose lines end in CR alone. Such a file would
    otherwise be read line after line as problem after problem (without end, for a device), or
    as one line the size of the file."""
    if text.startswith(_WIDE_MARKS) or text.count(b"\x00") * 10 > len(text):
        return "UTF-16 or UTF-32 text, or binary data (NUL bytes throughout); save it as UTF-8"
    if b"\n" not in text and text.count(b"\r") >= 2:
        return "text whose lines end in a carriage return alone; save it with LF line ends"
    lines = text.split(b"\n")
    if not complete:
        lines = lines[:-1]  # the last may be cut inside a character
    lines = [line for line in lines if line.strip()]
    if len(lines) < least:
        return None
    bad = 0
    for line in lines:
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            bad += 1
    if 2 * bad <= len(lines):
        return None
    return (
        f"binary data or text not in UTF-8 ({bad:,} of its first {len(lines):,} lines are no UTF-8)"
    )


def _json_shape(body: bytes, line: int, complete: bool) -> Shape | None:
    if complete:
        try:
            return _value_shape(msgspec.json.decode(body), line, document=True)
        except DECODE_ERRORS:
            pass  # several values (lines), or broken: look at the lines
    lines = _first_lines(body, line)
    if len(lines) > 1 and lines[0][0] == b"[" and lines[1][0].startswith(b'{"'):
        record, at = lines[1]  # the dump's layout: "[" then an entity a line, however long
        shape = _line_shape(record, at)
        if shape is not None or {"type", "id"} <= _keys(record):
            return shape or Shape("wikidata-json", "Wikidata entity lines (a JSON dump)", at)
    for record, at in lines:  # JSON Lines: the first line that is a record of a known kind
        shape = _line_shape(record, at)
        if shape is not None:
            return shape
    return _keys_shape(body, line)  # one document: pretty-printed, broken or long


def _first_lines(text: bytes, line: int, count: int = 8) -> list[tuple[bytes, int]]:
    """The first ``count`` non-blank lines of ``text`` (without a trailing comma), with their
    numbers, ``text`` starting at ``line``."""
    found = []
    for number, record in enumerate(text.split(b"\n", 64 * count)[: 64 * count], start=line):
        record = record.strip().removesuffix(b",")
        if record:
            found.append((record, number))
        if len(found) == count:
            break
    return found


def _line_shape(record: bytes, line: int) -> Shape | None:
    try:
        return _value_shape(msgspec.json.decode(record), line, document=False)
    except DECODE_ERRORS:
        return None


def _keys(text: bytes) -> frozenset[str]:
    return frozenset(k.decode() for k in _KEY.findall(text))


def _value_shape(value: object, line: int, document: bool) -> Shape | None:
    if isinstance(value, list):
        first = next((item for item in value if isinstance(item, dict)), None)
        if first is None:
            return None
        shape = _record_shape(first, line, document=True)
        if shape is not None and shape.format == "wikidata-json":
            return Shape(
                shape.format, "a JSON array of Wikidata entities", line, shape.fields, True
            )
        values = list(first.values())
        plain = all(isinstance(v, str) for v in values)
        if shape is None and plain and any(v.startswith(_WIKIDATA_IRI) for v in values):
            what = "the query service's simple JSON (a plain list of rows)"
            return Shape(None, what, line, frozenset(first))
        return shape
    return _record_shape(value, line, document) if isinstance(value, dict) else None


def _record_shape(record: dict, line: int, document: bool) -> Shape | None:
    keys = frozenset(record)
    if {"head", "results"} <= keys:
        return Shape("wikidata-sparql", "SPARQL JSON results", line, keys, document)
    if isinstance(record.get("entities"), dict):
        what = "a Wikidata entities response (wbgetentities, Special:EntityData)"
        return Shape("wikidata-json", what, line, keys, True)
    fact = all(isinstance(record.get(key), str) for key in ("subject", "relation", "object"))
    if fact or record.get("kind") == "relation":  # a SPARQL binding has terms, not strings
        return Shape("jsonl", "chronoprobe JSONL rows", line, keys)
    if "id" in keys and keys <= _JSONL_ENTITY_KEYS and isinstance(record.get("aliases", []), list):
        return Shape("jsonl", "chronoprobe JSONL rows", line, keys)
    if {"type", "id"} <= keys and keys & _ENTITY_KEYS:
        what = "a Wikidata entity" if document else "Wikidata entity lines (a JSON dump)"
        return Shape("wikidata-json", what, line, keys, document)
    if {"question", "answers"} <= keys:
        return Shape(None, "question rows (not a KG)", line, keys)
    if {"query", "answer_labels"} <= keys:
        return Shape(None, "a probe set (not a KG)", line, keys)
    return None


def _keys_shape(body: bytes, line: int) -> Shape | None:
    """A document no line of which is a record, told by the keys in its first megabyte."""
    keys = _keys(body)
    if {"head", "vars", "results", "bindings"} <= keys:
        return Shape(
            "wikidata-sparql", "SPARQL JSON results", line, frozenset({"head", "results"}), True
        )
    if "entities" in keys or ({"type", "id"} <= keys and keys & _ENTITY_KEYS):
        what = "Wikidata entity JSON (one document)"
        return Shape("wikidata-json", what, line, frozenset({"type", "id"}), True)
    return None
