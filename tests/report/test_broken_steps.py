"""Steps whose outputs hold nothing to draw, and sections that fail: the page is still written,
and says which step and why."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.jsonl import write_jsonl
from chronoprobe.models.tiny import random_model
from chronoprobe.models.tokenizer import train_tokenizer
from chronoprobe.report import write_report
from chronoprobe.report.blocks import Section, Text
from chronoprobe.report.sections import SECTIONS, section, section_kind
from chronoprobe.step_context import StepContext
from chronoprobe.steps import get_kind

CORPUS = [f"In {y}, Alice Smith was employed by Globex and Acme Corp." for y in range(2000, 2020)]
LONG = "Globex, Acme Corp, Globex, Acme Corp, Globex, Acme Corp, Globex, Acme Corp and Globex"
REASON = "longer than the model's 9 positions"


@pytest.fixture(scope="module")
def short_model(tmp_path_factory) -> Path:
    """A random RoBERTa of 9 positions, saved as a local model spec."""
    tokenizer = train_tokenizer(CORPUS, "roberta")
    path = tmp_path_factory.mktemp("short-roberta")
    random_model("roberta", tokenizer, max_positions=9).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def probe(tmp_path: Path, model: Path, view: str, rows: list[dict]) -> tuple[Path, dict]:
    """A probe step over ``rows`` in its own directory, and its step record."""
    write_jsonl(tmp_path / "data" / "examples.jsonl", rows)
    out = tmp_path / "step"
    out.mkdir()
    params = {"view": view, "model": [str(model)], "device": "cpu"}
    ctx = StepContext("probe", out, tmp_path, 0, logging.getLogger("test-broken"))
    get_kind("probe").run(
        ctx, get_kind("probe").params.model_validate(params), {"data": tmp_path / "data"}
    )
    return out, {"id": "probe", "kind": "probe", "params": params}


def test_a_span_ppl_step_that_answered_nothing_says_why(tmp_path, short_model):
    sentence = f"Globex hired {LONG}."
    example = {
        "id": "e1",
        "entity": "Q1",
        "year": "2019",
        "span_type": "np",
        "sentence": sentence,
        "mention_start": 0,
        "mention_end": 6,
        "span_start": 13,
        "span_end": 13 + len(LONG),
        "span": LONG,
        "definition": "Globex is a company.",
    }
    other = {**example, "id": "e2", "entity": "Q2"}
    step_dir, record = probe(tmp_path, short_model, "span-ppl", [example, other])
    metrics = json.loads((step_dir / "metrics.json").read_text())
    assert metrics["models"][str(short_model)]["skipped"] == {REASON: 2}
    built = section_kind("probe", record).build(step_dir, record)
    assert (
        Text(f"{short_model} answered none of the rows (skipped: 2 {REASON}).", style="error")
        in built.blocks
    )


def test_a_drift_step_that_answered_nothing_says_why(tmp_path, short_model):
    rows = [
        {
            "id": f"q{i}",
            "period": p,
            "query": "Alice Smith was employed by [MASK].",
            "answer_labels": [LONG],
        }
        for i, p in enumerate(("2019", "2020"))
    ]
    step_dir, record = probe(tmp_path, short_model, "pll", rows)
    assert not (step_dir / "matrix.json").exists()
    built = section_kind("probe", record).build(step_dir, record)
    assert built.blocks == [
        Text(f"{short_model} answered none of the rows (skipped: 2 {REASON}).", style="error")
    ]


class Undrawable:
    """Not a report block: drawing it raises TypeError."""


@pytest.fixture
def broken_sections():
    @section("mystery")
    def undrawable(step_dir, record):
        return Section("Mystery", [Text("drawn"), Undrawable()])

    try:
        yield
    finally:
        SECTIONS._entries.pop("mystery")


def test_a_section_that_cannot_be_drawn_is_an_error_box_and_the_page_is_written(
    light_run_dir, parse_page, broken_sections, caplog
):
    page = parse_page(write_report(light_run_dir).read_text(encoding="utf-8"))
    assert page.sections["step-scores"] == "Mystery"
    [error] = page.errors
    assert error.startswith(
        "the mystery section of step scores could not be drawn: TypeError: not a report block"
    )
    assert (page.sections["summary"], page.sections["run"]) == ("Summary", "Run")
    assert "could not be drawn" in caplog.text


def test_the_report_command_names_a_broken_section_and_still_writes_the_page(run_dir):
    (run_dir / "steps" / "world" / "facts.parquet").write_bytes(b"not parquet")
    result = CliRunner().invoke(app, ["report", str(run_dir)])
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    assert (
        "warning: report: the kg section of step world could not be built: KGFormatError: "
        in output
    )
    assert "facts.parquet: not a readable Parquet file" in output
    assert (run_dir / "report.html").is_file()
