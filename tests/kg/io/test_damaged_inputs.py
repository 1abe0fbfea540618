"""Damaged compressed files, records without end and folders given as files: one line each,
naming the file, the byte or line, and the reason; never a traceback, a hang or memory
without bound."""

from __future__ import annotations

import bz2
import gzip
import io
import json
import os
import random
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.inputs import (
    MAX_RECORD_ENV,
    CorruptInput,
    RecordTooLong,
    bounded_lines,
    parse_size,
    read_document,
)
from chronoprobe.jsonl import read_jsonl
from chronoprobe.kg.io.compressed import line_blocks
from chronoprobe.kg.io.options import LoadOptions, get_loader
from chronoprobe.kg.io.problems import Problems

HERE = Path(__file__).parents[2] / "fixtures"
DUMP = HERE / "wikidata" / "dump.json"
ROWS = HERE / "jsonl" / "presidents.jsonl"


def load(fmt: str, path: Path):
    return get_loader(fmt)([path], LoadOptions(), Problems())


@pytest.fixture
def gz(tmp_path) -> bytes:
    return gzip.compress(DUMP.read_bytes(), mtime=0)


@pytest.mark.parametrize("fmt", ["wikidata-json", "jsonl"])
def test_a_plain_file_named_gz_says_it_is_no_gzip(tmp_path, fmt):
    path = tmp_path / "facts.json.gz"
    path.write_bytes(ROWS.read_bytes())
    with pytest.raises(CorruptInput) as caught:
        load(fmt, path)
    assert str(caught.value) == (
        f"{path}: not gzip data: the name ends in .gz, but the file does not start with gzip's "
        "bytes (1f 8b); if it is not compressed, rename it"
    )


def test_a_truncated_gzip_names_the_byte_where_it_ends(tmp_path, gz):
    path = tmp_path / "dump.json.gz"
    path.write_bytes(gz[:600])
    with pytest.raises(CorruptInput) as caught:
        load("wikidata-json", path)
    assert (
        str(caught.value)
        == f"{path}: byte 600: the gzip data is cut short (the file ends inside it)"
    )


def test_gzip_with_trailing_bytes_names_where_the_gzip_data_ends(tmp_path, gz):
    path = tmp_path / "dump.json.gz"
    path.write_bytes(gz + b"junk at the end\n")
    with pytest.raises(CorruptInput) as caught:
        load("wikidata-json", path)
    assert str(caught.value) == (
        f"{path}: byte {len(gz):,}: 16 bytes after the end of the gzip data, which are no gzip"
    )


def test_two_gzip_members_are_one_file_not_trailing_bytes(tmp_path):
    lines = ROWS.read_bytes().splitlines(keepends=True)
    path = tmp_path / "rows.jsonl.gz"
    path.write_bytes(gzip.compress(b"".join(lines[:3])) + gzip.compress(b"".join(lines[3:])))
    assert load("jsonl", path).facts.num_rows == load("jsonl", ROWS).facts.num_rows


def test_damaged_gzip_data_is_located_to_a_range_of_bytes(tmp_path, gz):
    damaged = bytearray(gz)
    damaged[-6] ^= 0xFF  # the checksum
    path = tmp_path / "dump.json.gz"
    path.write_bytes(damaged)
    with pytest.raises(CorruptInput) as caught:
        load("wikidata-json", path)
    assert str(caught.value) == (
        f"{path}: bytes 0 to {len(gz):,}: damaged gzip data (Error -3 while decompressing data: "
        "incorrect data check)"
    )


def test_truncated_and_plain_bz2_files_are_one_line(tmp_path):
    packed = bz2.compress(DUMP.read_bytes())
    cut = tmp_path / "dump.json.bz2"
    cut.write_bytes(packed[:500])
    with pytest.raises(CorruptInput) as caught:  # was RuntimeError: std::exception
        load("wikidata-json", cut)
    assert (
        str(caught.value)
        == f"{cut}: byte 500: the bzip2 data is cut short (the file ends inside it)"
    )
    plain = tmp_path / "plain.json.bz2"
    plain.write_bytes(DUMP.read_bytes())
    with pytest.raises(CorruptInput, match=r"not bzip2 data: the name ends in \.bz2"):
        load("wikidata-json", plain)  # indexed_bzip2 read it as empty


@pytest.fixture
def small_limit(monkeypatch) -> int:
    monkeypatch.setenv(MAX_RECORD_ENV, "4K")
    return 4096


