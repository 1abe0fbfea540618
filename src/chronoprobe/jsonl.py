"""JSON in and out: every probe set and prediction file (JSON Lines) and every small JSON
record (metrics, configs of checkpoints) goes through these.

Reading never fails with a bare decoder error: malformed JSON, invalid UTF-8 and JSON nested
deeper than the decoder's stack allow all become a ValueError naming file and line (see
:func:`json_problem`, which the KG loaders use as well). A key given twice in one object,
which JSON leaves undefined and decoders settle each their own way (msgspec and Python keep
the last, others the first), is refused the same way (:func:`duplicate_key`). A UTF-8
byte-order mark at the start of a file, as some editors write, is skipped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from chronoprobe.atomic import atomic_path
from chronoprobe.errors import UserError
from chronoprobe.inputs import bounded_lines, known_size, open_input, read_document

BOM = b"\xef\xbb\xbf"
# What decoding JSON bytes can raise on bad input: RecursionError for deep nesting.
DECODE_ERRORS = (msgspec.DecodeError, UnicodeDecodeError, RecursionError, json.JSONDecodeError)
_BRACKETS = re.compile(rb'"(?:[^"\\]++|\\.)*+"|[\[\]{}]')
_TOKENS = re.compile(rb'"(?:[^"\\]++|\\.)*+"|[\[\]{},:]')
# every string of a JSON text, in order, with the colon that makes it a key
_STRINGS = re.compile(rb'("(?:[^"\\]++|\\.)*+")(\s*:)?')

_encoder = msgspec.json.Encoder()


def write_jsonl(path: str | Path, rows: Iterable[dict]) -> int:
    """Write rows atomically (the file appears whole or not at all); returns the row count."""
    count = 0
    with atomic_path(path) as tmp, open(tmp, "wb") as out:
        buffer = bytearray()
        for row in rows:
            _encoder.encode_into(row, buffer, -1)
            buffer.extend(b"\n")
            count += 1
            if len(buffer) > 1 << 20:
                out.write(buffer)
                buffer.clear()
        out.write(buffer)
    return count


def numbered_lines(
    path: str | Path, kind: Any = Any, reason: str = "invalid JSON"
) -> Iterator[tuple[int, Any]]:
    """(line number, value) of each non-blank line of a JSONL file, decoded as ``kind`` (any
    JSON by default, else a msgspec struct); a line that does not decode, or is longer than
    the record limit (:mod:`chronoprobe.inputs`), raises ValueError ``FILE:LINE: REASON``."""
    decoder = msgspec.json.Decoder(kind)
    with open_input(path) as stream:
        for number, line in bounded_lines(stream, path):
            if number == 1:
                line = line.removeprefix(BOM)
            if not line.strip():
                continue
            try:
                value = decoder.decode(line)
            except msgspec.ValidationError as err:
                raise UserError(f"{path}:{number}: {reason}: {err}") from err
            except DECODE_ERRORS as err:
                raise UserError(f"{path}:{number}: {json_problem(line, err).reason}") from err
            twice = duplicate_key(line)
            if twice is not None:
                raise UserError(f"{path}:{number}: {twice_said(twice)}")
            yield number, value


def read_jsonl(path: str | Path) -> Iterator[dict]:
    """Rows of a JSONL file; a bad line raises ValueError naming file and line."""
    for number, row in numbered_lines(path):
        if not isinstance(row, dict):
            raise UserError(f"{path}:{number}: expected a JSON object")
        yield row


def read_json_object(path: str | Path, what: str = "the file") -> dict:
    """A JSON file holding one object; bad JSON or another type names the file and line."""
    with open_input(path) as stream:
        text = read_document(stream, path, known_size(path)).removeprefix(BOM)
    try:
        data = json.loads(text)  # not msgspec: our metrics may hold NaN, which json writes
    except DECODE_ERRORS as err:
        line, reason, _ = json_problem(text, err)
        raise UserError(f"{path}:{line}: {reason}") from err
    twice = duplicate_key(text)
    if twice is not None:
        raise UserError(f"{path}: {twice_said(twice)}")
    if not isinstance(data, dict):
        raise UserError(f"{path}:1: {what} must be a JSON object, not {type(data).__name__}")
    return data


def duplicate_key(text: bytes) -> str | None:
    """The first key given twice in one object of the JSON ``text`` (which decodes), or None.

    Cheap for most records: when no key is written twice in the whole text, none can be given
    twice in one object. Only a text whose keys repeat (objects of one shape in a list, or an
    escape in a key, which may spell another key's name) is decoded again, keeping each
    object's pairs."""
    keys = [key for key, colon in _STRINGS.findall(text) if colon]
    if len(set(keys)) == len(keys) and not any(b"\\" in key for key in keys):
        return None
    found: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict:
        names = [key for key, _ in items]
        if not found and len(set(names)) < len(names):
            found.append(next(key for i, key in enumerate(names) if key in names[:i]))
        return dict(items)

    try:
        json.loads(text, object_pairs_hook=pairs)
    except (ValueError, RecursionError):  # what msgspec reads and json does not: no answer
        return None
    return found[0] if found else None


def twice_said(key: str) -> str:
    """Why a record with ``key`` twice in one object is refused."""
    shown = repr(key) if len(key) <= 60 else repr(key[:57]) + "..."
    return f"the key {shown} is given twice in one object (JSON leaves which one counts open)"


class JsonProblem(NamedTuple):
    line: int  # in the text decoded
    reason: str
    kind: str  # what groups the problem counts: "invalid JSON", "invalid UTF-8", ...


def json_problem(text: bytes, err: Exception) -> JsonProblem:
    """Where decoding ``text`` failed with ``err`` (one of :data:`DECODE_ERRORS`), and why.

    Invalid UTF-8 is found in ``text`` itself, whatever the decoder raised for it: msgspec
    0.18-0.19 raise UnicodeDecodeError and later releases a DecodeError worded their own way,
    and a message must not change with the installed release."""
    bad = invalid_utf8(text)
    if bad is not None:
        return bad
    if isinstance(err, json.JSONDecodeError):
        return JsonProblem(err.lineno, f"invalid JSON: {err.msg}", "invalid JSON")
    if isinstance(err, RecursionError):
        at, depth = _deepest(text)
        reason = f"JSON nested too deeply ({depth} levels)"
        return JsonProblem(text.count(b"\n", 0, at) + 1, reason, "JSON nested too deeply")
    return JsonProblem(line_at_byte(text, str(err)), f"invalid JSON: {err}", "invalid JSON")


def invalid_utf8(text: bytes | str) -> JsonProblem | None:
    """The first byte of ``text`` that is not UTF-8, with its line; None when all of it is.

    A ``str`` (read by a reader that decoded with ``surrogateescape``) is checked as the bytes
    it came from."""
    raw = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else bytes(text)
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        return JsonProblem(line, f"invalid UTF-8: byte 0x{raw[err.start]:02x}", "invalid UTF-8")
    return None


def _deepest(text: bytes) -> tuple[int, int]:
    """Where ``text`` first reaches its deepest nesting of brackets outside strings, and how
    deep that is."""
    depth = deepest = at = 0
    for match in _BRACKETS.finditer(text):
        bracket = match.group()
        if bracket in (b"[", b"{"):
            depth += 1
            if depth > deepest:
                deepest, at = depth, match.start()
        elif bracket in (b"]", b"}"):
            depth -= 1
    return at, deepest


def json_items(text: bytes, path: tuple[str, ...] = ()) -> list[bytes] | None:
    """The items of the array (or the member values of the object) found at ``path`` (keys from
    the top) in a JSON document, each as its own text; None when there is no container there.

    For documents a decoder refuses as a whole (invalid UTF-8 or a broken escape in one record,
    nesting past the decoder's stack): the tokens are found by a regular expression, without
    decoding, so each item can then be decoded, and refused, alone.
    """
    keys: list[str | None] = []  # the key each open container has in its parent
    key: str | None = None  # the last key read, for the container that may open next
    string = (0, 0)  # the last string token, a key when a colon follows
    depth = -1  # of the target container, once open
    items: list[bytes] = []
    begin = 0  # where the current item's text begins
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token[:1] == b'"':
            string = match.span()
        elif token == b":":
            key = text[string[0] + 1 : string[1] - 1].decode("utf-8", "replace")
            if len(keys) == depth:
                begin = match.end()
        elif token in (b"[", b"{"):
            keys.append(key)
            key = None
            if depth < 0 and tuple(keys[1:]) == path:
                depth, begin = len(keys), match.end()
        elif token == b"," and len(keys) == depth:
            items.append(text[begin : match.start()])
            begin, key = match.end(), None
        elif token in (b"]", b"}"):
            if len(keys) == depth:
                items.append(text[begin : match.start()])
                return [item.strip() for item in items if item.strip()]
            if keys:
                keys.pop()
    return None


def line_at_byte(text: bytes, message: str) -> int:
    """The line a msgspec decode error points at; a truncated document ends at its last line."""
    match = re.search(r"\(byte (\d+)\)", message)
    end = int(match.group(1)) if match else len(text.rstrip()) if "truncated" in message else 0
    return text.count(b"\n", 0, end) + 1


class LineLocator:
    """Line numbers of the parts of a JSON document, found by walking it forward once.

    The parts (a results file's bindings, a document's entities) come in document order, so
    each one's text is found at or after the end of the previous one, and each newline is
    counted once.
    """

    def __init__(self, text: bytes) -> None:
        self.text, self.position, self.line = text, 0, 1

    def line_of(self, raw: msgspec.Raw | bytes) -> int:
        start = self.text.find(raw, self.position)
        self.line += self.text.count(b"\n", self.position, start)
        line = self.line
        self.position = start + len(raw)
        self.line += self.text.count(b"\n", start, self.position)
        return line
