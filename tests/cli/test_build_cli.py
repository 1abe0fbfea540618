"""`chronoprobe build ...` end to end on a saved KG: files written, errors reported cleanly."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.jsonl import read_jsonl
from chronoprobe.kg import Entity, Fact, TemporalKG
from chronoprobe.time import TimePoint

runner = CliRunner()


def save_kg(path):
    facts = [
        Fact("Q145", "P6", "Q264766", TimePoint(2016, 7, 13), TimePoint(2019, 7, 24)),
        Fact("Q145", "P6", "Q180589", TimePoint(2019, 7, 24), TimePoint(2022, 9, 6)),
        Fact("Q949", "P166", "Q38104", TimePoint(1956), TimePoint(1956)),
        Fact("Q949", "P166", "Q38104", TimePoint(1972), TimePoint(1972)),
    ]
    labels = {"Q145": "United Kingdom", "Q264766": "Theresa May", "Q180589": "Boris Johnson"}
    TemporalKG.from_records(facts, [Entity(i, n) for i, n in labels.items()]).save(path)


def test_build_drift_writes_rows_and_stats(tmp_path):
    save_kg(tmp_path / "kg")
    out = tmp_path / "drift"
    args = ["build", "drift", str(tmp_path / "kg"), "--granularity", "quarter"]
    result = runner.invoke(app, [*args, "--first", "2019-Q2", "--last", "2019-Q4", "-o", str(out)])
    assert result.exit_code == 0, result.output
    rows = list(read_jsonl(out / "examples.jsonl"))
    assert [(r["period"], r["answers"], r["split"]) for r in rows] == [
        ("2019-Q2", ["Q264766"], None),
        ("2019-Q3", ["Q180589", "Q264766"], "updated"),
        ("2019-Q4", ["Q180589"], "updated"),
    ]
    stats = json.loads((out / "stats.json").read_text())
    assert stats[1] == {"period": "2019-Q3", "total": 1, "updated": 1}


def test_build_lamatk_writes_statements(tmp_path):
    save_kg(tmp_path / "kg")
    out = tmp_path / "lamatk"
    result = runner.invoke(app, ["build", "lamatk", str(tmp_path / "kg"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    rows = list(read_jsonl(out / "statements.jsonl"))
    assert len(rows) == 6  # two award facts x (subject, object, time); P6 has no template
    assert json.loads((out / "stats.json").read_text())["statements"]["multi_answer"] == 2
    # the terminal rounds the share as a table does; metrics.json keeps every digit
    assert "statements 6, multi_answer_share 0.333" in result.output
    assert "0.3333" not in result.output
    assert json.loads((out / "metrics.json").read_text())["multi_answer_share"] == 2 / 6


def test_build_lamatk_samples_whole_queries_then_drops_conflicts(tmp_path):
    """Of the 6 statements, the two award years of Bardeen are one query ("John Bardeen received
    Nobel Prize in Physics in [MASK]."): 5 statements take 4 whole queries, that one included;
    --no-conflicts then removes its two rows from the draw."""
    save_kg(tmp_path / "kg")
    out = tmp_path / "lamatk"
    args = ["build", "lamatk", str(tmp_path / "kg"), "-o", str(out), "--sample", "5"]
    result = runner.invoke(app, [*args, "--no-conflicts"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "3 statements (0.0% multi-answer)" in text
    assert (
        "sample: 4 whole queries, 5 of 6 statements (asked for 5), 40.0% multi-answer; "
        "2 multi-answer removed" in text
    )
    rows = list(read_jsonl(out / "statements.jsonl"))
    assert {r["slot"] for r in rows} == {"subject", "object"}


def test_missing_kg_is_one_clear_line(tmp_path):
    out = tmp_path / "out"
    result = runner.invoke(app, ["build", "lamatk", str(tmp_path / "nope"), "-o", str(out)])
    assert result.exit_code == 2
    assert "nope: no such file or directory (input 'kg')" in " ".join(result.output.split())


def test_build_cronq_writes_questions_and_splits(tmp_path):
    save_kg(tmp_path / "kg")
    out = tmp_path / "cronq"
    result = runner.invoke(
        app, ["build", "cronq", str(tmp_path / "kg"), "-o", str(out), "--exhaustive"]
    )
    assert result.exit_code == 0, result.output
    rows = list(read_jsonl(out / "questions.jsonl"))
    assert {"Who was Q949 married to in 1956?"}.isdisjoint(r["question"] for r in rows)
    assert any(r["template_name"] == "award_in_year" and r["answers"] == ["Q38104"] for r in rows)
    stats = json.loads((out / "stats.json").read_text())
    split_total = sum(stats[n]["questions"] for n in ("train", "valid", "test"))
    assert split_total + stats["dropped_by_split"] == len(rows)


def test_build_drift_with_a_templates_csv(tmp_path):
    """TempLAMA's published templates form: the CSV's template words the query."""
    save_kg(tmp_path / "kg")
    templates = tmp_path / "templates.csv"
    templates.write_text(
        "Wikidata ID,Relation,Template\n"
        "P6,head of government,The government of <subject> is led by <object>.\n"
    )
    out = tmp_path / "drift"
    args = ["build", "drift", str(tmp_path / "kg"), "--first", "2019", "--last", "2020"]
    result = runner.invoke(app, [*args, "--templates", str(templates), "-o", str(out)])
    assert result.exit_code == 0, result.output
    rows = list(read_jsonl(out / "examples.jsonl"))
    assert [(r["period"], r["query"], r["answers"]) for r in rows] == [
        ("2019", "The government of United Kingdom is led by [MASK].", ["Q180589", "Q264766"]),
        ("2020", "The government of United Kingdom is led by [MASK].", ["Q180589"]),
    ]
    templates.write_text("Wikidata ID,Template\nP6,<subject> is led by someone.\n")
    result = runner.invoke(app, [*args, "--templates", str(templates), "-o", str(tmp_path / "x")])
    assert result.exit_code != 0
    assert "templates.csv:1: a templates CSV needs the columns" in " ".join(result.output.split())


def test_the_published_templates_csv_reads_and_the_built_ins_cover_p1412():
    from pathlib import Path

    from chronoprobe.templates import load_cloze_templates, load_template_csv

    csv = Path(__file__).parents[1] / "fixtures" / "templama" / "templates.csv"
    templates = load_template_csv(csv)
    assert templates["P1412"].query("Angela Merkel") == "Angela Merkel speaks [MASK]."
    assert templates["P6"].query("Japan") == "[MASK] is the head of the government of Japan."
    assert templates["P1412"].label == "languages spoken, written or signed"
    assert "P1412" in load_cloze_templates("drift")


def test_list_options_take_commas_and_repetition_alike(tmp_path):
    """--relations P6,P39 and --relations P6 --relations P39 build the same rows; a list of
    numbers (--distances 1,2) is parsed after the split."""
    save_kg(tmp_path / "kg")
    base = ["build", "drift", str(tmp_path / "kg"), "--first", "2016", "--last", "2020"]
    commas = runner.invoke(app, [*base, "--relations", "P6,P39", "-o", str(tmp_path / "a")])
    repeated = ["--relations", "P6", "--relations", "P39", "-o", str(tmp_path / "b")]
    assert commas.exit_code == 0, commas.output
    assert runner.invoke(app, [*base, *repeated]).exit_code == 0
    rows = (tmp_path / "a" / "examples.jsonl").read_text()
    assert rows == (tmp_path / "b" / "examples.jsonl").read_text()
    assert {r["relation"] for r in read_jsonl(tmp_path / "a" / "examples.jsonl")} == {"P6"}
    dates = [
        "build",
        "dates",
        str(tmp_path / "kg"),
        "--distances",
        "1,2",
        "-o",
        str(tmp_path / "d"),
    ]
    result = runner.invoke(app, dates)
    assert result.exit_code == 0, result.output


def test_a_bad_value_in_a_comma_list_is_named(tmp_path):
    save_kg(tmp_path / "kg")
    args = [
        "build",
        "dates",
        str(tmp_path / "kg"),
        "--distances",
        "1,two",
        "-o",
        str(tmp_path / "d"),
    ]
    result = runner.invoke(app, args)
    assert result.exit_code != 0
    assert "--distances" in result.output and "two" in result.output
    assert not (tmp_path / "d").exists()


def test_a_builders_help_offers_only_the_inputs_it_reads():
    """Every builder's --help offered --questions, which only timeline-oracle reads."""
    drift = runner.invoke(app, ["build", "drift", "--help"], terminal_width=200)
    oracle = runner.invoke(app, ["build", "timeline-oracle", "--help"], terminal_width=200)
    assert drift.exit_code == oracle.exit_code == 0
    assert "--questions" not in drift.output and "--questions" in oracle.output
