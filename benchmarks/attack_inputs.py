"""Attack the readers of chronoprobe's inputs, and print the rows docs/reliability.md shows.

    python benchmarks/attack_inputs.py             # every case, a table row per class
    python benchmarks/attack_inputs.py --verbose   # and each case's last output line
    python benchmarks/attack_inputs.py --only yaml # the classes whose name holds "yaml"

Each case writes hostile or broken inputs into a fresh folder (configs and ``--set`` values,
compressed dumps, endless records, files in other encodings, KG sources with odd ids and
years, released dataset rows, probe rows, model weights, paths that are folders, links or
devices) and runs the real command on them in a separate process, limited in time and memory.
It counts a traceback (or a crash by a signal), a hang (still running after the time limit),
a lost file (an input changed or gone afterwards), and whether the command refused in one line
(exit code 2) or completed (0) as the case expects: a wrong value accepted silently is a wrong
outcome.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import json
import os
import pickle
import resource
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from attack_folders import chosen_cases, print_table  # run as a script: benchmarks/ is on the path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
LIMIT_S = 120  # a case still running after this is a hang
MEMORY = 6 << 30  # address space per case: far above any case's need, far below the machine's
TRACEBACK = "Traceback (most recent call last)"


@dataclass
class Case:
    group: str
    name: str
    expect: str  # refused (exit 2), done (exit 0) or either
    build: Callable[[Path], list[str]]  # writes the inputs into a folder; the command's args
    env: dict[str, str] = field(default_factory=dict)


CASES: list[Case] = []


def case(group: str, expect: str, name: str, **env: str):
    def register(build: Callable[[Path], list[str]]) -> Callable[[Path], list[str]]:
        CASES.append(Case(group, name, expect, build, env))
        return build

    return register


def write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    path.write_bytes(data)
    return path


def convert(path: Path | str, fmt: str, *extra: str) -> list[str]:
    return ["kg", "convert", str(path), "-f", fmt, "--no-cache", "-o", "out", *extra]


def run(config: Path, *extra: str) -> list[str]:
    return ["run", str(config), "-o", "rundir", *extra]


# ----- YAML: configs, --set values, mapping files ------------------------------------------

YAML = "YAML: aliases, nesting and sizes"
BASE = (
    "name: attack\nseed: 1\nsteps:\n  - {id: kg, kind: kg, params: {source: synth, facts: 200}}\n"
)
HOSTILE_YAML = {
    "an alias inside its own list": "x: &a [*a]\n",
    "an alias inside its own mapping": "x: &a {b: *a}\n",
    "a merge key naming its own mapping": "x: &a {<<: *a, c: 1}\n",
    "an alias two levels down in itself": "x: &a [[1, [*a]]]\n",
    "an alias in its own key": "x: &a {? *a : 1}\n",
    "flow nesting 10,000 deep": "x: " + "[" * 10_000 + "]" * 10_000 + "\n",
    "mapping nesting 3,000 deep": "x: " + "{a: " * 3000 + "1" + "}" * 3000 + "\n",
    "block nesting 5,000 deep": "x:\n" + "- " * 5000 + "1\n",
    "nine levels of ten aliases (a billion laughs)": "".join(
        [f"l0: &l0 [{', '.join(['lol'] * 10)}]\n"]
        + [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]\n" for i in range(1, 10)]
    ),
    "one 1 MB string named 100,000 times": "s: &s '"
    + "x" * 1_000_000
    + "'\n"
    + "".join(
        f"t{i}: &t{i} [{', '.join([f'*{p}'] * 10)}]\n"
        for i, p in enumerate(["s", "t0", "t1", "t2", "t3"])
    ),
    "an unclosed flow of 100,000 brackets": "x: " + "[" * 100_000 + "\n",
    "a tab-indented mapping": "name: attack\n\tseed: 1\n",
    "a document of NUL bytes": "\x00" * 1000,
    "two documents": BASE + "---\n" + BASE,
    "an anchor redefined": "x: &a 1\ny: &a 2\nz: *a\n",
    "an undefined alias": "x: *nowhere\n",
}
for _name, _text in HOSTILE_YAML.items():

    @case(YAML, "refused", f"config: {_name}")
    def _(w: Path, text: str = _text) -> list[str]:
        return run(
            write(w / "exp.yaml", BASE + text if not text.startswith(("name", "\x00")) else text)
        )


for _name, _value in {
    "a value of 5,000 brackets": "[" * 5000,
    "a value nested 200 deep, closed": "[" * 200 + "]" * 200,
    "a recursive alias": "&a [*a]",
    "a billion laughs": "{a: &a [x,x,x,x,x,x,x,x,x,x], b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a], "
    "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b], d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c], "
    "e: [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]}",
    "a control character": "\x07\x1b[31m",
}.items():

    @case(YAML, "refused", f"--set seed={_name}")
    def _(w: Path, value: str = _value) -> list[str]:
        return run(write(w / "exp.yaml", BASE), "--set", f"seed={value}")


for _name, _text in {
    "a recursive alias": "variables: &a {x: *a}\n",
    "flow nesting 5,000 deep": "variables: " + "{a: " * 5000 + "1" + "}" * 5000 + "\n",
    "Latin-1 bytes": b"variables: {caf\xe9: subject}\n",
    "a folder": None,
}.items():

    @case(YAML, "refused", f"SPARQL mapping file: {_name}")
    def _(w: Path, text: str | bytes | None = _text) -> list[str]:
        mapping = w / "mapping.yaml"
        if text is None:
            mapping.mkdir()
        else:
            write(mapping, text)
        results = shutil.copy(FIXTURES / "sparql" / "statements.json", w / "results.json")
        return convert(results, "wikidata-sparql", "--mapping", str(mapping))


@case(YAML, "refused", "config: UTF-16 with its byte-order mark")
def _(w: Path) -> list[str]:
    return run(write(w / "exp.yaml", BASE.encode("utf-16")))


@case(YAML, "refused", "config: a folder named exp.yaml")
def _(w: Path) -> list[str]:
    (w / "exp.yaml").mkdir()
    return run(w / "exp.yaml")


@case(YAML, "refused", "config: /dev/zero")
def _(w: Path) -> list[str]:
    return run(Path("/dev/zero"))


# ----- compressed inputs --------------------------------------------------------------------

COMPRESSED = "compressed inputs: damaged, mislabelled, bombs"
DUMP = (FIXTURES / "wikidata" / "dump.json").read_bytes()
ROWS = (FIXTURES / "jsonl" / "presidents.jsonl").read_bytes()
GZ, BZ = gzip.compress(DUMP, mtime=0), bz2.compress(DUMP)


def _flip(data: bytes, at: int) -> bytes:
    damaged = bytearray(data)
    damaged[at] ^= 0xFF
    return bytes(damaged)


_compressed = {
    "plain text named .gz": ("dump.json.gz", DUMP, "refused"),
    "plain text named .bz2": ("dump.json.bz2", DUMP, "refused"),
    "gzip named .bz2": ("dump.json.bz2", GZ, "refused"),
    "bzip2 named .gz": ("dump.json.gz", BZ, "refused"),
    "an empty .gz": ("dump.json.gz", b"", "refused"),
    "gzip's two magic bytes only": ("dump.json.gz", GZ[:2], "refused"),
    "gzip cut after its header": ("dump.json.gz", GZ[:10], "refused"),
    "gzip cut in the middle": ("dump.json.gz", GZ[: len(GZ) // 2], "refused"),
    "gzip without its last byte": ("dump.json.gz", GZ[:-1], "refused"),
    "gzip with a damaged checksum": ("dump.json.gz", _flip(GZ, len(GZ) - 6), "refused"),
    "gzip with a damaged length": ("dump.json.gz", _flip(GZ, len(GZ) - 2), "refused"),
    "gzip with a flipped byte in its data": ("dump.json.gz", _flip(GZ, len(GZ) // 3), "refused"),
    "gzip followed by text": ("dump.json.gz", GZ + b"trailing text\n", "refused"),
    "gzip followed by zeros (as gzip itself, read whole)": ("dump.json.gz", GZ + bytes(64), "done"),
    "two gzip members": (
        "dump.json.gz",
        gzip.compress(DUMP[:20000]) + gzip.compress(DUMP[20000:]),
        "done",
    ),
    "gzip of gzip": ("dump.json.gz", gzip.compress(GZ), "refused"),
    "bzip2 cut in the middle": ("dump.json.bz2", BZ[: len(BZ) // 2], "refused"),
    "bzip2 header only": ("dump.json.bz2", BZ[:4], "refused"),
    "bzip2 with a flipped byte": ("dump.json.bz2", _flip(BZ, len(BZ) // 2), "refused"),
    "two bzip2 streams": (
        "dump.json.bz2",
        bz2.compress(DUMP[:20000]) + bz2.compress(DUMP[20000:]),
        "done",
    ),
    "a gzip bomb: 1 GB of zeros, no newline": ("dump.json.gz", None, "refused"),
    "a gzip bomb: 200 MB of newlines": ("dump.json.gz", "newlines", "refused"),
}
for _name, (_file, _data, _expect) in _compressed.items():

    @case(COMPRESSED, _expect, f"wikidata-json: {_name}")
    def _(w: Path, file: str = _file, data: bytes | str | None = _data) -> list[str]:
        path = w / file
        if data is None or data == "newlines":
            block = bytes(1 << 20) if data is None else b"\n" * (1 << 20)
            with gzip.open(path, "wb", compresslevel=9) as stream:
                for _ in range(1000 if data is None else 200):
                    stream.write(block)
        else:
            write(path, data)
        return convert(path, "wikidata-json")


for _name, _data, _expect in [
    ("jsonl: plain text named .gz", ROWS, "refused"),
    ("jsonl: gzip cut short", gzip.compress(ROWS)[:-9], "refused"),
    ("jsonl: gzip followed by text", gzip.compress(ROWS) + b"x\n", "refused"),
]:

    @case(COMPRESSED, _expect, _name)
    def _(w: Path, data: bytes = _data) -> list[str]:
        return convert(write(w / "rows.jsonl.gz", data), "jsonl")


# ----- endless and huge records -------------------------------------------------------------

ENDLESS = "endless and huge records"
for _fmt in ("wikidata-json", "jsonl", "wikidata-sparql", "cronquestions"):

    @case(ENDLESS, "refused", f"{_fmt}: /dev/zero")
    def _(w: Path, fmt: str = _fmt) -> list[str]:
        return convert("/dev/zero", fmt)

    @case(ENDLESS, "refused", f"{_fmt}: /dev/urandom")
    def _(w: Path, fmt: str = _fmt) -> list[str]:
        return convert("/dev/urandom", fmt)


@case(ENDLESS, "refused", "wikidata-json: a 50 MB line")
def _(w: Path) -> list[str]:
    line = (
        b'{"type": "item", "id": "Q1", "labels": {"en": {"value": "' + b"x" * (50 << 20) + b'"}}}\n'
    )
    return convert(write(w / "dump.json", line), "wikidata-json")


@case(ENDLESS, "done", "wikidata-json: a 20 MB line under --max-record-bytes 64M")
def _(w: Path) -> list[str]:
    entity = json.loads(DUMP.splitlines()[1].rstrip(b","))
    entity["descriptions"] = {"en": {"language": "en", "value": "x" * (20 << 20)}}
    return [
        "--max-record-bytes",
        "64M",
        *convert(write(w / "dump.json", json.dumps(entity) + "\n"), "wikidata-json"),
    ]


@case(ENDLESS, "refused", "jsonl: a 30 MB line among good ones")
def _(w: Path) -> list[str]:
    return convert(
        write(w / "rows.jsonl", ROWS + b'{"id": "' + b"Q" * (30 << 20) + b'"}\n' + ROWS), "jsonl"
    )


@case(ENDLESS, "refused", "cronquestions: a 20 MB line")
def _(w: Path) -> list[str]:
    return convert(
        write(w / "full.txt", b"Q1\tP1\tQ2\t2000\t2001\n" + b"Q" * (20 << 20) + b"\n"),
        "cronquestions",
    )


@case(ENDLESS, "refused", "import templama: /dev/zero")
def _(w: Path) -> list[str]:
    return ["import", "templama", "/dev/zero", "-o", "out", "--no-cache"]


@case(ENDLESS, "refused", "import templama: a 40 MB line")
def _(w: Path) -> list[str]:
    path = write(w / "train.json", b'{"query": "' + b"x" * (40 << 20) + b'"}\n')
    return ["import", "templama", str(path), "-o", "out", "--no-cache"]


@case(ENDLESS, "refused", "config: --max-record-bytes that is no size")
def _(w: Path) -> list[str]:
    return [
        "--max-record-bytes",
        "lots",
        *convert(FIXTURES / "jsonl" / "presidents.jsonl", "jsonl"),
    ]


@case(ENDLESS, "done", "jsonl: JSON nested 100,000 deep in one line")
def _(w: Path) -> list[str]:
    deep = b'{"subject": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n"
    return convert(write(w / "rows.jsonl", ROWS + deep), "jsonl")


# ----- encodings, byte-order marks, NUL bytes, line ends ------------------------------------

ENCODINGS = "encodings, byte-order marks, NUL bytes, line ends"
_TEXT = ROWS.decode()
for _name, _data, _expect in [
    ("UTF-16 with its byte-order mark", _TEXT.encode("utf-16"), "refused"),
    ("UTF-16-LE without a mark", _TEXT.encode("utf-16-le"), "refused"),
    ("UTF-32", _TEXT.encode("utf-32"), "refused"),
    ("a UTF-8 byte-order mark", b"\xef\xbb\xbf" + ROWS, "done"),
    (
        "a byte-order mark on every line",
        b"".join(b"\xef\xbb\xbf" + line for line in ROWS.splitlines(True)),
        "refused",
    ),
    ("CRLF line ends", ROWS.replace(b"\n", b"\r\n"), "done"),
    ("CR line ends only", ROWS.replace(b"\n", b"\r"), "refused"),
    ("NUL bytes between lines", ROWS.replace(b"\n", b"\n\x00\n"), "done"),
    (
        "Latin-1 labels",
        ROWS.replace(b"Barack Obama", "Barack Obamá".encode("latin-1")),
        "done",
    ),
    ("no newline at the end", ROWS.rstrip(b"\n"), "done"),
]:

    @case(ENCODINGS, _expect, f"jsonl: {_name}")
    def _(w: Path, data: bytes = _data) -> list[str]:
        return convert(write(w / "rows.jsonl", data), "jsonl")


for _name, _data, _expect in [
    ("UTF-16", DUMP.decode().encode("utf-16"), "refused"),
    (
        "NUL bytes in place of a line",
        DUMP.replace(DUMP.splitlines(True)[2], b"\x00" * 500 + b"\n"),
        "done",
    ),
    ("CRLF line ends", DUMP.replace(b"\n", b"\r\n"), "done"),
]:

    @case(ENCODINGS, _expect, f"wikidata-json: {_name}")
    def _(w: Path, data: bytes = _data) -> list[str]:
        return convert(write(w / "dump.json", data), "wikidata-json")


@case(ENCODINGS, "refused", "wikidata-sparql: UTF-16")
def _(w: Path) -> list[str]:
    text = (FIXTURES / "sparql" / "statements.json").read_text()
    return convert(write(w / "results.json", text.encode("utf-16")), "wikidata-sparql")


@case(ENCODINGS, "refused", "import templama: UTF-16")
def _(w: Path) -> list[str]:
    text = (FIXTURES / "templama" / "train.jsonl").read_text()
    return [
        "import",
        "templama",
        str(write(w / "train.json", text.encode("utf-16"))),
        "-o",
        "out",
        "--no-cache",
    ]


# ----- ids, years and values in KG sources --------------------------------------------------

VALUES = "ids, years and values in KG sources"
_GOOD_FACT = {"subject": "Q1", "relation": "P1", "object": "Q2", "start": "2001", "end": "2003"}
_BAD_FACTS = {
    "subject with U+0085": {"subject": "Q1\x85"},
    "subject with U+2028": {"subject": "Q1\u2028"},
    "object with U+3000": {"object": "Q\u30002"},
    "relation with a no-break space": {"relation": "P\xa01"},
    "subject with a zero-width space": {"subject": "Q\u200b1"},
    "object with a right-to-left override": {"object": "Q\u202e2"},
    "subject with a soft hyphen": {"subject": "Q\xad1"},
    "subject with a NUL": {"subject": "Q\x001"},
    "relation that is a number": {"relation": 1},
    "subject that is a list": {"subject": ["Q1"]},
    "neither start nor end": {"start": None, "end": None},
    "no time keys at all": {"start": None, "end": None, "__drop__": True},
    "year 0": {"start": "0000"},
    "year past 32 bits": {"start": "+9999999999"},
    "year of 20 digits": {"start": "+" + "9" * 20},
    "a start that is a number": {"start": 2001},
    "a start that is a float": {"start": 2001.5},
    "a huge number as a start": {"start": 10**30},
    "an end before the start": {"start": "2005", "end": "2001"},
    "Arabic-Indic digits": {"start": "\u0662\u0660\u0660\u0661"},
    "month 13": {"start": "2001-13"},
    "day 30 of February": {"start": "2001-02-30"},
    "an unknown key": {"qualifier": "P580"},
}
for _name, _change in _BAD_FACTS.items():

    @case(VALUES, "refused", f"jsonl --strict: {_name}")
    def _(w: Path, change: dict = _change) -> list[str]:
        fact = {**_GOOD_FACT, **change}
        if fact.pop("__drop__", False):
            fact.pop("start"), fact.pop("end")
        line = json.dumps(fact, ensure_ascii=False) + "\n"
        return convert(
            write(w / "rows.jsonl", ROWS + line.encode("utf-8", "surrogatepass")),
            "jsonl",
            "--strict",
        )


_SPARQL = (FIXTURES / "sparql" / "statements.json").read_text()
_FIRST_SUBJECT = json.loads(_SPARQL)["results"]["bindings"][0]["subject"]["value"]
for _name, _value in {
    "a property as a subject": "http://www.wikidata.org/entity/P39",
    "a lexeme as a subject": "http://www.wikidata.org/entity/L7",
    "an item IRI with a space": "http://www.wikidata.org/entity/Q 1",
    "a blank node as a subject": "_:b0",
}.items():

    @case(VALUES, "refused", f"wikidata-sparql --strict: {_name}")
    def _(w: Path, value: str = _value) -> list[str]:
        text = _SPARQL.replace(f'"{_FIRST_SUBJECT}"', json.dumps(value), 1)
        return convert(write(w / "results.json", text), "wikidata-sparql", "--strict")


for _name, _line in {
    "an id with U+2028": "Q1\u2028\tP1\tQ2\t2000\t2001\n",
    "an id with an ideographic space": "Q1\tP1\tQ\u30002\t2000\t2001\n",
    "a year of 30 digits": "Q1\tP1\tQ2\t" + "9" * 30 + "\t2001\n",
    "a year that is a float": "Q1\tP1\tQ2\t2000.5\t2001\n",
}.items():

    @case(VALUES, "refused", f"cronquestions --strict: {_name}")
    def _(w: Path, line: str = _line) -> list[str]:
        return convert(
            write(w / "full.txt", "Q3\tP1\tQ4\t1990\t1995\n" + line), "cronquestions", "--strict"
        )


# ----- released datasets' values ------------------------------------------------------------

IMPORTS = "released datasets' values (import)"
_TEMPLAMA = {
    "query": "Alice plays for _X_.",
    "answer": [{"wikidata_id": "Q1", "name": "Acme"}],
    "date": 2017,
    "id": "Q5_P54_2017",
    "relation": "P54",
}
_BAD_TEMPLAMA = {
    "date 0": {"date": 0},
    "date '0000'": {"date": "0000"},
    "date -0": {"date": "-0"},
    "date of 12 digits": {"date": "+999999999999"},
    "date 2017.0": {"date": 2017.0},
    "date true": {"date": True},
    "date null": {"date": None},
    "date a list": {"date": [2017]},
    "date 2017-Q5": {"date": "2017-Q5"},
    "answer id with a space": {"answer": [{"wikidata_id": "Q 1", "name": "A"}]},
    "answer id with U+2028": {"answer": [{"wikidata_id": "Q1\u2028", "name": "A"}]},
    "answer id empty": {"answer": [{"wikidata_id": "", "name": "A"}]},
    "answer id a number": {"answer": [{"wikidata_id": 1, "name": "A"}]},
    "nested answer lists": {"answer": [[{"wikidata_id": "Q1", "name": "A"}]]},
    "answers empty": {"answer": []},
    "answer name a list": {"answer": [{"wikidata_id": "Q1", "name": ["A"]}]},
    "answer name with a NUL": {"answer": [{"wikidata_id": "Q1", "name": "A\x00"}]},
    "relation null": {"relation": None},
    "relation with a space": {"relation": "P 54"},
    "id a number": {"id": 5},
    "id null": {"id": None},
    "id empty": {"id": ""},
    "query without _X_": {"query": "Alice plays."},
    "query with _X_ twice": {"query": "_X_ plays for _X_."},
    "query holding [MASK]": {"query": "[MASK] plays for _X_."},
    "query a number": {"query": 5},
    "most_recent_answer a number": {"most_recent_answer": 5},
}
for _name, _change in _BAD_TEMPLAMA.items():

    @case(IMPORTS, "refused", f"templama: {_name}")
    def _(w: Path, change: dict = _change) -> list[str]:
        good = {**_TEMPLAMA, "id": "Q6_P54_2017"}
        text = json.dumps(good) + "\n" + json.dumps({**_TEMPLAMA, **change}) + "\n"
        return ["import", "templama", str(write(w / "train.json", text)), "-o", "out", "--no-cache"]


@case(IMPORTS, "refused", "templama: a duplicate id")
def _(w: Path) -> list[str]:
    text = json.dumps(_TEMPLAMA) + "\n" + json.dumps(_TEMPLAMA) + "\n"
    return ["import", "templama", str(write(w / "train.json", text)), "-o", "out", "--no-cache"]


@case(IMPORTS, "done", "templama --skip-bad: every bad row above in one file")
def _(w: Path) -> list[str]:
    rows = [{**_TEMPLAMA, "id": "Q6_P54_2017"}] + [
        {**_TEMPLAMA, **c} for c in _BAD_TEMPLAMA.values()
    ]
    text = "".join(json.dumps(r) + "\n" for r in rows)
    return [
        "import",
        "templama",
        str(write(w / "train.json", text)),
        "--skip-bad",
        "-o",
        "out",
        "--no-cache",
    ]


for _name, _date in {
    "a quarter of year 0": "0000-Q1",
    "a quarter past 32 bits": "+3000000000-Q2",
    "month 13": "2019-13",
    "a quarter Q0": "2019-Q0",
}.items():

    @case(IMPORTS, "refused", f"dynamic-templama: {_name}")
    def _(w: Path, date: str = _date) -> list[str]:
        rows = [{**_TEMPLAMA, "date": "2019-Q1", "id": "a_P54_1"}, {**_TEMPLAMA, "date": date}]
        text = "".join(json.dumps(r) + "\n" for r in rows)
        return [
            "import",
            "dynamic-templama",
            str(write(w / "q.json", text)),
            "-o",
            "out",
            "--no-cache",
        ]


_ECBD = json.loads((FIXTURES / "ecbd" / "2019" / "np_spans_dev.json").read_text().splitlines()[0])
for _name, _change in {
    "year 'abc'": {"year": "abc"},
    "year 2019.5": {"year": 2019.5},
    "year 0": {"year": 0},
    "year null": {"year": None},
    "year of 11 digits": {"year": "99999999999"},
    "ex_id a number": {"ex_id": 7},
    "ex_id with a newline": {"ex_id": "a\nb"},
    "entity_span_str a list": {"entity_span_str": ["GPT-2"]},
    "entity_span_loc of floats": {"entity_span_loc": [1.0, 2.0]},
    "entity_span_loc past the sentence": {"entity_span_loc": [1, 99]},
    "span_type a number": {"span_type": 3},
    "answer_str without its markers": {"answer_str": "1.5 billion parameters"},
    "masked_sentence with two gaps": {"masked_sentence": "<extra_id_0> and <extra_id_0>"},
    "definition a number": {"definition": 5},
}.items():

    @case(IMPORTS, "refused", f"ecbd: {_name}")
    def _(w: Path, change: dict = _change) -> list[str]:
        text = json.dumps(_ECBD) + "\n" + json.dumps({**_ECBD, **change}) + "\n"
        return [
            "import",
            "ecbd",
            str(write(w / "np_spans_dev.json", text)),
            "-o",
            "out",
            "--no-cache",
        ]


@case(IMPORTS, "refused", "ecbd-ekp: one record given twice")
def _(w: Path) -> list[str]:
    first = (FIXTURES / "ecbd-ekp" / "all_ent_2020_2021_np_easy.json").read_text().splitlines()[0]
    return [
        "import",
        "ecbd-ekp",
        str(write(w / "ekp_np.json", first + "\n" + first + "\n")),
        "-o",
        "out",
        "--no-cache",
    ]


# ----- probe rows and model weights ---------------------------------------------------------

PROBES = "probe rows and model weights"
_ROW = {"id": "a", "period": "2019", "query": "Alice worked for [MASK].", "answer_labels": ["Acme"]}


def probe(rows: Path, model: Path | str, *extra: str) -> list[str]:
    command = ["probe", "single-token", str(rows), "-m", str(model), "-o", "out", "--no-cache"]
    return [*command, "--device", "cpu", *extra]


_BAD_ROWS = {
    "an empty file": "",
    "blank lines only": "\n\n\n",
    "no answer labels": {"answer_labels": []},
    "a blank answer label": {"answer_labels": [" "]},
    "a period 'abc'": {"period": "abc"},
    "a period '0000'": {"period": "0000"},
    "a query with two masks": {"query": "[MASK] worked for [MASK]."},
    "a query without a mask": {"query": "Alice worked."},
    "an id that is a number": {"id": 5},
    "labels that are numbers": {"answer_labels": [1, 2]},
    "a duplicate id": "dup",
    "UTF-16": "utf16",
    "a 30 MB line": "long",
}
for _name, _change in _BAD_ROWS.items():

    @case(PROBES, "refused", f"rows: {_name}")
    def _(w: Path, change: dict | str = _change) -> list[str]:
        path = w / "examples.jsonl"
        good = json.dumps({**_ROW, "id": "first"}) + "\n"
        if isinstance(change, dict):
            write(path, good + json.dumps({**_ROW, **change}) + "\n")
        elif change == "dup":
            write(path, good + good)
        elif change == "utf16":
            write(path, good.encode("utf-16"))
        elif change == "long":
            write(path, good + '{"id": "' + "x" * (30 << 20) + '"}\n')
        else:
            write(path, change)
        return probe(path, MODEL)


def _model_copy(w: Path) -> Path:
    return Path(shutil.copytree(MODEL, w / "model"))


@case(PROBES, "refused", "weights: safetensors cut in half")
def _(w: Path) -> list[str]:
    model = _model_copy(w)
    weights = model / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    return probe(write(w / "rows.jsonl", json.dumps(_ROW) + "\n"), model)


@case(PROBES, "refused", "weights: safetensors of zero bytes")
def _(w: Path) -> list[str]:
    model = _model_copy(w)
    (model / "model.safetensors").write_bytes(b"")
    return probe(write(w / "rows.jsonl", json.dumps(_ROW) + "\n"), model)


@case(PROBES, "refused", "weights: a safetensors header claiming 2**60 bytes")
def _(w: Path) -> list[str]:
    model = _model_copy(w)
    data = (model / "model.safetensors").read_bytes()
    (model / "model.safetensors").write_bytes((1 << 60).to_bytes(8, "little") + data[8:])
    return probe(write(w / "rows.jsonl", json.dumps(_ROW) + "\n"), model)


for _protocol in (0, 2, 5):

    @case(
        PROBES,
        "refused",
        f"weights: pytorch_model.bin a code-running pickle (protocol {_protocol})",
    )
    def _(w: Path, protocol: int = _protocol) -> list[str]:
        model = _model_copy(w)
        (model / "model.safetensors").unlink()
        marker = w / "payload-ran"
        payload = {"w": _Payload(str(marker))}
        (model / "pytorch_model.bin").write_bytes(pickle.dumps(payload, protocol=protocol))
        return probe(write(w / "rows.jsonl", json.dumps(_ROW) + "\n"), model)


@case(PROBES, "refused", "weights: a config.json that is no JSON")
def _(w: Path) -> list[str]:
    model = _model_copy(w)
    (model / "config.json").write_text("{")
    return probe(write(w / "rows.jsonl", json.dumps(_ROW) + "\n"), model)


@case(PROBES, "refused", "weights: a masked model asked as causal")
def _(w: Path) -> list[str]:
    return probe(write(w / "rows.jsonl", json.dumps(_ROW) + "\n"), MODEL, "--family", "causal")


class _Payload:
    """Unpickled, this would create a file: the marker a case checks is absent afterwards."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


