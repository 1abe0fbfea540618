"""A damaged run file costs only what it holds: an error box for it, the rest of the report
written; the report is written over nothing but an earlier report."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.report import write_report

runner = CliRunner()


def report(run_dir, *args):
    result = runner.invoke(app, ["report", str(run_dir), *map(str, args)])
    assert "Traceback" not in result.output
    return result


@pytest.mark.parametrize(
    ("damage", "error"),
    [
        ("{broken", "step.json:1: invalid JSON"),
        ("[1, 2]", "the step record must be a JSON object, not list"),
        ('{"inputs": [1]}', "step.json: inputs is a list, not as a run writes it"),
        ('{"inputs": {"kg": 3}}', "step.json: inputs must name the steps they come from"),
        ('{"params": "x", "seconds": "slow"}', "step.json: params is a str"),
        (b'{"id": "\xff"}', "invalid UTF-8"),
    ],
)
def test_a_broken_step_record_is_one_error_box(light_run_dir, parse_page, damage, error):
    # Failed before: the whole report stopped with exit 2.
    path = light_run_dir / "steps" / "scores" / "step.json"
    path.write_bytes(damage if isinstance(damage, bytes) else damage.encode())
    result = report(light_run_dir)
    assert result.exit_code == 0, result.output
    assert "warning: report: step scores:" in result.output
    page = parse_page((light_run_dir / "report.html").read_text(encoding="utf-8"))
    [box] = page.errors
    assert box.startswith("The record of step scores could not be read:") and error in box
    assert page.tables[0]["rows"][1][2] == "unreadable step.json"


def test_steps_left_from_an_earlier_config_are_named_in_an_error_box(light_run_dir, parse_page):
    """A run interrupted after its config changed: the steps it had not reached still hold the
    earlier config's outputs, which the report showed as current."""
    record_path = light_run_dir / "steps" / "scores" / "step.json"
    record = json.loads(record_path.read_text())
    record["params"] = {**record["params"], "made_with": "an earlier config"}
    record_path.write_text(json.dumps(record))
    result = report(light_run_dir)
    assert result.exit_code == 0, result.output
    page = parse_page((light_run_dir / "report.html").read_text(encoding="utf-8"))
    [box] = page.errors
    assert box.startswith("Step scores holds the outputs of an earlier config")


@pytest.mark.parametrize(
    ("damage", "error"),
    [
        ('{"seed": 1,\n oops}', "environment.json:2: invalid JSON"),
        ('{"packages": [1]}', "packages is no mapping"),
    ],
)
def test_a_broken_environment_is_one_error_box(light_run_dir, parse_page, damage, error):
    (light_run_dir / "environment.json").write_text(damage)
    result = report(light_run_dir)
    assert result.exit_code == 0, result.output
    page = parse_page((light_run_dir / "report.html").read_text(encoding="utf-8"))
    [box] = page.errors
    assert box.startswith("The environment could not be read:") and error in box
    assert "scores" in page.sections.get("step-scores", "").lower() or page.sections


@pytest.mark.parametrize(
    ("config", "error"),
    [
        # Failed before: a report of 0 steps, exit 0, and no word of it
        ("&a {name: x, self: *a}\n", "recursive alias"),
        ("name: x\nsteps: &s [*s]\n", "recursive alias"),
        ("name: x\n", "no `steps` list; a run's config lists the steps it ran"),
        ("name: x\nsteps: []\n", "no `steps` list"),
        ("name: x\nsteps: [{id: 3, kind: kg}]\n", "steps[0] is not a mapping with an id"),
        ("steps: [\n", "config.yaml:2"),
        ("- a list\n", "config.yaml:1: the config must be a mapping"),
    ],
)
def test_a_broken_config_is_an_error_box_and_the_steps_come_from_their_folders(
    light_run_dir, parse_page, config, error
):
    (light_run_dir / "config.yaml").write_text(config)
    result = report(light_run_dir)
    assert result.exit_code == 0, result.output
    assert "warning: report: the config could not be read" in result.output
    page = parse_page((light_run_dir / "report.html").read_text(encoding="utf-8"))
    assert any(
        box.startswith("The config could not be read:") and error in box for box in page.errors
    )
    steps = [row[0] for row in page.tables[0]["rows"]]
    assert steps == sorted(p.name for p in (light_run_dir / "steps").iterdir())
    assert steps  # the steps found in steps/ are still reported


def test_out_must_be_a_file_and_no_users_file(light_run_dir, tmp_path):
    # Failed before: IsADirectoryError for --out RUN/steps.
    result = report(light_run_dir, "--out", light_run_dir / "steps")
    assert result.exit_code == 2
    assert " ".join(result.output.split()) == (
        f"error: {light_run_dir / 'steps'} is a folder; pass the report's file, e.g. "
        f"{light_run_dir / 'steps' / 'report.html'}"
    )
    notes = tmp_path / "notes.html"
    notes.write_text("<p>my notes</p>")
    result = report(light_run_dir, "--out", notes)
    assert result.exit_code == 2 and "exists and is not a chronoprobe report" in result.output
    assert notes.read_text() == "<p>my notes</p>"
    earlier = tmp_path / "earlier.html"
    assert report(light_run_dir, "--out", earlier).exit_code == 0
    assert report(light_run_dir, "--out", earlier).exit_code == 0  # an earlier report: replaced
    (tmp_path / "link.html").symlink_to(notes)
    result = report(light_run_dir, "--out", tmp_path / "link.html")
    assert result.exit_code == 2 and "is a symbolic link" in result.output


def test_the_log_is_read_from_its_end_and_never_through_a_link(light_run_dir, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("password=hunter2\n")
    (light_run_dir / "run.log").unlink(missing_ok=True)
    (light_run_dir / "run.log").symlink_to(secret)
    html = write_report(light_run_dir).read_text(encoding="utf-8")
    assert "hunter2" not in html
    (light_run_dir / "run.log").unlink()
    (light_run_dir / "run.log").write_text("".join(f"line {i}\n" for i in range(200_000)))
    html = write_report(light_run_dir).read_text(encoding="utf-8")
    assert "line 199999" in html and "line 199940" in html and "line 199939" not in html


def test_a_step_id_in_a_config_cannot_walk_out_of_steps(light_run_dir, parse_page, tmp_path):
    config = json.dumps({"name": "x", "steps": [{"id": "../../outside", "kind": "kg"}]})
    (light_run_dir / "config.yaml").write_text(config)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "step.json").write_text("{broken")
    result = report(light_run_dir)
    assert result.exit_code == 0, result.output
    assert "steps[0].id '../../outside' is not a step id" in " ".join(result.output.split())
    html = (light_run_dir / "report.html").read_text(encoding="utf-8")
    assert "outside/step.json" not in html  # the folder out of steps/ was never read
