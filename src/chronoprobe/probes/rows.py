"""Probe rows as the views read them: a typed decode of only the fields they need.

Drift, TempLAMA-style and LAMA-TK-style files all carry an id, a query with one ``[MASK]`` and
the acceptable answer labels; drift rows add a period and a split. Anything else on a line is
skipped by the decoder, not parsed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import msgspec

from chronoprobe.datasets.row_checks import period
from chronoprobe.errors import UserError
from chronoprobe.jsonl import numbered_lines
from chronoprobe.models.requests import Cloze, split_query


class ProbeLine(msgspec.Struct):
    id: str
    query: str
    answer_labels: list[str]
    period: str | None = None
    split: str | None = None
    relation: str | None = None
    subject: str | None = None
    answer_aliases: list[list[str]] = msgspec.field(default_factory=list)


@dataclass(frozen=True)
class ProbeRow:
    id: str
    cloze: Cloze
    labels: list[str]
    period: str | None
    split: str | None

    def key(self) -> dict:
        """The fields every prediction row repeats, so results group without the data file."""
        return {"id": self.id, "period": self.period, "split": self.split}


def probe_lines(
    path: str | Path, kind: type[ProbeLine] = ProbeLine
) -> Iterator[tuple[ProbeLine, Cloze]]:
    """Each line of a probe-set JSONL file (decoded as ``kind``, a view's own fields added)
    and its query as a cloze; a bad line raises ValueError naming file and line (see
    :func:`numbered_probe_lines`)."""
    for _, item, cloze in numbered_probe_lines(path, kind):
        yield item, cloze


def numbered_probe_lines(
    path: str | Path, kind: type[ProbeLine] = ProbeLine
) -> Iterator[tuple[int, ProbeLine, Cloze]]:
    """(line number, row, cloze) of each row of a probe-set file; ValueError ``FILE:LINE`` for
    a line that is no probe row, a query without its one [MASK], no answer label (nothing to
    score against) or a period that is none."""
    for number, item in numbered_lines(path, kind, "not a probe row"):
        try:
            cloze = Cloze(*split_query(item.query))
            if not item.answer_labels or not all(label.strip() for label in item.answer_labels):
                raise UserError("answer_labels holds no answer, or an empty one: nothing to score")
            if item.period is not None:
                period(item.period)
        except ValueError as err:
            raise UserError(f"{path}:{number}: {err}") from err
        yield number, item, cloze


def read_rows(path: str | Path) -> list[ProbeRow]:
    """Rows of a probe-set JSONL file; a bad line raises ValueError naming file and line."""
    return [
        ProbeRow(item.id, cloze, item.answer_labels, item.period, item.split)
        for item, cloze in probe_lines(path)
    ]
