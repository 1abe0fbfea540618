"""The timeline report section: the complexity x capability grid, with n and intervals, and
accuracy by answer type, for a generate step's models and for the symbolic oracle."""

from __future__ import annotations

import json

from chronoprobe.probes.categories import CATEGORIES
from chronoprobe.report.blocks import Image, Stats, Table
from chronoprobe.report.sections import section_kind


def group(n: int, right: int) -> dict:
    from chronoprobe.metrics.uncertainty import proportion, summary

    return summary(n, {"accuracy": proportion([True] * right + [False] * (n - right))})


TIMELINE = {
    "lenient": group(10, 7),
    "duration_tolerance": "within 10% of the answer, at least one unit of the question "
    "(lenient figure); exact otherwise",
    "by_answer_type": {"yes/no": group(4, 3), "duration": group(2, 1), "entity": group(4, 2)},
    "grid": {
        "simple x retrieval": group(2, 1),
        "complex x timeline operation": group(4, 3),
        "medium x semantic operation": group(4, 2),
    },
}


def tables(blocks) -> list[Table]:
    return [b.data if isinstance(b, Image) else b for b in blocks if isinstance(b, Image | Table)]


def test_a_generate_step_shows_each_models_grid_and_answer_types(tmp_path):
    overall = {"n": 10, "accuracy": 0.6, "other_period": None, **dict.fromkeys(CATEGORIES, 0.1)}
    model = {"predicted": 10, "match": "names", "overall": overall, "timeline": TIMELINE}
    (tmp_path / "metrics.json").write_text(json.dumps({"models": {"smol": model}}))
    record = {"id": "asked", "kind": "probe", "params": {"view": "generate"}}
    section = section_kind("probe", record).build(tmp_path, record)
    grid = next(b for b in section.blocks if isinstance(b, Image) and "complexity" in b.alt)
    assert grid.alt == "Accuracy of smol on timeline questions by complexity and capability"
    assert [list(r) for r in grid.data.rows] == [
        ["simple", "retrieval", 2, "0.500 [0.095, 0.905]"],
        ["complex", "timeline operation", 4, "0.750 [0.301, 0.954]"],
        ["medium", "semantic operation", 4, "0.500 [0.150, 0.850]"],
    ]
    by_type = tables(section.blocks)[-1]
    assert by_type.columns[0] == "answer type"
    assert [r[:2] for r in by_type.rows] == [["entity", 4], ["duration", 2], ["yes/no", 4]]
    assert "0.700 [0.397, 0.892] over all questions" in by_type.caption


def test_the_grid_orders_complexity_and_capability_as_built_and_keeps_unknown_ones(monkeypatch):
    from chronoprobe.report import timeline_section

    seen = {}

    def fake_heatmap(values, rows, columns, **kwargs):
        seen.update(values=values, rows=rows, columns=columns, counts=kwargs["counts"])

    monkeypatch.setattr(timeline_section, "heatmap", fake_heatmap)
    monkeypatch.setattr(timeline_section, "embed", lambda fig, **kw: kw)
    timeline_section.grid_figure("m", {**TIMELINE["grid"], "medium x my capability": group(1, 1)})
    assert seen["rows"] == ["simple", "medium", "complex"]
    assert seen["columns"] == [
        "retrieval", "timeline\noperation", "semantic\noperation", "my\ncapability"
    ]  # fmt: skip
    assert seen["counts"] == [[2, 0, 0, 0], [0, 0, 4, 1], [0, 4, 0, 0]]
    assert seen["values"][0][0] == 0.5 and seen["values"][1][3] == 1.0
    assert seen["values"][0][1] != seen["values"][0][1]  # NaN: no question in that cell


def test_the_oracle_section_says_what_was_dropped(tmp_path):
    metrics = {"family": "timeline-oracle", "facts": 338, "facts_dropped": 73, **group(10, 6),
               "unanswered": 3, "by_answer_type": TIMELINE["by_answer_type"],
               "grid": TIMELINE["grid"]}  # fmt: skip
    (tmp_path / "metrics.json").write_text(json.dumps(metrics))
    record = {"id": "lossy", "kind": "build", "params": {"family": "timeline-oracle",
              "drop": 0.2, "seed": 0}}  # fmt: skip
    kind = section_kind("build", record)
    assert kind.headline == ("accuracy", "unanswered")
    section = kind.build(tmp_path, record)
    assert section.title == "Timeline oracle: lossy"
    assert "less 73 of its 338 facts (drop 0.2, seed 0)" in section.blocks[0].text
    # 6 of 10: the figure with its Wilson interval, as every tile of a share shows it
    tiles = {"accuracy": "0.600 [0.313, 0.832]", "questions": 10, "unanswered": 3}
    assert section.blocks[1] == Stats(tiles)
    assert [list(r)[:3] for r in tables(section.blocks)[0].rows][1] == [
        "complex", "timeline operation", 4
    ]  # fmt: skip
