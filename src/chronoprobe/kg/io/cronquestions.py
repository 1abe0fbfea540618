"""The CronQuestions temporal KG (Saxena et al., 2021), as released in ``data/wikidata_big/kg/``.

Facts are tab-separated ``head rel tail start end`` lines (``Q25559009	P39	Q41582555	1847
1852``) in ``full.txt`` and its splits ``train``/``valid``/``test`` (with or without ``.txt``);
labels are tab-separated ``id label`` lines in ``wd_id2entity_text.txt`` and
``wd_id2relation_text.txt``. The split files keep their split: the KG's facts get a ``split``
column (:mod:`chronoprobe.kg.splits`) saying which of ``train``/``valid``/``test`` lists each
fact (the first of them, in that order, should one list a fact twice); a fact of ``full.txt``
listed in none is in no split, and a split file listing a fact that ``full.txt`` lacks is an
error. Times are years: each bound is a year-precision point, a negative
year is BCE, and the years in :data:`UNKNOWN_YEARS` stand for "not known": an unknown start, an
open end (9999), or an end that is unknown (0), which is no open end, so such a line is skipped
as the dump loader skips a statement whose end is unknown. Ids and years follow the rules of
:mod:`chronoprobe.kg.io.checks`. A fact listed in several files (``full.txt`` is the union of
the splits) is one fact.

The paper adds events as facts ``(event, significant event, occurred, start, end)``; those also
give the event entity its own span (type ``event``), which is where the CronQuestions builder
looks for events. An event fact is recognised by relation P793 and an object whose label (or
id) is "occurred" or "occurrence".

The KG has a third of a million lines, so a file is split, checked and converted at once by
Arrow kernels (:func:`parse_lines`, a pure function of a batch of lines); only bad lines are
looked at one by one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from chronoprobe.inputs import (
    RecordTooLong,
    known_size,
    max_record_bytes,
    open_input,
    read_document,
)
from chronoprobe.jsonl import BOM
from chronoprobe.kg.graph import TemporalKG, entities_table, relations_table, table_rows
from chronoprobe.kg.io.checks import ID_PATTERN, YEAR_MAX, YEAR_MIN, Invalid, check_id, year_problem
from chronoprobe.kg.io.options import LoadOptions
from chronoprobe.kg.io.problems import Problems
from chronoprobe.kg.io.shapes import expect
from chronoprobe.kg.records import ENTITY_SCHEMA, FACT_SCHEMA, SPLIT_NAMES, Entity, Relation
from chronoprobe.kg.splits import adopt_split, with_split
from chronoprobe.time import Precision, TimePoint

ENTITY_LABELS = "wd_id2entity_text.txt"
RELATION_LABELS = "wd_id2relation_text.txt"
# In a directory, full.txt holds every fact and the splits say only which split each is in;
# without full.txt, the splits hold the facts.
FULL = "full.txt"
SPLITS = ("train.txt", "valid.txt", "test.txt", "train", "valid", "test")
# Years that mean "not known": the start of a fact whose beginning Wikidata lacks, the end of
# one still true.
UNKNOWN_YEARS = (0, 9999)
EVENT_RELATION = "P793"
EVENT_OBJECTS = frozenset({"occurred", "occurrence"})
COLUMNS = ("head", "rel", "tail", "start", "end")

_YEAR = r"^-?[0-9]{1,10}$"  # checked against the KG's year range once read


@dataclass
class Parsed:
    """What a batch of lines yields: the facts, and each bad line's index and reason."""

    facts: pa.Table  # in FACT_SCHEMA, one row per good line with a known time
    bad: list[tuple[int, str, str]]  # (index in the batch, reason, kind)
    timeless: int  # good lines whose start and end are both unknown
    unknown_end: int = 0  # good lines with a known start and an end of year 0 (unknown)


def _first_bad_id(row: dict[str, str]) -> str:
    for name in ("head", "rel", "tail"):
        try:
            check_id(row[name], name)
        except Invalid as err:
            return str(err)
    raise AssertionError(f"no bad id in {row}")


def _year_reason(row: dict[str, str]) -> str:
    for name in ("start", "end"):
        if not re.fullmatch(_YEAR, row[name]):
            return f"{name} is not a year: {row[name]!r}"
        problem = year_problem(int(row[name])) if int(row[name]) not in UNKNOWN_YEARS else None
        if problem is not None:
            return f"{name}: {problem}"
    raise AssertionError(f"no bad year in {row}")


