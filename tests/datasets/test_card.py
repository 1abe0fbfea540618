"""Every probe set `build` and `import` write has a card (README.md) that says what it is,
where it comes from (with digests), how it was made and what it holds, and rows that Hugging
Face's JSON loader reads as they are (checked with pyarrow's JSON reader, which it uses)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.json as pj
import pytest
from typer.testing import CliRunner

from chronoprobe import __version__
from chronoprobe.cli.main import app
from chronoprobe.datasets.card import CardText, RowFile, write_card
from chronoprobe.jsonl import write_jsonl
from chronoprobe.kg.samples import load_sample
from chronoprobe.params import Params

FIXTURES = Path(__file__).parents[1] / "fixtures"
runner = CliRunner()


@pytest.fixture(autouse=True)
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    load_sample().save(tmp_path / "kg")


def invoke(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_as_huggingface_does(folder: Path) -> dict[str, int]:
    """Rows of each non-empty JSONL file through pyarrow's JSON reader, in small blocks, so
    that a field whose type changes between rows fails as it does for `load_dataset`."""
    options = pj.ReadOptions(block_size=1 << 12)
    return {
        p.name: pj.read_json(p, read_options=options).num_rows
        for p in sorted(folder.glob("*.jsonl"))
        if p.stat().st_size
    }


BUILDS = {
    "drift": ["--first", "2015", "--last", "2020", "--relations", "P6,P54"],
    "lamatk": ["--sample", "40", "--seed", "3"],
    "cronq": ["--per-group", "20"],
    "dates": ["--first", "2000", "--sample", "10"],
}
PAPERS = {
    "drift": "Findings of EACL 2023",
    "lamatk": "Findings of EMNLP 2022",
    "cronq": "ACL 2021",
    "dates": "ACL 2025",
}


@pytest.mark.parametrize("family", list(BUILDS))
def test_a_built_set_has_a_card_and_rows_huggingface_reads(tmp_path, family):
    invoke("build", family, "kg", *BUILDS[family], "-o", "out")
    card = (tmp_path / "out" / "README.md").read_text(encoding="utf-8")
    assert PAPERS[family] in card
    assert f"| `facts.parquet` | {(tmp_path / 'kg/facts.parquet').stat().st_size:,} |" in card
    assert digest(tmp_path / "kg" / "facts.parquet") in card
    assert "the real sample shipped with chronoprobe" in card
    assert "Licence of the source: Wikidata (CC0)" in card
    drawn = " --seed 0" if family in ("cronq", "dates") else ""  # the seed the draws used
    assert f"chronoprobe build {family} KG {' '.join(BUILDS[family])}{drawn} -o OUT" in card
    assert f"with chronoprobe {__version__}, where KG is the KG directory of Source" in card
    rows = read_as_huggingface_does(tmp_path / "out")
    for name, n in rows.items():
        assert f"| `{name}` | {n:,} |" in card
    assert "loads this folder" in card and 'load_dataset("FOLDER")' in card


def test_the_drift_card_counts_rows_per_period_split_and_relation(tmp_path):
    invoke("build", "drift", "kg", *BUILDS["drift"], "-o", "out")
    card = (tmp_path / "out" / "README.md").read_text(encoding="utf-8")
    rows = [json.loads(line) for line in Path("out/examples.jsonl").read_text().splitlines()]
    for field in ("period", "split", "relation"):
        values = {r[field] for r in rows if r[field] is not None}
        assert f"`examples.jsonl` by {field}:" in card
        for value in values:
            n = sum(r[field] == value for r in rows)
            assert f"| {value} | {n:,} |" in card
    periods = card[card.index("`examples.jsonl` by period:") :].split("\n\n")[1].splitlines()
    assert [line.split(" | ")[0] for line in periods[2:-1]] == [f"| {y}" for y in range(2015, 2021)]
    assert periods[-1] == f"| all | {len(rows):,} |"  # every row has a period: none left out


IMPORTS = {
    "templama": ([FIXTURES / "templama" / "train.jsonl"], "TACL 2022"),
    "dynamic-templama": ([FIXTURES / "dynamic-templama" / "quarters.jsonl"], "EACL 2023"),
    "ecbd": ([FIXTURES / "ecbd"], "NAACL 2022"),
    "ecbd-ekp": ([FIXTURES / "ecbd-ekp"], "ACL 2023"),
    "cronquestions": ([FIXTURES / "cronquestions" / "questions"], "ACL 2021"),
}


@pytest.mark.parametrize("fmt", list(IMPORTS))
def test_an_imported_set_has_a_card_naming_the_released_files(tmp_path, fmt):
    paths, paper = IMPORTS[fmt]
    invoke("import", fmt, *map(str, paths), "-o", "out")
    card = (tmp_path / "out" / "README.md").read_text(encoding="utf-8")
    assert f"Imported from the {fmt} release" in card and paper in card
    files = [f for p in paths for f in (sorted(p.rglob("*")) if p.is_dir() else [p])]
    for file in (f for f in files if f.is_file()):
        assert f"| `{file}` | {file.stat().st_size:,} | `{digest(file)}` |" in card
    assert "Licence of the source: " in card and "unknown" not in card.split("Licence")[1][:40]
    assert f"chronoprobe import {fmt} {' '.join(map(str, paths))} -o OUT" in card
    read_as_huggingface_does(tmp_path / "out")  # raises on a field of two types


def test_time_answers_are_text_so_every_answer_is_a_string(tmp_path):
    invoke("build", "cronq", "kg", "--per-group", "20", "-o", "out")
    rows = [json.loads(line) for line in Path("out/questions.jsonl").read_text().splitlines()]
    kinds = {r["answer_type"] for r in rows}
    assert kinds == {"entity", "time"}
    assert all(isinstance(a, str) for r in rows for a in r["answers"])
    years = [a for r in rows if r["answer_type"] == "time" for a in r["answers"]]
    assert years and all(a.lstrip("-").isdigit() for a in years)
    table = pj.read_json("out/questions.jsonl")
    assert str(table.schema.field("answers").type) == "list<item: string>"


def test_a_field_of_two_types_is_named_in_the_card_and_warned_of(tmp_path):
    out = tmp_path / "mixed"
    rows = [
        {"id": "a", "period": "2019", "answers": ["Q1"], "extra": {"year": 2019}},
        {"id": "b", "period": "2020", "answers": [2020], "extra": {"year": "2020"}},
        {"id": "c", "period": None, "answers": [], "extra": None},
    ]
    write_jsonl(out / "examples.jsonl", rows)
    assert RowFile(out / "examples.jsonl").mixed() == {
        "answers[]": ["number", "string"],
        "extra.year": ["number", "string"],
    }
    with pytest.raises(pa.ArrowInvalid, match="changed from string to number"):
        pj.read_json(out / "examples.jsonl")
    problems = write_card(out, CardText("Drift", "Rows."), "chronoprobe build drift kg")
    assert problems == [
        "examples.jsonl: answers[] holds number, string",
        "examples.jsonl: extra.year holds number, string",
    ]
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "cannot read as they are: examples.jsonl: answers[] holds number, string" in card
    assert "load_dataset" not in card
    assert "| 2019 | 1 |" in card and "| 2020 | 1 |" in card  # nulls are not counted


def test_whole_numbers_and_fractions_are_one_type(tmp_path):
    """pyarrow reads a column of 1 and 0.5 as floats: that is no mix."""
    path = tmp_path / "rows.jsonl"
    write_jsonl(path, [{"x": 1}, {"x": 0.5}, {"x": None}])
    assert RowFile(path).mixed() == {}
    assert pj.read_json(path).column("x").to_pylist() == [1.0, 0.5, None]


def test_the_card_is_the_same_wherever_the_kg_lies(tmp_path):
    """A card holds what the step's cache key holds, so the cached set (and a run's step) has
    the card its command writes: no paths, no dates."""
    import shutil

    shutil.copytree(tmp_path / "kg", tmp_path / "elsewhere" / "kg-copy")
    invoke("build", "cronq", "kg", "--per-group", "20", "-o", "here")
    invoke("build", "cronq", "elsewhere/kg-copy", "--per-group", "20", "-o", "there")
    card = (tmp_path / "here" / "README.md").read_bytes()
    assert card == (tmp_path / "there" / "README.md").read_bytes()
    assert b"elsewhere" not in card and b"chronoprobe build cronq KG" in card


def test_a_builder_card_says_what_its_help_says_and_cites_its_family():
    from chronoprobe.datasets.card import CardText, card_text
    from chronoprobe.steps import Variant

    def run(ctx, params, inputs):
        """Build team rosters per season.

        One row per team and season,
        its players as answers.

        Example: chronoprobe build teams kg/ -o teams/
        """

    assert card_text(Variant("teams", Params, run)) == CardText(
        "Team rosters per season", "One row per team and season, its players as answers."
    )
    lamatk = card_text(Variant("lamatk", Params, run))  # a family's builder cites its paper
    assert lamatk.paper.startswith("Zhao et al., Can Language Models Serve as Temporal")
    assert lamatk.family == "lamatk"