# ----- paths: folders, links, devices -------------------------------------------------------

PATHS = "paths: folders, links, devices as inputs"
for _fmt, _file in [
    ("wikidata-json", "dump.json"),
    ("jsonl", "rows.jsonl"),
    ("wikidata-sparql", "results.json"),
]:

    @case(PATHS, "refused", f"{_fmt}: a folder named {_file}")
    def _(w: Path, fmt: str = _fmt, file: str = _file) -> list[str]:
        (w / file).mkdir()
        return convert(w / file, fmt)

    @case(PATHS, "refused", f"{_fmt}: a dangling symbolic link")
    def _(w: Path, fmt: str = _fmt, file: str = _file) -> list[str]:
        (w / file).symlink_to(w / "nowhere")
        return convert(w / file, fmt)

    @case(PATHS, "refused", f"{_fmt}: a symbolic link to itself")
    def _(w: Path, fmt: str = _fmt, file: str = _file) -> list[str]:
        (w / file).symlink_to(w / file)
        return convert(w / file, fmt)

    @case(PATHS, "refused", f"{_fmt}: /dev/null")
    def _(w: Path, fmt: str = _fmt) -> list[str]:
        return convert("/dev/null", fmt)


@case(PATHS, "done", "jsonl: a symbolic link to the rows")
def _(w: Path) -> list[str]:
    (w / "link.jsonl").symlink_to(FIXTURES / "jsonl" / "presidents.jsonl")
    return convert(w / "link.jsonl", "jsonl")


