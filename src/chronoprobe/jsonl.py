"""JSON in and out: every probe set and prediction file (JSON Lines) and every small JSON
record (metrics, configs of checkpoints) goes through these."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path

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


def read_jsonl(path: str | Path) -> Iterator[dict]:
    """Rows of a JSONL file; a bad line raises ValueError naming file and line."""
    with open(path, "rb") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                row = msgspec.json.decode(line)
            except msgspec.DecodeError as err:
                raise ValueError(f"{path}:{number}: invalid JSON: {err}") from err
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
