"""The build section of a builder without figures of its own shows its counts, not an error;
its title names the step (two probe sets of one family read apart)."""

from __future__ import annotations

import json

from chronoprobe.report.blocks import Stats
from chronoprobe.report.sections import section_kind


def test_a_builder_without_figures_gets_its_tiles(tmp_path):
    step = tmp_path / "built"
    step.mkdir()
    metrics = {"family": "dates", "facts": 30, "statements": 501}
    (step / "metrics.json").write_text(json.dumps(metrics))
    (step / "stats.json").write_text(json.dumps([{"no": "figures"}]))
    for family, title in (
        ("dates", "Statements under right and wrong dates: built"),
        ("mine", None),
    ):
        (step / "metrics.json").write_text(json.dumps({**metrics, "family": family}))
        record = {"id": "built", "kind": "build", "params": {"family": family}}
        section = section_kind("build", record).build(step, record)
        assert section.title == (title or "Probe set built (mine)")
        assert section.blocks == [Stats({"facts": 30, "statements": 501})]
