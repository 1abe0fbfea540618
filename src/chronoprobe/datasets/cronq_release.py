"""Reading the released CronQuestions question files, as pickles or as JSON rows.

The pickles (``train.pickle``, ``valid.pickle``, ``test.pickle``) are lists of question dicts
holding sets and integer years; they go through the restricted unpickler (no code runs; depth,
size and time are bounded). JSON files hold the same rows (lists for sets; the early JSON
release writes the annotation's year as a string), as JSON Lines or one array. A folder stands
for its question files; the split is ``--split`` or the file name's.

The released rows are read as CronKGQA's code reads them (Saxena, Chakrabarti and Talukdar,
"Question Answering Over Temporal Knowledge Graphs", ACL 2021): ``question`` holds Wikidata ids
("Who was the Q11696 before Q22686?") and the natural text is ``paraphrases[0]``, so a row's
``question`` is that text and ``question_ids`` keeps the released id form; the entities are
ordered by where the id form names them. Templates keep ``{type}`` (before/after) and ``{adj}``
(first/last) slots, which are filled from the annotation, so that questions asking opposite
things read as different templates. Every value is checked: a question that is no text, ids
that are no ids, years that are no integers, an annotation that is no mapping of slot names, a
``uniq_id`` given twice in a split, each is a problem of that record (``FILE:LINE``, or
``FILE: question:INDEX`` for a pickle) instead of a row.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from chronoprobe.datasets.cronq import QUESTION_TYPES
from chronoprobe.datasets.released import (
    converted,
    records,
    release_files,
    report,
    split_from_name,
)
from chronoprobe.errors import UserError
from chronoprobe.kg.io.checks import Invalid, check_id, json_type, year_problem
from chronoprobe.kg.io.problems import Problems

SPLITS = ("train", "valid", "test")
QUESTION_SUFFIXES = (".pickle", ".pkl", ".json", ".jsonl")  # the files a folder is read for
# How a row's entities are ordered (its first is the head the QA models read, its second the
# tail): where the released id form names them, as CronKGQA's code orders them, or head then
# tail as the annotation names them, which the paper withholds from test questions.
ENTITY_ORDERS = ("question", "annotation")
# The annotation's word for each template slot that is no entity or time
CHOICES = {"type": ("before", "after"), "adj": ("first", "last")}
# The answer type of each question type (first/last asks for either)
ANSWER_TYPE_OF = {
    "simple_entity": "entity",
    "simple_time": "time",
    "before_after": "entity",
    "time_join": "entity",
}
_SETS = (list, set, tuple, frozenset)  # what a released collection may be
_SLOT = re.compile(r"\{(\w+)\}")
_YEAR_TEXT = re.compile(r"-?[0-9]{1,10}")


def _items(path: Path, problems: Problems):
    """(``FILE:WHERE``, question) of a pickle or a JSON file."""
    from chronoprobe.kg.io.safe_pickle import looks_pickled

    with open(path, "rb") as stream:
        pickled = looks_pickled(stream.read(1))  # protocol 0 and 1 as well: not JSON
    if not pickled:
        yield from records(path, problems)
        return
    from chronoprobe.kg.io.safe_pickle import safe_load

    data = safe_load(path)
    if not isinstance(data, list):
        raise UserError(f"{path}: expected a list of questions, found {type(data).__name__}")
    for number, item in enumerate(data):
        where = f"{path}: question {number}"
        if isinstance(item, dict):
            yield where, item
        else:
            _problem(problems, where, f"a question is a dict, not {json_type(item)}", "no question")


def _problem(problems: Problems, where: str, reason: str, kind: str | None = None) -> None:
    if ": question " in where:  # a pickle has items, not lines
        file, _, number = where.partition(": question ")
        problems.report(f"{file}: question", int(number), reason, kind)
    else:
        report(problems, where, reason, kind)


def _shown(value: object) -> str:
    """``value`` as a message shows it: its repr, cut short."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _collection(item: dict, key: str) -> list:
    value = item.get(key, ())
    if not isinstance(value, _SETS):
        raise Invalid(f"{key} must be a list or set, not {json_type(value)}", f"bad {key}")
    return list(value)


