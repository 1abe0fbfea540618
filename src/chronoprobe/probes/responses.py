"""Answers produced elsewhere (an API run, another harness, a person), judged as a model's.

``chronoprobe probe generate DATA --responses FILE.jsonl`` reads one JSON object a line,
``{"id": ROW_ID, "answer": TEXT}``. The first answer of an id is its greedy answer, any further
ones its sampled answers, in file order. No model is loaded: a :class:`Responses` stands in for
one, named by the file's stem (or ``--name``), and the generate view judges its answers as it
judges a model's, into the same files and metrics.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chronoprobe.errors import UserError
from chronoprobe.models.spec import LoadOptions, ModelSource, ModelSpec

FAMILY = "responses"  # the family a stand-in reports, in metrics.json
SHAPE = '{"id": ROW_ID, "answer": TEXT}'


@dataclass(frozen=True)
class Responses:
    """Answers by row id, and the line each id first appears on (for error messages)."""

    path: Path
    name: str
    answers: dict[str, list[str]]
    lines: dict[str, int]
    family: str = FAMILY

    @classmethod
    def read(cls, path: str | Path, name: str | None = None) -> Responses:
        """Every answer of the file; a bad line raises ValueError ``FILE:LINE: reason``."""
        from chronoprobe.jsonl import numbered_lines
        from chronoprobe.models.requests import MAX_ANSWER_CHARS

        path = Path(path)
        answers: dict[str, list[str]] = {}
        lines: dict[str, int] = {}
        for number, item in numbered_lines(path):
            where = f"{path}:{number}"
            if not isinstance(item, dict):
                raise UserError(f"{where}: expected a JSON object {SHAPE}")
            for key in ("id", "answer"):
                if key not in item:
                    raise UserError(f"{where}: missing field {key!r} (each line is {SHAPE})")
            row_id, answer = item["id"], item["answer"]
            if isinstance(row_id, bool) or not isinstance(row_id, str | int):
                raise UserError(f"{where}: 'id' must be a string, not {type(row_id).__name__}")
            if not isinstance(answer, str):
                raise UserError(f"{where}: 'answer' must be a string, not {type(answer).__name__}")
            if len(answer) > MAX_ANSWER_CHARS:
                raise UserError(
                    f"{where}: an answer of {len(answer):,} characters; an answer is judged as a "
                    "model's, which stops at the first newline or sentence end: at most "
                    f"{MAX_ANSWER_CHARS:,} characters"
                )
            answers.setdefault(str(row_id), []).append(answer)
            lines.setdefault(str(row_id), number)
        if not answers:
            raise UserError(f"{path}: no answers (expected one JSON object a line: {SHAPE})")
        return cls(path, name or path.stem, answers, lines)

    def check_ids(self, ids: Collection[str], data: Path | str) -> None:
        """Stop at the first answer to an id that no row of ``data`` has."""
        for row_id, number in sorted(self.lines.items(), key=lambda item: item[1]):
            if row_id not in ids:
                shown = repr(row_id) if len(row_id) <= 80 else repr(row_id[:77]) + "..."
                raise UserError(f"{self.path}:{number}: unknown id {shown}: no row of {data}")

    def missing(self, ids: Collection[str]) -> int:
        """How many of ``ids`` have no answer."""
        return sum(row_id not in self.answers for row_id in ids)


class ResponsesSpec(ModelSpec):
    """Answers read from a file, in place of a model (the generate view's ``--responses``): what
    decides them is the file's content. They are read, not asked, so the answer cache keeps
    none of them."""

    scheme = "responses"
    answers_cached = False

    def locate(self) -> ModelSource:
        return ModelSource(self.body)

    def weight_files(self) -> list[Path]:
        return [Path(self.body)]

    def load(self, options: LoadOptions) -> Any:
        return Responses.read(self.body)
