"""CronQuestions rows as the tensors the QA models read, over one answer vocabulary.

Answers are candidates in one index space: the TKG checkpoint's entities (rows 0..E-1) then its
years (rows E..E+T-1), as CronKGQA concatenates its entity and time tables. Entity linking is
perfect, as in the paper: the question's annotated entities and times are its head, tail and
time, with a dummy (index E, or T for times) where the question has none or names something
the embeddings never saw (an event without facts, a year outside the KG's span); those are
counted, not dropped. A gold answer outside the vocabulary cannot be ranked: it is left out of
the answer set and counted; a question left with no answer is still evaluated (always a miss)
but not trained on. Timeline questions (``build timeline``) are read as such rows where the
models can answer them, and counted with their reason where not
(:mod:`chronoprobe.kgqa.timeline_questions`).

What the encoder reads (:data:`QUESTION_INPUTS`) is the row's ``question`` (the paraphrased text
with names), as the paper, or, not the paper's protocol, its ``template``: the same wording with
``{head}``, ``{tail}``, ``{time}``, ``{event}`` and ``{other}`` left as written, which shows
which slot of the fact each entity fills. Entities and times reach the models as linked
annotations either way, the entities in the order the row lists them: the order the question
names them, for built and imported questions alike.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from chronoprobe.datasets.cronq import QUESTION_TYPES, SIMPLE_TYPES
from chronoprobe.errors import UserError
from chronoprobe.jsonl import numbered_lines, read_json_object
from chronoprobe.kgqa import timeline_questions

ANSWER_TYPES = ("entity", "time")
REQUIRED = ("id", "question", "type", "answer_type", "answers", "entities", "times")
QUESTION_INPUTS = ("template", "question")  # the row field the encoder reads


@dataclass(frozen=True)
class AnswerVocab:
    """Entity ids then years: the candidates every question is ranked over."""

    entities: tuple[str, ...]
    years: tuple[int, ...]

    @property
    def n_entities(self) -> int:
        return len(self.entities)

    @property
    def n_times(self) -> int:
        return len(self.years)

    @property
    def size(self) -> int:
        return self.n_entities + self.n_times

    def label(self, index: int) -> str:
        """A candidate as the predictions file shows it: an entity id, or a year."""
        if index < self.n_entities:
            return self.entities[index]
        return str(self.years[index - self.n_entities])

    def to_json(self) -> dict:
        return {"entities": list(self.entities), "years": list(self.years)}

    @classmethod
    def from_json(cls, data: dict) -> AnswerVocab:
        return cls(tuple(data["entities"]), tuple(int(y) for y in data["years"]))


@dataclass
class Questions:
    """One split's questions as aligned arrays; answers as CSR (offsets into ``answer_flat``)."""

    ids: list[str]
    texts: list[str]  # the questions as asked
    inputs: list[str]  # what the encoder reads: the texts, or their templates
    types: list[str]
    answer_types: list[str]
    head: Tensor  # (N,) entity index, E = none
    tail: Tensor  # (N,) entity index, E = none
    time: Tensor  # (N,) time index, T = none
    is_time: Tensor  # (N,) bool: the answer is a year
    answer_offsets: Tensor  # (N + 1,)
    answer_flat: Tensor  # candidate indices of every question's answers, in order
    unknown: Counter = field(default_factory=Counter)
    # The fact behind each question, for the oracle-relation ceiling: its first relation, and
    # which slot of that fact the question's head fills ("head", "tail"; None: not annotated).
    relations: list[str | None] = field(default_factory=list)
    head_roles: list[str | None] = field(default_factory=list)
    # Timeline questions: each one's labels (kind, complexity, capability, answer type,
    # precision; None for other rows), and those of the file not answered, by category
    timeline: list[dict | None] = field(default_factory=list)
    not_answered: dict[str, dict] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.ids)

    def answer_counts(self) -> Tensor:
        return self.answer_offsets[1:] - self.answer_offsets[:-1]

    def gold_mask(self, index: Tensor, size: int) -> Tensor:
        """(len(index), size) bool: True at each selected question's answers."""
        starts, ends = self.answer_offsets[index], self.answer_offsets[index + 1]
        counts = ends - starts
        rows = torch.repeat_interleave(torch.arange(len(index)), counts)
        within = torch.arange(len(rows)) - torch.repeat_interleave(
            counts.cumsum(0) - counts, counts
        )
        cols = self.answer_flat[starts[rows] + within]
        mask = torch.zeros(len(index), size, dtype=torch.bool)
        mask[rows, cols] = True
        return mask

    def summary(self) -> str:
        text = f"{len(self):,} questions"
        if self.unknown:
            text += "; unknown to the embeddings: " + ", ".join(
                f"{n:,} {what}" for what, n in sorted(self.unknown.items())
            )
        if self.not_answered:
            n = sum(entry["questions"] for entry in self.not_answered.values())
            text += f"; {n:,} timeline questions not answered (outside the answer space)"
        return text


