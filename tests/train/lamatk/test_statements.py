"""Statement files: a row the vocabulary cannot read is refused at its line."""

from __future__ import annotations

import pytest

from chronoprobe.jsonl import write_jsonl
from chronoprobe.train.lamatk.statements import load_statements

ROW = {
    "id": "lamatk-0000002",
    "text": "Viggo Falrock worked for Ellshaw Holdings from [MASK] to 2018.",
    "slot": "start",
    "target": "2016",
    "subject": "E62",
    "relation": "P108",
    "object": "E65",
    "start": "2016",
    "end": "2018",
    "answers": ["2016"],
}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"target": "", "answers": [""]}, "target '' of a start row is not a year"),
        ({"answers": ["2016", "soon"]}, "answer 'soon' of a start row is not a year"),
        ({"end": "2018-05"}, "end '2018-05' of a start row is not a year"),
        ({"target": "\u0662\u0660\u0661\u0666", "answers": ["\u0662\u0660\u0661\u0666"]}, "target"),
    ],
)
def test_a_time_row_without_years_is_refused_at_its_line(tmp_path, change, message):
    path = tmp_path / "statements.jsonl"
    write_jsonl(path, [ROW, {**ROW, **change}])
    with pytest.raises(ValueError, match=rf"statements\.jsonl:2: {message}"):
        load_statements(path)


def test_open_bounds_and_entity_rows_pass(tmp_path):
    path = tmp_path / "statements.jsonl"
    entity = {**ROW, "slot": "object", "target": "E65", "answers": ["E65"], "end": ""}
    write_jsonl(path, [ROW, entity])
    assert [row["slot"] for row in load_statements(path)] == ["start", "object"]