@case(PATHS, "refused", "probe: the rows file a folder")
def _(w: Path) -> list[str]:
    (w / "rows.jsonl").mkdir()
    return probe(w / "rows.jsonl", MODEL)


@case(PATHS, "refused", "import templama: a folder with no release files")
def _(w: Path) -> list[str]:
    write(w / "release" / "notes.txt", "nothing here\n")
    return ["import", "templama", str(w / "release"), "-o", "out", "--no-cache"]


@case(PATHS, "refused", "import ecbd: /dev/null")
def _(w: Path) -> list[str]:
    return ["import", "ecbd", "/dev/null", "-o", "out", "--no-cache"]


# ----- readers of KG directories ------------------------------------------------------------

KG_DIRS = "damaged KG directories (every reader)"
_KG_FACTS = [
    ("Q1", "P39", "Q11696", (1993, 1, 20), (2001, 1, 20)),
    ("Q2", "P39", "Q11696", (2001, 1, 20), (2009, 1, 20)),
    ("Q3", "P54", "Q30", (2002,), (2003, 5)),
]


def _kg(w: Path) -> Path:
    from chronoprobe.kg.graph import TemporalKG
    from chronoprobe.kg.records import Entity, Fact
    from chronoprobe.time import TimePoint

    facts = [Fact(s, r, o, TimePoint(*a), TimePoint(*b)) for s, r, o, a, b in _KG_FACTS]
    return TemporalKG.from_records(facts, [Entity("Q1", "Alice")]).save(w / "kg")


