"""Relation templates as data files, one YAML file per probe family.

Adding a relation is a YAML edit: each entry maps a relation id to a cloze template with
``<subject>`` and ``<object>`` placeholders and the side to mask. A user's templates may also
come as a CSV of ``Wikidata ID,Relation,Template`` rows, as TempLAMA and DynamicTempLAMA
publish theirs (:func:`load_template_csv`): the object is asked. ``questions.yaml`` asks each
relation's object as a question (:func:`load_question_templates`), for the generate view.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import yaml

from chronoprobe import safe_yaml
from chronoprobe.errors import UserError

MASK = "[MASK]"
SENTENCE_ENDS = (".", "?", "!")


def followed_by(value: str, after: str) -> str:
    """``after`` as it reads after ``value``: a value that ends with its own stop ("Manchester
    United F.C.", "Apple Inc.", "Yahoo!") takes the place of the full stop that opens ``after``,
    so a statement reads "... for Manchester United F.C." and never "... F.C..". An ellipsis
    stays."""
    if value.endswith(SENTENCE_ENDS) and after.startswith(".") and not after.startswith(".."):
        return after[1:]
    return after


def fill_slots(template: str, values: dict[str, str]) -> str:
    """``template`` with each ``<slot>`` of ``values`` replaced by its value (see followed_by)."""
    text = template
    for slot, value in values.items():
        before, found, after = text.partition(f"<{slot}>")
        if found:
            text = before + value + followed_by(value, after)
    return text


@dataclass(frozen=True)
class ClozeTemplate:
    relation: str
    label: str
    template: str
    mask: str = "object"  # which side the query asks for

    @property
    def given(self) -> str:
        """The side the query names (the other side is asked)."""
        return "subject" if self.mask == "object" else "object"

    def query(self, given: str) -> str:
        """The template with the given side's label filled in and the asked side as [MASK]."""
        return fill_slots(self.template, {self.given: given, self.mask: MASK})

    def fill(self, subject: str, object: str) -> str:
        """The full statement, both sides filled in."""
        return fill_slots(self.template, {"subject": subject, "object": object})


def read_templates_yaml(source: Path | Traversable) -> Any:
    """A templates file's YAML, read with the bounded reader; a folder, a missing file, text
    that is no YAML or not UTF-8 is a ValueError naming the file (and the line where known)."""
    try:
        return safe_yaml.load(source.read_text(encoding="utf-8"))
    except IsADirectoryError:
        raise UserError(f"{source}: a folder; pass a YAML file of templates") from None
    except FileNotFoundError:
        raise UserError(f"{source}: no such file of templates") from None
    except UnicodeDecodeError as err:
        raise UserError(f"{source}: not a YAML file of templates: {err}") from None
    except yaml.YAMLError as err:
        line, reason = safe_yaml.problem_of(err)
        where = f"{source}:{line}" if line else str(source)
        raise UserError(f"{where}: not a YAML file of templates: {reason}") from None


def _entries(name: str, path: str | Path | None, what: str) -> Iterator[tuple[str, Any, str]]:
    """(relation, entry, where) of ``templates/<name>.yaml`` (or a user's file), a mapping of
    relation id to ``what``; ``where`` names the file and the relation, for errors."""
    source = Path(path) if path else resources.files("chronoprobe.templates") / f"{name}.yaml"
    data = read_templates_yaml(source)
    if not isinstance(data, dict):
        raise UserError(f"{source}: expected a mapping of relation id to {what}")
    for relation, entry in data.items():
        yield str(relation), entry, f"{source}: {relation}"


def load_cloze_templates(family: str, path: str | Path | None = None) -> dict[str, ClozeTemplate]:
    """Read ``templates/<family>.yaml`` (or a user's file) into relation -> template."""
    templates = {}
    for relation, entry, where in _entries(family, path, "template"):
        if not isinstance(entry, dict) or not {"label", "template"} <= set(entry):
            raise UserError(f"{where}: needs 'label' and 'template'")
        unknown = set(entry) - {"label", "template", "mask"}
        if unknown:
            raise UserError(f"{where}: unknown keys {', '.join(sorted(unknown))}")
        template = ClozeTemplate(
            relation, entry["label"], entry["template"], entry.get("mask", "object")
        )
        templates[template.relation] = _checked(template, where)
    return templates


CSV_COLUMNS = ("Wikidata ID", "Relation", "Template")


def _checked(template: ClozeTemplate, where: str) -> ClozeTemplate:
    if template.mask not in ("subject", "object"):
        raise UserError(f"{where}: mask must be 'subject' or 'object', not {template.mask!r}")
    for slot in ("<subject>", "<object>"):
        if template.template.count(slot) != 1:
            raise UserError(f"{where}: the template must hold {slot} exactly once")
    return template


def load_template_csv(path: str | Path) -> dict[str, ClozeTemplate]:
    """Relation -> template of a CSV with the columns ``Wikidata ID,Relation,Template``, the
    templates holding ``<subject>`` and ``<object>``; each asks for the object."""
    with open(path, encoding="utf-8-sig", newline="") as stream:
        reader = csv.DictReader(stream)
        missing = [c for c in CSV_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise UserError(
                f"{path}:1: a templates CSV needs the columns {','.join(CSV_COLUMNS)} "
                f"(missing: {', '.join(missing)})"
            )
        templates = {}
        for number, row in enumerate(reader, start=2):
            relation = (row["Wikidata ID"] or "").strip()
            if not relation:
                raise UserError(f"{path}:{number}: no Wikidata ID")
            if relation in templates:
                raise UserError(f"{path}:{number}: relation {relation} is listed twice")
            template = ClozeTemplate(
                relation, (row["Relation"] or "").strip(), (row["Template"] or "").strip()
            )
            templates[relation] = _checked(template, f"{path}:{number}")
    if not templates:
        raise UserError(f"{path}: no templates")
    return templates


def load_templates_file(path: str | Path, family: str) -> dict[str, ClozeTemplate]:
    """A user's templates: a CSV (``Wikidata ID,Relation,Template``) or a YAML file."""
    if str(path).lower().endswith(".csv"):
        return load_template_csv(path)
    return load_cloze_templates(family, path)


@dataclass(frozen=True)
class QuestionTemplate:
    """A question asking a relation's object of its subject: ``<subject>`` and ``<when>`` (the
    period, "in 2019"; dropped with the space before it where there is none)."""

    relation: str
    label: str
    question: str

    def ask(self, subject: str, when: str | None) -> str:
        text = self.question.replace("<subject>", subject)
        return text.replace(" <when>", f" {when}" if when else "").replace("<when>", when or "")


def load_question_templates(path: str | Path | None = None) -> dict[str, QuestionTemplate]:
    """Read ``templates/questions.yaml`` (or a user's file like it) into relation -> question;
    each question holds ``<subject>`` and ``<when>`` once and ends with "?"."""
    questions = {}
    for relation, entry, where in _entries("questions", path, "question"):
        if not isinstance(entry, dict) or set(entry) != {"label", "question"}:
            raise UserError(f"{where}: needs 'label' and 'question', and nothing else")
        question = str(entry["question"])
        for slot in ("<subject>", "<when>"):
            if question.count(slot) != 1:
                raise UserError(f"{where}: the question must hold {slot} exactly once")
        if not question.endswith("?"):
            raise UserError(f"{where}: a question ends with '?': {question!r}")
        questions[relation] = QuestionTemplate(relation, str(entry["label"]), question)
    return questions
