"""The report of a hand-made run directory: sections, exact tables, embedded figures, no URLs."""

from __future__ import annotations

import base64
import json
import re

from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.report import write_report
from chronoprobe.report.blocks import DASH, Section, Text
from chronoprobe.report.sections import SECTIONS, section

runner = CliRunner()


def test_title_environment_and_summary(page):
    assert "chronoprobe report: handmade" in page.text
    for shown in ("9.9.9", "cuda:0 (Test GPU)", "0123456789ab", "2026-01-31 14:05 UTC"):
        assert shown in page.text
    summary = page.tables[0]
    assert summary["section"] == "summary"
    assert summary["header"] == ["step", "kind", "status", "seconds", "headline metrics"]
    assert summary["rows"] == [
        [
            "world",
            "kg",
            "cached",
            "1.50",
            "facts 5 · entities 5 · relations 2 · multi_answer_share 0",
        ],
        ["scores", "mystery", "computed", "12.25", "accuracy 0.812 · count 1,234"],
        ["later", "mystery", "not run", DASH, ""],
        ["report", "report", "this page", DASH, ""],
    ]


def test_one_section_per_step_that_ran_in_config_order(page):
    assert list(page.sections) == ["summary", "step-world", "step-scores", "run"]
    assert page.sections["step-world"] == "Knowledge graph: world"
    assert page.errors == []


def test_kg_section_tables_match_the_hand_checked_kg(page):
    assert page.table("Relations")["rows"] == [
        ["P108", "employer", "1-1", "3", "60.0%"],
        ["P166", "award received", "1-1", "2", "40.0%"],
    ]
    assert page.table("Cardinality classes")["rows"] == [["1-1", "2", "5", "100.0%"]]
    popular = page.table("Most popular entities")["rows"]
    assert [(r[1], r[2], r[4]) for r in popular] == [
        ("Q1", "Alice", "3"),
        ("Q10", "Acme", "2"),
        ("Q2", "Bob", "2"),
        ("Q20", "Prize", "2"),
        ("Q11", "Globex", "1"),
    ]
    precision = page.table("Time bounds")["rows"]
    assert precision[2:] == [["year", "9", "90.0%"], ["absent", "1", "10.0%"]]


def test_facts_per_year_counts_open_ended_facts_to_the_last_year(page):
    # The still-true employer fact (2003-) holds in 2004 and 2005, though no other employer
    # fact reaches past 2003; the award band covers 2002 and 2005 only.
    yearly = next(t for t in page.tables if t["header"][:2] == ["year", "facts holding"])
    assert yearly["header"] == ["year", "facts holding", "employer (P108)", "award received (P166)"]
    assert yearly["rows"] == [
        ["2000", "1", "1", "0"],
        ["2001", "2", "2", "0"],
        ["2002", "2", "1", "1"],
        ["2003", "1", "1", "0"],
        ["2004", "1", "1", "0"],
        ["2005", "2", "1", "1"],
    ]


def test_relations_beyond_the_band_limit_become_other(run_dir, parse_page, monkeypatch):
    monkeypatch.setattr("chronoprobe.report.kg_section.AREA_RELATIONS", 1)
    page = parse_page(write_report(run_dir).read_text(encoding="utf-8"))
    yearly = next(t for t in page.tables if t["header"][:2] == ["year", "facts holding"])
    assert yearly["header"] == ["year", "facts holding", "employer (P108)", "other"]
    assert [r[3] for r in yearly["rows"]] == ["0", "0", "1", "0", "0", "1"]


def test_synthetic_texts_are_counted_and_shown(page):
    assert "articles" in page.text and "snippets" in page.text
    per_year = next(t for t in page.tables if t["header"] == ["year", "snippets"])
    assert per_year["rows"] == [["2001", "2"], ["2002", "0"], ["2003", "0"], ["2004", "1"]]
    examples = page.table("Example snippets")["rows"]
    assert [r[:2] for r in examples] == [
        ["2001-03-04", "Alice"],
        ["2001-05-06", "Bob"],
        ["2004-01-01", "Bob"],
    ]
    assert len(examples[2][2]) == 240 and examples[2][2].endswith("…")


def test_unknown_kind_gets_params_metrics_inputs_and_files(page):
    tables = [t for t in page.tables if t["section"] == "step-scores"]
    metrics, params, inputs, files = tables
    assert metrics["caption"] == "Metrics (metrics.json)"
    assert metrics["rows"] == [
        ["accuracy", "0.812"],
        ["count", "1,234"],
        ["by_split.new", "0.5"],
        ["by_split.old.a", "1"],
    ]
    assert params["rows"] == [["k", "3"]]
    assert inputs["rows"] == [["kg", "world"]]
    assert [r[0] for r in files["rows"]] == ["metrics.json", "predictions.parquet"]
    assert files["rows"][1][2] == "3"  # Parquet row count


