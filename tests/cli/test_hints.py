"""Every command the tool prints for a user to run next runs as printed.

Each test makes the tool print its hint on tiny inputs, takes the command out of the backticks
it is printed in, runs it, and checks that it succeeds (and, where the hint is a fix, that the
first command then works). Paths are relative to a temporary working folder, as a user's are.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.models.tiny import random_model
from chronoprobe.models.tokenizer import train_tokenizer

from .test_build_cli import save_kg

runner = CliRunner()


@pytest.fixture(autouse=True)
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CHRONOPROBE_CACHE", str(tmp_path / "cache"))
    save_kg(tmp_path / "kg")


def invoke(*args: str, code: int = 0) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == code, result.output
    return " ".join(result.output.split())


def printed_command(output: str) -> list[str]:
    """The arguments of the one `chronoprobe ...` command in ``output``."""
    found = re.findall(r"`(chronoprobe [^`]+)`", output)
    assert len(found) == 1, output
    return shlex.split(found[0])[1:]


TRAIN = ("--preset", "tiny", "--epochs", "1", "--batch-size", "16", "--device", "cpu")


@pytest.mark.parametrize(
    ("given", "statements"),
    [
        (("lamatk/statements.jsonl",), "lamatk/statements.jsonl"),  # the README's form
        (("lamatk",), "lamatk/statements.jsonl"),  # the set's folder
        (("--kg", "kg"), "mem/statements.jsonl"),  # built from a KG into the output
    ],
)
def test_the_recite_command_printed_after_train_memorize_runs(tmp_path, given, statements):
    invoke("build", "lamatk", "kg", "-o", "lamatk")
    output = invoke("train", "memorize", *given, *TRAIN, "-o", "mem")
    command = printed_command(output)
    assert command == ["probe", "recite", statements, "--trained", "mem", "-o", "mem-recited"]
    recited = invoke(*command)
    rows = len(Path(statements).read_text(encoding="utf-8").splitlines())
    assert f"recite: {rows} rows" in recited
    assert (tmp_path / "mem-recited" / "predictions.parquet").is_file()


def test_the_convert_command_printed_for_a_source_file_given_as_a_kg_runs(tmp_path):
    invoke("kg", "export", "kg", "--out", "facts.jsonl", "--what", "facts")
    refused = invoke("build", "lamatk", "facts.jsonl", "-o", "lamatk", code=2)
    command = printed_command(refused)
    assert command == ["kg", "convert", "facts.jsonl", "--format", "jsonl", "-o", "facts-kg"]
    assert "4 facts" in invoke(*command)
    invoke("build", "lamatk", "facts-kg", "-o", "lamatk")  # what the user meant to do


def _series(tmp_path, periods: list[str]) -> None:
    """A model series of tiny random masked LMs, trained (as series.json says) on kg/."""
    tokenizer = train_tokenizer(["Theresa May", "Boris Johnson", "United Kingdom"], "roberta")
    entries = []
    for seed, period in enumerate(periods):
        folder = tmp_path / "series" / f"m{period}"
        random_model("roberta", tokenizer, seed=seed).save_pretrained(folder)
        tokenizer.save_pretrained(folder)
        entries.append({"period": period, "dir": folder.name})
    record = {"kg": "kg", "periods": entries}
    (tmp_path / "series" / "series.json").write_text(json.dumps(record), encoding="utf-8")


def test_the_build_command_printed_for_rows_no_model_of_the_series_fits_runs(tmp_path):
    _series(tmp_path, ["2019", "2020"])
    quarters = ("--granularity", "quarter", "--first", "2019-Q2", "--last", "2019-Q4")
    invoke("build", "drift", "kg", *quarters, "-o", "drift")
    probe = ("probe", "pll", "--series", "series", "--device", "cpu", "-o", "probed")
    refused = invoke(*probe[:2], "drift", *probe[2:], code=2)
    command = printed_command(refused)
    assert command == [
        *("build", "drift", "kg", "--granularity", "year"),
        *("--first", "2019", "--last", "2020", "-o", "drift-2019-2020"),
    ]
    invoke(*command)
    assert "pll: 2 rows" in invoke(*probe[:2], "drift-2019-2020", *probe[2:])


FIXTURES = Path(__file__).parents[1] / "fixtures"


@pytest.mark.parametrize(
    ("release", "asked", "format_", "dropped"),
    [
        # another format's fields; ecbd's --year is not templama's
        ("ecbd/2019/np_spans_dev.json", "templama", "ecbd", ()),
        ("templama/train.jsonl", "ecbd", "templama", ("--year", "2019")),
        ("dynamic-templama/quarters.jsonl", "templama", "dynamic-templama", ()),  # quarters
    ],
)
def test_the_import_command_printed_for_a_file_of_another_format_runs(
    tmp_path, release, asked, format_, dropped
):
    """The fix keeps what the user typed: their file, their -o (never a folder beside the
    data) and the options the other importer takes too."""
    name = Path(release).name
    (tmp_path / name).write_bytes((FIXTURES / release).read_bytes())
    kept = ("--no-skip-bad", "--max-record-bytes", "64M")
    refused = invoke("import", asked, name, "-o", "imported", *kept, *dropped, code=2)
    command = printed_command(refused)
    assert command == ["import", format_, name, "--no-skip-bad", "--out", "imported", *kept[1:]]
    folder = tmp_path / "imported"
    invoke(*command)
    assert (folder / "examples.jsonl").is_file()
