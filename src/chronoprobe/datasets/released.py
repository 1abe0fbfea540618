"""Reading released datasets' files: their records with where each one is, and what a file's
name says about it.

Released rows come as JSON Lines (most often named ``.json``) or as one JSON array. Each record
comes with its location, ``FILE:LINE`` (for an array, the line its item starts on), so every
problem names it; a line that is no JSON is a problem of that line, not of the file.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import msgspec

from chronoprobe.datasets.released_shapes import check_fields
from chronoprobe.errors import UserError
from chronoprobe.inputs import bounded_lines, known_size, open_input, read_document
from chronoprobe.jsonl import (
    BOM,
    DECODE_ERRORS,
    LineLocator,
    duplicate_key,
    json_problem,
    twice_said,
)
from chronoprobe.kg.io.problems import Problems

SPLIT_NAMES = {"train": "train", "valid": "valid", "val": "valid", "dev": "dev", "test": "test"}
JSON_SUFFIXES = (".json", ".jsonl")  # what released rows are stored as
_SPLIT_ORDER = {"train": 0, "valid": 1, "dev": 1, "test": 2}  # a folder's files, read in order
_WORDS = re.compile(r"[A-Za-z]+")


def records(path: Path, problems: Problems) -> Iterator[tuple[str, object]]:
    """(``FILE:LINE``, decoded value) of each record of a JSON Lines file or JSON array. Lines
    are read one at a time, each within the record limit (:mod:`chronoprobe.inputs`)."""
    with open_input(path) as stream:
        lines = bounded_lines(stream, path)
        bad: tuple[bytes, str] = (b"", "")  # the last line that does not decode, and its kind
        for number, line in lines:
            if number == 1:
                line = line.removeprefix(BOM)
            if line == bad[0]:  # the same bad line again: counted, not decoded again
                problems.counted(bad[1])
                continue
            if line.lstrip()[:1] == b"[":  # one JSON array: the rest of the file is part of it
                head = b"\n" * (number - 1) + line
                text = head + read_document(stream, path, known_size(path))
                yield from _array_records(path, text, problems)
                return
            if not line.strip():
                continue
            value, kind = _decoded(path, number, line, problems)
            if kind is not None:
                bad = (line, kind)
                continue
            yield f"{path}:{number}", value


def _decoded(path: Path, number: int, text: bytes, problems: Problems) -> tuple[object, str | None]:
    """(the value of one record's JSON text, None), or (None, the kind of its problem) once
    the problem (no JSON, invalid UTF-8, a key given twice in one object) is reported at
    ``path:number``."""
    try:
        value = msgspec.json.decode(text)
    except DECODE_ERRORS as err:
        _, reason, kind = json_problem(text, err)
        problems.report(str(path), number, reason, kind)
        return None, kind
    twice = duplicate_key(text)
    if twice is not None:
        problems.report(str(path), number, twice_said(twice), "a key given twice")
        return None, "a key given twice"
    return value, None


def _array_records(path: Path, text: bytes, problems: Problems) -> Iterator[tuple[str, object]]:
    """The items of a file that is one JSON array, each located at the line it starts on."""
    try:
        items = msgspec.json.decode(text, type=list[msgspec.Raw])
    except DECODE_ERRORS as err:
        line, reason, kind = json_problem(text, err)
        problems.report(str(path), line, reason, kind)
        return
    locate = LineLocator(text)
    for raw in items:  # each item decoded alone: one with invalid UTF-8 is a problem of its line
        line = locate.line_of(bytes(raw))
        value, kind = _decoded(path, line, bytes(raw), problems)
        if kind is None:
            yield f"{path}:{line}", value


def report(problems: Problems, where: str, reason: str, kind: str | None = None) -> None:
    """A problem at ``FILE:LINE`` (as :func:`records` gives it)."""
    file, _, line = where.rpartition(":")
    problems.report(file, int(line), reason, kind)


def converted(
    path: Path,
    problems: Problems,
    fmt: str,
    convert: Callable[[dict], Any],
    items: Callable[[Path, Problems], Iterator[tuple[str, object]]] = records,
    problem: Callable[..., None] = report,
) -> Iterator[tuple[str, dict, Any]]:
    """(where, record, ``convert(record)``) of each record of ``path`` (read by ``items``)
    that has the fields of ``fmt`` and converts; a record that lacks fields or fails to convert
    (ValueError, TypeError) is a problem of its location (told to ``problem``, counted under
    the error's ``kind`` where it has one, as :class:`~chronoprobe.kg.io.checks.Invalid` does)
    instead."""
    for where, record in items(path, problems):
        missing = check_fields(record, fmt, where, path)
        if missing:
            problem(problems, where, f"missing fields: {', '.join(missing)}", "missing fields")
            continue
        try:
            value = convert(record)  # type: ignore[arg-type]
        except (ValueError, TypeError) as err:
            problem(problems, where, str(err), getattr(err, "kind", None))
            continue
        yield where, record, value  # type: ignore[misc]


def split_from_name(path: Path) -> str | None:
    """The split a released file's name gives (``np_spans_dev.json`` -> dev, ``train.pickle``
    -> train, ``val.json`` -> valid); None when it names none or several."""
    found = {SPLIT_NAMES[w] for w in _WORDS.findall(path.stem.lower()) if w in SPLIT_NAMES}
    return found.pop() if len(found) == 1 else None


def release_files(paths: Sequence[Path], suffixes: Sequence[str]) -> list[Path]:
    """The files to read: each file given, and for a folder (a release as published), the
    files under it ending in one of ``suffixes``, train before valid before test, then by path.
    A folder holding none of them is refused, naming what it lacks."""
    files = []
    for path in paths:
        if not path.is_dir():
            files.append(path)
            continue
        found = [f for f in path.rglob("*") if f.is_file() and f.suffix in suffixes]
        if not found:
            raise UserError(f"{path}: a folder with no {' or '.join(suffixes)} file in it")
        files += sorted(found, key=lambda f: (_SPLIT_ORDER.get(split_from_name(f), 3), f))
    return files