def questions_kg(cronq_dir: Path) -> tuple[str, str | None]:
    """(where, fingerprint) of the KG a question directory was built from (None: not recorded)."""
    path = Path(cronq_dir) / "kg.json"
    if not path.is_file():
        return f"the questions ({cronq_dir})", None
    fingerprint = read_json_object(path, "the KG record").get("fingerprint")
    return f"the questions ({path})", fingerprint if isinstance(fingerprint, str) else None


def read_rows(path: Path, question_input: str = "question") -> list[dict]:
    """Question rows of a JSONL file, each checked for the fields the QA models read."""
    return read_split(path, question_input)[0]


def read_split(path: Path, question_input: str = "question") -> tuple[list[dict], dict]:
    """Question rows of a JSONL file, each checked for the fields the QA models read, and
    the timeline questions among them that the models cannot answer (by category: count,
    answer type, reason); those are left out of the rows."""
    if question_input not in QUESTION_INPUTS:
        raise UserError(
            f"question input must be one of {', '.join(QUESTION_INPUTS)}, not {question_input!r}"
        )
    if not path.is_file():
        raise FileNotFoundError(
            f"{path}: no such question file; build one from a KG directory, e.g. "
            "`chronoprobe build cronq kg/world -o cronq/`"
        )
    rows, not_answered = [], timeline_questions.NotAnswered()
    for number, row in numbered_lines(path):
        where = f"{path}:{number}"
        if timeline_questions.is_timeline_row(row):
            row = timeline_questions.convert(row, where)
            if isinstance(row, timeline_questions.Refusal):
                not_answered.add(row)
                continue
        rows.append(_checked(row, where, question_input))
    return rows, not_answered.to_json()


def _checked(row: object, where: str, question_input: str) -> dict:
    if not isinstance(row, dict):
        raise UserError(f"{where}: expected a JSON object")
    missing = [key for key in REQUIRED if key not in row]
    if missing:
        raise UserError(f"{where}: missing {', '.join(missing)}")
    if row["type"] not in QUESTION_TYPES:
        raise UserError(f"{where}: type {row['type']!r} is not one of {', '.join(QUESTION_TYPES)}")
    if row["answer_type"] not in ANSWER_TYPES:
        raise UserError(f"{where}: answer_type must be entity or time, not {row['answer_type']!r}")
    for key in ("answers", "entities", "times"):
        if not isinstance(row[key], list):
            raise UserError(f"{where}: {key} must be a list")
    if row["answer_type"] == "time":
        years = [_year(a) for a in row["answers"]]
        if None in years:
            raise UserError(f"{where}: a time question's answers must be years")
        row = {**row, "answers": years}
    if not all(_is_year(t) for t in row["times"]):
        raise UserError(f"{where}: times must be years")
    template = row.get("template")
    if question_input == "template" and not (
        isinstance(template, str) and re.search(r"\{\w+\}", template)
    ):
        raise UserError(
            f"{where}: template {template!r} is not the question with {{head}}/{{tail}}/{{time}} "
            "placeholders; rebuild the questions (`chronoprobe build cronq KG -o OUT`), or train "
            "with --question-input question"
        )
    return row