def _bound(years: pa.Array, known: pa.Array) -> dict[str, pa.Array]:
    null8 = pa.nulls(len(years), pa.int8())
    return {
        "year": pc.if_else(known, years, pa.scalar(None, pa.int32())),
        "month": null8,
        "day": null8,
        "precision": pc.if_else(known, pa.scalar(int(Precision.YEAR), pa.int8()), null8),
    }


def _fields(lines: pa.Array) -> tuple[pa.Table, np.ndarray, list[tuple[int, str, str]]]:
    """The five fields of every line that has five, their line indices, and the other lines."""
    lines = pc.utf8_rtrim(lines, characters="\r")
    tabs = pc.count_substring(lines, "\t").to_numpy(zero_copy_only=False)
    blank = pc.equal(pc.utf8_trim_whitespace(lines), "").to_numpy(zero_copy_only=False)
    bad = [
        (
            int(i),
            f"expected 5 tab-separated fields (head rel tail start end), found {tabs[i] + 1}",
            "wrong number of fields",
        )
        for i in np.flatnonzero((tabs != 4) & ~blank)
    ]
    index = np.flatnonzero(tabs == 4)
    parts = pc.split_pattern(lines.take(pa.array(index, pa.int64())), "\t").flatten()
    step = len(COLUMNS)
    table = pa.table(
        {
            # ASCII spaces only: a field ending in U+2028 or U+3000 is an id to refuse, not to
            # cut silently into another
            name: pc.ascii_trim_whitespace(parts.take(pa.array(np.arange(k, len(parts), step))))
            for k, name in enumerate(COLUMNS)
        }
    )
    return table, index, bad


def parse_lines(lines: pa.Array, relations: frozenset[str] | None = None) -> Parsed:
    """Facts from a batch of KG lines; lines whose relation is not among ``relations`` go.

    A line is bad when it has not five tab-separated fields, an id is empty or holds
    whitespace, a year is not an integer, or the end is before the start.
    """
    table, index, bad = _fields(lines)
    if relations is not None:
        keep = pc.is_in(table["rel"], pa.array(sorted(relations), table["rel"].type))
        table, index = table.filter(keep), index[keep.to_numpy(zero_copy_only=False)]
    ids_ok = pc.and_(
        pc.and_(
            pc.match_substring_regex(table["head"], ID_PATTERN),
            pc.match_substring_regex(table["rel"], ID_PATTERN),
        ),
        pc.match_substring_regex(table["tail"], ID_PATTERN),
    )
    digits_ok = pc.and_(
        pc.match_substring_regex(table["start"], _YEAR),
        pc.match_substring_regex(table["end"], _YEAR),
    )
    zero = pa.scalar("0")
    start = pc.cast(pc.if_else(digits_ok, table["start"], zero), pa.int64())
    end = pc.cast(pc.if_else(digits_ok, table["end"], zero), pa.int64())
    years_ok = pc.and_(digits_ok, pc.and_(_in_range(start), _in_range(end)))
    readable = pc.and_(ids_ok, years_ok)
    unknown = pa.array(UNKNOWN_YEARS, pa.int64())
    start_known = pc.invert(pc.is_in(start, unknown))
    end_known = pc.invert(pc.is_in(end, unknown))
    backwards = pc.and_(pc.and_(start_known, end_known), pc.less(end, start))
    good = pc.and_(readable, pc.invert(backwards))
    start, end = pc.cast(start, pa.int32(), safe=False), pc.cast(end, pa.int32(), safe=False)

    wrong = np.flatnonzero(~good.to_numpy(zero_copy_only=False))
    rows = table.take(pa.array(wrong, pa.int64())).to_pylist()
    for i, row in zip(wrong, rows, strict=True):
        if not ids_ok[i].as_py():
            bad.append((int(index[i]), _first_bad_id(row), "bad id"))
        elif not years_ok[i].as_py():
            bad.append((int(index[i]), _year_reason(row), "bad year"))
        else:
            later, earlier = TimePoint(end[i].as_py()), TimePoint(start[i].as_py())
            bad.append((int(index[i]), f"end {later} before start {earlier}", "end before start"))

    # An end of 0 is unknown, not open: the fact ended, nobody knows when.
    ended_unknown = pc.and_(start_known, pc.equal(end, 0))
    timed = pc.and_(pc.and_(good, pc.or_(start_known, end_known)), pc.invert(ended_unknown))
    timeless = pc.sum(pc.and_(good, pc.invert(pc.or_(start_known, end_known)))).as_py() or 0
    unknown_end = pc.sum(pc.and_(good, ended_unknown)).as_py() or 0
    starts, ends = _bound(start, start_known), _bound(end, end_known)
    facts = pa.table(
        {
            "subject": table["head"],
            "relation": table["rel"],
            "object": table["tail"],
            **{f"start_{k}": v for k, v in starts.items()},
            **{f"end_{k}": v for k, v in ends.items()},
        }
    ).filter(timed)
    return Parsed(facts.cast(FACT_SCHEMA), sorted(bad), timeless, unknown_end)


