"""What a row of each probe-set schema must hold, checked field by field: one check per schema,
shared by every importer that writes it.

An importer turns a released record into the row ``build`` writes, then hands the row to its
schema's check (:func:`check_drift_row` for TempLAMA and DynamicTempLAMA, :func:`check_ecbd_row`
for ECBD and its entity-knowledge-propagation follow-up) and its id to :class:`UniqueIds`. A
value no view can use (period ``0000``, a year past 32 bits, an answer id with a space, a label
that is no text, a gap missing from the query, offsets outside the sentence, an id given twice)
raises :class:`~chronoprobe.kg.io.checks.Invalid` naming the field, so the importer reports it
as ``FILE:LINE: reason`` and skips the record (or stops, by default) instead of writing a row
that fails, or is scored wrongly, later. Ids follow the loaders' rules
(:mod:`chronoprobe.kg.io.checks`); years too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from chronoprobe.kg.io.checks import Invalid, check_id, json_type, year_problem
from chronoprobe.templates import MASK
from chronoprobe.time import Period

DRIFT_SPLITS = ("unchanged", "updated", "new", "deleted")
# What no text of a row holds: control characters other than tab and newline, a line or
# paragraph separator, and lone surrogates (no UTF-8 file can hold those).
_NOT_TEXT = re.compile("[\\x00-\\x08\\x0b-\\x1f\\x7f\u2028\u2029\ud800-\udfff]")
# An ECBD group: an origination year, or a name such as "popular".
_GROUP = re.compile(r"-?[0-9]+|[A-Za-z][\w-]*", re.ASCII)


def _shown(value: object) -> str:
    """A value as a message quotes it: strings and numbers as they are, others by type."""
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        text = repr(value)
        return text if len(text) <= 60 else text[:57] + "..."
    return json_type(value)


def text(value: object, name: str, empty: bool = False) -> str:
    """``value`` if it is text a row can hold (non-empty unless ``empty``)."""
    if not isinstance(value, str):
        raise Invalid(f"{name} must be text, not {json_type(value)}", "bad text")
    if not value.strip() and not empty:
        raise Invalid(f"{name} is empty", "bad text")
    bad = _NOT_TEXT.search(value)
    if bad is not None:
        raise Invalid(f"{name} holds U+{ord(bad.group()):04X}, which no text may", "bad text")
    return value


def row_id(value: object, name: str = "id") -> str:
    """A row's id: text on one line (spaces allowed: released ids are titles)."""
    text(value, name)
    if "\n" in value or "\t" in value:  # type: ignore[operator]
        raise Invalid(f"{name} {_shown(value)} holds a tab or a newline", "bad id")
    return value  # type: ignore[return-value]


def period(value: object, name: str = "period") -> str:
    """A period label (2019, 2019-Q3, 2019-07, 2019-07-24) in its one written form, its year
    one a KG holds (not 0, within 32 bits)."""
    if not isinstance(value, str):
        raise Invalid(f"{name} must be a period such as '2019', not {_shown(value)}", "bad period")
    try:
        parsed = Period.parse(value)
    except ValueError as err:
        raise Invalid(f"{name}: {err}", "bad period") from None
    problem = year_problem(parsed.year)
    if problem is not None:
        raise Invalid(f"{name} {value!r}: {problem}", "bad year")
    if parsed.label() != value:
        raise Invalid(f"{name} {value!r} is written {parsed.label()!r}", "bad period")
    return value


def year(value: object, name: str = "year") -> str:
    """A released year (an integer, or its digits as text) as the text rows hold."""
    if isinstance(value, str) and re.fullmatch(r"-?[0-9]{1,10}", value, re.ASCII):
        number = int(value)
    elif isinstance(value, int) and not isinstance(value, bool):
        number = value
    else:
        raise Invalid(f"{name} {_shown(value)} is not a year (such as 2019)", "bad year")
    problem = year_problem(number)
    if problem is not None:
        raise Invalid(f"{name}: {problem}", "bad year")
    return str(number)


def id_list(value: object, name: str) -> list[str]:
    """A non-empty list of distinct ids."""
    if not isinstance(value, list) or not value:
        raise Invalid(f"{name} must be a non-empty list of ids, not {_shown(value)}", "bad id")
    ids = [check_id(item, f"{name}[{i}]") for i, item in enumerate(value)]
    if len(set(ids)) != len(ids):
        raise Invalid(f"{name} lists an id twice", "bad id")
    return ids


def text_list(value: object, name: str, length: int) -> list[str]:
    """A list of ``length`` texts."""
    if not isinstance(value, list) or len(value) != length:
        what = _shown(value) if not isinstance(value, list) else f"{len(value)} items"
        raise Invalid(f"{name} must be a list of {length} texts, not {what}", "bad text")
    return [text(item, f"{name}[{i}]") for i, item in enumerate(value)]


def _answer(value: object, name: str) -> None:
    if value is None:
        return
    if not isinstance(value, dict) or set(value) != {"id", "label"}:
        raise Invalid(f"{name} must be null or {{id, label}}", "bad answer")
    check_id(value["id"], f"{name}.id")
    text(value["label"], f"{name}.label")


