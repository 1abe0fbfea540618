"""A report the user annotated is refused, as every other edited output is, never written over.

A report carries the SHA-256 of its own bytes; a file at the target whose bytes no longer give
it (a note added, the page saved again by a browser) was edited since chronoprobe wrote it.
"""

from __future__ import annotations

import hashlib
import re

import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.report import check_report_target, sealed, write_report

runner = CliRunner()


def test_a_report_carries_the_digest_of_its_own_bytes(light_run_dir):
    page = write_report(light_run_dir).read_bytes()
    digest = re.search(rb'<meta name="chronoprobe-sha256" content="([0-9a-f]{64})">', page)
    assert digest is not None
    unsealed = page.replace(digest.group(1), b"0" * 64, 1)
    assert hashlib.sha256(unsealed).hexdigest() == digest.group(1).decode()


def test_an_unedited_report_is_written_again(light_run_dir):
    first = write_report(light_run_dir)
    (light_run_dir / "steps" / "scores" / "metrics.json").write_text('{"k": 9}')
    assert write_report(light_run_dir) == first  # no refusal: it was chronoprobe's own


@pytest.mark.parametrize(
    "edit",
    [
        lambda text: text.replace("</main>", "<p>reviewer 2 was right</p></main>"),
        lambda text: text.replace("<title>", "<title>[draft] "),
        lambda text: text.replace("\n", "\r\n"),  # saved again by an editor
    ],
    ids=["a note", "the title", "line ends"],
)
def test_an_annotated_report_is_refused_in_one_line_and_kept(light_run_dir, edit):
    # Failed before: `chronoprobe report RUN` wrote over the user's annotations.
    report = write_report(light_run_dir)
    annotated = edit(report.read_text(encoding="utf-8"))
    report.write_bytes(annotated.encode("utf-8"))
    result = runner.invoke(app, ["report", str(light_run_dir)])
    assert result.exit_code == 2, result.output
    line = " ".join(result.output.split())
    assert f"error: {report} was edited since chronoprobe wrote it" in line
    assert report.read_bytes() == annotated.encode("utf-8")


def test_a_report_step_refuses_an_annotated_report_before_any_step_runs(tmp_path, monkeypatch):
    """In a run, the report step's target is checked with the plan, before anything runs."""
    from rich.console import Console

    from chronoprobe.runs.engine import run_experiment

    config = tmp_path / "exp.yaml"
    config.write_text(
        "name: e\nsteps:\n  - {id: kg, kind: kg, params: {source: synth, facts: 200, "
        "text: false}}\n  - {id: report, kind: report}\n"
    )
    quiet = Console(file=open("/dev/null", "w"))  # noqa: SIM115
    run_experiment(config, tmp_path / "run", console=quiet)
    report = tmp_path / "run" / "report.html"
    report.write_text(report.read_text().replace("</main>", "<p>mine</p></main>"))
    with pytest.raises(ValueError, match=r"report\.html was edited since chronoprobe wrote it"):
        run_experiment(config, tmp_path / "run", console=quiet)
    assert "<p>mine</p>" in report.read_text()


def test_a_report_without_a_digest_is_not_taken_for_unedited(tmp_path):
    """An older chronoprobe's report has no digest: an edit to it cannot be told."""
    old = tmp_path / "report.html"
    old.write_text('<html><head><meta name="generator" content="chronoprobe"></head></html>')
    with pytest.raises(ValueError, match="a report of an older chronoprobe, which wrote no"):
        check_report_target(old)


def test_sealing_is_stable_and_checks():
    page = '<html><head><meta name="generator" content="chronoprobe"><title>x</title></head>'
    assert sealed(page) == sealed(page)
    assert sealed(page).count("chronoprobe-sha256") == 1
