"""Reading the released CronQuestions question files, as pickles or as JSON rows.

The pickles (``train.pickle``, ``valid.pickle``, ``test.pickle``) are lists of question dicts
holding sets and integer years; they go through the restricted unpickler (no code runs; depth,
size and time are bounded). JSON files hold the same rows, as JSON Lines or one array. Each
question becomes one row (see :func:`chronoprobe.datasets.cronq.released_question`); the split
is ``--split`` or the file name's. A folder stands for its question files.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path

from chronoprobe.datasets.cronq import QUESTION_TYPES, released_question
from chronoprobe.datasets.released import (
    converted,
    records,
    release_files,
    report,
    split_from_name,
)
from chronoprobe.kg.io.problems import Problems

PICKLE = b"\x80"
SPLITS = ("train", "valid", "test")
QUESTION_SUFFIXES = (".pickle", ".pkl", ".json", ".jsonl")  # the files a folder is read for


def _items(path: Path, problems: Problems):
    """(``FILE:WHERE``, question) of a pickle or a JSON file."""
    with open(path, "rb") as stream:
        pickled = stream.read(1) == PICKLE
    if not pickled:
        yield from records(path, problems)
        return
    from chronoprobe.kg.io.safe_pickle import safe_load

    data = safe_load(path)
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a list of questions, found {type(data).__name__}")
    for number, item in enumerate(data):
        yield f"{path}: question {number}", item


def _problem(problems: Problems, where: str, reason: str, kind: str | None = None) -> None:
    if ": question " in where:  # a pickle has items, not lines
        file, _, number = where.partition(": question ")
        problems.report(f"{file}: question", int(number), reason, kind)
    else:
        report(problems, where, reason, kind)


def _question(item: dict, rows: list[dict]) -> dict:
    """The question row of ``item``, numbered after the ``rows`` read so far."""
    row = released_question(item, len(rows))
    if row["type"] not in QUESTION_TYPES:
        raise ValueError(f"type {row['type']!r} is not one of {QUESTION_TYPES}")
    if row["answer_type"] not in ("entity", "time"):
        raise ValueError(f"answer_type {row['answer_type']!r} is not entity or time")
    return row


def read_question_files(
    paths: Sequence[Path], problems: Problems, split: str | None = None
) -> dict[str, list[dict]]:
    """Split -> question rows of released files (or of the folders holding them), one row per
    question, in file order."""
    out: dict[str, list[dict]] = {}
    for path in release_files(paths, QUESTION_SUFFIXES):
        name = split or split_from_name(path)
        name = "valid" if name == "dev" else name
        if name not in SPLITS:
            raise ValueError(
                f"{path}: its name gives no split (train, valid or test); pass --split"
            )
        rows = out.setdefault(name, [])
        question = partial(_question, rows=rows)
        for _, _, row in converted(path, problems, "cronquestions", question, _items, _problem):
            rows.append(row)
    return out
