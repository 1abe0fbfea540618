"""`chronoprobe run`: the command around the engine; the real `kg` and `report` step kinds."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from rich.console import Console
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.runs.engine import run_experiment

runner = CliRunner()

CONFIG = """
name: exp
plugins: [chronoprobe_test_steps]
steps:
  - id: kg
    kind: tiny_kg
"""


def test_run_prints_steps_and_where_the_run_is(write_config, tmp_path):
    args = ["run", str(write_config(CONFIG)), "--out", str(tmp_path / "run")]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "✓ kg (tiny_kg)" in result.output
    unwrapped = "".join(result.output.split())  # rich wraps long paths to the terminal width
    assert f"rundirectory:{tmp_path / 'run'}" in unwrapped
    result = runner.invoke(app, args)
    assert "✓ kg (tiny_kg) cached" in result.output
    result = runner.invoke(app, [*args, "--no-cache"])
    assert result.exit_code == 0, result.output
    assert "✓ kg (tiny_kg) " in result.output and "(tiny_kg) cached" not in result.output


def test_config_errors_exit_2_with_file_and_line(write_config, tmp_path):
    path = write_config(CONFIG.replace("kind: tiny_kg", "kind: tiny_kg\n    params: {x: 1}"))
    result = runner.invoke(app, ["run", str(path), "--out", str(tmp_path / "run")])
    assert result.exit_code == 2
    assert "exp.yaml:6: steps[0].params.x: unknown key" in result.output
    assert not (tmp_path / "run").exists()  # nothing is written for an invalid config


def test_report_step_runs_every_time_on_the_whole_run(write_config, tmp_path, monkeypatch):
    report = pytest.importorskip("chronoprobe.report")
    seen = []

    def fake_report(run_dir: Path, **options) -> Path:
        seen.append(sorted(p.name for p in (run_dir / "steps").iterdir()))
        page = '<html><head><meta name="generator" content="chronoprobe"></head></html>'
        (run_dir / "report.html").write_text(report.sealed(page))  # as a report is recognised
        return run_dir / "report.html"

    monkeypatch.setattr(report, "write_report", fake_report)
    path = write_config(CONFIG + "  - id: report\n    kind: report\n")
    first = run_experiment(path, tmp_path / "run", console=Console(file=open("/dev/null", "w")))  # noqa: SIM115
    second = run_experiment(path, tmp_path / "run", console=Console(file=open("/dev/null", "w")))  # noqa: SIM115
    assert [s.cached for s in second.steps] == [True, False]  # never cached
    assert seen[0][0] == "kg" and len(seen) == 2
    assert first.report == tmp_path / "run/report.html"
    record = json.loads((tmp_path / "run/steps/report/step.json").read_text())
    assert record["kind"] == "report" and record["outputs"] == []


SYNTH = """
name: synth
steps:
  - id: world
    kind: kg
    params: {source: synth, facts: 400, text: false}
"""


def test_real_kg_step_synth_is_deterministic_and_cached(write_config, tmp_path, monkeypatch):
    try:
        from chronoprobe.kg.synth import SynthConfig, synthesize  # noqa: F401
    except ImportError:
        pytest.skip("chronoprobe.kg.synth is not there yet")
    path = write_config(SYNTH)
    quiet = Console(file=open("/dev/null", "w"))  # noqa: SIM115
    first = run_experiment(path, tmp_path / "one", console=quiet)
    monkeypatch.setenv("CHRONOPROBE_CACHE", str(tmp_path / "other-cache"))
    second = run_experiment(path, tmp_path / "two", console=quiet)
    assert not second.step("world").cached
    for name in ("facts", "entities", "relations"):
        one = pq.read_table(tmp_path / f"one/steps/world/{name}.parquet")
        assert one.equals(pq.read_table(tmp_path / f"two/steps/world/{name}.parquet"))
    metrics = json.loads((tmp_path / "one/steps/world/metrics.json").read_text())
    assert metrics["facts"] == pq.read_table(tmp_path / "one/steps/world/facts.parquet").num_rows
    assert 0.3 < metrics["relation_share"]["P54"] < 0.55
    third = run_experiment(path, tmp_path / "two", console=quiet)
    assert third.step("world").cached
    assert first.step("world").key == third.step("world").key


def test_real_kg_step_convert_keys_on_the_input_file(write_config, tmp_path):
    source = tmp_path / "facts.jsonl"
    fixture = Path(__file__).parents[1] / "fixtures/jsonl/presidents.jsonl"
    valid = "".join(fixture.read_text().splitlines(keepends=True)[:12])  # then bad on purpose
    source.write_text(valid + "not json\n")
    text = "name: c\nsteps:\n  - id: kg\n    kind: kg\n"
    path = write_config(
        text + "    params: {source: convert, format: jsonl, paths: [facts.jsonl]}\n"
    )
    quiet = Console(file=open("/dev/null", "w"))  # noqa: SIM115
    first = run_experiment(path, tmp_path / "run", console=quiet)
    metrics = json.loads((tmp_path / "run/steps/kg/metrics.json").read_text())
    assert metrics["problems"] == {"invalid JSON": 1}  # skipped and counted, not dropped silently
    assert metrics["facts"] == pq.read_table(tmp_path / "run/steps/kg/facts.parquet").num_rows > 0
    assert run_experiment(path, tmp_path / "run", console=quiet).step("kg").cached
    source.write_text(valid)  # same name, new content: a new key
    third = run_experiment(path, tmp_path / "run", console=quiet)
    assert not third.step("kg").cached and third.step("kg").key != first.step("kg").key
    assert json.loads((tmp_path / "run/steps/kg/metrics.json").read_text())["problems"] == {}


def test_real_kg_step_sample(write_config, tmp_path):
    path = write_config("name: s\nsteps:\n  - id: kg\n    kind: kg\n    params: {source: sample}\n")
    run_experiment(path, tmp_path / "run", console=Console(file=open("/dev/null", "w")))  # noqa: SIM115
    metrics = json.loads((tmp_path / "run/steps/kg/metrics.json").read_text())
    assert metrics["facts"] >= 150
