"""Wikidata SPARQL JSON results, as query.wikidata.org returns them (sparql-results+json).

One binding is one time-scoped statement. Its variables play roles (subject, relation, object,
start, end, their precisions, labels, the statement node), named by a
:class:`~chronoprobe.kg.io.sparql_mapping.VariableMapping`: by default the variables of the
query in ``docs/loaders.md`` (``subject``, ``relation``, ``object``, ``start``, ``end``,
``startPrecision``, ``endPrecision``, ``subjectLabel``, ``relationLabel``, ``objectLabel``,
``statement``); roles the query fixed in its text (``?item p:P39 ?st``) are given as constants.

Aliases come from ``?subjectAltLabel`` and ``?objectAltLabel`` (roles ``subject_alias`` and
``object_alias``): one alias a binding (``skos:altLabel``), or several joined by ``|`` (a
``GROUP_CONCAT`` with that separator), in the wanted language or untagged. Results that give
entities and their names alone (a subject with a label or an alias, no relation, no object:
the names query of ``docs/templama.md``) are read as entities with their labels and aliases,
no facts: a KG of names, as ``import templama --aliases`` reads one.

Three things differ from the JSON dump and are undone here, so both loaders agree:

- the query service writes dates in XSD 1.1, where year ``0000`` is 1 BCE: ``-0058`` there
  (which it prints as ``-058``) is 59 BCE, which the project (like the dump) calls year -59;
- it does not carry the precision with the date (a year is written as its 1 January); without
  a precision the bound is taken as the day written, the most the file says, and a warning
  says how many rows were read so;
- a statement with two values of one qualifier comes back as several rows (the query's cross
  product). Where the statement is bound, its rows are merged into one fact spanning the
  earliest start and the latest end, as the dump loader reads several values of one qualifier.

A results document is one JSON object, so it is read whole; bindings are then decoded one at a
time, each by :func:`parse_binding` (a pure function), and problems are located at the line
where their binding starts.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import msgspec

from chronoprobe.errors import UserError
from chronoprobe.inputs import known_size, open_input, read_document
from chronoprobe.jsonl import (
    BOM,
    DECODE_ERRORS,
    JsonProblem,
    LineLocator,
    json_items,
    json_problem,
)
from chronoprobe.kg.graph import KGBuilder, TemporalKG
from chronoprobe.kg.io.checks import Invalid, check_interval, check_point
from chronoprobe.kg.io.options import LoadOptions
from chronoprobe.kg.io.problems import Problems
from chronoprobe.kg.io.shapes import expect
from chronoprobe.kg.io.sparql_mapping import VariableMapping
from chronoprobe.kg.records import Entity, Fact, Relation
from chronoprobe.time import Precision, TimePoint

# Subjects and objects are items, as in the dump: a property (wd:P39) or a lexeme is no entity of
# a fact (a property as a subject is a query that selected the wrong variable).
_ITEM = re.compile(r"https?://www\.wikidata\.org/entity/(Q[1-9][0-9]*)")
# wd:P39, p:P39, wdt:P39 and the other prop/... namespaces all name the same property.
_PROPERTY = re.compile(r"https?://www\.wikidata\.org/(?:entity|prop(?:/[a-z-]+)?)/(P[1-9][0-9]*)")
# The query service's "unknown value" (somevalue): a skolem IRI in place of an item.
_UNKNOWN_VALUE = re.compile(r"https?://www\.wikidata\.org/\.well-known/genid/\w+")
_XSD_DATETIME = re.compile(r"([+-]?)([0-9]{1,16})-([0-9]{2})-([0-9]{2})T")
_PROPERTY_ID = re.compile(r"P[1-9][0-9]*")
_PRECISION = re.compile(r"[0-9]{1,2}")
_DATETIME = "http://www.w3.org/2001/XMLSchema#dateTime"
_LITERALS = ("literal", "typed-literal")  # the second is SPARQL JSON's older spelling
DEFAULT_MAPPING = VariableMapping()


class Term(msgspec.Struct, frozen=True):
    """One RDF term of a binding, as the SPARQL 1.1 JSON results format writes it."""

    type: str
    value: str
    datatype: str | None = None
    lang: str | None = msgspec.field(name="xml:lang", default=None)


class _Head(msgspec.Struct):
    vars: list[str]


class _Results(msgspec.Struct):
    bindings: list[msgspec.Raw]


class _Document(msgspec.Struct):
    head: _Head
    results: _Results


_decode_document = msgspec.json.Decoder(_Document).decode
_decode_binding = msgspec.json.Decoder(dict[str, Term]).decode


class Skipped(Exception):
    """A well-formed binding that is not a time-scoped fact (counted, not a problem)."""


@dataclass(frozen=True)
class Statement:
    """What one binding says: the fact, the statement it belongs to, its labels and aliases."""

    fact: Fact
    statement: str | None
    subject_label: Term | None
    object_label: Term | None
    relation_label: Term | None
    no_precision: tuple[str, ...] = ()  # bounds read at day precision, for want of one
    subject_alias: Term | None = None
    object_alias: Term | None = None


class _Roles:
    """A binding read by role: the term of the role's variable, or the role's constant."""

    def __init__(self, binding: dict[str, Term], mapping: VariableMapping) -> None:
        self.binding, self.mapping = binding, mapping

    def get(self, role: str) -> Term | None:
        variable = self.mapping.variable(role)
        if variable is not None:
            return self.binding.get(variable)
        value = self.mapping.constant(role)
        if value is None:
            return None
        if role in ("subject", "object"):
            return Term("uri", f"http://www.wikidata.org/entity/{value}")
        return Term("literal", value)

    def name(self, role: str) -> str:
        """How messages call a role: its variable, as the user knows it."""
        variable = self.mapping.variable(role)
        return role if variable is None or variable == role else f"{role} (?{variable})"


def _entity(roles: _Roles, role: str) -> str:
    term = roles.get(role)
    match = _ITEM.fullmatch(term.value) if term.type == "uri" else None
    if match is None:
        if role == "object" and _UNKNOWN_VALUE.fullmatch(term.value):
            raise Skipped("unknown value")
        name = roles.name(role)
        raise Invalid(f"{name} is not a Wikidata item: {term.value!r}", f"{role} is not an entity")
    return match.group(1)


def _relation(roles: _Roles) -> str:
    term = roles.get("relation")
    if term.type == "uri":
        match = _PROPERTY.fullmatch(term.value)
        if match:
            return match.group(1)
    elif _PROPERTY_ID.fullmatch(term.value):
        return term.value  # a bare "P39", as BIND("P39" AS ?relation) gives
    name = roles.name("relation")
    raise Invalid(f"{name} is not a Wikidata property: {term.value!r}", "relation not a property")


def _precision(roles: _Roles, bound: str) -> int | None:
    """The precision of a bound; None when the results give none."""
    term = roles.get(f"{bound}_precision")
    if term is None:
        return None
    if not _PRECISION.fullmatch(term.value):
        name = roles.name(f"{bound}_precision")
        raise Invalid(f"{name} is not an integer: {term.value!r}", "malformed precision")
    return int(term.value)


def _time(roles: _Roles, bound: str) -> tuple[TimePoint | None, bool]:
    """A bound, None when unbound, unknown (a blank node or genid IRI) or coarser than a year;
    and whether it was read at day precision for want of a precision."""
    term = roles.get(bound)
    if term is None or term.type not in _LITERALS:
        return None, False
    precision = _precision(roles, bound)
    match = _XSD_DATETIME.match(term.value)
    name = roles.name(bound)
    if match is None:
        raise Invalid(f"{name} is not an xsd:dateTime: {term.value!r}", "malformed time")
    sign, digits, month, day = match.groups()
    year = -int(digits) if sign == "-" else int(digits)
    if year <= 0:
        year -= 1  # XSD 1.1 counts 1 BCE as year 0; Wikidata's JSON (and we) call it -1
    wikidata = f"{'-' if year < 0 else '+'}{abs(year):04d}-{month}-{day}T00:00:00Z"
    try:
        point = TimePoint.from_wikidata(wikidata, Precision.DAY if precision is None else precision)
    except ValueError as err:
        raise Invalid(f"{name} is not a valid date: {err}", "malformed time") from None
    return (None if point is None else check_point(point, name)), precision is None


def parse_binding(
    binding: dict[str, Term],
    relations: frozenset[str] | None = None,
    mapping: VariableMapping = DEFAULT_MAPPING,
) -> Statement | None:
    """One binding as a statement; None when its relation is not among ``relations``.

    :class:`~chronoprobe.kg.io.checks.Invalid` says what is wrong with a binding,
    :class:`Skipped` why a sound one is no time-scoped fact. The interval is checked once the
    rows of a statement are merged, since only the merged interval must be sound.
    """
    roles = _Roles(binding, mapping)
    if roles.get("relation") is None:
        raise Invalid("no relation", "missing relation")
    relation = _relation(roles)
    if relations is not None and relation not in relations:
        return None
    missing = [role for role in ("subject", "object") if roles.get(role) is None]
    if missing:
        raise Invalid(f"no {', '.join(missing)}", f"missing {'/'.join(missing)}")
    subject, obj = _entity(roles, "subject"), _entity(roles, "object")
    if roles.get("start") is None and roles.get("end") is None:
        raise Skipped("no time")
    (start, start_day), (end, end_day) = _time(roles, "start"), _time(roles, "end")
    if start is None and end is None:
        raise Skipped("imprecise or unknown time")
    statement = roles.get("statement")
    return Statement(
        Fact(subject, relation, obj, start, end),
        statement.value if statement is not None else None,
        roles.get("subject_label"),
        roles.get("object_label"),
        roles.get("relation_label"),
        tuple(b for b, day in (("start", start_day), ("end", end_day)) if day),
        roles.get("subject_alias"),
        roles.get("object_alias"),
    )


def merge(first: Fact, other: Fact) -> Fact:
    """Two rows of one statement as one fact: the earliest start and the latest end.

    Bounds compare by the days they cover, so an end "2009" outlasts an end "2009-06-01".
    """
    starts = [t for t in (first.start, other.start) if t is not None]
    ends = [t for t in (first.end, other.end) if t is not None]
    start = min(starts, key=TimePoint.first_day, default=None)
    return replace(first, start=start, end=max(ends, key=TimePoint.last_day, default=None))


ALIAS_SEPARATOR = "|"  # between aliases GROUP_CONCAT joined into one value (docs/templama.md)


class _Aliases:
    """Every alias seen per id, in the wanted language (or untagged), in order, each once."""

    def __init__(self, lang: str) -> None:
        self.lang = lang
        self.seen: dict[str, dict[str, None]] = {}

    def offer(self, key: str, term: Term | None) -> None:
        if term is None or term.type not in _LITERALS or term.lang not in (None, self.lang):
            return
        names = self.seen.setdefault(key, {})
        for alias in term.value.split(ALIAS_SEPARATOR):
            if alias.strip():
                names[alias.strip()] = None

    def of(self, key: str) -> tuple[str, ...]:
        return tuple(self.seen.get(key, ()))


class _Labels:
    """Best label seen per id: one in the wanted language beats an untagged one beats others.

    The label service writes the bare id, untagged, for an entity without a label; that counts
    as no label, so a real label from another row wins over it.
    """

    def __init__(self, lang: str) -> None:
        self.lang = lang
        self.best: dict[str, tuple[int, str]] = {}

    def offer(self, key: str, term: Term | None) -> None:
        if term is None or term.type not in _LITERALS or term.value in ("", key):
            rank, value = -1, key  # no label: the id stands in, as the label service does
        else:
            rank = 2 if term.lang == self.lang else 0 if term.lang else 1
            value = term.value
        if rank > self.best.get(key, (-2, ""))[0]:
            self.best[key] = (rank, value)

    def items(self) -> Iterator[tuple[str, str]]:
        return ((key, value) for key, (_, value) in self.best.items())


@dataclass
class _Read:
    """One results file: its text, variables and bindings (each as its text), and, when the
    document did not decode as a whole, why (told only if no binding shows it)."""

    text: bytes
    variables: list[str]
    bindings: list[bytes] | list[msgspec.Raw]
    broken: JsonProblem | None = None


def _split(text: bytes, problem: JsonProblem) -> _Read | None:
    """A document that does not decode as a whole, read binding by binding (see
    :func:`~chronoprobe.jsonl.json_items`); None when even its layout is lost."""
    variables = json_items(text, ("head", "vars"))
    bindings = json_items(text, ("results", "bindings"))
    if variables is None or bindings is None:
        return None
    try:
        names = [msgspec.json.decode(name, type=str) for name in variables]
    except DECODE_ERRORS:
        return None
    return _Read(text, names, bindings, problem)


def _read(path: Path, mapping: VariableMapping, problems: Problems) -> _Read | None:
    """One file's results; None (the problem reported) when it has none.

    A file whose variables cannot fill the roles a fact needs raises ValueError: that is no bad
    record but a query the mapping does not fit, and no file of it would load.
    """
    with open_input(path) as stream:
        text = read_document(stream, path, known_size(path)).removeprefix(BOM)
    try:
        document = _decode_document(text)
        read = _Read(text, document.head.vars, document.results.bindings)
    except msgspec.ValidationError as err:
        reason = f"not SPARQL JSON results: {err}"
        problems.report(str(path), 1, reason, kind="not SPARQL JSON results")
        return None
    except DECODE_ERRORS as err:
        problem = json_problem(text, err)
        read = _split(text, problem)
        if read is None:
            problems.report(str(path), problem.line, problem.reason, kind=problem.kind)
            return None
    found = read.variables
    missing = mapping.missing(found)
    if missing and not mapping.names_only(found):
        variables = " ".join(f"?{name}" for name in found) or "none"
        raise UserError(
            f"{path}:1: the results lack roles a fact needs: {', '.join(missing)}; variables "
            f"found: {variables}. Map a variable to a role with --var NAME=ROLE, or fix a role "
            "the query left implicit with --constant ROLE=VALUE (e.g. --constant relation=P39); "
            "see docs/loaders.md"
        )
    return read


@dataclass
class _Pending:
    """A fact waiting for the other rows of its statement, and where it was first seen."""

    fact: Fact
    statement: str
    file: str
    line: int


class _Collected:
    """Facts, labels and skips gathered from all files, rows of one statement merged."""

    def __init__(self, lang: str) -> None:
        self.facts: list[Fact | _Pending] = []
        self.by_statement: dict[str, _Pending] = {}
        self.skipped: Counter = Counter()
        self.entity_labels, self.relation_labels = _Labels(lang), _Labels(lang)
        self.aliases = _Aliases(lang)

    def add(self, statement: Statement, file: str, line: int) -> None:
        fact = statement.fact
        if statement.statement is None:
            self.facts.append(fact)
        elif (pending := self.by_statement.get(statement.statement)) is not None:
            pending.fact = merge(pending.fact, fact)
        else:
            pending = _Pending(fact, statement.statement, file, line)
            self.by_statement[statement.statement] = pending
            self.facts.append(pending)
        self.entity_labels.offer(fact.subject, statement.subject_label)
        self.entity_labels.offer(fact.object, statement.object_label)
        self.relation_labels.offer(fact.relation, statement.relation_label)
        self.aliases.offer(fact.subject, statement.subject_alias)
        self.aliases.offer(fact.object, statement.object_alias)

    def add_names(self, entity: str, label: Term | None, alias: Term | None) -> None:
        """An entity's label and alias from a results file of names alone."""
        self.entity_labels.offer(entity, label)
        self.aliases.offer(entity, alias)

    def build(self, problems: Problems, meta: dict) -> TemporalKG:
        builder = KGBuilder()
        for item in self.facts:
            if isinstance(item, _Pending):
                try:
                    check_interval(item.fact.start, item.fact.end)
                except Invalid as err:
                    reason = f"statement {item.statement}: {err}"
                    problems.report(item.file, item.line, reason, kind=err.kind)
                    continue
                item = item.fact
            builder.add_fact(item)
        for entity_id, label in self.entity_labels.items():
            aliases = tuple(a for a in self.aliases.of(entity_id) if a != label)
            builder.add_entity(Entity(entity_id, label, aliases))
        for relation_id, label in self.relation_labels.items():
            builder.add_relation(Relation(relation_id, label))
        return builder.build(meta={**meta, "skipped": dict(sorted(self.skipped.items()))})


