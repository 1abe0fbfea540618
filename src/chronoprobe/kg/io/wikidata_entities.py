"""Wikidata entity JSON documents: one entity, an entities response, an array of entities.

The dump has an entity a line; entities are also published as documents of their own: one
entity as ``Special:EntityData`` or a tool saves it (pretty-printed or not), the
``{"entities": {...}}`` response of ``Special:EntityData`` and the ``wbgetentities`` API, and
JSON arrays of entities. Each entity of such a document is written on one line and parsed as a
dump line is (:func:`~chronoprobe.kg.io.wikidata_dump.parse_block`), so it gives the same facts
in every shape. :mod:`chronoprobe.kg.io.shapes` tells the shapes apart by content.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import msgspec

from chronoprobe.inputs import known_size, open_binary, read_document
from chronoprobe.jsonl import BOM, DECODE_ERRORS, JsonProblem, LineLocator, json_items, json_problem
from chronoprobe.kg.io.options import LoadOptions
from chronoprobe.kg.io.wikidata_dump import Parsed, parse_block

_DOCUMENT_BLOCK = 1024  # entities of a JSON document parsed at once
_DOCUMENT = msgspec.json.Decoder(dict[str, msgspec.Raw] | list[msgspec.Raw])


class _Missing(msgspec.Struct):
    missing: msgspec.Raw = msgspec.Raw()  # absent: empty


_MISSING = msgspec.json.Decoder(_Missing)
_EMPTY = parse_block(b"", 1)


def _entities_of(text: bytes) -> tuple[list[bytes], JsonProblem | None]:
    """The entities of a JSON document holding one entity, an entities response
    (``{"entities": {"Q42": {...}}}``, as wbgetentities and Special:EntityData give) or an array
    of entities, each as the text it has in the document; and, for a document that does not
    decode as a whole but splits into its entities (:func:`~chronoprobe.jsonl.json_items`),
    why it did not."""
    try:
        value = _DOCUMENT.decode(text)
    except DECODE_ERRORS as err:
        problem = json_problem(text, err)
        path = () if text.lstrip()[:1] == b"[" else ("entities",)
        entities = json_items(text, path)
        if entities is None:  # one entity, or a layout lost too: one problem
            raise
        return entities, problem
    if isinstance(value, dict) and "entities" in value:
        value = _DOCUMENT.decode(value["entities"])
    elif isinstance(value, dict):
        return [text.strip()], None
    return [bytes(raw) for raw in (value.values() if isinstance(value, dict) else value)], None


def document_blocks(path: Path, options: LoadOptions) -> Iterator[tuple[Parsed, int]]:
    """Parsed blocks of a JSON document of entities (see :func:`_entities_of`).

    Each entity is written on one line, as a dump has it, and parsed as dump lines are, so an
    entity gives the same facts in every shape; problems are located at the line where the
    entity starts in the document.
    """
    with open_binary(path) as stream:
        text = read_document(stream, path, known_size(path)).removeprefix(BOM)
    try:
        entities, broken = _entities_of(text)
    except DECODE_ERRORS as err:
        line, reason, kind = json_problem(text, err)
        yield _EMPTY._replace(problems=[(line, reason, kind)]), len(text)
        return
    locator = LineLocator(text)
    kept: list[tuple[int, bytes]] = []  # (line, entity)
    missing = 0
    for entity in entities:
        line = locator.line_of(entity)
        if _is_missing(entity):  # an id the API does not know: {"id": ..., "missing": ""}
            missing += 1
        else:
            kept.append((line, entity))
    reported = False
    for first in range(0, len(kept), _DOCUMENT_BLOCK):
        chunk = kept[first : first + _DOCUMENT_BLOCK]
        block = b"\n".join(_one_line(entity) for _, entity in chunk)
        parsed = parse_block(block, 1, options.lang, options.relations)
        located = [(chunk[n - 1][0], reason, kind) for n, reason, kind in parsed.problems]
        reported = reported or bool(located)
        yield parsed._replace(problems=located, lines=0), len(text)
    problems = [] if broken is None or reported else [tuple(broken)]  # a fault between entities
    skipped = Counter({"missing entity": missing} if missing else {})
    yield _EMPTY._replace(skipped=skipped, problems=problems), 0


def _one_line(entity: bytes) -> bytes:
    """An entity's JSON on one line; one that is no valid JSON is only joined onto one line,
    for :func:`parse_block` to refuse with the reason."""
    try:
        return msgspec.json.format(entity, indent=0)
    except DECODE_ERRORS:
        return entity.replace(b"\n", b" ").replace(b"\r", b" ")


def _is_missing(entity: bytes) -> bool:
    try:
        return len(_MISSING.decode(entity).missing) > 0
    except DECODE_ERRORS:
        return False  # not even an object: parsing it says what is wrong
