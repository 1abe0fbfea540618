"""Readers for the released TempLAMA and DynamicTempLAMA ``test.jsonl`` files.

Each line is one query at one date::

    {"query": "Valentino Rossi plays for _X_.", "answer": [{"wikidata_id": "Q1085474",
     "name": "Yamaha Motor Racing"}], "date": "2010", "id": "Q169814_P54_2010",
     "relation": "P54", ...}

Dates are years (TempLAMA) or quarters such as ``2019-Q3`` (DynamicTempLAMA). The rows become
the drift family's rows, with splits computed across consecutive dates exactly as the builder
does, so users can probe the released data with every view.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path

from chronoprobe.datasets.drift import DriftRow, Key, assign_splits
from chronoprobe.kg.io.problems import Problems
from chronoprobe.templates import MASK
from chronoprobe.time import Period, period_range

_BLANK = "_X_"


def _parse_line(text: str) -> tuple[str, Key, str, dict[str, str]]:
    """(period label, (subject, relation), query, answers id -> name) of one line."""
    row = json.loads(text)
    if not isinstance(row, dict):
        raise ValueError("a line must be a JSON object")
    missing = [k for k in ("query", "answer", "date", "id", "relation") if k not in row]
    if missing:
        raise ValueError(f"missing keys: {', '.join(missing)}")
    if row["query"].count(_BLANK) != 1:
        raise ValueError(f"the query must hold {_BLANK} exactly once: {row['query']!r}")
    answers = row["answer"] if isinstance(row["answer"], list) else [row["answer"]]
    if not answers or not all(isinstance(a, dict) and "wikidata_id" in a for a in answers):
        raise ValueError("'answer' must be a non-empty list of {wikidata_id, name}")
    period = Period.parse(str(row["date"])).label()
    subject = str(row["id"]).split("_")[0]
    names = {a["wikidata_id"]: a.get("name", a["wikidata_id"]) for a in answers}
    return period, (subject, row["relation"]), row["query"].replace(_BLANK, MASK), names


def read_templama(paths: Sequence[Path], problems: Problems) -> Iterator[DriftRow]:
    """Rows of TempLAMA/DynamicTempLAMA files, with fine-grained splits between dates."""
    by_period: dict[str, dict[Key, list[str]]] = {}
    queries: dict[Key, str] = {}
    labels: dict[str, str] = {}
    for path in paths:
        with open(path, encoding="utf-8") as lines:
            for number, text in enumerate(lines, start=1):
                if not text.strip():
                    continue
                try:
                    period, key, query, names = _parse_line(text)
                except (ValueError, TypeError, AttributeError) as err:
                    problems.report(str(path), number, str(err))
                    continue
                answers = by_period.setdefault(period, {}).setdefault(key, [])
                answers.extend(a for a in names if a not in answers)
                queries.setdefault(key, query)
                labels.update(names)
    if not by_period:
        return
    ordered = sorted(by_period, key=Period.parse)
    # Splits compare consecutive periods, so dates missing from the files count as empty.
    every = [p.label() for p in period_range(ordered[0], ordered[-1])]
    stream = ((p, {k: sorted(v) for k, v in by_period.get(p, {}).items()}) for p in every)
    for period, (subject, relation), answers, split in assign_splits(stream):
        yield DriftRow(
            id=f"{subject}_{relation}_{period}",
            period=period,
            relation=relation,
            subject=subject,
            query=queries[(subject, relation)],
            answers=answers,
            answer_labels=[labels.get(a, a) for a in answers],
            split=split,
        )
