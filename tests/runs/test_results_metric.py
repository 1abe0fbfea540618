"""`chronoprobe results --metric` with a metric no step has: one line naming it and the known
metrics (all of them when few, else the nearest spellings), exit code 2, not an empty table."""

from __future__ import annotations

import duckdb
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.cli.run import _no_metric

from .test_seeds import CONFIG

runner = CliRunner()


def test_a_metric_no_step_has_is_refused_with_the_known_ones(write_config, tmp_path):
    out = tmp_path / "run"
    ran = runner.invoke(app, ["run", str(write_config(CONFIG)), "--out", str(out)])
    assert ran.exit_code == 0, ran.output
    shown = runner.invoke(app, ["results", str(out), "--metric", "nosuch"])
    assert shown.exit_code == 2
    said = " ".join(shown.output.split())
    assert said.startswith("error: --metric nosuch: no metric 'nosuch'; known: accuracy, ")
    assert runner.invoke(app, ["results", str(out), "--metric", "accuracy"]).exit_code == 0


def _metrics(names: list[str]) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("create table metrics (metric varchar, value double)")
    for name in names:
        con.execute("insert into metrics values (?, 1.0)", [name])
    con.execute("insert into metrics values ('family', null)")  # text: no figure
    return con


def test_among_many_metrics_the_nearest_are_named():
    con = _metrics([f"by_period.{year}.P@1" for year in range(2000, 2020)] + ["overall.P@1"])
    assert _no_metric(con, "overall.P@10") == (
        "--metric overall.P@10: no metric 'overall.P@10'; nearest: overall.P@1"
    )
    assert _no_metric(con, "nosuch") == (
        "--metric nosuch: no metric 'nosuch' among 21 metrics; list them with --sql "
        '"select distinct metric from metrics"'
    )
    assert _no_metric(_metrics([]), "x") == "--metric x: no metric 'x'; no step there has a figure"
