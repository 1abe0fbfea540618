"""The JSON readers every probe set, question file and statements file goes through: a bad
line or file is always a ValueError naming file and line, never a decoder's bare error."""

from __future__ import annotations

import msgspec
import pytest

from chronoprobe.jsonl import (
    json_items,
    json_problem,
    numbered_lines,
    read_json_object,
    read_jsonl,
)


class _Row(msgspec.Struct):
    id: str


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b'{"id": "a\xffb"}', "invalid UTF-8: byte 0xff"),
        (
            b'{"id": "a", "x": ' + b"[" * 5000 + b"]" * 5000 + b"}",
            "JSON nested too deeply (5001 levels)",
        ),
        (b'{"id": "a"', "invalid JSON: Input data was truncated"),
    ],
)
def test_a_bad_line_names_file_line_and_reason(tmp_path, line, reason):
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"id": "ok"}\n' + line + b"\n")
    for read in (
        lambda: list(numbered_lines(path, _Row, "not a row")),
        lambda: list(read_jsonl(path)),
    ):
        with pytest.raises(ValueError) as caught:
            read()
        assert str(caught.value) == f"{path}:2: {reason}"


@pytest.mark.parametrize(
    "raised",
    [
        msgspec.DecodeError("Invalid UTF-8 encoded string"),  # msgspec 0.20 and later
        UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"),  # msgspec 0.18-0.19
        msgspec.DecodeError("some future wording (byte 3)"),
        ValueError("an orjson-like message"),
    ],
)
def test_invalid_utf8_is_found_in_the_bytes_whatever_the_decoder_raised(raised):
    text = b'{"a": 1}\n{"b": "x\xfey"}'
    assert json_problem(text, raised) == (2, "invalid UTF-8: byte 0xfe", "invalid UTF-8")


def test_a_typed_line_that_does_not_fit_says_so(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"id": 5}\n')
    with pytest.raises(ValueError, match=r"rows\.jsonl:1: not a row: Expected `str`, got `int`"):
        list(numbered_lines(path, _Row, "not a row"))


def test_a_byte_order_mark_before_the_first_line_is_skipped(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"id": "a"}\n{"id": "b"}\n')
    assert [row.id for _, row in numbered_lines(path, _Row)] == ["a", "b"]
    single = tmp_path / "metrics.json"
    single.write_bytes(b'\xef\xbb\xbf{"acc": 0.5}')
    assert read_json_object(single) == {"acc": 0.5}


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (b'{\n"a": "\xff"}', "2: invalid UTF-8: byte 0xff"),
        (
            b'{\n\n"a": ' + b"[" * 5000 + b"]" * 5000 + b"}",
            "3: JSON nested too deeply (5001 levels)",
        ),
        (b'{"a": NaN,\n}', "2: invalid JSON: Expecting property name enclosed in double quotes"),
    ],
)
def test_a_bad_json_file_names_file_line_and_reason(tmp_path, text, reason):
    path = tmp_path / "metrics.json"
    path.write_bytes(text)
    with pytest.raises(ValueError) as caught:
        read_json_object(path)
    assert str(caught.value) == f"{path}:{reason}"


def test_json_items_split_a_document_the_decoder_refuses_into_its_records():
    text = (
        b'{"head": {"vars": ["a", "b"]}, "results": {"bindings": [ {"a": {"x": "]}"}},\n'
        b' {"b": "\\ud800"} , ' + b"[" * 5000 + b"]" * 5000 + b" ]}}"
    )
    assert json_items(text, ("head", "vars")) == [b'"a"', b'"b"']
    assert json_items(text, ("results", "bindings")) == [
        b'{"a": {"x": "]}"}}',
        b'{"b": "\\ud800"}',
        b"[" * 5000 + b"]" * 5000,
    ]
    assert json_items(text, ("results", "nothing")) is None
    assert json_items(b'{"entities": {"Q1": {"id": 1}, "Q2": 5}}', ("entities",)) == [
        b'{"id": 1}',
        b"5",
    ]
    assert json_items(b"[]") == []
    assert json_items(b'[1, {"a": [2, 3]}') is None  # never closed