def test_figures_are_embedded_pngs_and_nothing_is_fetched(page, report_file):
    assert len(page.images) == 3
    assert {img["section"] for img in page.images} == {"step-world"}
    for img in page.images:
        assert img["alt"]
        head, data = img["src"].split(",", 1)
        assert head == "data:image/png;base64"
        assert base64.b64decode(data).startswith(b"\x89PNG\r\n\x1a\n")
    assert not [u for u in page.urls if not (u.startswith("#") or u.startswith("data:"))]
    html = report_file.read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", html)
    assert "<script" not in html


def test_run_strings_are_escaped(report_file):
    assert "done &lt;ok&gt;" in report_file.read_text(encoding="utf-8")


def test_a_failing_section_is_shown_and_the_rest_still_written(run_dir, parse_page):
    (run_dir / "steps" / "world" / "facts.parquet").write_bytes(b"not parquet")
    page = parse_page(write_report(run_dir).read_text(encoding="utf-8"))
    assert page.sections["step-world"] == "Step world"
    assert len(page.errors) == 1
    assert "could not be built: KGFormatError" in page.errors[0]
    assert "facts.parquet: not a readable Parquet file" in page.errors[0]
    assert page.sections["step-scores"] == "Step scores"
    files = [t for t in page.tables if t["section"] == "step-world"][-1]
    assert ["facts.parquet", "11 B", "unreadable"] in files["rows"]


def test_a_registered_section_replaces_the_generic_one(light_run_dir, parse_page):
    @section("mystery", headline=("count",))
    def mystery(step_dir, record):
        return Section("Mystery scores", [Text(f"k is {record['params']['k']}")])

    try:
        page = parse_page(write_report(light_run_dir).read_text(encoding="utf-8"))
    finally:
        SECTIONS._entries.pop("mystery")
    assert page.sections["step-scores"] == "Mystery scores"
    assert "k is 3" in page.text
    assert page.tables[0]["rows"][1][4] == "count 1,234"


def test_write_report_to_another_file(light_run_dir, tmp_path):
    out = write_report(light_run_dir, tmp_path / "elsewhere" / "r.html")
    assert out == tmp_path / "elsewhere" / "r.html" and out.is_file()
    assert not (light_run_dir / "report.html").exists()


def test_cli_writes_the_report(light_run_dir):
    result = runner.invoke(app, ["report", str(light_run_dir)])
    assert result.exit_code == 0, result.output
    assert (light_run_dir / "report.html").is_file()
    assert "report.html" in result.output


def test_cli_shows_bad_metrics_of_one_step_in_its_section(light_run_dir):
    (light_run_dir / "steps" / "scores" / "metrics.json").write_text("[1]")
    result = runner.invoke(app, ["report", str(light_run_dir)])
    assert result.exit_code == 0, result.output  # the report is still written, the error shown
    html = (light_run_dir / "report.html").read_text(encoding="utf-8")
    assert "metrics.json:1: metrics must be a JSON object, not list" in html


def test_cli_missing_run_directory(tmp_path):
    result = runner.invoke(app, ["report", str(tmp_path / "nope")])
    assert result.exit_code == 2
    assert f"{tmp_path / 'nope'}: no such folder" in " ".join(result.output.split())
    (tmp_path / "notes.txt").write_text("a file")
    result = runner.invoke(app, ["report", str(tmp_path / "notes.txt")])
    assert result.exit_code == 2
    assert "notes.txt: a file, not a folder" in " ".join(result.output.split())


def test_step_record_of_a_finished_run_is_what_the_summary_reads(light_run_dir, parse_page):
    record = json.loads((light_run_dir / "steps" / "scores" / "step.json").read_text())
    record["cached"] = True
    (light_run_dir / "steps" / "scores" / "step.json").write_text(json.dumps(record))
    page = parse_page(write_report(light_run_dir).read_text(encoding="utf-8"))
    assert page.tables[0]["rows"][0][2] == "not run"
    assert page.tables[0]["rows"][1][2] == "cached"


def test_the_years_axis_fits_the_bulk_of_the_facts():
    from chronoprobe.report.kg_section import bulk_window

    # one fact of 26 years two millennia ago beside 1,000 fact-years in 1990-2024
    per_year = {y: 1 for y in range(-70, -44)} | {y: 1000 // 35 + 1 for y in range(1990, 2025)}
    assert bulk_window(per_year) == (1990, 2024)
    assert bulk_window({2000: 5}) == (2000, 2000)
    even = {y: 10 for y in range(1900, 2000)}  # no outliers: the tails are 0.5% each
    assert bulk_window(even) == (1900, 1999)


def test_the_real_samples_axis_leaves_out_caesar():
    from chronoprobe.kg.samples import load_sample
    from chronoprobe.kg.stats import facts_per_year
    from chronoprobe.report.kg_section import bulk_window

    per_year = facts_per_year(load_sample())
    assert min(per_year) == -70  # the sample's oldest fact
    assert bulk_window(per_year) == (1789, 2025)
