"""`chronoprobe report` on any folder of outputs: one command's --out, or a folder holding
several outputs and run directories, each a step named by its path there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.report import write_report

from .conftest import make_run

runner = CliRunner()


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CHRONOPROBE_CACHE", str(tmp_path / "cache"))


def invoke(*args):
    result = runner.invoke(app, [str(a) for a in args])
    return result


def synth(out: Path) -> None:
    result = invoke("kg", "synth", "--facts", 200, "--no-text", "-o", out)
    assert result.exit_code == 0, result.output


def files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_a_folder_of_outputs_and_a_run_reports_each_step_by_its_path(tmp_path, parse_page):
    root = tmp_path / "outputs"
    synth(root / "kgs" / "a")
    result = invoke("build", "lamatk", root / "kgs" / "a", "-o", root / "lam")
    assert result.exit_code == 0, result.output
    make_run(root / "runs")  # runs/run: a hand-made run directory
    result = invoke("report", root, "--out", tmp_path / "all.html")
    assert result.exit_code == 0, result.output
    assert not (root / "report.html").exists()
    page = parse_page((tmp_path / "all.html").read_text(encoding="utf-8"))
    summary = page.tables[0]
    assert [row[0] for row in summary["rows"]] == [
        "kgs/a",
        "lam",
        "runs/run/world",
        "runs/run/scores",
        "runs/run/later",
        "runs/run/report",
    ]
    assert page.sections["step-kgs-a"] == "Knowledge graph: kgs/a (synth)"
    assert page.sections["step-lam"] == "LAMA-TK statements: lam"
    assert page.sections["step-runs-run-world"] == "Knowledge graph: runs/run/world (world)"
    assert f"6 steps from 2 command outputs and 1 run directory in {root}" in page.text
    # inputs link to the step that made them: a command's input folder, a run's own step
    inputs = [t for t in page.tables if t["header"] == ["input", "from step"]]
    assert [t["rows"] for t in inputs] == [[["kg", "kgs/a"]], [["kg", "runs/run/world"]]]
    assert "#step-kgs-a" in page.urls and "#step-runs-run-world" in page.urls
    assert page.sections["run"] == "Runs in this folder"
    assert "Configurations" in page.text and "name: handmade" in page.text


def test_one_commands_output_gets_its_report_beside_it_and_stays_its_commands(tmp_path, parse_page):
    world = tmp_path / "world"
    synth(world)
    before = files(world)
    result = invoke("report", world)
    assert result.exit_code == 0, result.output
    target = tmp_path / "world-report.html"
    assert f"report: {target}" in " ".join(result.output.split())
    page = parse_page(target.read_text(encoding="utf-8"))
    assert page.sections == {"summary": "Summary", "step-world": "Knowledge graph: world (synth)"}
    assert f"1 step from 1 command output in {world}" in page.text
    assert files(world) == before  # nothing written into the command's folder
    synth(world)  # which the command still replaces as its own


def test_a_run_step_folder_alone_is_reported_as_one_output(tmp_path, parse_page):
    run = make_run(tmp_path)
    target = write_report(run / "steps" / "scores", tmp_path / "scores.html")
    page = parse_page(target.read_text(encoding="utf-8"))
    assert list(page.sections) == ["summary", "step-scores"]  # no run around it to tell of
    assert page.tables[0]["rows"][0][:3] == ["scores", "mystery", "computed"]


def test_a_folder_of_outputs_gets_no_report_inside_it_unless_told_where(tmp_path):
    """kg/ holds the user's KGs: a report of them goes to the file the user names, never
    into kg/ itself."""
    synth(tmp_path / "kg" / "a")
    synth(tmp_path / "kg" / "b")
    before = files(tmp_path / "kg")
    result = invoke("report", tmp_path / "kg")
    assert result.exit_code == 2
    said = " ".join(result.output.split())
    assert said == (
        f"error: {tmp_path / 'kg'} is not a run directory or one command's output (it holds 2 "
        f"command outputs); report one of them (chronoprobe report {tmp_path / 'kg' / 'a'}), "
        f"or all of them together into a file you name: chronoprobe report {tmp_path / 'kg'} "
        "--out FILE.html"
    )
    assert files(tmp_path / "kg") == before


@pytest.mark.parametrize("inside", ["steps", "steps/scores"])
def test_a_folder_inside_a_run_is_refused_naming_the_run(tmp_path, inside):
    """RUN/steps and its steps belong to the run, which rewrites them: their report would be
    a stray file there."""
    run = make_run(tmp_path)
    before = files(run)
    result = invoke("report", run / inside)
    assert result.exit_code == 2
    said = " ".join(result.output.split())
    assert said == (
        f"error: {run / inside} is inside the run directory {run.resolve()}, which its run "
        f"rewrites; report the run (chronoprobe report {run.resolve()}), or pass --out FILE.html"
    )
    assert files(run) == before
    assert invoke("report", run / inside, "--out", tmp_path / "x.html").exit_code == 0


def test_a_folder_without_outputs_is_refused_in_one_line(tmp_path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("nothing of chronoprobe's")
    result = invoke("report", tmp_path / "notes")
    assert result.exit_code == 2
    assert "no chronoprobe output in it or in the 4 levels of folders below" in " ".join(
        result.output.split()
    )
    assert json.dumps(sorted(p.name for p in (tmp_path / "notes").iterdir())) == '["todo.txt"]'