def _damage_facts(kg: Path, column: str, value, kind=None) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(kg / "facts.parquet")
    values = table.column(column).to_pylist()
    values[0] = value
    array = pa.array(values, type=kind or table.schema.field(column).type)
    table = table.set_column(table.column_names.index(column), pa.field(column, array.type), array)
    pq.write_table(table, kg / "facts.parquet")


_MANIFESTS = {
    "manifest nested 100,000 deep": '{"format": ' + "[" * 100_000 + "]" * 100_000 + "}",
    "manifest meta a list": '{"format": "chronoprobe-kg", "version": 1, "meta": [1]}',
    "manifest name a list": '{"format": "chronoprobe-kg", "version": 1, "name": ["x"]}',
    "manifest counts as text": '{"format": "chronoprobe-kg", "counts": {"facts": "many"}}',
    "manifest version true": '{"format": "chronoprobe-kg", "version": true}',
    "manifest meta.source a list": '{"format": "chronoprobe-kg", "meta": {"source": [1]}}',
}
_FACT_VALUES = {
    "month 13": ("start_month", 13, None),
    "a negative month": ("start_month", -1, None),
    "day 32": ("start_day", 32, None),
    "February 30": ("start_month", 2, None),  # and day 30, set below
    "precision 99": ("start_precision", 99, None),
    "year 0": ("start_year", 0, None),
    "a year without a precision": ("end_precision", None, None),
    "an end before its start": ("end_year", 1900, None),
    "an id with a space": ("subject", "Q 1", None),
    "a year past 32 bits (int64)": ("start_year", 3_000_000_000, "int64"),
    "months as text": ("start_month", "jan", "string"),
}
_KG_READERS = {
    "kg info": ["kg", "info", "kg"],
    "build lamatk": ["build", "lamatk", "kg", "-o", "out", "--no-cache"],
    "build cronq": ["build", "cronq", "kg", "-o", "out", "--no-cache"],
}
for _reader, _args in _KG_READERS.items():
    for _name, _text in _MANIFESTS.items():
        if _name == "manifest meta.source a list" and _reader != "build lamatk":
            continue  # read by the data card only

        @case(KG_DIRS, "done" if "source" in _name else "refused", f"{_reader}: {_name}")
        def _(w: Path, text: str = _text, args: list = _args) -> list[str]:
            write(_kg(w) / "manifest.json", text)
            return args

    for _name, (_column, _value, _type) in _FACT_VALUES.items():

        @case(KG_DIRS, "refused", f"{_reader}: facts with {_name}")
        def _(w: Path, column=_column, value=_value, kind=_type, name=_name, args=_args):
            import pyarrow as pa

            kg = _kg(w)
            _damage_facts(kg, column, value, getattr(pa, kind)() if kind else None)
            if name == "February 30":
                _damage_facts(kg, "start_day", 30)
            return args


