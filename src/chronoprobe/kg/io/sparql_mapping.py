"""Which SPARQL variable plays which role in a fact, and which roles the query fixed itself.

Queries name their variables as their authors like (``?item ?start_date ?start_precision``) and
often fix the relation or the object in the query text (``?item p:P39 ?st``) instead of
selecting it. A :class:`VariableMapping` says, for each role of a fact, which variable of the
results gives it or which constant stands for it. Its default is the variables of the query in
docs/loaders.md, so results of that query need no mapping.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from chronoprobe.errors import UserError

ROLES = (
    "subject",
    "relation",
    "object",
    "start",
    "end",
    "start_precision",
    "end_precision",
    "subject_label",
    "relation_label",
    "object_label",
    "subject_alias",
    "object_alias",
    "statement",
)
DEFAULT_VARIABLES = {
    "subject": "subject",
    "relation": "relation",
    "object": "object",
    "start": "start",
    "end": "end",
    "start_precision": "startPrecision",
    "end_precision": "endPrecision",
    "subject_label": "subjectLabel",
    "relation_label": "relationLabel",
    "object_label": "objectLabel",
    "subject_alias": "subjectAltLabel",
    "object_alias": "objectAltLabel",
    "statement": "statement",
}
# What a constant may fix, and the form its value takes.
_ENTITY_IRI = "http://www.wikidata.org/entity/"
_PRECISION = "a Wikidata precision, 0 to 14 (9 year, 10 month, 11 day)"
_CONSTANTS = {
    "subject": (re.compile(r"Q[1-9][0-9]*"), "an item id such as Q76"),
    "object": (re.compile(r"Q[1-9][0-9]*"), "an item id such as Q11696"),
    "relation": (re.compile(r"P[1-9][0-9]*"), "a property id such as P39"),
    "start_precision": (re.compile(r"[0-9]|1[0-4]"), _PRECISION),
    "end_precision": (re.compile(r"[0-9]|1[0-4]"), _PRECISION),
    "subject_label": (re.compile(r".+", re.DOTALL), "a label"),
    "relation_label": (re.compile(r".+", re.DOTALL), "a label"),
    "object_label": (re.compile(r".+", re.DOTALL), "a label"),
}
REQUIRED = ("subject", "relation", "object")
TIMES = ("start", "end")


@dataclass(frozen=True)
class VariableMapping:
    """role -> variable name, and role -> constant value (an id, a precision or a label)."""

    variables: tuple[tuple[str, str], ...] = tuple(DEFAULT_VARIABLES.items())
    constants: tuple[tuple[str, str], ...] = ()

    @classmethod
    def build(
        cls, variables: dict[str, str] | None = None, constants: dict[str, str] | None = None
    ) -> VariableMapping:
        """The default mapping with ``variables`` (variable name -> role) and ``constants``
        (role -> value) applied; ValueError names a bad role, value or clash."""
        variables = {name.removeprefix("?"): role for name, role in (variables or {}).items()}
        roles: dict[str, str] = {}
        for variable, role in variables.items():
            _check_role(role, f"variable ?{variable}")
            if role in roles:
                raise UserError(f"{role} is given by both ?{roles[role]} and ?{variable}")
            roles[role] = variable
        assigned = set(roles)
        for role, default in DEFAULT_VARIABLES.items():
            # A default name another role took is that role's now.
            if role not in roles and default not in variables:
                roles[role] = default
        fixed: dict[str, str] = {}
        for role, value in (constants or {}).items():
            _check_role(role, "a constant")
            if role not in _CONSTANTS:
                choices = ", ".join(_CONSTANTS)
                raise UserError(f"{role} cannot be a constant; constants may fix: {choices}")
            if role in assigned:
                raise UserError(f"{role} is given both by ?{roles[role]} and as a constant")
            pattern, form = _CONSTANTS[role]
            value = value.strip().removeprefix(_ENTITY_IRI).removeprefix("wd:")
            if not pattern.fullmatch(value):
                raise UserError(f"constant {role}={value!r} must be {form}")
            fixed[role] = value
        kept = tuple((role, roles[role]) for role in ROLES if role in roles and role not in fixed)
        return cls(kept, tuple(fixed.items()))

    @classmethod
    def from_file(
        cls,
        path: str | Path,
        variables: dict[str, str] | None = None,
        constants: dict[str, str] | None = None,
    ) -> VariableMapping:
        """A YAML mapping file (``variables: {NAME: ROLE}``, ``constants: {ROLE: VALUE}``),
        with ``variables`` and ``constants`` given besides it taking precedence."""
        from chronoprobe import safe_yaml

        if Path(path).is_dir():
            raise UserError(f"{path}: a folder; pass a YAML mapping file")
        data = safe_yaml.load_file(path) or {}
        if not isinstance(data, dict) or set(data) - {"variables", "constants"}:
            raise UserError(f"{path}: a mapping file holds 'variables' and 'constants' only")
        parts = []
        for key in ("variables", "constants"):
            part = data.get(key) or {}
            if not isinstance(part, dict):
                raise UserError(f"{path}: {key} must map names to values")
            parts.append({str(k): str(v) for k, v in part.items()})
        file_variables, file_constants = parts
        # A role given on the command line replaces the file's variable or constant for it.
        overridden = set((variables or {}).values()) | set(constants or {})
        file_variables = {v: r for v, r in file_variables.items() if r not in overridden}
        file_constants = {r: v for r, v in file_constants.items() if r not in overridden}
        try:
            return cls.build(file_variables | (variables or {}), file_constants | (constants or {}))
        except ValueError as err:
            raise UserError(f"{path}: {err}") from None

    def variable(self, role: str) -> str | None:
        return dict(self.variables).get(role)

    def constant(self, role: str) -> str | None:
        return dict(self.constants).get(role)

    def missing(self, found: list[str]) -> list[str]:
        """Roles a results file with the variables ``found`` cannot fill: subject, relation and
        object each, and at least one of start and end ("start/end")."""
        given = {role for role, name in self.variables if name in found} | set(dict(self.constants))
        absent = [role for role in REQUIRED if role not in given]
        if not given.intersection(TIMES):
            absent.append("start/end")
        return absent

    def names_only(self, found: list[str]) -> bool:
        """Whether results with the variables ``found`` hold names alone: entities (the
        subject role) with their labels or aliases (skos:altLabel), and no facts."""
        given = {role for role, name in self.variables if name in found} | set(dict(self.constants))
        names = given & {"subject_label", "subject_alias"}
        return "subject" in given and bool(names) and not given & {"relation", "object"}

    def unmapped(self, found: list[str]) -> list[str]:
        """Variables of ``found`` that fill no role."""
        used = {name for _, name in self.variables}
        return [name for name in found if name not in used]


def _check_role(role: str, what: str) -> None:
    if role not in ROLES:
        raise UserError(f"{what}: unknown role {role!r}; roles are {', '.join(ROLES)}")


def parse_pairs(pairs: list[str], option: str) -> dict[str, str]:
    """``NAME=VALUE`` strings of a repeated command-line option as a dict."""
    parsed: dict[str, str] = {}
    for pair in pairs:
        name, equals, value = pair.partition("=")
        if not equals or not name.strip() or not value.strip():
            raise UserError(f"{option} {pair!r}: expected NAME=VALUE")
        parsed[name.strip()] = value.strip()
    return parsed