def _is_year(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _year(value: object) -> int | None:
    """A time answer as a year: sets write them as text ("1995", so that every answer is a
    string), older sets as integers; None for anything else."""
    if _is_year(value):
        return value  # type: ignore[return-value]
    if isinstance(value, str) and re.fullmatch(r"-?[0-9]+", value):
        return int(value)
    return None


def encode(rows: Sequence[dict], vocab: AnswerVocab, question_input: str = "question") -> Questions:
    """Rows to index arrays over ``vocab`` (see the module docstring for what is unknown), with
    the field ``question_input`` names as the encoder's input."""
    entity_index = {e: i for i, e in enumerate(vocab.entities)}
    year_index = {y: i for i, y in enumerate(vocab.years)}
    n_e, n_t = vocab.n_entities, vocab.n_times
    unknown: Counter = Counter()
    heads, tails, times, offsets, flat = [], [], [], [0], []

    def entity(e: str) -> int:
        if e not in entity_index:
            unknown["question entities"] += 1
            return n_e
        return entity_index[e]

    for row in rows:
        mentioned = [entity(str(e)) for e in row["entities"][:2]]
        heads.append(mentioned[0] if mentioned else n_e)
        tails.append(mentioned[1] if len(mentioned) > 1 else n_e)
        when = row["times"][0] if row["times"] else None
        if when is not None and when not in year_index:
            unknown["question years"] += 1
        times.append(year_index.get(when, n_t))
        if row["answer_type"] == "time":
            years = map(_year, row["answers"])  # text ("1995") as sets write it, or int
            known = [n_e + year_index[y] for y in years if y in year_index]
        else:
            known = [entity_index[a] for a in map(str, row["answers"]) if a in entity_index]
        unknown["answers"] += len(row["answers"]) - len(known)
        if not known:
            unknown["questions without a known answer"] += 1
        flat.extend(sorted(set(known)))
        offsets.append(len(flat))
    return Questions(
        ids=[str(row["id"]) for row in rows],
        texts=[str(row["question"]) for row in rows],
        inputs=[str(row[question_input]) for row in rows],
        types=[row["type"] for row in rows],
        answer_types=[row["answer_type"] for row in rows],
        head=torch.tensor(heads, dtype=torch.long),
        tail=torch.tensor(tails, dtype=torch.long),
        time=torch.tensor(times, dtype=torch.long),
        is_time=torch.tensor([row["answer_type"] == "time" for row in rows], dtype=torch.bool),
        answer_offsets=torch.tensor(offsets, dtype=torch.long),
        answer_flat=torch.tensor(flat, dtype=torch.long),
        unknown=+unknown,
        relations=[str(row["relations"][0]) if row.get("relations") else None for row in rows],
        head_roles=[_head_role(row) for row in rows],
        timeline=[row.get("timeline") for row in rows],
    )


def _head_role(row: dict) -> str | None:
    """Which annotated slot the first entity fills ("head" or "tail"), if annotated."""
    annotation = row.get("annotation") or {}
    first = str(row["entities"][0]) if row["entities"] else None
    for slot in ("head", "tail"):
        if first is not None and str(annotation.get(slot)) == first:
            return slot
    return None


def load_split(
    cronq_dir: Path,
    split: str,
    vocab: AnswerVocab,
    question_input: str = "question",
    limit: int | None = None,
) -> Questions:
    """A split's questions (its first ``limit`` ones, for a quick look) over ``vocab``."""
    rows, not_answered = read_split(Path(cronq_dir) / f"{split}.jsonl", question_input)
    questions = encode(rows[:limit], vocab, question_input)
    questions.not_answered = not_answered
    return questions


def is_simple(types: Sequence[str]) -> np.ndarray:
    return np.isin(np.array(types, dtype=object), SIMPLE_TYPES)