# ----- records: keys twice, old pickles, bombs of bad lines, workers ------------------------

RECORDS = "keys given twice, old pickles, bad-line bombs, --processes"
_FACT_LINE = '{"subject": "Q1", "relation": "P1", "object": "Q2", "start": "2001"}'


@case(RECORDS, "refused", "jsonl --strict: a key given twice in a fact")
def _(w: Path) -> list[str]:
    line = _FACT_LINE[:-1] + ', "object": "Q3"}\n'
    return convert(write(w / "rows.jsonl", ROWS + line.encode()), "jsonl", "--strict")


@case(RECORDS, "refused", "probe rows: a key given twice")
def _(w: Path) -> list[str]:
    row = json.dumps(_ROW)[:-1] + ', "query": "Bob worked for [MASK]."}\n'
    return probe(write(w / "examples.jsonl", row), MODEL)


@case(RECORDS, "refused", "import templama: a key given twice")
def _(w: Path) -> list[str]:
    text = json.dumps(_TEMPLAMA)[:-1] + ', "date": 0}\n'
    return ["import", "templama", str(write(w / "train.json", text)), "-o", "out", "--no-cache"]


@case(RECORDS, "refused", "import cronquestions: Latin-1 in a JSON array")
def _(w: Path) -> list[str]:
    text = (FIXTURES / "cronquestions" / "questions" / "valid.json").read_bytes()
    at = text.index(b"paraphrases") + 20
    path = write(w / "valid.json", text[:at] + b"\xe9" + text[at:])
    return ["import", "cronquestions", str(path), "-o", "out", "--no-cache"]


