"""JSON in and out: every probe set and prediction file (JSON Lines) and every small JSON
record (metrics, configs of checkpoints) goes through these."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import msgspec

from chronoprobe.atomic import atomic_path

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
    JSON by default, else a msgspec struct); a line that does not decode raises ValueError
    ``FILE:LINE: REASON: what is wrong``."""
    decoder = msgspec.json.Decoder(kind)
    with open(path, "rb") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                value = decoder.decode(line)
            except msgspec.DecodeError as err:  # ValidationError included
                raise ValueError(f"{path}:{number}: {reason}: {err}") from err
            yield number, value


def read_jsonl(path: str | Path) -> Iterator[dict]:
    """Rows of a JSONL file; a bad line raises ValueError naming file and line."""
    for number, row in numbered_lines(path):
        if not isinstance(row, dict):
            raise ValueError(f"{path}:{number}: expected a JSON object")
        yield row


def read_json_object(path: str | Path, what: str = "the file") -> dict:
    """A JSON file holding one object; bad JSON or another type names the file and line."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}:{err.lineno}: invalid JSON: {err.msg}") from err
    if not isinstance(data, dict):
        raise ValueError(f"{path}:1: {what} must be a JSON object, not {type(data).__name__}")
    return data
