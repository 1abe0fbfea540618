"""A view that says only what it must (every other field of `View` at its default) runs through
the probe step and the report: over drift rows too, where the view's own figures, not a table
of view names, make the models x periods matrix, and its steps get the section of any view."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from pydantic import Field
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.jsonl import write_jsonl
from chronoprobe.metrics.uncertainty import RESAMPLES, proportion, summary
from chronoprobe.models.spec import SPEC_SCHEMES, ModelSpec
from chronoprobe.probes.view import VIEWS, DriftMatrix, ProbeParams, View
from chronoprobe.report.blocks import Stats, Table, Text
from chronoprobe.report.sections import section_kind

runner = CliRunner()


class Oracle:
    """Answers in place of a model: the view below asks it nothing."""

    name = "oracle"
    family = "none"


ASKED: list = []  # the oracles loaded


class OracleSpec(ModelSpec):
    """``oracle:NAME``: a spec scheme of the test's own, as a plugin adds one."""

    scheme = "oracle"

    def weight_files(self) -> list:
        return []

    def load(self, options) -> Oracle:
        ASKED.append(self.text)
        return Oracle()


def says_ajax(model, rows, params, progress):
    """Right where Ajax is an answer: a guess that depends on the query's labels alone."""
    return [{**row.key(), "right": "Ajax" in row.labels} for row in rows]


def hits(predictions, resamples=RESAMPLES):
    return summary(len(predictions), {"hits": proportion([p["right"] for p in predictions])})


def ajax_view(**options) -> View:
    fields = {
        "name": "ajax",
        "help": "Is Ajax among the answers?",
        "params": ProbeParams,
        "predict": says_ajax,
        "summarize": hits,
        "columns": lambda: [
            ("id", pa.string()),
            ("period", pa.string()),
            ("split", pa.string()),
            ("right", pa.bool_()),
        ],
    }
    return View(**{**fields, **options})


ROWS = [  # (period, split, labels): Ajax answers 3 of the 2019 rows and 1 of the 2020 rows
    ("2019", None, ["Ajax"]),
    ("2019", None, ["Ajax", "PSV"]),
    ("2019", None, ["Ajax"]),
    ("2019", None, ["Celtic"]),
    ("2020", "unchanged", ["Ajax"]),
    ("2020", "updated", ["PSV"]),
    ("2020", "new", ["Celtic"]),
]


def probe(tmp_path, view: View, rows=ROWS, *options: str):
    """``rows`` probed by ``view`` (registered as ajax) for two models: the command's exit
    code and what it printed."""
    saved, schemes = dict(VIEWS._entries), dict(SPEC_SCHEMES._entries)
    VIEWS.add("ajax", view)
    SPEC_SCHEMES.add("oracle", OracleSpec)
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
            for i, (period, split, labels) in enumerate(rows)
        ],
    )
    models = ["-m", "oracle:one", "-m", "oracle:two"]
    args = ["probe", "ajax", str(data), *models, "-o", str(tmp_path / "out")]
    try:
        result = runner.invoke(app, [*args, "--no-cache", *options])
    finally:
        VIEWS._entries, SPEC_SCHEMES._entries = saved, schemes
    return result.exit_code, result.output


@pytest.fixture
def probed(tmp_path, request):
    """The rows probed by the ajax view (its ``drift`` as the test asks) for two models."""
    code, printed = probe(tmp_path, ajax_view(**request.param))
    assert code == 0, printed
    return tmp_path / "out", printed


@pytest.mark.parametrize("probed", [{}], indirect=True)
def test_a_view_at_the_defaults_is_no_drift_view_and_gets_the_section_of_any_view(probed):
    probed, printed = probed
    assert ajax_view().drift is None
    assert not (probed / "matrix.json").exists()
    metrics = json.loads((probed / "metrics.json").read_text())
    one = metrics["models"]["oracle:one"]
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
    assert table.rows[0] == ["oracle:one", f"0.571 [{low:.3f}, {high:.3f}]", 7, 0]
    assert not any(isinstance(b, Text) and b.style == "error" for b in section.blocks)


@pytest.mark.parametrize("probed", [{"drift": DriftMatrix()}], indirect=True)
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


class WithDeleted(ProbeParams):
    include_deleted: bool = Field(False, description="Count deleted rows overall.")


# Ajax's membership of Player 0's club ended before 2020: a deleted row, the previous answers
WITH_DELETED = [*ROWS, ("2020", "deleted", ["Ajax"])]


@pytest.mark.parametrize(
    ("options", "hits", "n"), [((), 4 / 7, 7), (("--include-deleted",), 5 / 8, 8)]
)
def test_a_drift_view_at_the_defaults_leaves_the_deleted_rows_out_as_its_matrix_does(
    tmp_path, options, hits, n
):
    # Failed before: the overall figure counted the deleted row (5/8), the matrix did not.
    drift = DriftMatrix(keeps_deleted=lambda params: params.include_deleted)
    view = ajax_view(drift=drift, params=WithDeleted)
    code, printed = probe(tmp_path, view, WITH_DELETED, *options)
    assert code == 0, printed
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    one = metrics["models"]["oracle:one"]
    assert one["n"] == n and one["hits"] == pytest.approx(hits)
    assert one["overall_excludes"] == ([] if options else ["deleted"])
    matrix = json.loads((tmp_path / "out" / "matrix.json").read_text())["metrics"]["hits"]
    assert matrix["all"]["counts"][0] == [4, n - 4]  # 2019, 2020: as the overall figure
    assert matrix["deleted"]["values"][0] == [None, 1.0]  # the deleted split keeps its own


def test_a_row_by_row_view_keeps_every_row_in_its_figures(tmp_path):
    code, printed = probe(tmp_path, ajax_view(params=WithDeleted), WITH_DELETED)
    assert code == 0, printed
    one = json.loads((tmp_path / "out" / "metrics.json").read_text())["models"]["oracle:one"]
    assert one["n"] == 8 and one["hits"] == pytest.approx(5 / 8) and "overall_excludes" not in one


def test_columns_without_a_key_are_refused_before_any_row_is_answered(tmp_path):
    # Failed before: every row was answered, then pyarrow's KeyError ('Field "split" does not
    # exist in schema') ended the command in a traceback.
    ASKED.clear()
    columns = lambda: [("id", pa.string()), ("period", pa.string()), ("right", pa.bool_())]  # noqa: E731
    code, printed = probe(tmp_path, ajax_view(columns=columns))
    assert code == 2 and not ASKED and not (tmp_path / "out").exists()
    assert "the ajax view's columns() lacks 'split', one of its keys (id, period, split)" in (
        " ".join(printed.split())
    )


def test_a_prediction_that_does_not_fit_its_column_is_one_line_naming_the_column(tmp_path):
    # Failed before: pyarrow.lib.ArrowTypeError: Expected bytes, got a 'bool' object
    columns = lambda: [  # noqa: E731
        ("id", pa.string()),
        ("period", pa.string()),
        ("split", pa.string()),
        ("right", pa.string()),
    ]
    code, printed = probe(tmp_path, ajax_view(columns=columns))
    assert code == 2 and "Traceback" not in printed
    assert (
        "view ajax: column 'right' is string in its columns(), but predict gave True (bool) "
        "for row 'r0'; make the two agree"
    ) in " ".join(printed.split())
