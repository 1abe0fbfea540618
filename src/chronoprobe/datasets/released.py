"""Reading released datasets' files: their records with where each one is, and what a file's
name says about it.

Released rows come as JSON Lines (most often named ``.json``) or as one JSON array. Each record
comes with its location, ``FILE:LINE`` (for an array, the line its item starts on), so every
problem names it; a line that is no JSON is a problem of that line, not of the file.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import msgspec

from chronoprobe.jsonl import BOM, DECODE_ERRORS, LineLocator, json_problem
from chronoprobe.kg.io.problems import Problems

SPLIT_NAMES = {"train": "train", "valid": "valid", "val": "valid", "dev": "dev", "test": "test"}
_WORDS = re.compile(r"[A-Za-z]+")


def records(path: Path, problems: Problems) -> Iterator[tuple[str, object]]:
    """(``FILE:LINE``, decoded value) of each record of a JSON Lines file or JSON array."""
    text = path.read_bytes().removeprefix(BOM)
    body = text.lstrip()
    if body[:1] == b"[":
        try:
            items = msgspec.json.decode(body, type=list[msgspec.Raw])
        except DECODE_ERRORS as err:
            line, reason, kind = json_problem(text, err)
            problems.report(str(path), line, reason, kind)
            return
        locate = LineLocator(text)
        for raw in items:
            where = f"{path}:{locate.line_of(bytes(raw))}"
            yield where, msgspec.json.decode(raw)
        return
    for number, line in enumerate(text.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            value = msgspec.json.decode(line)
        except DECODE_ERRORS as err:
            _, reason, kind = json_problem(line, err)
            problems.report(str(path), number, reason, kind)
            continue
        yield f"{path}:{number}", value


def report(problems: Problems, where: str, reason: str, kind: str | None = None) -> None:
    """A problem at ``FILE:LINE`` (as :func:`records` gives it)."""
    file, _, line = where.rpartition(":")
    problems.report(file, int(line), reason, kind)


def split_from_name(path: Path) -> str | None:
    """The split a released file's name gives (``np_spans_dev.json`` -> dev, ``train.pickle``
    -> train, ``val.json`` -> valid); None when it names none or several."""
    found = {SPLIT_NAMES[w] for w in _WORDS.findall(path.stem.lower()) if w in SPLIT_NAMES}
    return found.pop() if len(found) == 1 else None