class _Assumptions:
    """What one file's rows were read on an assumption, to be told once as warnings: bounds
    without a precision, and variables that fill no role but hold dates or precisions."""

    def __init__(self, found: list[str], mapping: VariableMapping) -> None:
        self.unmapped = mapping.unmapped(found)
        self.dated: dict[str, int] = {}  # unmapped variable -> first line with a date
        self.undated: dict[str, list[int]] = {}  # bound -> [rows, first line]

    def note(self, binding: dict[str, Term], statement: Statement | None, line: int) -> None:
        for name in self.unmapped:
            term = binding.get(name)
            if term is not None and term.datatype == _DATETIME:
                self.dated.setdefault(name, line)
        for bound in statement.no_precision if statement is not None else ():
            self.undated.setdefault(bound, [0, line])[0] += 1

    def warn(self, path: Path, roles: _Roles, problems: Problems) -> None:
        for name in self.unmapped:
            if "prec" in name.lower():
                problems.warn(
                    str(path),
                    1,
                    f"?{name} looks like a precision but fills no role; map it with "
                    f"{_suggest(name, '_precision')}",
                )
        for name, line in self.dated.items():
            problems.warn(
                str(path),
                line,
                f"?{name} holds dates but fills no role; map it with {_suggest(name, '')}",
            )
        for bound, (rows, line) in self.undated.items():
            problems.warn(
                str(path),
                line,
                f"{rows:,} rows give {roles.name(bound)} without a precision: read at day "
                f"precision; map the precision with --var NAME={bound}_precision or fix it "
                f"with --constant {bound}_precision=9 (year), 10 (month) or 11 (day)",
            )