def _in_range(years: pa.Array) -> pa.Array:
    return pc.and_(pc.greater_equal(years, YEAR_MIN), pc.less_equal(years, YEAR_MAX))


def _lines(path: Path) -> tuple[pa.Array, list[tuple[int, str, str]]]:
    """A file's lines as one Arrow array, split by Arrow (at newlines only), and the lines that
    are no UTF-8 (left blank in the array) as (index, reason, kind). A line longer than the
    record limit (:mod:`chronoprobe.inputs`) stops the read."""
    with open_input(path) as stream:
        data = read_document(stream, path, known_size(path)).removeprefix(BOM)
    lines = pc.split_pattern(pa.array([data], pa.large_binary()), b"\n").flatten()
    limit = max_record_bytes()
    too_long = pc.greater(pc.binary_length(lines), limit + 1)  # a "\r" may end a line
    if pc.any(too_long).as_py():
        raise RecordTooLong(f"{path}:{pc.index(too_long, True).as_py() + 1}", limit)
    try:
        return lines.cast(pa.large_string()), []
    except pa.ArrowInvalid:
        pass  # some line is no UTF-8: find which, one by one
    texts, bad = [], []
    for index, line in enumerate(lines.to_pylist()):
        try:
            texts.append(line.decode("utf-8"))
        except UnicodeDecodeError as err:
            texts.append("")
            bad.append((index, f"invalid UTF-8: byte 0x{line[err.start]:02x}", "invalid UTF-8"))
    return pa.array(texts, pa.large_string()), bad


def _label_lines(path: Path, problems: Problems) -> Iterator[tuple[str, str]]:
    """(id, label) pairs of a label file; a blank or whitespace label is no label."""
    lines, bad = _lines(path)
    for index, reason, kind in bad:
        problems.report(str(path), index + 1, reason, kind=kind)
    for number, line in enumerate(lines.to_pylist(), start=1):
        key, _, label = line.removesuffix("\r").partition("\t")
        if not key and not label:
            continue
        try:
            check_id(key, "label id")
        except Invalid as err:
            problems.report(str(path), number, str(err), kind="bad label id")
            continue
        if label.strip():
            yield key, label


@dataclass
class Inputs:
    """The files a load reads."""

    facts: list[Path]  # the KG's facts (a split file among them gives its facts their split)
    labels: list[Path]
    splits: list[Path]  # split files beside a full.txt: read only for their split


def split_of(path: Path) -> str | None:
    """The split a fact file lists by its released name (``train``, ``valid.txt``...), or None."""
    name = path.name.removesuffix(".txt")
    return name if name in SPLIT_NAMES else None


def find_inputs(paths: Sequence[Path]) -> Inputs:
    """Fact, label and split files from files or release directories, labels found beside facts.

    A directory contributes ``full.txt`` and its splits (or, without ``full.txt``, the splits
    as its facts); a label file is known by its released name, and one lying beside a fact
    file is read too.
    """
    found = Inputs([], [], [])

    def add(path: Path, target: list[Path]) -> None:
        if path.name in (ENTITY_LABELS, RELATION_LABELS):
            target = found.labels
        if path not in target:
            target.append(path)

    for path in map(Path, paths):
        if not path.is_dir():
            add(path, found.facts)
            continue
        splits = [path / name for name in SPLITS if (path / name).is_file()]
        if (path / FULL).is_file():
            add(path / FULL, found.facts)
            for split_file in splits:
                add(split_file, found.splits)
        elif splits:
            for split_file in splits:
                add(split_file, found.facts)
        else:
            raise FileNotFoundError(
                f"{path}: no CronQuestions KG file ({FULL}, or train/valid/test)"
            )
    for fact_file in found.facts + found.splits:
        for name in (ENTITY_LABELS, RELATION_LABELS):
            if (fact_file.parent / name).is_file():
                add(fact_file.parent / name, found.labels)
    return found


