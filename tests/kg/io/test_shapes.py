"""Telling a file's format from its first bytes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chronoprobe.kg.io.shapes import HEAD, sniff, sniff_bytes

FIXTURES = Path(__file__).parents[2] / "fixtures"


@pytest.mark.parametrize(
    ("fixture", "fmt", "line", "document"),
    [
        ("wikidata/dump.json", "wikidata-json", 2, False),
        ("wikidata/entity_pretty.json", "wikidata-json", 1, True),
        ("wikidata/wbgetentities.json", "wikidata-json", 1, True),
        ("wikidata/entities_array.json", "wikidata-json", 1, True),
        ("sparql/heads_of_state.json", "wikidata-sparql", 1, True),
        ("sparql/presidents_custom_variables.json", "wikidata-sparql", 1, True),
        ("jsonl/presidents.jsonl", "jsonl", 1, False),
        ("cronquestions/kg/full.txt", "cronquestions", 1, False),
        ("cronquestions/kg/wd_id2entity_text.txt", "cronquestions", 1, False),
    ],
)
def test_each_fixture_is_told_by_content(fixture, fmt, line, document):
    shape = sniff(FIXTURES / fixture)
    assert (shape.format, shape.line, shape.document) == (fmt, line, document)


def test_a_document_longer_than_the_head_is_told_by_its_keys():
    entity = (FIXTURES / "wikidata/entity_pretty.json").read_bytes()
    shape = sniff_bytes(entity[:2000], complete=False)
    assert (shape.format, shape.document) == ("wikidata-json", True)
    big = (
        b"\n" * 3
        + b'{\n  "head" : {\n    "vars" : [ "a" ]\n  },\n  "results" : {\n    "bindings" : [ '
    )
    shape = sniff_bytes(big + b"{}, " * HEAD, complete=False)
    assert (shape.format, shape.line) == ("wikidata-sparql", 4)


def test_things_that_are_no_kg_source_are_named():
    simple = json.dumps([{"item": "http://www.wikidata.org/entity/Q76", "start": "2009"}])
    assert sniff_bytes(simple.encode(), True).what.startswith("the query service's simple JSON")
    assert sniff_bytes(b"\x80\x04\x95", True).what == "a Python pickle"
    assert sniff_bytes(b'{"question": "who?", "answers": []}\n{}', True).format is None
    assert sniff_bytes(b"\xef\xbb\xbf  \n", True) is None
    assert sniff_bytes(b"just some text\n", True) is None
    assert sniff_bytes(b'{"broken": \n{"x": 1}\n', True) is None
