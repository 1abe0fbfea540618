"""Reading LAMA-TK statement files for training and reciting, each bad line named.

Rows are checked against the builder's row shape with a typed decode, so a file from another
tool or an older version fails at its first bad line ("file:line: reason") instead of deep
inside encoding. Extra keys (the implicit set's ``template`` and ``year``) pass through.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Literal

import msgspec

from chronoprobe.errors import UserError
from chronoprobe.jsonl import numbered_lines
from chronoprobe.templates import MASK

YEAR_SLOTS = frozenset({"start", "end", "time"})
_YEAR = re.compile(r"[+-]?[0-9]{1,10}")  # as LAMA-TK rows write years: "2009", "-0059", "+10000"


class Statement(msgspec.Struct, forbid_unknown_fields=False):
    id: str
    text: str
    slot: Literal["subject", "object", "start", "end", "time"]
    target: str
    answers: list[str]
    subject: str
    relation: str
    object: str
    start: str
    end: str
    multi_answer: bool | None = None
    text_alone: str | None = None  # the dynamic-time-masking text of a start or end row
    template: str | None = None  # implicit-knowledge queries: "original" or "new"


def load_statements(path: str | Path) -> list[dict]:
    """Rows of a statements (or queries) JSONL file as dicts; bad lines raise ValueError."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such statements file")
    rows: list[dict] = []
    for number, statement in numbered_lines(path, Statement, "not a statement"):
        if statement.text.count(MASK) != 1:
            raise UserError(f"{path}:{number}: text must hold exactly one {MASK}")
        if statement.target not in statement.answers:
            raise UserError(f"{path}:{number}: target {statement.target!r} not in answers")
        _check_years(statement, f"{path}:{number}")
        row = msgspec.structs.asdict(statement)
        if row["multi_answer"] is None:
            row["multi_answer"] = len(statement.answers) > 1
        rows.append(row)
    if not rows:
        raise UserError(f"{path}: no statements")
    return rows


def _check_years(statement: Statement, where: str) -> None:
    """A time row's target and answers, and every row's start and end (when given), are years:
    the vocabulary has a token per year and reads each of them as one."""
    years = [("start", statement.start), ("end", statement.end)]
    if statement.slot in YEAR_SLOTS:
        years += [("target", statement.target), *(("answer", a) for a in statement.answers)]
    for name, value in years:
        if (value or name in ("target", "answer")) and not _YEAR.fullmatch(value):
            raise UserError(f"{where}: {name} {value!r} of a {statement.slot} row is not a year")


def file_digest(path: str | Path) -> str:
    """SHA-256 of a file: a resumed run must train on the very statements it started with."""
    digest = hashlib.sha256()
    with open(path, "rb") as data:
        for block in iter(lambda: data.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