def _event_spans(facts: pa.Table, labels: dict[str, str]) -> list[Entity]:
    """Event entities with the widest span their event facts give them."""
    candidates = facts.filter(pc.equal(facts["relation"], EVENT_RELATION))
    objects = candidates["object"].to_pylist()
    is_event = [
        labels.get(o, o).strip().casefold() in EVENT_OBJECTS or o.casefold() in EVENT_OBJECTS
        for o in objects
    ]
    events = candidates.filter(pa.array(is_event, pa.bool_()))
    spans: dict[str, tuple[TimePoint | None, TimePoint | None]] = {}
    for subject, start, end in table_rows(events, "subject", "start_year", "end_year"):
        first, last = spans.get(subject, (None, None))
        if start is not None and (first is None or start < first.year):
            first = TimePoint(start)
        if end is not None and (last is None or end > last.year):
            last = TimePoint(end)
        spans[subject] = (first, last)
    return [
        Entity(event, labels.get(event, event), start=first, end=last, type="event")
        for event, (first, last) in spans.items()
    ]


def _entities(facts: pa.Table, labels: dict[str, str]) -> pa.Table:
    events = _event_spans(facts, labels)
    ids = pc.unique(pa.chunked_array(facts["subject"].chunks + facts["object"].chunks, pa.string()))
    others = pc.filter(ids, pc.invert(pc.is_in(ids, pa.array([e.id for e in events], pa.string()))))
    names = others.to_pylist()
    plain = pa.table(
        {"id": others, "label": pa.array([labels.get(n, n) for n in names], pa.string())}
    )
    for column in ENTITY_SCHEMA:
        if column.name not in plain.column_names:
            plain = plain.append_column(column, pa.nulls(plain.num_rows, column.type))
    return pa.concat_tables(
        [plain.select(ENTITY_SCHEMA.names).cast(ENTITY_SCHEMA), entities_table(events)]
    )


def _read_facts(path: Path, options: LoadOptions, problems: Problems | None) -> Parsed:
    """A fact file's facts; its bad lines are reported to ``problems`` (None: not reported)."""
    lines, undecoded = _lines(path)
    parsed = parse_lines(lines, options.relations)
    if problems is not None:
        for row, reason, kind in sorted(undecoded + parsed.bad):
            problems.report(str(path), row + 1, reason, kind=kind)
    return parsed


def _split_table(paths: Sequence[Path], options: LoadOptions) -> pa.Table:
    """The facts of split files, each with its ``split`` (bad lines are the KG's to report)."""
    tagged = [with_split(_read_facts(p, options, None).facts, split_of(p)) for p in paths]
    return pa.concat_tables(tagged)


def split_facts(directory: Path, options: LoadOptions) -> pa.Table:
    """The facts of a release directory's split files, each with its ``split``."""
    found = find_inputs([directory])
    paths = [path for path in found.facts + found.splits if split_of(path) is not None]
    if not paths:
        raise FileNotFoundError(f"{directory}: no train, valid or test file")
    return _split_table(paths, options)


def load(paths: Sequence[Path], options: LoadOptions, problems: Problems) -> TemporalKG:
    """Load CronQuestions KG files or release directories into one temporal KG."""
    found = find_inputs(paths)
    for path in found.facts + found.splits + found.labels:
        expect(path, "cronquestions", "CronQuestions KG lines (5 tab-separated fields)")
    entity_labels: dict[str, str] = {}
    relation_labels: dict[str, str] = {}
    for path in found.labels:
        target = relation_labels if path.name == RELATION_LABELS else entity_labels
        target.update(_label_lines(path, problems))
    tables, timeless, unknown_end = [], 0, 0
    for path in found.facts:
        parsed = _read_facts(path, options, problems)
        tables.append(parsed.facts)
        timeless += parsed.timeless
        unknown_end += parsed.unknown_end
    named = [split_of(path) for path in found.facts]
    if any(named):
        tables = [with_split(t, split) for t, split in zip(tables, named, strict=True)]
    facts = pa.concat_tables(tables) if tables else FACT_SCHEMA.empty_table()
    used = pc.unique(facts["relation"]).to_pylist()
    relations = relations_table(Relation(r, relation_labels.get(r, r)) for r in sorted(used))
    meta = {
        "source": {
            "format": "cronquestions",
            "inputs": [str(p) for p in paths],
            "files": [str(p) for p in found.facts + found.splits + found.labels],
        },
        "skipped": {
            key: count
            for key, count in (("no time", timeless), ("unknown end time", unknown_end))
            if count
        },
    }
    kg = TemporalKG.from_tables(_entities(facts, entity_labels), relations, facts, meta=meta)
    if facts.num_rows > len(kg):
        kg.meta["skipped"]["duplicate"] = facts.num_rows - len(kg)
    if found.splits:
        where = ", ".join(str(path) for path in found.splits)
        kg = adopt_split(kg, _split_table(found.splits, options), where)
    return kg
