"""Readers for the released TempLAMA and DynamicTempLAMA files, into drift rows.

Each line is one query at one date::

    {"query": "Valentino Rossi plays for _X_.", "answer": [{"wikidata_id": "Q1085474",
     "name": "Yamaha Motor Racing"}], "date": "2010", "id": "Q169814_P54_2010",
     "relation": "P54", "most_frequent_answer": {...}, "most_recent_answer": {...}}

TempLAMA's dates are years; DynamicTempLAMA's are quarters (``2019-Q1``) or months
(``2019-01``), one granularity a file set. ``answer`` may be one object instead of a list.

Exactly one drift row per line: ``_X_`` becomes the gap, every answer is kept, and
``most_frequent_answer`` / ``most_recent_answer`` are kept as ``{id, label}`` fields. The split
of a row (unchanged, updated, new) compares its answers with the same query's in the previous
date present in the files; rows of the first date have none. No row is invented: a query the
previous date had and this one lacks is counted as deleted in ``stats.json`` only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from chronoprobe.datasets import row_checks
from chronoprobe.datasets.drift import split_of
from chronoprobe.datasets.released import JSON_SUFFIXES, converted, release_files, report
from chronoprobe.datasets.released_shapes import import_command
from chronoprobe.errors import UserError
from chronoprobe.kg.io.checks import Invalid, json_type
from chronoprobe.kg.io.problems import Problems
from chronoprobe.templates import MASK
from chronoprobe.time import Granularity, Period

BLANK = "_X_"
EXTRA_ANSWERS = ("most_frequent_answer", "most_recent_answer")


def _answer(value: object, field: str) -> dict[str, str]:
    if not isinstance(value, dict) or not isinstance(value.get("wikidata_id"), str):
        raise UserError(f"{field!r} must hold {{wikidata_id, name}} objects")
    name = value.get("name")
    if name is not None and not isinstance(name, str):
        raise Invalid(f"{field!r}: name must be text or null, not {json_type(name)}", "bad text")
    return {"id": value["wikidata_id"], "label": name or ""}


def _period(date: object) -> str:
    """A released date (a year as a number, or a year, quarter or month as text) as a period
    label; its year is checked with the rest of the row."""
    if isinstance(date, bool) or not isinstance(date, int | str):
        raise Invalid(
            f"date must be a year or a period such as '2019-Q1', not {date!r}", "bad period"
        )
    try:
        return Period.parse(str(date)).label()
    except ValueError as err:
        raise Invalid(str(err), "bad period") from None


def _row(record: dict) -> dict:
    """The drift row of one released record (its split is set later), checked as every drift
    row is (:func:`~chronoprobe.datasets.row_checks.check_drift_row`); ValueError: why not."""
    row_id = row_checks.row_id(record["id"])
    query = record["query"]
    if not isinstance(query, str) or query.count(BLANK) != 1:
        raise UserError(f"the query must hold {BLANK} exactly once: {query!r}")
    given = record["answer"]
    answers = [_answer(a, "answer") for a in (given if isinstance(given, list) else [given])]
    if not answers:
        raise UserError("'answer' is empty")
    ids = list(dict.fromkeys(a["id"] for a in answers))
    labels = {a["id"]: a["label"] or a["id"] for a in reversed(answers)}
    row = {
        "id": row_id,
        "period": _period(record["date"]),
        "relation": record["relation"],
        "subject": row_id.split("_")[0],
        "query": query.replace(BLANK, MASK),
        "answers": ids,
        "answer_labels": [labels[i] for i in ids],
        "split": None,
    }
    for field in EXTRA_ANSWERS:
        extra = record.get(field)
        row[field] = None if extra is None else _answer(extra, field)
    return row_checks.check_drift_row(row)


def read_templama(
    paths: Sequence[Path], problems: Problems, fmt: str = "templama"
) -> tuple[list[dict], dict[str, int]]:
    """Drift rows of TempLAMA (``fmt`` templama: year dates) or DynamicTempLAMA (quarter or
    month dates) files, in file order, and per date the queries deleted since the previous one.
    """
    rows: list[dict] = []
    granularity: tuple[Granularity, str] | None = None
    ids = row_checks.UniqueIds()
    for path in release_files(paths, JSON_SUFFIXES):
        for where, record, row in converted(path, problems, fmt, _row):
            kind = Period.parse(row["period"]).granularity
            if granularity is None:
                granularity = (kind, where)
            if fmt == "templama" and kind != Granularity.YEAR:
                report(
                    problems,
                    where,
                    f"date {record['date']!r} is a {kind.name.lower()}, TempLAMA's are years; "
                    "read DynamicTempLAMA files with "
                    f"`{import_command('dynamic-templama', path)}`",
                    "not a year",
                )
                continue
            if kind != granularity[0]:
                report(
                    problems,
                    where,
                    f"date {record['date']!r} is a {kind.name.lower()}, but {granularity[1]} "
                    f"has a {granularity[0].name.lower()}: one granularity per set",
                    "mixed granularities",
                )
                continue
            try:
                ids.claim([row["id"]], where)
            except Invalid as err:
                report(problems, where, str(err), err.kind)
                continue
            rows.append(row)
    return rows, assign_splits(rows)


def assign_splits(rows: list[dict]) -> dict[str, int]:
    """Set each row's split against its query's answers in the previous date of the rows;
    returns, per date, how many queries of the previous date have no row in it (deleted)."""
    by_period: dict[str, dict[tuple[str, str], list[str]]] = {}
    for row in rows:
        key = (row["subject"], row["relation"])
        by_period.setdefault(row["period"], {})[key] = row["answers"]
    ordered = sorted(by_period, key=Period.parse)
    previous = dict(zip(ordered[1:], ordered[:-1], strict=False))
    for row in rows:
        before = previous.get(row["period"])
        if before is not None:
            key = (row["subject"], row["relation"])
            row["split"] = split_of(by_period[before].get(key), row["answers"])
    deleted = Counter()
    for period, before in previous.items():
        deleted[period] = len(set(by_period[before]) - set(by_period[period]))
    return {p: deleted[p] for p in ordered[1:] if deleted[p]}


def release_names(
    rows: list[dict], aliases: dict[str, tuple[str, ...]] | None = None
) -> list[dict]:
    """The release's KG for judging (the ``answer_names.jsonl`` that ``build drift`` writes):
    every entity that answers a row's relation anywhere in the rows (``most_frequent_answer``
    and ``most_recent_answer`` included), its released label first, then the names
    ``aliases`` gives it (an id -> names map read from a KG, :mod:`chronoprobe.kg.entity_names`).
    With ``aliases``, each row's ``answer_aliases`` are set from it too."""
    aliases = aliases or {}
    labels: dict[tuple[str, str], str] = {}
    for row in rows:
        answers = [
            {"id": i, "label": label}
            for i, label in zip(row["answers"], row["answer_labels"], strict=True)
        ]
        extra = [row.get(name) for name in EXTRA_ANSWERS]
        for answer in [*answers, *(a for a in extra if a)]:
            labels.setdefault((row["relation"], answer["id"]), answer["label"] or answer["id"])
        if aliases:
            row["answer_aliases"] = [
                _other_names(label, aliases.get(i, ()))
                for i, label in zip(row["answers"], row["answer_labels"], strict=True)
            ]
    return [
        {
            "id": entity,
            "relation": relation,
            "names": [label, *_other_names(label, aliases.get(entity, ()))],
        }
        for (relation, entity), label in sorted(labels.items())
    ]


def _other_names(label: str, names: tuple[str, ...]) -> list[str]:
    """The names a KG gives an entity besides its released ``label``."""
    return [n for n in names if n != label]
