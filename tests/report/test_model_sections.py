"""Probe sections of the generative views: a model that answered nothing gets a note, not a
broken section."""

from __future__ import annotations

import json

import pytest

from chronoprobe.report.blocks import Text
from chronoprobe.report.sections import section_kind


@pytest.mark.parametrize(
    ("view", "title"),
    [("generate", "Generated answers"), ("date-context", "Date-context consistency")],
)
def test_a_model_that_answered_nothing_is_said_so(tmp_path, view, title):
    skipped = {"longer than the model's 16 positions": 3}
    metrics = {"view": view, "models": {"tiny": {"predicted": 0, "skipped": skipped}}}
    (tmp_path / "metrics.json").write_text(json.dumps(metrics))
    record = {"id": "asked", "kind": "probe", "params": {"view": view}}
    section = section_kind("probe", record).build(tmp_path, record)
    assert section.title == f"{title}: asked"
    assert section.blocks == [
        Text(
            "tiny answered none of the rows (skipped: 3 longer than the model's 16 positions).",
            style="error",
        )
    ]
