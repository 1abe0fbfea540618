"""`chronoprobe results`: SQL over a run's Parquet tables and metrics, and the CLI around it."""

from __future__ import annotations

import json

import duckdb
import pytest
from rich.console import Console
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.runs.engine import run_experiment
from chronoprobe.runs.results import build_results, open_results

CONFIG = """
name: exp
plugins: [chronoprobe_test_steps]
steps:
  - id: kg
    kind: tiny_kg
  - id: sq-2
    kind: squares
    params: {shards: 3, rows_per_shard: 2}
"""

runner = CliRunner()


@pytest.fixture
def run_dir(write_config, tmp_path):
    config = write_config(CONFIG)
    run_experiment(config, tmp_path / "run", console=Console(file=open("/dev/null", "w")))  # noqa: SIM115
    return tmp_path / "run"


def test_views_per_parquet_file_and_a_metrics_table(run_dir):
    con = open_results(run_dir)
    names = [r[0] for r in con.execute("show tables").fetchall()]
    assert sorted(names) == [
        "kg_entities",
        "kg_facts",
        "kg_relations",
        "metrics",
        "seeds",
        "sq_2_squares",
    ]
    assert con.execute("select sum(square) from sq_2_squares").fetchone() == (55,)
    rows = con.execute("select subject, object from kg_facts order by start_year").fetchall()
    assert rows == [("Q145", "Q264766"), ("Q145", "Q180589")]
    metrics = con.execute(
        "select step_id, kind, metric, value from metrics order by step_id, metric"
    ).fetchall()
    assert metrics[0] == ("kg", "tiny_kg", "facts", 2.0)
    assert metrics[2] == ("sq-2", "squares", "rows", 6.0)
    assert metrics[1][2] == "noise.mean"  # nested objects flatten to dotted paths
    con.close()


def test_rebuild_follows_the_run_directory(run_dir):
    build_results(run_dir)
    (run_dir / "steps/sq-2/squares.parquet").unlink()
    con = duckdb.connect(str(build_results(run_dir)))
    assert "sq_2_squares" not in [r[0] for r in con.execute("show tables").fetchall()]
    con.close()
    assert sorted(p.name for p in run_dir.iterdir() if p.name.startswith(".")) == [
        ".chronoprobe-run"  # the marker; no temporary left behind
    ]


def test_cli_lists_tables_without_sql(run_dir):
    result = runner.invoke(app, ["results", str(run_dir)])
    assert result.exit_code == 0, result.output
    assert "metrics" in result.output and "sq_2_squares" in result.output


def test_cli_query_as_csv_and_json(run_dir):
    sql = "select i, square from sq_2_squares where i >= 4 order by i"
    result = runner.invoke(app, ["results", str(run_dir), "--sql", sql, "--csv"])
    assert result.exit_code == 0, result.output
    assert result.stdout == "i,square\n4,16\n5,25\n"
    result = runner.invoke(app, ["results", str(run_dir), "--sql", sql, "--json"])
    assert json.loads(result.stdout) == [{"i": 4, "square": 16}, {"i": 5, "square": 25}]
    result = runner.invoke(app, ["results", str(run_dir), "--sql", sql])
    assert "16" in result.stdout and "square" in result.stdout


def test_cli_bad_query_and_bad_directory_are_one_line(run_dir, tmp_path):
    result = runner.invoke(app, ["results", str(run_dir), "--sql", "select * from nope"])
    assert result.exit_code == 2
    assert "query failed" in result.output and "nope" in result.output
    result = runner.invoke(app, ["results", str(tmp_path / "nothing")])
    assert result.exit_code == 2 and "nothing: no such folder" in result.output


def test_a_users_own_tables_and_views_survive_the_rebuild(run_dir):
    """results rebuilds results.duckdb at every call: a table a user made in a DuckDB client
    was lost at the next call."""
    con = duckdb.connect(str(build_results(run_dir)))
    con.execute("CREATE TABLE my_notes AS SELECT 42 AS answer")
    con.execute("CREATE VIEW my_sum AS SELECT sum(square) AS total FROM sq_2_squares")
    con.close()
    con = duckdb.connect(str(build_results(run_dir)))
    assert con.execute("SELECT answer FROM my_notes").fetchone() == (42,)
    assert con.execute("SELECT total FROM my_sum").fetchone() == (55,)
    assert con.execute("SELECT count(*) FROM metrics").fetchone()[0] > 0
    con.close()


def test_a_file_in_the_databases_place_that_is_no_database_is_refused(run_dir):
    (run_dir / "results.duckdb").write_text("my notes, not a database")
    with pytest.raises(ValueError, match="is no DuckDB database"):
        build_results(run_dir)
    assert (run_dir / "results.duckdb").read_text() == "my notes, not a database"


def test_results_warn_of_steps_left_from_an_earlier_config(run_dir):
    """As the report does: a run stopped after its config changed left steps of the old one,
    whose figures the tables still hold."""
    untouched = runner.invoke(app, ["results", str(run_dir)])
    assert "warning" not in untouched.output
    record_path = run_dir / "steps" / "sq-2" / "step.json"
    record = json.loads(record_path.read_text())
    record["params"] = {**record["params"], "shards": 99}
    record_path.write_text(json.dumps(record))
    result = runner.invoke(app, ["results", str(run_dir)])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "warning: sq-2: the outputs of an earlier config" in said
