"""Reports of runs repeated over seeds, and error bars from intervals: a step's copies are read
as the run wrote them, compared as one entry (mean ± sd), and figures carry error bars."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from chronoprobe.kgqa.evaluate import breakdown
from chronoprobe.report import write_report
from chronoprobe.report.blocks import Image, with_uncertainty
from chronoprobe.report.kgqa_section import hits_bars
from chronoprobe.report.plots import error_bar, error_rows
from chronoprobe.report.rundir import load_run
from chronoprobe.report.sections import over_seeds

TYPES = ["simple_entity", "simple_time", "first_last", "first_last"]
ANSWERS = ["entity", "time", "entity", "time"]


def _qa_metrics(ranks: list[int]) -> dict:
    metrics = breakdown(np.array(ranks), TYPES, ANSWERS)
    return {**metrics, "model": "cronkgqa", "embeddings": "tcomplex", "answer_type_given": False}


def _write_step(run_dir, step_id: str, record: dict, metrics: dict) -> None:
    step_dir = run_dir / "steps" / step_id
    step_dir.mkdir(parents=True)
    (step_dir / "metrics.json").write_text(json.dumps(metrics))
    full = {"id": step_id, "kind": "kgqa", "params": {}, "inputs": {}, "outputs": [], **record}
    (step_dir / "step.json").write_text(json.dumps(full))


@pytest.fixture
def seeded_run(tmp_path):
    """A run of a config with seeds [0, 1, 2]: the QA step ran once per seed, the baseline
    (as a config without seeds would) once."""
    run_dir = tmp_path / "run"
    config = {
        "name": "seeded",
        "seed": 0,
        "seeds": [0, 1, 2],
        "steps": [
            {"id": "qa", "kind": "kgqa", "params": {}},
            {"id": "baseline", "kind": "kgqa", "params": {}},
        ],
    }
    run_dir.mkdir()
    (run_dir / "config.yaml").write_text(yaml.safe_dump(config))
    # Hits@1 of the four questions: 1/4, 2/4, 3/4 over the seeds: mean 0.5, sd 0.25
    for seed, ranks in enumerate(([1, 5, 5, 5], [1, 1, 5, 5], [1, 1, 1, 5])):
        _write_step(run_dir, f"qa-seed{seed}", {"step": "qa", "seed": seed}, _qa_metrics(ranks))
    _write_step(run_dir, "baseline", {}, _qa_metrics([5, 5, 5, 1]))
    return run_dir


def test_the_report_reads_each_seed_copy(seeded_run):
    run = load_run(seeded_run)
    assert [s.id for s in run.steps] == ["qa-seed0", "qa-seed1", "qa-seed2", "baseline"]
    assert all(s.done for s in run.steps)
    entries = over_seeds(run.steps)
    assert [label for label, _ in entries] == ["qa (3 seeds)", "baseline"]
    merged = entries[0][1]
    assert merged["hits@1"] == pytest.approx(0.5) and merged["hits@1_sd"] == pytest.approx(0.25)
    assert merged["seeds"] == 3 and "hits@1_ci95" not in merged
    # nested groups too: simple Hits@1 is 1/2, 2/2, 2/2 over the seeds
    assert merged["simple"]["hits@1"] == pytest.approx(5 / 6)
    assert merged["simple"]["hits@1_sd"] == pytest.approx(np.std([0.5, 1, 1], ddof=1))
    assert with_uncertainty(merged, "hits@1") == "0.500 ± 0.250"
    assert entries[1][1]["hits@1"] == 0.25  # a step run once stays as it is

    figure = hits_bars(entries)
    assert isinstance(figure, Image) and figure.data is not None
    cells = {(row[0], row[1]): row[3] for row in figure.data.rows}
    assert cells[("qa (3 seeds) (cronkgqa + tcomplex)", "overall")] == "0.500 ± 0.250"
    assert cells[("baseline (cronkgqa + tcomplex)", "overall")] == "0.250 [0.046, 0.699]"

    html = write_report(seeded_run).read_text(encoding="utf-8")
    assert "2 QA models, side by side (a step repeated over seeds: the mean" in html
    assert "qa-seed2" in html and "0.250 [0.046, 0.699]" in html


def test_a_step_not_repeated_is_read_as_before(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    config = {"name": "plain", "seed": 0, "steps": [{"id": "qa", "kind": "kgqa"}]}
    (run_dir / "config.yaml").write_text(yaml.safe_dump(config))
    _write_step(run_dir, "qa", {}, _qa_metrics([1, 2, 3, 4]))
    assert [s.id for s in load_run(run_dir).steps] == ["qa"]
    # seeds in the config, but this step never ran per seed (a kind that trains nothing)
    (run_dir / "config.yaml").write_text(yaml.safe_dump({**config, "seeds": [0, 1]}))
    assert [s.id for s in load_run(run_dir).steps] == ["qa"]


def test_error_bars_come_from_the_sd_or_the_interval():
    group = {"a": 0.5, "a_ci95": [0.2, 0.9], "b": 0.4, "b_sd": 0.1, "c": 0.3, "d": None}
    assert error_bar(group, "a") == pytest.approx((0.3, 0.4))
    assert error_bar(group, "b") == (0.1, 0.1)
    assert error_bar(group, "c") == (0.0, 0.0)  # no interval: no bar
    assert error_bar(group, "d") == (0.0, 0.0)
    assert error_rows([(group, "a"), (group, "b")]) == [
        [pytest.approx(0.3), 0.1],
        [pytest.approx(0.4), 0.1],
    ]


def test_a_lone_step_repeated_over_seeds_shows_its_mean_and_sd(seeded_run):
    """With no other step of its kind to compare with, a repeated step still shows its mean
    ± sd over the seeds (each copy's section shows only its own seed)."""
    import shutil

    shutil.rmtree(seeded_run / "steps" / "baseline")
    config = yaml.safe_load((seeded_run / "config.yaml").read_text())
    config["steps"] = config["steps"][:1]
    (seeded_run / "config.yaml").write_text(yaml.safe_dump(config))
    html = write_report(seeded_run).read_text(encoding="utf-8")
    assert "qa (3 seeds): the mean over the seeds, its error bar ± one sd:" in html
    assert "0.500 ± 0.250" in html and "side by side" not in html


def test_a_lone_step_run_once_is_not_compared_with_itself(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    config = {"name": "plain", "seed": 0, "steps": [{"id": "qa", "kind": "kgqa"}]}
    (run_dir / "config.yaml").write_text(yaml.safe_dump(config))
    _write_step(run_dir, "qa", {}, _qa_metrics([1, 2, 3, 4]))
    html = write_report(run_dir).read_text(encoding="utf-8")
    assert "± one sd:" not in html and "side by side" not in html