for _protocol in (0, 1):

    @case(RECORDS, "done", f"import cronquestions: a pickle of protocol {_protocol}")
    def _(w: Path, protocol: int = _protocol) -> list[str]:
        data = pickle.loads((FIXTURES / "cronquestions" / "questions" / "test.pickle").read_bytes())
        path = write(w / "test.pickle", pickle.dumps(data, protocol=protocol))
        return ["import", "cronquestions", str(path), "-o", "out", "--no-cache"]


for _fmt, _file in (("jsonl", "rows.jsonl.gz"), ("wikidata-json", "dump.json.gz")):

    @case(RECORDS, "refused", f"{_fmt}: a 12 KB gzip of three million '{{}},' lines")
    def _(w: Path, fmt: str = _fmt, file: str = _file) -> list[str]:
        with gzip.open(w / file, "wb", compresslevel=9) as stream:
            stream.write(b"[\n" if fmt == "wikidata-json" else b"")
            stream.write(b"{},\n" * 3_000_000)
        return convert(w / file, fmt)


@case(RECORDS, "done", "wikidata-json --processes 5000 on a file of 16 lines")
def _(w: Path) -> list[str]:
    return convert(FIXTURES / "wikidata" / "dump.json", "wikidata-json", "--processes", "5000")


@case(RECORDS, "refused", "probe generate --responses: an answer of 10 MB")
def _(w: Path) -> list[str]:
    rows = write(w / "examples.jsonl", json.dumps({**_ROW, "id": "a"}) + "\n")
    answers = json.dumps({"id": "a", "answer": "x" * (10 << 20)}) + "\n"
    path = write(w / "answers.jsonl", answers)
    return ["probe", "generate", str(rows), "--responses", str(path), "-o", "out", "--no-cache"]