def _allowed_keys(row: dict, required: Sequence[str], optional: Sequence[str]) -> None:
    missing = [key for key in required if key not in row]
    unknown = sorted(set(row) - set(required) - set(optional))
    if missing or unknown:
        parts = [f"no {', '.join(missing)}" if missing else "", ", ".join(unknown)]
        raise Invalid(f"row fields: {'; unknown: '.join(p for p in parts if p)}", "bad row")


DRIFT_FIELDS = ("id", "period", "relation", "subject", "query", "answers", "answer_labels", "split")
DRIFT_OPTIONAL = ("answer_aliases", "most_frequent_answer", "most_recent_answer")


def check_drift_row(row: dict) -> dict:
    """``row`` if it is a drift row every drift view can read and score; Invalid names the
    first field that is not."""
    _allowed_keys(row, DRIFT_FIELDS, DRIFT_OPTIONAL)
    row_id(row["id"])
    period(row["period"])
    check_id(row["relation"], "relation")
    check_id(row["subject"], "subject")
    query = text(row["query"], "query")
    if query.count(MASK) != 1:
        raise Invalid(f"query must hold {MASK} once, not {query.count(MASK)} times", "bad query")
    answers = id_list(row["answers"], "answers")
    text_list(row["answer_labels"], "answer_labels", len(answers))
    if row["split"] is not None and row["split"] not in DRIFT_SPLITS:
        raise Invalid(
            f"split {_shown(row['split'])} is none of {', '.join(DRIFT_SPLITS)}", "bad split"
        )
    aliases = row.get("answer_aliases", [])
    if not isinstance(aliases, list) or (aliases and len(aliases) != len(answers)):
        raise Invalid("answer_aliases must hold one list per answer", "bad text")
    for i, names in enumerate(aliases):
        if not isinstance(names, list):
            raise Invalid(f"answer_aliases[{i}] must be a list of texts", "bad text")
        for j, alias in enumerate(names):
            text(alias, f"answer_aliases[{i}][{j}]")
    for name in ("most_frequent_answer", "most_recent_answer"):
        _answer(row.get(name), name)
    return row


def offsets_problem(
    sentence: str, mention: tuple[int, int], span: tuple[int, int], span_text: str
) -> str | None:
    """Why an ECBD row's offsets cannot be scored, or None: the mention lies in the sentence,
    the span after it, and the span's offsets hold its text."""
    n = len(sentence)
    if not 0 <= mention[0] < mention[1] <= n:
        return f"mention offsets {mention[0]}..{mention[1]} outside the sentence"
    if not mention[1] <= span[0] < span[1] <= n:
        return f"span offsets {span[0]}..{span[1]} must lie after the mention"
    if sentence[span[0] : span[1]] != span_text:
        return f"span {span_text!r} is not the sentence's text at its offsets"
    return None


ECBD_FIELDS = (
    "id",
    "entity",
    "year",
    "span_type",
    "sentence",
    "mention_start",
    "mention_end",
    "span_start",
    "span_end",
    "span",
    "definition",
    "split",
)
ECBD_OPTIONAL = ("released_span_type", "category", "year_missing")
_OFFSETS = ("mention_start", "mention_end", "span_start", "span_end")


def check_ecbd_row(row: dict) -> dict:
    """``row`` if it is an ECBD row the span-ppl view can score; Invalid names the first field
    that is not."""
    _allowed_keys(row, ECBD_FIELDS, ECBD_OPTIONAL)
    row_id(row["id"])
    text(row["entity"], "entity")
    group = text(row["year"], "year")
    if not _GROUP.fullmatch(group):
        raise Invalid(f"year {group!r} is neither a year nor a group name", "bad year")
    if group.lstrip("-").isdigit():
        year(group)
    text(row["span_type"], "span_type", empty=True)
    sentence = text(row["sentence"], "sentence")
    for name in _OFFSETS:
        value = row[name]
        if isinstance(value, bool) or not isinstance(value, int):
            raise Invalid(f"{name} must be an integer, not {_shown(value)}", "bad offsets")
    span = text(row["span"], "span")
    problem = offsets_problem(
        sentence,
        (row["mention_start"], row["mention_end"]),
        (row["span_start"], row["span_end"]),
        span,
    )
    if problem is not None:
        raise Invalid(problem, "bad offsets")
    text(row["definition"], "definition", empty=True)
    for name in ("split", *ECBD_OPTIONAL):
        if row.get(name) is not None:
            text(row[name], name, empty=name != "split")
    return row


class UniqueIds:
    """The row ids an import has written, each with where it came from: a second row with one
    of them is a problem naming the first."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}

    def unused(self, row_id: str) -> str:
        """``row_id``, or the first of ``row_id~2``, ``row_id~3``... no row has yet."""
        number, free = 1, row_id
        while free in self.seen:
            number += 1
            free = f"{row_id}~{number}"
        return free

    def claim(self, row_ids: Sequence[str], where: str) -> None:
        """Take the ids of one record's rows, all or none of them."""
        for row_id in row_ids:
            if row_id in self.seen:
                first = self.seen[row_id]
                raise Invalid(f"duplicate id {row_id!r} (first at {first})", "duplicate id")
        self.seen.update(dict.fromkeys(row_ids, where))