def _year(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise Invalid(f"{name}: {_shown(value)} is not a year (an integer)", "bad year")
    problem = year_problem(value)
    if problem is not None:
        raise Invalid(f"{name}: {problem}", "bad year")
    return value


def _unicode(text: str, name: str) -> str:
    """``text`` if a file can hold it: a pickle's string may hold a lone surrogate, which is
    no Unicode text and which no UTF-8 file can be written with."""
    if text.isascii():  # most ids and questions, at once
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        bad = f"{ord(text[err.start]):04x}"
        raise Invalid(
            f"{name} holds U+{bad.upper()}, a lone surrogate (no text)", "bad text"
        ) from None
    return text


def _ids(values: list, name: str) -> list[str]:
    return [_unicode(check_id(value, name), name) for value in values]


def _annotation(value: object) -> dict:
    """The annotation with each slot's value checked: ids for entities, a year for ``time``
    (an integer, or its digits as the early JSON writes it), a word of :data:`CHOICES`."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise Invalid(
            f"annotation must map slots to values, not {json_type(value)}", "bad annotation"
        )
    slots: dict[str, str | int] = {}
    for key, slot in value.items():
        if not isinstance(key, str):
            raise Invalid(f"annotation key {_shown(key)} is not a slot name", "bad annotation")
        _unicode(key, "annotation key")
        if key == "time":
            text = isinstance(slot, str) and _YEAR_TEXT.fullmatch(slot)
            slots[key] = _year(int(slot) if text else slot, "annotation time")  # type: ignore[arg-type]
        elif key in CHOICES:
            if not isinstance(slot, str) or slot not in CHOICES[key]:
                words = " or ".join(CHOICES[key])
                raise Invalid(
                    f"annotation {key} must be {words}, not {_shown(slot)}", "bad annotation"
                )
            slots[key] = slot
        else:
            (slots[key],) = _ids([slot], f"annotation {key}")
    return slots


def _template(value: object, annotation: dict) -> str | None:
    """The template with its ``{type}`` and ``{adj}`` slots filled from the annotation; every
    slot must be one the annotation fills (an entity slot the annotation lacks would leave the
    question's head or tail unknown)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise Invalid(f"template must be text, not {json_type(value)}", "bad template")
    _unicode(value, "template")

    def fill(slot: re.Match) -> str:
        name = slot.group(1)
        if name not in annotation:
            words = f" ({' or '.join(CHOICES[name])})" if name in CHOICES else ""
            raise Invalid(
                f"template slot {{{name}}} but no {name}{words} in the annotation",
                "bad template",
            )
        return str(annotation[name]) if name in CHOICES else slot.group(0)

    return _SLOT.sub(fill, value)


def _position(text: str, entity: str) -> int:
    """Where ``text`` names ``entity`` as a whole id (Q76 is not in Q7654); -1: nowhere."""
    start = text.find(entity)
    while start >= 0:
        end = start + len(entity)
        if not (text[start - 1 : start].isalnum() or text[end : end + 1].isalnum()):
            return start
        start = text.find(entity, start + 1)
    return -1


def _text(released: object, paraphrases: list, entities: list[str]) -> str:
    """The question as asked: its first paraphrase, or the released question itself when that
    names none of its entities' ids (a row already in words)."""
    if not isinstance(released, str):
        raise Invalid(f"question must be text, not {json_type(released)}", "bad question")
    _unicode(released, "question")
    for number, paraphrase in enumerate(paraphrases):
        if not isinstance(paraphrase, str) or not paraphrase.strip():
            what = "empty" if isinstance(paraphrase, str) else json_type(paraphrase)
            raise Invalid(f"paraphrase {number} is no text ({what})", "bad question")
        _unicode(paraphrase, f"paraphrase {number}")
    text = paraphrases[0] if paraphrases else released
    if not text.strip():
        raise Invalid("question is empty", "bad question")
    named = sorted(e for e in entities if _position(text, e) >= 0)
    if named and paraphrases:
        raise Invalid(
            f"paraphrase 0, the question's text, names Wikidata ids ({', '.join(named)})",
            "no question text",
        )
    if named:
        raise Invalid(
            f"question names Wikidata ids ({', '.join(named)}) and no paraphrase gives its "
            "text (paraphrases[0] holds it in the release)",
            "no question text",
        )
    return text


def _answers(item: dict, answer_type: str) -> list:
    answers = _collection(item, "answers")
    if not answers:
        raise Invalid("no answers", "no answers")
    if answer_type == "time":  # written as text, as entity answers are: one JSON type
        return [str(year) for year in sorted({_year(a, "answers") for a in answers})]
    return sorted(set(_ids(answers, "answers")))


def _types(item: dict) -> tuple[str, str]:
    kind, answer_type = item["type"], item["answer_type"]
    if not isinstance(kind, str) or kind not in QUESTION_TYPES:
        raise Invalid(f"type {_shown(kind)} is not one of {QUESTION_TYPES}", "bad type")
    if not isinstance(answer_type, str) or answer_type not in ("entity", "time"):
        raise Invalid(f"answer_type {_shown(answer_type)} is not entity or time", "bad type")
    if ANSWER_TYPE_OF.get(kind, answer_type) != answer_type:
        raise Invalid(
            f"a {kind} question has {ANSWER_TYPE_OF[kind]} answers, not {answer_type}", "bad type"
        )
    return kind, answer_type


def _uniq_id(item: dict) -> int | None:
    uniq = item.get("uniq_id")
    if uniq is not None and (isinstance(uniq, bool) or not isinstance(uniq, int) or uniq < 0):
        raise Invalid(
            f"uniq_id must be a whole number of 0 or more, not {_shown(uniq)}", "bad uniq_id"
        )
    return uniq


def _direction(annotation: dict) -> str | None:
    """before/after (the annotation's ``type``) or first/last (its ``adj``)."""
    for key in CHOICES:
        if key in annotation:
            return str(annotation[key])
    return None


def annotated_entities(annotation: Mapping, others: Iterable[str]) -> list[str]:
    """The annotated head first, then the annotated tail, then ``others`` not among them, in
    the order given (``--entity-order annotation``, not the paper's protocol): the QA models
    read the first as the question's head and the second as its tail, so they are told which
    slot of the fact each entity fills whatever the question's wording."""
    first = [str(annotation[slot]) for slot in ("head", "tail") if annotation.get(slot) is not None]
    return first + [e for e in map(str, others) if e not in first]


def released_question(item: dict, split: str, number: int, entity_order: str = "question") -> dict:
    """One released question as a row (``build cronq``'s format); :class:`Invalid` saying why
    not. Its id is ``SPLIT-UNIQ_ID`` (the release numbers each split from 0), or
    ``SPLIT-NUMBER`` for a row without ``uniq_id``; its entities are ordered as
    ``entity_order`` says (:data:`ENTITY_ORDERS`)."""
    kind, answer_type = _types(item)
    uniq = _uniq_id(item)
    annotation = _annotation(item.get("annotation"))
    entities = _ids(_collection(item, "entities"), "entities")
    if isinstance(item.get("paraphrases"), (set, frozenset)):
        raise Invalid(
            "paraphrases must be a list (its first is the question's text), not a set",
            "bad paraphrases",
        )
    paraphrases = _collection(item, "paraphrases")
    released = item["question"]
    text = _text(released, paraphrases, entities)
    place = {e: _position(released, e) for e in entities}
    ordered = sorted(place, key=lambda e: (place[e] < 0, place[e], e))
    if entity_order == "annotation":
        ordered = annotated_entities(annotation, ordered)
    template = item.get("template")
    return {
        "id": f"{split}-{number if uniq is None else uniq}",
        "uniq_id": uniq,
        "question": text,
        "question_ids": released,
        "paraphrases": paraphrases[1:],
        "type": kind,
        "direction": _direction(annotation),
        "answer_type": answer_type,
        "answers": _answers(item, answer_type),
        "entities": ordered,
        "times": sorted({_year(t, "times") for t in _collection(item, "times")}),
        "relations": sorted(set(_ids(_collection(item, "relations"), "relations"))),
        "template": _template(template, annotation),
        "template_name": template,
        "annotation": annotation,
    }


def read_question_files(
    paths: Sequence[Path],
    problems: Problems,
    split: str | None = None,
    entity_order: str = "question",
) -> dict[str, list[dict]]:
    """Split -> question rows of released files (or of the folders holding them), one row per
    question, in file order; a question whose id an earlier one of its split has is a problem."""
    if entity_order not in ENTITY_ORDERS:
        raise UserError(f"entity order {entity_order!r} is not one of {ENTITY_ORDERS}")
    out: dict[str, list[dict]] = {}
    first_at: dict[str, str] = {}
    for path in release_files(paths, QUESTION_SUFFIXES):
        name = split or split_from_name(path)
        name = "valid" if name == "dev" else name
        if name not in SPLITS:
            raise UserError(f"{path}: its name gives no split (train, valid or test); pass --split")
        rows = out.setdefault(name, [])

        def question(item: dict, name: str = name, rows: list = rows) -> dict:
            return released_question(item, name, len(rows), entity_order)

        for where, _, row in converted(path, problems, "cronquestions", question, _items, _problem):
            if row["id"] in first_at:
                what = "id" if row["uniq_id"] is None else f"uniq_id {row['uniq_id']}"
                reason = f"{what} again in the {name} split (first at {first_at[row['id']]})"
                _problem(problems, where, reason, "duplicate uniq_id")
                continue
            first_at[row["id"]] = where
            rows.append(row)
    return out


def read_released_questions(
    path: str | Path, split: str | None = None, entity_order: str = "question"
) -> list[dict]:
    """The rows of one released question file (see :func:`released_question`), stopping at
    the first bad question with its place and reason."""
    splits = read_question_files([Path(path)], Problems(strict=True), split, entity_order)
    return [row for rows in splits.values() for row in rows]
