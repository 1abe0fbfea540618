"""The `build` step kind: probe sets built inside a run from a `kg` step, and their report."""

from __future__ import annotations

import json

import pytest
from rich.console import Console

from chronoprobe.jsonl import read_jsonl
from chronoprobe.runs.config import ConfigError
from chronoprobe.runs.engine import run_experiment

CONFIG = """
name: b
steps:
  - id: kg
    kind: kg
    params: {source: sample}
  - id: drift
    kind: build
    inputs: {kg: kg}
    params: {family: drift, first: 2019-Q2, last: 2019-Q4, granularity: quarter, relations: [P6]}
  - id: lamatk
    kind: build
    inputs: {kg: kg}
    params: {family: lamatk, sample: 40}
  - id: cronq
    kind: build
    inputs: {kg: kg}
    params: {family: cronq, max_per_template: 5}
  - id: report
    kind: report
"""


def quiet() -> Console:
    return Console(file=open("/dev/null", "w"))


def test_build_steps_write_probe_sets_metrics_and_report(write_config, tmp_path):
    run = tmp_path / "run"
    run_experiment(write_config(CONFIG), run, console=quiet())
    uk = {
        row["period"]: row
        for row in read_jsonl(run / "steps/drift/examples.jsonl")
        if row["subject"] == "Q145"
    }
    assert uk["2019-Q2"]["answers"] == ["Q264766"] and uk["2019-Q2"]["split"] is None
    assert uk["2019-Q3"]["answers"] == ["Q180589", "Q264766"]  # May hands over to Johnson
    assert uk["2019-Q3"]["split"] == "updated"
    assert uk["2019-Q4"]["answers"] == ["Q180589"] and uk["2019-Q4"]["split"] == "updated"
    drift = json.loads((run / "steps/drift/metrics.json").read_text())
    assert drift["family"] == "drift" and drift["periods"] == 3
    assert drift["rows"] == sum(1 for _ in read_jsonl(run / "steps/drift/examples.jsonl"))
    lamatk = json.loads((run / "steps/lamatk/metrics.json").read_text())
    drawn = json.loads((run / "steps/lamatk/stats.json").read_text())["sample"]
    assert lamatk["statements"] == drawn["statements"] >= 40  # whole queries up to 40 or more
    assert sum(1 for _ in read_jsonl(run / "steps/lamatk/statements.jsonl")) == lamatk["statements"]
    cronq = json.loads((run / "steps/cronq/metrics.json").read_text())
    questions = sum(1 for _ in read_jsonl(run / "steps/cronq/questions.jsonl"))
    assert cronq["questions"] == questions > 0
    page = (run / "report.html").read_text()
    for title in ("Drift probe set", "LAMA-TK statements", "CronQuestions questions"):
        assert title in page
    assert f"Sampled (seed 0): {drawn['queries']} whole queries" in page
    again = run_experiment(write_config(CONFIG), run, console=quiet())
    assert all(again.step(s).cached for s in ("kg", "drift", "lamatk", "cronq"))


def test_build_params_are_checked_per_family(write_config):
    text = CONFIG.replace("family: lamatk, sample: 40", "family: lamatk, granularity: year")
    with pytest.raises(ConfigError, match=r"exp.yaml:\d+: steps\[2\]\.params.*granularity"):
        run_experiment(write_config(text), None, console=quiet())
