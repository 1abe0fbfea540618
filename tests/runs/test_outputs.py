"""`results` on any folder of outputs: one command's --out, or a folder holding several
outputs and runs, found down to four levels, each a step named by its path there."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.runs import outputs
from chronoprobe.runs.engine import run_experiment
from chronoprobe.runs.outputs import find_outputs
from chronoprobe.runs.results import list_tables, open_results

CONFIG = """
name: exp
plugins: [chronoprobe_test_steps]
steps:
  - id: kg
    kind: tiny_kg
  - id: sq-2
    kind: squares
    params: {shards: 2, rows_per_shard: 2}
"""

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def listing(folder: Path) -> dict[str, int]:
    """Every file under ``folder`` with its size: what a read-only command must not change."""
    return {
        str(p.relative_to(folder)): p.stat().st_size
        for p in folder.rglob("*")
        if p.is_file() and not p.is_symlink()
    }


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """outputs/: a KG and its copy (kgs/a, kgs/b), a probe set built from kgs/a (lam), a run
    (exp), copies of kgs/a four levels down (found) and five levels down (not), one in a
    hidden folder and a link to kgs/a (neither followed). Made once; the tests only read it."""
    base = tmp_path_factory.mktemp("outputs")
    root = base / "outputs"
    with pytest.MonkeyPatch.context() as patch:  # as conftest's private_cache, for the module
        patch.setenv("CHRONOPROBE_CACHE", str(base / "cache"))
        patch.syspath_prepend(str(Path(__file__).parent))
        patch.setenv("CHRONOPROBE_PLUGINS", "chronoprobe_test_steps")
        result = invoke("kg", "synth", "--facts", 200, "--no-text", "-o", root / "kgs" / "a")
        assert result.exit_code == 0, result.output
        result = invoke("build", "lamatk", root / "kgs" / "a", "-o", root / "lam")
        assert result.exit_code == 0, result.output
        (base / "exp.yaml").write_text(CONFIG)
        with open(os.devnull, "w") as sink:
            run_experiment(base / "exp.yaml", root / "exp", console=Console(file=sink))
    shutil.copytree(root / "kgs" / "a", root / "kgs" / "b")
    shutil.copytree(root / "kgs" / "a", root / "d1/d2/d3/four")
    shutil.copytree(root / "kgs" / "a", root / "d1/d2/d3/d4/five")
    shutil.copytree(root / "kgs" / "a", root / ".hidden" / "x")
    (root / "link").symlink_to(root / "kgs" / "a", target_is_directory=True)
    return root


def test_outputs_and_runs_are_found_by_their_paths(folder):
    found = find_outputs(folder)
    assert [prefix for prefix, _ in found.outputs] == ["d1/d2/d3/four", "kgs/a", "kgs/b", "lam"]
    assert [prefix for prefix, _ in found.runs] == ["exp"]
    assert found.describe() == "4 command outputs and 1 run directory"
    assert not found.is_run and found.warning() is None
    single = find_outputs(folder / "kgs" / "a")
    assert single.outputs == [("", folder / "kgs" / "a")] and single.describe() == (
        "1 command output"
    )
    assert find_outputs(folder / "exp").is_run


def test_results_of_a_folder_name_tables_after_the_steps_and_write_nothing_there(folder):
    before = listing(folder)
    con = open_results(folder)
    try:
        names = [name for name, _ in list_tables(con)]
        steps = con.execute(
            "select step_id, kind, value from metrics where metric in ('facts', 'statements') "
            "order by step_id"
        ).fetchall()
        squares = con.execute('select sum(square) from "exp_sq_2_squares"').fetchone()
    finally:
        con.close()
    assert names[0] == "metrics"
    assert {"kgs_a_facts", "kgs_b_facts", "d1_d2_d3_four_facts", "exp_kg_facts"} <= set(names)
    assert "exp_sq_2_squares" in names and not any(n.startswith("d1_d2_d3_d4") for n in names)
    facts = json.loads((folder / "kgs/a/metrics.json").read_text())["facts"]
    statements = json.loads((folder / "lam/metrics.json").read_text())["statements"]
    assert steps == [
        ("d1/d2/d3/four", "kg", facts),
        ("exp/kg", "tiny_kg", 2.0),
        ("kgs/a", "kg", facts),
        ("kgs/b", "kg", json.loads((folder / "kgs/b/metrics.json").read_text())["facts"]),
        ("lam", "build", statements),
    ]
    assert squares == (0 + 1 + 4 + 9,)
    assert listing(folder) == before  # the database lived in memory


def test_results_of_one_commands_output(folder, tmp_path):
    world = tmp_path / "world"
    shutil.copytree(folder / "kgs" / "a", world)
    before = listing(world)
    result = invoke("results", world, "--sql", "select count(*) n from world_facts")
    assert result.exit_code == 0, result.output
    facts = json.loads((world / "metrics.json").read_text())["facts"]
    assert f"│ {facts} │" in result.output
    assert listing(world) == before
    # the command's own folder is untouched: it replaces its output as before
    assert invoke("kg", "synth", "--facts", 250, "--no-text", "-o", world).exit_code == 0


def test_results_as_markdown_and_latex_for_a_paper(folder):
    sql = (
        "select step_id, metric, value from metrics "
        "where metric = 'multi_answer_share' and step_id like 'kgs/%' order by step_id"
    )
    shares = [
        json.loads((folder / f"kgs/{n}/metrics.json").read_text())["multi_answer_share"]
        for n in "ab"
    ]
    result = invoke("results", folder, "--sql", sql, "--format", "markdown")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "| step_id | metric | value |",
        "| --- | --- | ---: |",
        f"| kgs/a | multi_answer_share | {shares[0]:.3f} |",
        f"| kgs/b | multi_answer_share | {shares[1]:.3f} |",
    ]
    result = invoke("results", folder, "--sql", sql, "--format", "latex")
    assert result.exit_code == 0, result.output
    assert f"kgs/a & multi\\_answer\\_share & {shares[0]:.3f} \\\\" in result.stdout.splitlines()
    result = invoke("results", folder, "--sql", sql, "--format", "csv")
    assert result.stdout.splitlines()[1] == f"kgs/a,multi_answer_share,{shares[0]}"


def test_a_folder_without_outputs_is_refused_in_one_line(tmp_path, folder):
    (tmp_path / "empty" / "sub").mkdir(parents=True)
    shutil.copytree(folder / "kgs" / "a", tmp_path / "hidden" / ".store" / "a")
    for empty in (tmp_path / "empty", tmp_path / "hidden"):
        result = invoke("results", empty)
        assert result.exit_code == 2
        assert " ".join(result.output.split()) == (
            f"error: {empty}: no chronoprobe output in it or in the 4 levels of folders below "
            "(a run directory holds .chronoprobe-run, a command's output step.json); make one "
            "with `chronoprobe run experiments/demo.yaml` or any command's --out"
        )
    result = invoke("results", tmp_path / "nope")
    assert result.exit_code == 2 and f"{tmp_path / 'nope'}: no such folder" in result.output


def test_a_search_cut_short_says_so(folder, monkeypatch):
    monkeypatch.setattr(outputs, "MAX_FOLDERS", 2)
    found = find_outputs(folder)
    assert found.cut_short and "searched only the first 2 folders" in found.warning()