def _suggest(name: str, suffix: str) -> str:
    """The --var option that likely maps ``name``: to the end's role if its name says so."""
    words = set(re.split(r"[^a-z]+", re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()))
    if words & {"end", "until", "to", "dissolved"}:
        return f"--var {name}=end{suffix}"
    if words & {"start", "begin", "from", "since"}:
        return f"--var {name}=start{suffix}"
    return f"--var {name}=start{suffix} or --var {name}=end{suffix}"


def _load_file(
    path: Path,
    options: LoadOptions,
    mapping: VariableMapping,
    problems: Problems,
    collected: _Collected,
) -> None:
    read = _read(path, mapping, problems)
    if read is None:
        return
    locator = LineLocator(read.text)
    if mapping.names_only(read.variables):
        _load_names(path, read, locator, mapping, problems, collected)
        return
    assumptions = _Assumptions(read.variables, mapping)
    reported = problems.total
    for index, raw in enumerate(read.bindings):
        line = locator.line_of(raw)
        binding: dict[str, Term] = {}
        try:
            binding = _decode_binding(raw)
            statement = parse_binding(binding, options.relations, mapping)
            if statement is not None and statement.statement is None:
                check_interval(statement.fact.start, statement.fact.end)
        except Skipped as why:
            collected.skipped[str(why)] += 1
            statement = None
        except (Invalid, *DECODE_ERRORS) as err:
            _bad_binding(problems, path, line, index, raw, err)
            continue
        assumptions.note(binding, statement, line)
        if statement is not None:
            collected.add(statement, str(path), line)
    if read.broken is not None and problems.total == reported:  # the fault is between bindings
        problems.report(str(path), read.broken.line, read.broken.reason, kind=read.broken.kind)
    assumptions.warn(path, _Roles({}, mapping), problems)


