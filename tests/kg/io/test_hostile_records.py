"""What the readers of records refuse beyond a bad value: a key given twice in one object (in
every JSONL reader: probe rows, JSON objects, KG rows, released rows and arrays), Latin-1
text in a released array (it had no file nor line), a pickle of protocol 0 or 1 (read as JSON
before), and millions of bad lines (each cost more than a sound one, and the dump loader held
a message for every one)."""

from __future__ import annotations

import gzip
import json
import pickle
import tracemalloc
from contextlib import ExitStack
from pathlib import Path

import pytest

from chronoprobe.datasets.released import records
from chronoprobe.jsonl import duplicate_key, numbered_lines, read_json_object
from chronoprobe.kg.io import jsonl as kg_jsonl
from chronoprobe.kg.io import wikidata_dump
from chronoprobe.kg.io.options import LoadOptions
from chronoprobe.kg.io.problems import BadRecord, Problems
from chronoprobe.kg.io.safe_pickle import looks_pickled
from chronoprobe.kg.io.shapes import sniff_bytes
from chronoprobe.kg.io.wikidata_load import _Gathered

FIXTURES = Path(__file__).parents[2] / "fixtures"
FACT = '{"subject": "Q1", "relation": "P1", "object": "Q2", "start": "2001"}'


@pytest.mark.parametrize(
    ("text", "twice"),
    [
        ('{"a": 1, "a": 2}', "a"),
        ('{"a": 1, "b": {"c": 1, "c": 1}}', "c"),  # equal values too: still two
        ('{"a": 1, "\\u0061": 2}', "a"),  # one spelled with an escape
        ('[{"a": 1}, {"a": 2}, {"b": 3, "b": 4}]', "b"),
        ('{"a" :1,"a"\t: 2}', "a"),
        ('{"x": [{"id": 1}, {"id": 2}]}', None),  # objects of one shape: no repeat
        ('{"s": "\\"a\\": 1", "a": 2}', None),  # a key's text inside a string is no key
        ('{"a": "a", "b": "a"}', None),
    ],
)
def test_a_key_given_twice_in_one_object_is_found(text, twice):
    assert duplicate_key(text.encode()) == twice


def test_every_jsonl_reader_refuses_a_key_given_twice_naming_file_and_line(tmp_path):
    """Accepted silently before: the last value counted, and which one is meant is open."""
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"id": "a"}\n{"id": "b", "period": "2019", "id": "c"}\n')
    twice = "the key 'id' is given twice in one object"
    with pytest.raises(ValueError, match=rf"^{rows}:2: {twice}"):
        list(numbered_lines(rows))
    document = tmp_path / "metrics.json"
    document.write_text('{"n": 3, "accuracy": 0.5, "n": 4}')
    with pytest.raises(ValueError, match=rf"^{document}: the key 'n' is given twice"):
        read_json_object(document)
    facts = tmp_path / "facts.jsonl"
    facts.write_text(FACT + "\n" + FACT[:-1] + ', "object": "Q3"}\n')
    problems = Problems()
    kg = kg_jsonl.load([facts], LoadOptions(), problems)
    assert len(kg) == 1 and problems.counts == {"a key given twice": 1}
    assert problems.examples["a key given twice"] == (
        f"{facts}:2: the key 'object' is given twice in one object (JSON leaves which one "
        "counts open)"
    )
    released = tmp_path / "train.json"
    released.write_text('{"query": "x", "date": 2017}\n{"query": "y", "date": 2017, "date": 0}\n')
    problems = Problems()
    assert [where for where, _ in records(released, problems)] == [f"{released}:1"]
    assert problems.counts == {"a key given twice": 1}
    array = tmp_path / "valid.json"
    array.write_text('[\n{"query": "x"},\n{"query": "y", "query": "z"}\n]\n')
    problems = Problems()
    assert [where for where, _ in records(array, problems)] == [f"{array}:2"]
    assert problems.examples["a key given twice"].startswith(f"{array}:3: the key 'query'")