@pytest.mark.parametrize(
    ("fmt", "name"),
    [
        ("wikidata-json", "dump.json"),
        ("jsonl", "rows.jsonl"),
        ("wikidata-sparql", "results.json.gz"),  # a document whose size is not known
        ("cronquestions", "full.txt"),
    ],
)
def test_a_record_without_end_stops_at_the_limit(tmp_path, small_limit, fmt, name):
    path = tmp_path / name
    data = b"{" + b"x" * 10_000  # no newline, no end
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    with pytest.raises(RecordTooLong) as caught:
        load(fmt, path)
    assert str(caught.value) == (
        f"{path}:1: record longer than 4,096 bytes (no newline within them); if it is sound, "
        f"raise the limit with --max-record-bytes or {MAX_RECORD_ENV}"
    )


@pytest.mark.parametrize("fmt", ["wikidata-json", "jsonl", "wikidata-sparql", "cronquestions"])
def test_dev_zero_is_refused_at_once(fmt):
    with pytest.raises(ValueError, match=r"^/dev/zero:1: this looks like UTF-16 or UTF-32 text"):
        load(fmt, Path("/dev/zero"))  # grew 22 GB before


def test_readers_that_take_no_format_stop_dev_zero_at_the_limit(small_limit):
    from chronoprobe.datasets.released import records

    for read in (read_jsonl, lambda path: records(path, Problems())):
        with pytest.raises(RecordTooLong, match=r"^/dev/zero:1: record longer than 4,096 bytes"):
            list(read(Path("/dev/zero")))


def test_a_long_line_is_named_by_its_number_in_each_reader(tmp_path, small_limit):
    lines = ROWS.read_text().splitlines(keepends=True)
    long = json.dumps({"subject": "Q1", "relation": "P1", "object": "Q" + "1" * 5000}) + "\n"
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(lines[:2]) + long + "".join(lines[2:]))
    with pytest.raises(RecordTooLong, match=f"^{path}:3: record longer than 4,096 bytes"):
        load("jsonl", path)
    with pytest.raises(RecordTooLong, match=f"^{path}:3: record longer"):
        list(read_jsonl(path))
    packed = tmp_path / "rows.jsonl.gz"
    packed.write_bytes(gzip.compress(path.read_bytes()))
    with pytest.raises(RecordTooLong, match=f"^{packed}:3: record longer"):
        list(line_blocks(packed, block_size=64))  # a line longer than a block, counted again


def test_a_line_of_exactly_the_limit_is_read():
    with open(os.devnull, "rb") as stream:
        assert list(bounded_lines(stream, "x", 4)) == []
    text = b"abcd\nefgh"
    assert list(bounded_lines(io.BytesIO(text), "x", 4)) == [(1, b"abcd\n"), (2, b"efgh")]
    with pytest.raises(RecordTooLong, match=r"^x:2: "):
        list(bounded_lines(io.BytesIO(b"ab\nabcde\n"), "x", 4))


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("16777216", 16 << 20),
        ("64M", 64 << 20),
        ("1GiB", 1 << 30),
        ("4k", 4096),
        ("12 MB", 12 << 20),
    ],
)
def test_sizes_are_read_with_units(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["", "0", "-5", "12x", "1.5G", "9" * 20])
def test_sizes_that_are_no_sizes(text):
    with pytest.raises(ValueError, match="not a size in bytes"):
        parse_size(text)


@pytest.mark.parametrize("where", ["before the command", "after it"])
def test_the_command_line_option_raises_the_limit(tmp_path, monkeypatch, where):
    monkeypatch.delenv(MAX_RECORD_ENV, raising=False)  # restored after: the option sets it
    path = tmp_path / "rows.jsonl"
    path.write_text(ROWS.read_text().replace('"Q76"', '"Q' + "7" * 5000 + '"', 1))
    command = ["kg", "convert", str(path), "-f", "jsonl", "--no-cache", "-o"]

    def convert(limit: str, out: str):
        if where == "after it":
            return CliRunner().invoke(app, [*command, out, "--max-record-bytes", limit])
        return CliRunner().invoke(app, ["--max-record-bytes", limit, *command, out])

    refused = convert("4K", str(tmp_path / "a"))
    assert refused.exit_code == 2
    assert f"{path}:3: record longer than 4,096 bytes" in " ".join(refused.output.split())
    assert "Traceback" not in refused.output
    raised = convert("1M", str(tmp_path / "b"))
    assert raised.exit_code == 0, raised.output
    wrong = convert("4 parsecs", str(tmp_path / "c"))
    assert wrong.exit_code == 2
    assert "not a size in bytes: '4 parsecs'" in " ".join(wrong.output.split())
    assert not (tmp_path / "c").exists()


