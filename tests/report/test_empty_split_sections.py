"""A split without a question or a query has no figure (None in metrics.json): the kgqa and
tkg sections show "-" for it, draw no bar, and still render."""

from __future__ import annotations

import json

import numpy as np

from chronoprobe.kgqa.evaluate import breakdown
from chronoprobe.report.blocks import Image, Stats
from chronoprobe.report.sections import section_kind


def _section(tmp_path, kind: str, metrics: dict):
    (tmp_path / "metrics.json").write_text(json.dumps(metrics))
    record = {"id": "empty", "kind": kind, "params": {}}
    return section_kind(kind, record).build(tmp_path, record)


def test_a_kgqa_step_without_a_test_question_shows_dashes(tmp_path):
    metrics = breakdown(np.zeros(0, np.int64), [], [])
    assert metrics["hits@1"] is None
    section = _section(tmp_path, "kgqa", {**metrics, "model": "cronkgqa"})
    tiles = next(b for b in section.blocks if isinstance(b, Stats)).items
    assert tiles["Hits@1"] is None and tiles["complex Hits@1"] is None  # shown as "-"
    bars = next(b for b in section.blocks if isinstance(b, Image))
    overall = next(row for row in bars.data.rows if row[1] == "overall")
    assert overall[2:] == [0, "-", "-"]


def test_a_tkg_step_without_a_test_fact_shows_dashes(tmp_path):
    figures = ("mrr", "hits@1", "hits@3", "hits@10", "object_mrr", "subject_mrr")
    metrics = {"model": "tcomplex", "queries": 0, "n": 0}
    metrics |= {k: None for k in figures} | {f"{k}_ci95": None for k in figures}
    section = _section(tmp_path, "tkg", metrics)
    tiles = next(b for b in section.blocks if isinstance(b, Stats)).items
    assert tiles["MRR"] == tiles["Hits@10"] == "-"
    # no direction bars without a figure on either side
    assert not any(isinstance(b, Image) for b in section.blocks)
