"""A view that says only what it must (every other field of `View` at its default) runs through
the probe step and the report: over drift rows too, where the view's own figures, not a table
of view names, make the models x periods matrix, and its steps get the section of any view."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.jsonl import write_jsonl
from chronoprobe.metrics.uncertainty import RESAMPLES, proportion, summary
from chronoprobe.probes.view import VIEWS, ProbeParams, View
from chronoprobe.report.blocks import Stats, Table, Text
from chronoprobe.report.sections import section_kind

runner = CliRunner()


class Oracle:
    """Answers in place of a model: the view below asks it nothing."""

    name = "oracle"
    family = "none"


def says_ajax(model, rows, params, progress):
    """Right where Ajax is an answer: a guess that depends on the query's labels alone."""
    return [{**row.key(), "right": "Ajax" in row.labels} for row in rows]


def hits(predictions, resamples=RESAMPLES):
    return summary(len(predictions), {"hits": proportion([p["right"] for p in predictions])})


def ajax_view(**options) -> View:
    return View(
        name="ajax",
        help="Is Ajax among the answers?",
        params=ProbeParams,
        predict=says_ajax,
        summarize=hits,
        columns=lambda: [
            ("id", pa.string()),
            ("period", pa.string()),
            ("split", pa.string()),
            ("right", pa.bool_()),
        ],
        stand_in=lambda params: Oracle(),
        **options,
    )


ROWS = [  # (period, split, labels): Ajax answers 3 of the 2019 rows and 1 of the 2020 rows
    ("2019", None, ["Ajax"]),
    ("2019", None, ["Ajax", "PSV"]),
    ("2019", None, ["Ajax"]),
    ("2019", None, ["Celtic"]),
    ("2020", "unchanged", ["Ajax"]),
    ("2020", "updated", ["PSV"]),
    ("2020", "new", ["Celtic"]),
]


@pytest.fixture
def probed(tmp_path, request):
    """The rows probed by the ajax view (its ``drift_rows`` as the test asks) for two models."""
    saved = dict(VIEWS._entries)
    VIEWS.add("ajax", ajax_view(**request.param))
    data = tmp_path / "data"
    data.mkdir()
    write_jsonl(
        data / "examples.jsonl",
        [
            {
                "id": f"r{i}",
                "query": f"Player {i % 4} played for [MASK].",
                "answer_labels": labels,
                "period": period,
                **({"split": split} if split else {}),
            }
            for i, (period, split, labels) in enumerate(ROWS)
        ],
    )
    out = tmp_path / "out"
    result = runner.invoke(
        app, ["probe", "ajax", str(data), "-m", "one", "-m", "two", "-o", str(out), "--no-cache"]
    )
    try:
        assert result.exit_code == 0, result.output
        yield out, result.output
    finally:
        VIEWS._entries = saved


@pytest.mark.parametrize("probed", [{}], indirect=True)
def test_a_view_at_the_defaults_is_no_drift_view_and_gets_the_section_of_any_view(probed):
    probed, printed = probed
    assert not ajax_view().drift_rows
    assert not (probed / "matrix.json").exists()
    metrics = json.loads((probed / "metrics.json").read_text())
    one = metrics["models"]["one"]
    assert one["n"] == 7 and one["hits"] == pytest.approx(4 / 7)  # summarize, as it is
    assert set(metrics) == {"view", "rows", "model_count", "models"}  # no figures over models
    low, high = one["hits_ci95"]
    assert f"0.571 [{low:.3f}, {high:.3f}]" in printed  # the command shows every figure
    record = json.loads((probed / "step.json").read_text())
    section = section_kind("probe", record).build(probed, record)
    assert section.title == f"Probe ajax: {record['id']}"
    assert section.blocks[0] == Stats({"view": "ajax", "rows": 7, "models": 2})
    table = section.blocks[1]
    assert isinstance(table, Table) and table.columns == ["model", "hits", "predicted", "skipped"]
    assert table.rows[0] == ["one", f"0.571 [{low:.3f}, {high:.3f}]", 7, 0]
    assert not any(isinstance(b, Text) and b.style == "error" for b in section.blocks)


@pytest.mark.parametrize("probed", [{"drift_rows": True}], indirect=True)
def test_a_drift_view_at_the_defaults_gets_its_matrix_from_its_own_figures(probed):
    probed, _ = probed
    tables = json.loads((probed / "matrix.json").read_text())
    assert tables["default_metric"] == "hits" and list(tables["metrics"]) == ["hits"]
    by_split = tables["metrics"]["hits"]
    assert by_split["all"]["periods"] == ["2019", "2020"]
    assert by_split["all"]["values"] == [[0.75, 1 / 3], [0.75, 1 / 3]]
    assert by_split["all"]["counts"] == [[4, 3], [4, 3]]
    assert by_split["updated"]["values"] == [[None, 0.0], [None, 0.0]]
    record = json.loads((probed / "step.json").read_text())
    section = section_kind("probe", record).build(probed, record)
    assert section.title == f"Probe ajax: {record['id']}"
    assert not any(isinstance(b, Text) and b.style == "error" for b in section.blocks)
