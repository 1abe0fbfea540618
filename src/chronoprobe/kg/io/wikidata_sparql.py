"""Wikidata SPARQL JSON results, as query.wikidata.org returns them (sparql-results+json).

One binding is one time-scoped statement: variables ``subject``, ``relation``, ``object``,
``start`` and ``end`` (either may be unbound), and optionally ``subjectLabel``, ``objectLabel``,
``relationLabel``, ``startPrecision``, ``endPrecision`` and ``statement``. ``docs/loaders.md``
gives the query.

Three things differ from the JSON dump and are undone here, so both loaders agree:

- the query service writes dates in XSD 1.1, where year ``0000`` is 1 BCE: ``-0058`` there
  (which it prints as ``-058``) is 59 BCE, which the project (like the dump) calls year -59;
- it does not carry the precision with the date (a year is written as its 1 January); without
  ``startPrecision``/``endPrecision`` the bound is taken as the day written, the most the file
  says;
- a statement with two values of one qualifier comes back as several rows (the query's cross
  product). Where ``statement`` is bound, its rows are merged into one fact spanning the earliest
  start and the latest end, as the dump loader reads several values of one qualifier.

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

import msgspec

from chronoprobe.kg.graph import KGBuilder, TemporalKG
from chronoprobe.kg.io.options import LoadOptions
from chronoprobe.kg.io.problems import Problems
from chronoprobe.kg.records import Entity, Fact, Relation
from chronoprobe.time import Precision, TimePoint

_ENTITY = re.compile(r"https?://www\.wikidata\.org/entity/([QPL][1-9]\d*)")
# wd:P39, p:P39, wdt:P39 and the other prop/... namespaces all name the same property.
_PROPERTY = re.compile(r"https?://www\.wikidata\.org/(?:entity|prop(?:/[a-z-]+)?)/(P[1-9]\d*)")
# The query service's "unknown value" (somevalue): a skolem IRI in place of an item.
_UNKNOWN_VALUE = re.compile(r"https?://www\.wikidata\.org/\.well-known/genid/\w+")
_XSD_DATETIME = re.compile(r"([+-]?)(\d{1,16})-(\d{2})-(\d{2})T")
_PROPERTY_ID = re.compile(r"P[1-9]\d*")
_REQUIRED = ("subject", "relation", "object")
_LITERALS = ("literal", "typed-literal")  # the second is SPARQL JSON's older spelling


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


class BadBinding(ValueError):
    """A binding that cannot be read; ``kind`` groups the problem counts."""

    def __init__(self, reason: str, kind: str) -> None:
        super().__init__(reason)
        self.kind = kind


class Skipped(Exception):
    """A well-formed binding that is not a time-scoped fact (counted, not a problem)."""


@dataclass(frozen=True)
class Statement:
    """What one binding says: the fact, the statement it belongs to and its labels."""

    fact: Fact
    statement: str | None
    subject_label: Term | None
    object_label: Term | None
    relation_label: Term | None


def _entity(binding: dict[str, Term], name: str) -> str:
    term = binding[name]
    match = _ENTITY.fullmatch(term.value) if term.type == "uri" else None
    if match is None:
        if name == "object" and _UNKNOWN_VALUE.fullmatch(term.value):
            raise Skipped("unknown value")
        raise BadBinding(
            f"{name} is not a Wikidata entity: {term.value!r}", f"{name} is not an entity"
        )
    return match.group(1)


def _relation(binding: dict[str, Term]) -> str:
    term = binding["relation"]
    if term.type == "uri":
        match = _PROPERTY.fullmatch(term.value)
        if match:
            return match.group(1)
    elif _PROPERTY_ID.fullmatch(term.value):
        return term.value  # a bare "P39", as BIND("P39" AS ?relation) gives
    raise BadBinding(
        f"relation is not a Wikidata property: {term.value!r}", "relation not a property"
    )


def _precision(binding: dict[str, Term], name: str) -> int:
    term = binding.get(f"{name}Precision")
    if term is None:
        return Precision.DAY
    try:
        return int(term.value)
    except ValueError:
        reason = f"{name}Precision is not an integer: {term.value!r}"
        raise BadBinding(reason, "malformed precision") from None


def _time(binding: dict[str, Term], name: str) -> TimePoint | None:
    """A bound, None when unbound, unknown (a blank node or genid IRI) or coarser than a year."""
    term = binding.get(name)
    if term is None or term.type not in _LITERALS:
        return None
    precision = _precision(binding, name)
    match = _XSD_DATETIME.match(term.value)
    if match is None:
        raise BadBinding(f"{name} is not an xsd:dateTime: {term.value!r}", "malformed time")
    sign, digits, month, day = match.groups()
    year = -int(digits) if sign == "-" else int(digits)
    if year <= 0:
        year -= 1  # XSD 1.1 counts 1 BCE as year 0; Wikidata's JSON (and we) call it -1
    wikidata = f"{'-' if year < 0 else '+'}{abs(year):04d}-{month}-{day}T00:00:00Z"
    try:
        return TimePoint.from_wikidata(wikidata, precision)
    except ValueError as err:
        raise BadBinding(f"{name} is not a valid date: {err}", "malformed time") from None


def check_interval(fact: Fact) -> None:
    """Raise :class:`BadBinding` for an interval that ends before it starts."""
    start, end = fact.start, fact.end
    if start is not None and end is not None and end.last_day() < start.first_day():
        raise BadBinding(f"end {end} before start {start}", "end before start")


def parse_binding(
    binding: dict[str, Term], relations: frozenset[str] | None = None
) -> Statement | None:
    """One binding as a statement; None when its relation is not among ``relations``.

    :class:`BadBinding` says what is wrong with a binding, :class:`Skipped` why a sound one is
    no time-scoped fact. The interval is checked by :func:`check_interval` once the rows of a
    statement are merged, since only the merged interval must be sound.
    """
    if "relation" not in binding:
        raise BadBinding("no relation", "missing relation")
    relation = _relation(binding)
    if relations is not None and relation not in relations:
        return None
    missing = [name for name in ("subject", "object") if name not in binding]
    if missing:
        raise BadBinding(f"no {', '.join(missing)}", f"missing {'/'.join(missing)}")
    subject, obj = _entity(binding, "subject"), _entity(binding, "object")
    if "start" not in binding and "end" not in binding:
        raise Skipped("no time")
    start, end = _time(binding, "start"), _time(binding, "end")
    if start is None and end is None:
        raise Skipped("imprecise or unknown time")
    statement = binding.get("statement")
    return Statement(
        Fact(subject, relation, obj, start, end),
        statement.value if statement is not None else None,
        binding.get("subjectLabel"),
        binding.get("objectLabel"),
        binding.get("relationLabel"),
    )


def merge(first: Fact, other: Fact) -> Fact:
    """Two rows of one statement as one fact: the earliest start and the latest end.

    Bounds compare by the days they cover, so an end "2009" outlasts an end "2009-06-01".
    """
    starts = [t for t in (first.start, other.start) if t is not None]
    ends = [t for t in (first.end, other.end) if t is not None]
    start = min(starts, key=TimePoint.first_day, default=None)
    return replace(first, start=start, end=max(ends, key=TimePoint.last_day, default=None))


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


class _LineLocator:
    """Line numbers of bindings, found by walking the document forward once.

    Bindings come in document order and only commas and whitespace separate them, so each one's
    raw text is found at or after the end of the previous one, and each newline is counted once.
    """

    def __init__(self, text: bytes) -> None:
        self.text, self.position, self.line = text, 0, 1

    def line_of(self, raw: msgspec.Raw) -> int:
        start = self.text.find(raw, self.position)
        self.line += self.text.count(b"\n", self.position, start)
        line = self.line
        self.position = start + len(raw)
        self.line += self.text.count(b"\n", start, self.position)
        return line


def _line_at_byte(text: bytes, message: str) -> int:
    """The line a decode error points at; a truncated document ends at its last line."""
    match = re.search(r"\(byte (\d+)\)", message)
    end = int(match.group(1)) if match else len(text.rstrip()) if "truncated" in message else 0
    return text.count(b"\n", 0, end) + 1


def _read(path: Path, problems: Problems) -> tuple[bytes, _Document] | None:
    text = path.read_bytes()
    try:
        document = _decode_document(text)
    except msgspec.ValidationError as err:
        reason = f"not SPARQL JSON results: {err}"
        problems.report(str(path), 1, reason, kind="not SPARQL JSON results")
        return None
    except msgspec.DecodeError as err:
        line = _line_at_byte(text, str(err))
        problems.report(str(path), line, f"invalid JSON: {err}", kind="invalid JSON")
        return None
    absent = [name for name in _REQUIRED if name not in document.head.vars]
    if absent:
        problems.report(
            str(path),
            1,
            f"head.vars lacks {', '.join(absent)}; see docs/loaders.md for the query",
            kind="not SPARQL JSON results",
        )
        return None
    return text, document


@dataclass
class _Pending:
    """A fact waiting for the other rows of its statement, and where it was first seen."""

    fact: Fact
    statement: str
    file: str
    line: int


def load(paths: Sequence[Path], options: LoadOptions, problems: Problems) -> TemporalKG:
    """Load SPARQL JSON results files (one or several queries' worth) into one temporal KG."""
    paths = [Path(p) for p in paths]
    facts: list[Fact | _Pending] = []
    by_statement: dict[str, _Pending] = {}
    skipped: Counter = Counter()
    entity_labels, relation_labels = _Labels(options.lang), _Labels(options.lang)
    for path in paths:
        read = _read(path, problems)
        if read is None:
            continue
        text, document = read
        locator = _LineLocator(text)
        for index, raw in enumerate(document.results.bindings):
            try:
                statement = parse_binding(_decode_binding(raw), options.relations)
                if statement is not None and statement.statement is None:
                    check_interval(statement.fact)
            except Skipped as why:
                skipped[str(why)] += 1
                continue
            except (BadBinding, msgspec.DecodeError) as err:
                kind = err.kind if isinstance(err, BadBinding) else "malformed binding"
                reason = f"results.bindings[{index}]: {err}"
                problems.report(str(path), locator.line_of(raw), reason, kind=kind)
                continue
            if statement is None:
                continue
            fact = statement.fact
            if statement.statement is None:
                facts.append(fact)
            elif (pending := by_statement.get(statement.statement)) is not None:
                pending.fact = merge(pending.fact, fact)
            else:
                line = locator.line_of(raw)
                pending = _Pending(fact, statement.statement, str(path), line)
                by_statement[statement.statement] = pending
                facts.append(pending)
            entity_labels.offer(fact.subject, statement.subject_label)
            entity_labels.offer(fact.object, statement.object_label)
            relation_labels.offer(fact.relation, statement.relation_label)
    builder = KGBuilder()
    for item in facts:
        if isinstance(item, _Pending):
            try:
                check_interval(item.fact)
            except BadBinding as err:
                reason = f"statement {item.statement}: {err}"
                problems.report(item.file, item.line, reason, kind=err.kind)
                continue
            item = item.fact
        builder.add_fact(item)
    for entity_id, label in entity_labels.items():
        builder.add_entity(Entity(entity_id, label))
    for relation_id, label in relation_labels.items():
        builder.add_relation(Relation(relation_id, label))
    meta = {
        "source": {
            "format": "wikidata-sparql",
            "inputs": [str(p) for p in paths],
            "lang": options.lang,
        },
        "skipped": dict(sorted(skipped.items())),
    }
    return builder.build(meta=meta)
