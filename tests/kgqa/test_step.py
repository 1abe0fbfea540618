"""The `kgqa` step kind inside a run, and its report section."""

from __future__ import annotations

import json
import textwrap

import pytest
from rich.console import Console

from chronoprobe.kgqa import checkpoint
from chronoprobe.report.blocks import Image, Stats
from chronoprobe.report.kgqa_section import GROUPS, kgqa_section
from chronoprobe.report.rundir import load_run
from chronoprobe.report.sections import section_kind
from chronoprobe.runs.engine import run_experiment

CONFIG = """
name: t
seed: 1
steps:
  - id: world
    kind: kg
    params: {source: synth, facts: 600, text: false}
  - id: cronq
    kind: build
    inputs: {kg: world}
    params: {family: cronq, max_per_template: 40}
  - id: emb
    kind: tkg
    inputs: {kg: world}
    params: {arch: tcomplex, rank: 8, epochs: 1, batch_size: 2000, device: cpu}
  - id: cron
    kind: kgqa
    inputs: {questions: cronq, tkg: emb}
    params: {arch: cronkgqa, epochs: 2, device: cpu}
  - id: lm
    kind: kgqa
    inputs: {questions: cronq, tkg: emb}
    params: {arch: lm, epochs: 1, device: cpu, answer_type_given: true, question_input: template}
  - id: report
    kind: report
"""


def test_kgqa_steps_write_checkpoints_metrics_and_a_report(tmp_path, monkeypatch):
    monkeypatch.setenv("CHRONOPROBE_CACHE", str(tmp_path / "cache"))
    config = tmp_path / "exp.yaml"
    config.write_text(textwrap.dedent(CONFIG).lstrip(), encoding="utf-8")
    run = tmp_path / "run"
    with open("/dev/null", "w") as sink:
        run_experiment(config, run, console=Console(file=sink))
    steps = run / "steps"
    metrics = json.loads((steps / "cron" / "metrics.json").read_text())
    assert metrics["model"] == "cronkgqa" and metrics["embeddings"] == "tcomplex"
    assert {"simple", "complex", "types", "answer_types", "oracle_relation"} <= set(metrics)
    assert metrics["answer_type_given"] is False and metrics["question_input"] == "question"
    assert metrics["departures"] == []  # the paper's protocol
    saved = checkpoint.load(steps / "cron")
    assert saved.epoch == 2 and saved.config["train"]["seed"] == 1  # the experiment's seed
    assert saved.config["train"]["answer_type_given"] is False
    lm = json.loads((steps / "lm" / "metrics.json").read_text())
    assert lm["answer_type_given"] is True and "oracle_relation" not in lm
    assert lm["question_input"] == "template"
    assert [d.split(":")[0] for d in lm["departures"]] == [
        "the encoder read the question templates, which show which slot of the fact each entity "
        "fills",
        "answer type given",
    ]
    assert (steps / "cron" / "predictions.parquet").is_file()
    assert not (steps / "cron" / ".shards").exists()

    record = json.loads((steps / "cron" / "step.json").read_text())
    first = kgqa_section(steps / "cron", record)
    stats = next(b for b in first.blocks if isinstance(b, Stats))
    run_info = load_run(run)
    compared = section_kind("kgqa").compare(
        run_info, [s for s in run_info.steps if s.kind == "kgqa" and s.done]
    )
    assert stats.items["model"] == "cronkgqa + tcomplex"
    assert stats.items["Hits@1"] == metrics["hits@1"]
    assert stats.items["epoch tested"] == metrics["epoch"] in (1, 2)
    assert stats.items["answer type"] == "not given (one softmax)"
    assert stats.items["encoder reads"] == "the question text (the paper's protocol)"
    lm_record = json.loads((steps / "lm" / "step.json").read_text())
    lm_stats = next(b for b in kgqa_section(steps / "lm", lm_record).blocks if isinstance(b, Stats))
    assert lm_stats.items["encoder reads"] == "the templates (not the paper's protocol)"
    assert lm_stats.items["model"] == "lm, answer type given, reads templates"
    chart = next(b for b in compared if isinstance(b, Image))
    models = {row[0] for row in chart.data.rows}
    oracle = "oracle relation (TKG ceiling, tcomplex of cron)"
    assert models == {
        "cron (cronkgqa + tcomplex)",
        "lm (lm, answer type given, reads templates)",
        oracle,
    }
    overall = [row for row in chart.data.rows if row[1] == "overall"]
    assert [_figure(row[3]) for row in overall] == [
        pytest.approx(metrics["hits@1"], abs=5e-4),
        pytest.approx(lm["hits@1"], abs=5e-4),
    ]
    ceiling = {row[1]: _figure(row[3]) for row in chart.data.rows if row[0] == oracle}
    assert ceiling == {
        "simple": pytest.approx(metrics["oracle_relation"]["hits@1"], abs=5e-4),
        **{
            t: pytest.approx(v["hits@1"], abs=5e-4)
            for t, v in metrics["oracle_relation"]["types"].items()
        },
    }
    assert {row[1] for row in chart.data.rows} <= set(GROUPS)
    assert f"{oracle} simple " in chart.alt and "nan" not in chart.alt
    own = next(b for b in first.blocks if isinstance(b, Image))  # its own model only
    assert {row[0] for row in own.data.rows} == {"cron (cronkgqa + tcomplex)", oracle}
    html = (run / "report.html").read_text()
    assert "Temporal KG question answering: cron" in html and "could not be built" not in html


def test_kgqa_step_needs_a_cronq_build(tmp_path):
    import logging

    import pytest

    from chronoprobe.kgqa.ops import run_kgqa
    from chronoprobe.kgqa.params import KGQATrainParams
    from chronoprobe.step_context import StepContext
    from chronoprobe.steps import get_kind

    ctx = StepContext("qa", tmp_path, tmp_path, 0, logging.getLogger("t"))
    [problem] = get_kind("kgqa").problems(KGQATrainParams(), ["tkg"])
    assert problem.startswith("inputs.questions: required: A question directory")
    with pytest.raises(ValueError, match="must be a question directory"):
        run_kgqa(ctx, KGQATrainParams(), {"tkg": tmp_path, "questions": tmp_path})


def test_metrics_from_before_the_protocol_option_read_as_answer_type_given():
    """Those models were trained and tested with the gold answer type masking the candidates."""
    from chronoprobe.report.kgqa_section import hits_bars

    old = {"model": "cronkgqa", "embeddings": "tcomplex", "questions": 4, "hits@1": 0.5}
    old["hits@10"] = 0.75
    chart = hits_bars([("old", old), ("new", {**old, "answer_type_given": False})])
    assert {row[0] for row in chart.data.rows} == {
        "old (cronkgqa + tcomplex, answer type given)",
        "new (cronkgqa + tcomplex)",
    }


def _figure(cell: object) -> float:
    """The figure of a table cell that may carry its interval ('0.125 [0.035, 0.360]')."""
    return float(str(cell).split()[0])
