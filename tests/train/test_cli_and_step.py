"""`chronoprobe train ...` end to end, and the ``memorize`` step with its report section."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pyarrow.parquet as pq
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.jsonl import write_jsonl
from chronoprobe.report.blocks import Image, Stats
from chronoprobe.report.sections import section_kind
from chronoprobe.runs.engine import run_experiment

runner = CliRunner()


def test_memorize_then_recite(tmp_path, world_rows):
    path = tmp_path / "statements.jsonl"
    write_jsonl(path, world_rows[:40])
    out = tmp_path / "run"
    args = ["train", "memorize", str(path), "-o", str(out), "--epochs", "2", "--batch-size", "16"]
    result = runner.invoke(app, [*args, "--time-masking", "0.1", "--duplicates", "2"])
    assert result.exit_code == 0, result.output
    assert "trained 2 epochs" in result.output
    assert (out / "checkpoints" / "epoch-0002" / "model.safetensors").is_file()
    again = runner.invoke(app, [*args, "--time-masking", "0.1", "--duplicates", "2"])
    assert again.exit_code == 0 and "already trained for 2 epochs" in again.output

    result = runner.invoke(app, ["train", "recite", str(out), str(path), "--json"])
    assert result.exit_code == 0, result.output
    metrics = json.loads(result.stdout[result.stdout.index("{") : result.stdout.rindex("}") + 1])
    assert metrics["statements"] == 40 and set(metrics["by_answers"]) <= {"single", "multi"}
    table = pq.read_table(out / "recite-statements.parquet")
    assert table.num_rows == 40
    assert json.loads((out / "recite-statements.json").read_text()) == metrics

    chosen = tmp_path / "preds.parquet"
    result = runner.invoke(app, ["train", "eval", str(out), str(path), "-o", str(chosen)])
    assert result.exit_code == 0, result.output
    assert "acc@1" in result.output and chosen.is_file()


def test_user_errors_are_one_line(tmp_path, world_rows):
    path = tmp_path / "statements.jsonl"
    write_jsonl(path, [world_rows[0], {"id": "x"}])
    result = runner.invoke(app, ["train", "memorize", str(path), "-o", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "statements.jsonl:2:" in result.output and "Traceback" not in result.output
    result = runner.invoke(app, ["train", "recite", str(tmp_path / "none"), str(path)])
    assert result.exit_code == 2
    result = runner.invoke(
        app, ["train", "memorize", str(path), "-o", str(tmp_path / "o"), "--preset", "huge"]
    )
    assert result.exit_code == 2 and "unknown preset 'huge'" in result.output


def run_feed(tmp_path, monkeypatch, params: str) -> Path:
    """Run a 200-fact synthetic world and a memorize step ``feed`` with ``params`` (YAML flow
    mapping) built from it; the step's directory."""
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
    )
    run_experiment(config, tmp_path / "run")
    return tmp_path / "run" / "steps" / "feed"


def test_memorize_step_and_report_section(tmp_path, monkeypatch):
    step = run_feed(
        tmp_path, monkeypatch, "{task: boundary, epochs: 2, batch_size: 16, device: cpu}"
    )
    metrics = json.loads((step / "metrics.json").read_text())
    assert metrics["statements"] > 0 and metrics["training"]["epochs"] == 2
    assert set(metrics["by_slot"]) == {"start", "end"}  # boundary training rows
    assert metrics["query_set"]["statements"] > 0
    assert (step / "model" / "model.safetensors").is_file()
    assert (
        pq.read_table(step / "queries-predictions.parquet").num_rows
        == (metrics["query_set"]["statements"])
    )
    record = json.loads((step / "step.json").read_text())
    section = section_kind("memorize").build(step, record)
    assert section.title == "LAMA-TK reciting: feed"
    assert sum(isinstance(b, Image) for b in section.blocks) >= 4  # answers, relation, slot x2
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
    assert set(metrics["by_answers"]) == {"single"}