def _load_names(
    path: Path,
    read: _Read,
    locator: LineLocator,
    mapping: VariableMapping,
    problems: Problems,
    collected: _Collected,
) -> None:
    """A results file of names alone: each binding an entity with a label or an alias."""
    for index, raw in enumerate(read.bindings):
        line = locator.line_of(raw)
        try:
            roles = _Roles(_decode_binding(raw), mapping)
            if roles.get("subject") is None:
                raise Invalid("no subject", "missing subject")
            entity = _entity(roles, "subject")
        except (Invalid, *DECODE_ERRORS) as err:
            _bad_binding(problems, path, line, index, raw, err)
            continue
        collected.add_names(entity, roles.get("subject_label"), roles.get("subject_alias"))


def _bad_binding(
    problems: Problems, path: Path, line: int, index: int, raw: Any, err: Exception
) -> None:
    """Report a binding that is no sound record: invalid, or not decodable."""
    if isinstance(err, Invalid):
        reason, kind = str(err), err.kind
    else:
        reason, kind = _binding_problem(raw, err)
    problems.report(str(path), line, f"results.bindings[{index}]: {reason}", kind=kind)


def _binding_problem(raw: msgspec.Raw | bytes, err: Exception) -> tuple[str, str]:
    """Why a binding does not decode, and the kind of problem that is."""
    if isinstance(err, msgspec.ValidationError):
        return str(err), "malformed binding"  # a term that is not {"type", "value"}, say
    problem = json_problem(bytes(raw), err)
    return problem.reason, problem.kind


def load(paths: Sequence[Path], options: LoadOptions, problems: Problems) -> TemporalKG:
    """Load SPARQL JSON results files (one or several queries' worth) into one temporal KG."""
    paths = [Path(p) for p in paths]
    for path in paths:
        expect(path, "wikidata-sparql", "SPARQL JSON results", ("head", "results"))
    mapping = options.sparql or DEFAULT_MAPPING
    collected = _Collected(options.lang)
    for path in paths:
        _load_file(path, options, mapping, problems, collected)
    meta = {
        "source": {
            "format": "wikidata-sparql",
            "inputs": [str(p) for p in paths],
            "lang": options.lang,
        }
    }
    if mapping != DEFAULT_MAPPING:
        meta["source"]["mapping"] = {
            "variables": dict(mapping.variables),
            "constants": dict(mapping.constants),
        }
    return collected.build(problems, meta)