def test_latin_1_in_a_released_array_is_a_problem_of_its_line(tmp_path):
    """`import cronquestions` on such a file said only "Invalid UTF-8 encoded string"."""
    array = tmp_path / "valid.json"
    array.write_bytes(b'[\n{"question": "ok"},\n{"question": "caf\xe9"},\n{"question": "x"}\n]\n')
    problems = Problems()
    assert [where for where, _ in records(array, problems)] == [f"{array}:2", f"{array}:4"]
    assert problems.examples["invalid UTF-8"] == f"{array}:3: invalid UTF-8: byte 0xe9"
    with pytest.raises(BadRecord, match=rf"^{array}:3: invalid UTF-8: byte 0xe9"):
        list(records(array, Problems(strict=True)))


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_a_pickle_of_every_protocol_is_told_from_json(protocol, tmp_path):
    """Protocols 0 and 1 do not start with 0x80: such a question file was read as JSON, one
    "invalid JSON" a line."""
    data = pickle.dumps([{"question": "Who?", "answers": {"Q1"}}], protocol=protocol)
    assert looks_pickled(data)
    assert sniff_bytes(data, complete=True).what == "a Python pickle"
    for text in (b'[{"a": 1}]', b"{}", b"Q1\tP1\tQ2\t2000\t2001\n", b" \n[1]"):
        assert not looks_pickled(text)


def test_a_protocol_0_question_pickle_imports_as_a_protocol_4_one_does(tmp_path):
    from chronoprobe.datasets.cronq_release import read_question_files

    source = FIXTURES / "cronquestions" / "questions" / "test.pickle"
    questions = pickle.loads(source.read_bytes())  # the fixture: ours, not untrusted
    read = {}
    for protocol in (0, 1, 4):
        path = tmp_path / f"p{protocol}" / "test.pickle"
        path.parent.mkdir()
        path.write_bytes(pickle.dumps(questions, protocol=protocol))
        read[protocol] = read_question_files([path], Problems(strict=True))
    assert read[0] == read[4] and read[1] == read[4] and read[4]["test"]


def test_millions_of_bad_lines_are_counted_at_less_than_a_sound_lines_cost(tmp_path):
    """A 12 KB gzip of three million ``{},`` lines: counted by kind, with the first described
    by file and line, the rest at the cost of a comparison each."""
    path = tmp_path / "rows.jsonl.gz"
    with gzip.open(path, "wb") as out:
        out.write((FACT + "\n").encode() + b"{},\n" * 3_000_000 + b"{}\n")
    problems = Problems()
    kg = kg_jsonl.load([path], LoadOptions(), problems)
    assert len(kg) == 1 and problems.total == 3_000_001
    assert problems.counts["invalid JSON"] == 3_000_000
    assert problems.examples["invalid JSON"].startswith(f"{path}:2: invalid JSON")
    assert problems.counts["a row needs 'subject' (fact), 'id' (entity) or kind 'relation'"] == 1


def test_a_dump_block_of_bad_lines_holds_counts_not_a_message_each():
    """The dump loader kept a (line, reason, kind) for every bad line: 590 MB for three
    million ``{},`` lines."""
    good = (FIXTURES / "wikidata" / "dump.json").read_text().splitlines()[1].rstrip(",")

    def parsed_with_peak(bad: int):
        block = (good + ",\n").encode() + b"{},\n" * bad + b'{"type": "item"\n' * 3
        tracemalloc.start()
        parsed = wikidata_dump.parse_block(block, 1, "en", None)
        peak = tracemalloc.get_traced_memory()[1] - len(block)
        tracemalloc.stop()
        return parsed, peak

    _, few = parsed_with_peak(20_000)
    parsed, many = parsed_with_peak(200_000)
    assert many < 1.5 * few  # ten times the bad lines: not more memory (before: 2.2 times)
    assert len(parsed.facts) > 0
    kinds = {kind for _, _, kind in parsed.problems}
    assert len(parsed.problems) == wikidata_dump.DESCRIBED_PER_BLOCK + 1  # and one new kind
    assert kinds == {"entity without id", "malformed JSON"}
    assert parsed.more_problems == {"entity without id": 200_000 - 1000, "malformed JSON": 2}
    problems = Problems()
    with ExitStack() as stack:
        _Gathered(stack, problems).add(Path("dump.json"), parsed, 0)
    assert problems.total == 200_003
    assert json.dumps(problems.summary())  # every kind has its first example


def test_strict_mode_still_stops_at_the_first_of_millions(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b"{},\n" * 100_000)
    with pytest.raises(BadRecord, match=rf"^{path}:1: invalid JSON"):
        kg_jsonl.load([path], LoadOptions(), Problems(strict=True))
