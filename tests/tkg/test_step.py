"""The `tkg` step kind inside a run, and its report section."""

from __future__ import annotations

import json
import textwrap

from rich.console import Console

from chronoprobe.report.blocks import DASH, Image, Stats
from chronoprobe.report.rundir import load_run
from chronoprobe.report.sections import section_kind
from chronoprobe.report.tkg_section import DIRECTIONS, tkg_section
from chronoprobe.runs.engine import run_experiment
from chronoprobe.tkg import checkpoint

CONFIG = """
name: t
seed: 1
steps:
  - id: world
    kind: kg
    params: {source: synth, facts: 1500, text: false}
  - id: temporal
    kind: tkg
    inputs: {kg: world}
    params: {arch: tcomplex, rank: 8, epochs: 2, batch_size: 2000, device: cpu}
  - id: static
    kind: tkg
    inputs: {kg: world}
    params: {arch: complex, rank: 8, epochs: 1, batch_size: 2000, device: cpu}
  - id: report
    kind: report
"""


def test_tkg_steps_write_checkpoints_metrics_and_a_report(tmp_path, monkeypatch):
    monkeypatch.setenv("CHRONOPROBE_CACHE", str(tmp_path / "cache"))
    config = tmp_path / "exp.yaml"
    config.write_text(textwrap.dedent(CONFIG).lstrip(), encoding="utf-8")
    run = tmp_path / "run"
    with open("/dev/null", "w") as sink:
        run_experiment(config, run, console=Console(file=sink))
    steps = run / "steps"
    metrics = json.loads((steps / "temporal" / "metrics.json").read_text())
    assert {"mrr", "hits@1", "hits@3", "hits@10", "time_accuracy"} <= set(metrics)
    assert "time_accuracy" not in json.loads((steps / "static" / "metrics.json").read_text())
    saved = checkpoint.load(steps / "temporal")
    assert saved.epoch == 2 and saved.config["train"]["seed"] == 1  # the experiment's seed
    assert not (steps / "temporal" / ".shards").exists()

    record = json.loads((steps / "temporal" / "step.json").read_text())
    first = tkg_section(steps / "temporal", record)
    stats = next(b for b in first.blocks if isinstance(b, Stats))
    run_info = load_run(run)
    compared = section_kind("tkg").compare(
        run_info, [s for s in run_info.steps if s.kind == "tkg" and s.done]
    )
    assert stats.items["MRR"].startswith(f"{metrics['mrr']:.4f} [")  # with its interval
    chart = next(b for b in compared if isinstance(b, Image))
    assert [row[0] for row in chart.data.rows] == ["temporal (tcomplex)", "static (complex)"]
    assert chart.data.rows[1][-1] == DASH  # ComplEx has no time accuracy
    # its own bars say what its tiles do not: the MRR of each query direction
    own = next(b for b in first.blocks if isinstance(b, Image))
    assert [row[0] for row in own.data.rows] == list(DIRECTIONS.values())
    for row, key in zip(own.data.rows, DIRECTIONS, strict=True):
        assert row[1].startswith(f"{metrics[key]:.4f} [") and row[2] == metrics[f"{key}_n"]
    html = (run / "report.html").read_text()
    assert "Temporal KG embeddings: temporal" in html and "could not be built" not in html