@pytest.mark.parametrize("fmt", ["wikidata-json", "jsonl", "wikidata-sparql"])
def test_a_folder_given_as_a_file_says_so(tmp_path, fmt):
    folder = tmp_path / "dump.json"
    folder.mkdir()
    with pytest.raises(ValueError, match=f"^{folder}: a folder, not a file$"):
        load(fmt, folder)


@pytest.mark.parametrize("fmt", ["wikidata-json", "jsonl", "wikidata-sparql", "cronquestions"])
def test_binary_input_is_refused_at_once_not_read_problem_by_problem(fmt, tmp_path):
    # random bytes have a newline every 256 bytes or so: each line was a problem, without end
    # (seeded: /dev/urandom began with a newline one time in 256, and named line 2)
    path = tmp_path / "random.bin"
    path.write_bytes(b"\xff" + random.Random(0).randbytes(1 << 20))
    with pytest.raises(ValueError, match=rf"^{path}:1: this looks like binary data or text "):
        load(fmt, path)


def test_text_in_another_encoding_is_refused_naming_its_lines(tmp_path):
    path = tmp_path / "rows.jsonl"
    lines = [line for line in ROWS.read_text().splitlines() if line.strip()]
    path.write_bytes("\n".join(lines).replace("Q", "Qé").encode("latin-1") + b"\n")
    latin = sum("Q" in line for line in lines)
    with pytest.raises(ValueError) as caught:
        load("jsonl", path)
    assert str(caught.value).startswith(
        f"{path}:1: this looks like binary data or text not in UTF-8 ({latin} of its first "
        f"{len(lines)} lines are no UTF-8), not chronoprobe JSONL rows"
    )
    path.write_bytes(ROWS.read_bytes().replace(b"Barack", "Baráck".encode("latin-1")))
    assert load("jsonl", path).facts.num_rows == 7  # a line or two: problems of those lines


def test_every_jsonl_reader_decompresses_and_names_damage(tmp_path):
    from chronoprobe.datasets.articles import iter_articles

    rows = [{"id": "a", "title": "Alice", "text": "Alice worked for Acme."}]
    packed = tmp_path / "articles.jsonl.gz"
    packed.write_bytes(gzip.compress(json.dumps(rows[0]).encode() + b"\n"))
    assert list(read_jsonl(packed)) == rows
    assert [a.title for a in iter_articles(packed)] == ["Alice"]
    packed.write_bytes(json.dumps(rows[0]).encode() + b"\n")  # plain text named .gz
    for read in (read_jsonl, iter_articles):  # the articles' reader raised BadGzipFile
        with pytest.raises(CorruptInput, match=r"not gzip data: the name ends in \.gz"):
            list(read(packed))


@pytest.mark.parametrize(
    ("encode", "reason"),
    [
        (lambda t: t.encode("utf-16"), "UTF-16 or UTF-32 text, or binary data"),
        (lambda t: t.encode("utf-16-le"), "UTF-16 or UTF-32 text, or binary data"),
        (lambda t: t.encode("utf-32"), "UTF-16 or UTF-32 text, or binary data"),
        (lambda t: t.replace("\n", "\r").encode(), "text whose lines end in a carriage return"),
    ],
)
def test_text_not_in_utf8_with_newlines_is_told_as_such(tmp_path, encode, reason):
    path = tmp_path / "rows.jsonl"
    path.write_bytes(encode(ROWS.read_text()))  # was: a bad record a line, or one line
    with pytest.raises(ValueError, match=f"^{re.escape(str(path))}:1: this looks like {reason}"):
        load("jsonl", path)
    path.write_bytes(ROWS.read_bytes().replace(b"\n", b"\r\n"))
    assert load("jsonl", path).facts.num_rows == 7  # CRLF is read as LF


class _Trickle(io.RawIOBase):
    """A stream that hands out three bytes a read, as a decompressor may before its end."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        chunk, self.data = self.data[:3], self.data[3:]
        return chunk


def test_a_document_of_unknown_size_is_read_to_its_end_within_the_limit(small_limit):
    assert read_document(_Trickle(b"0123456789"), "doc", sized=False) == b"0123456789"
    with pytest.raises(RecordTooLong, match=r"^doc:1: record longer than 4,096 bytes"):
        read_document(_Trickle(b"x" * 5000), "doc", sized=False)
