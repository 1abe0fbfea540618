"""`chronoprobe train ...` end to end, and the ``memorize`` step with its report section."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pyarrow.parquet as pq
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.report.blocks import Image, Stats
from chronoprobe.report.sections import section_kind
from chronoprobe.runs.engine import run_experiment

runner = CliRunner()


def test_memorize_then_recite(tmp_path, world_rows, write_statements):
    """`train memorize` trains (a second call is the cached step); `probe recite` recites."""
    path = tmp_path / "statements.jsonl"
    write_statements(path, world_rows[:40])
    out = tmp_path / "run"
    args = ["train", "memorize", str(path), "-o", str(out), "--epochs", "2", "--batch-size", "16"]
    result = runner.invoke(app, [*args, "--time-masking", "0.1", "--duplicates", "2"])
    assert result.exit_code == 0, result.output
    assert "trained 2 epochs on 40 statements" in result.output
    assert "resumed" not in result.output  # a fresh run says nothing of resuming
    assert (out / "model" / "model.safetensors").is_file()
    again = runner.invoke(app, [*args, "--time-masking", "0.1", "--duplicates", "2"])
    assert again.exit_code == 0 and "cached" in again.output

    recite = ["probe", "recite", str(path), "-m", str(out / "model"), "--json"]
    result = runner.invoke(app, [*recite, "-o", str(tmp_path / "recited")])
    assert result.exit_code == 0, result.output
    metrics = json.loads(result.stdout[result.stdout.index("{") : result.stdout.rindex("}") + 1])
    figures = metrics["models"][str(out / "model")]
    assert figures["statements"] == 40 and set(figures["by_answers"]) <= {"single", "multi"}
    table = pq.read_table(tmp_path / "recited" / "predictions.parquet")
    assert table.num_rows == 40 and table.column("acc_at_1").type == "bool"


def test_user_errors_are_one_line(tmp_path, world_rows, write_statements):
    path = tmp_path / "statements.jsonl"
    write_statements(path, [world_rows[0], {"id": "x"}])
    result = runner.invoke(app, ["train", "memorize", str(path), "-o", str(tmp_path / "o")])
    assert result.exit_code != 0
    assert "statements.jsonl:2:" in result.output and "Traceback" not in result.output
    result = runner.invoke(
        app, ["train", "memorize", str(path), "-o", str(tmp_path / "o"), "--preset", "huge"]
    )
    assert result.exit_code == 2 and "huge" in result.output
    assert not (tmp_path / "o").exists()


RECITE = """\
  - id: statements
    kind: probe
    inputs: {data: feed, trained: feed}
    params: {view: recite, device: cpu}
  - id: queries
    kind: probe
    inputs: {data: feed, trained: feed}
    params: {view: recite, rows: queries.jsonl, device: cpu}
"""


def run_feed(tmp_path, monkeypatch, params: str, recite: bool = False) -> Path:
    """Run a 200-fact synthetic world and a memorize step ``feed`` with ``params`` (YAML flow
    mapping) built from it (and, with ``recite``, recite steps ``statements`` and ``queries``);
    the step's directory."""
    monkeypatch.setenv("CHRONOPROBE_CACHE", str(tmp_path / "cache"))
    config = tmp_path / "exp.yaml"
    config.write_text(
        textwrap.dedent(
            f"""
            name: lamatk-smoke
            steps:
              - id: world
                kind: kg
                params: {{source: synth, facts: 200, text: false}}
              - id: feed
                kind: memorize
                inputs: {{kg: world}}
                params: {params}
            """
        )
        + (RECITE if recite else "")
    )
    run_experiment(config, tmp_path / "run")
    return tmp_path / "run" / "steps" / "feed"


def test_memorize_and_recite_steps_and_their_report_sections(tmp_path, monkeypatch):
    step = run_feed(
        tmp_path,
        monkeypatch,
        "{task: boundary, epochs: 2, batch_size: 16, device: cpu}",
        recite=True,
    )
    trained = json.loads((step / "metrics.json").read_text())
    assert trained["statements"] > 0 and trained["epochs"] == 2
    assert (step / "model" / "model.safetensors").is_file()
    steps = step.parent
    recited = json.loads((steps / "statements" / "metrics.json").read_text())["models"]["model"]
    assert recited["statements"] == trained["statements"]
    assert set(recited["by_slot"]) == {"start", "end"}  # boundary training rows
    queries = json.loads((steps / "queries" / "metrics.json").read_text())["models"]["model"]
    assert queries["statements"] > 0
    assert (
        pq.read_table(steps / "queries" / "predictions.parquet").num_rows == (queries["statements"])
    )
    assert section_kind("memorize").build(step, {"id": "feed"}).title == "LAMA-TK training: feed"
    record = json.loads((steps / "statements" / "step.json").read_text())
    section = section_kind("probe", record).build(steps / "statements", record)
    assert section.title == "LAMA-TK reciting: statements"
    assert sum(isinstance(b, Image) for b in section.blocks) == 3  # answers, relation, slot
    assert isinstance(section.blocks[1], Stats)


def test_a_sampled_memorize_step_records_its_draw(tmp_path, monkeypatch):
    """Built from a KG with a sample and without conflicts, the step trains on the draw less its
    multi-answer statements and says so in metrics.json."""
    step = run_feed(
        tmp_path,
        monkeypatch,
        "{conflicts: false, sample: 120, epochs: 1, batch_size: 32, device: cpu}",
    )
    metrics = json.loads((step / "metrics.json").read_text())
    drawn = json.loads((step / "stats.json").read_text())["sample"]
    assert metrics["sample"] == drawn
    assert drawn["requested"] == 120 and drawn["statements"] >= 120 and drawn["multi_answer"] > 0
    assert metrics["statements"] == drawn["statements"] - drawn["multi_answer"]