@case(RECORDS, "refused", "export lm-eval --name of 300 characters")
def _(w: Path) -> list[str]:
    rows = write(w / "examples.jsonl", json.dumps({**_ROW, "id": "a"}) + "\n")
    return ["export", "lm-eval", str(rows), "--name", "n" * 300, "-o", "out", "--no-cache"]


# ----- running them --------------------------------------------------------------------------

MODEL = Path()  # a tiny masked model, saved once per run of this script


def _tiny_model(folder: Path) -> Path:
    from chronoprobe.models.tiny import random_model
    from chronoprobe.models.tokenizer import train_tokenizer

    tokenizer = train_tokenizer(
        [f"In {y}, Alice worked for Acme." for y in range(1990, 2020)], "roberta"
    )
    random_model("roberta", tokenizer, seed=1).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def _digests(folder: Path) -> dict[str, str | None]:
    """Every file under ``folder`` (links not followed) with its digest; None for a link or a
    file this process may not read."""
    found = {}
    for path in folder.rglob("*"):
        if path.is_symlink() or not path.is_file():
            found[str(path)] = None
            continue
        try:
            found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            found[str(path)] = None
    return found


def _limits() -> None:
    os.nice(10)
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def attack(item: Case, scratch: Path) -> dict:
    folder = Path(tempfile.mkdtemp(dir=scratch))
    args = item.build(folder)
    before = _digests(folder)
    env = {**os.environ, "CHRONOPROBE_CACHE": str(scratch / "cache"), **item.env}
    command = [sys.executable, "-m", "chronoprobe", *args]
    outcome = {"group": item.group, "name": item.name, "hang": False, "crash": False}
    try:
        done = subprocess.run(
            command,
            cwd=folder,
            env=env,
            capture_output=True,
            timeout=LIMIT_S,
            preexec_fn=_limits,
            check=False,
        )
        text = (done.stdout + done.stderr).decode(errors="replace")
        code = done.returncode
    except subprocess.TimeoutExpired:
        outcome["hang"], text, code = True, "", None
    after = _digests(folder)
    outcome["lost"] = [path for path, digest in before.items() if after.get(path, "gone") != digest]
    outcome["tracebacks"] = TRACEBACK in text or (code is not None and code not in (0, 1, 2))
    outcome["refused"] = code == 2
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    outcome["last"] = next(
        (line for line in reversed(lines) if "error" in line), lines[-1] if lines else ""
    )
    wanted = {"refused": {2}, "done": {0}, "either": {0, 2}}[item.expect]
    outcome["wrong"] = (
        None if code in wanted or outcome["hang"] else f"expected {item.expect}, exit code {code}"
    )
    if (folder / "payload-ran").exists():
        outcome["wrong"] = "a pickle's payload ran"
    return outcome


def main() -> None:
    global MODEL
    args, chosen = chosen_cases(__doc__, CASES)
    with tempfile.TemporaryDirectory(prefix="chronoprobe-attack-") as scratch_name:
        scratch = Path(scratch_name)
        MODEL = _tiny_model(scratch / "tiny-roberta")
        with ThreadPoolExecutor(args.jobs) as pool:
            outcomes = list(pool.map(lambda c: attack(c, scratch), chosen))
    for o in outcomes:
        bad = o["tracebacks"] or o["hang"] or o["lost"] or o["wrong"]
        if args.verbose or bad:
            print(
                f"[{'FAIL' if bad else 'ok'}] {o['group']}: {o['name']}\n    {o['last'][:240]}",
                file=sys.stderr,
            )
            for problem in filter(None, ["hang" if o["hang"] else None, o["wrong"], *o["lost"]]):
                print(f"    {problem}", file=sys.stderr)
    print_table(outcomes, "wrong")


if __name__ == "__main__":
    main()
