"""docs/extending.md's plugin, run as a user would: one file adds a builder, a view and a TKG
model, the command line offers and runs all three, and the page's config, run as it stands, is
reported with the plugin's own sections and no error box. What the page promises around them
holds too: a plugin is found in the current directory or beside its config, an edited plugin
is computed again rather than served from the cache, a name is registered once, and a
plugin's ValueError is one line (its traceback with CHRONOPROBE_DEBUG)."""

from __future__ import annotations

import json
import re
import sys
import traceback
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.datasets.builders import BUILDERS
from chronoprobe.families import FAMILIES
from chronoprobe.jsonl import read_jsonl
from chronoprobe.kg.graph import TemporalKG
from chronoprobe.models.tiny import random_model
from chronoprobe.models.tokenizer import train_tokenizer
from chronoprobe.probes.cloze_views import PLL
from chronoprobe.probes.view import VIEWS
from chronoprobe.registry import Registry
from chronoprobe.report.sections import SECTIONS
from chronoprobe.tkg.params import TKG_MODELS

DOC = Path(__file__).parents[1] / "docs" / "extending.md"
runner = CliRunner()


def block(language: str, after: str) -> str:
    """The page's first ```language block after the words ``after``."""
    text = DOC.read_text(encoding="utf-8")
    rest = text[text.index(after) :]
    return re.search(rf"```{language}\n(.*?)```", rest, re.DOTALL).group(1)


def plugin_source() -> str:
    """The ```python block that follows "The whole of `my_plugin.py`" in the page."""
    return block("python", "The whole of `my_plugin.py`")


def config_source() -> str:
    """The page's config: the ```yaml block that follows "in a run"."""
    return block("yaml", "in a run")


REGISTRIES = (BUILDERS, VIEWS, TKG_MODELS, SECTIONS, FAMILIES)


def forget_plugin(saved: list[dict]) -> None:
    """As if my_plugin had never been imported: a new process's registries."""
    sys.modules.pop("my_plugin", None)
    for registry, entries in zip(REGISTRIES, saved, strict=True):
        registry._entries = dict(entries)


@pytest.fixture
def importable(tmp_path, monkeypatch):
    """The page's module as my_plugin.py in the current directory, which is not on the Python
    path (as for the `chronoprobe` command), and not yet imported; yields the registries as
    they were, and gives them back so at the end (and the Python path as it was)."""
    for registry in REGISTRIES:  # built-ins register as their modules load: load them first,
        registry.items()  # or a command after forget_plugin finds their modules loaded, bare
    saved = [dict(r._entries) for r in REGISTRIES]
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "my_plugin.py").write_text(plugin_source(), encoding="utf-8")
    monkeypatch.chdir(tmp_path / "plugins")
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p != ""])  # "": the current one
    monkeypatch.delenv("CHRONOPROBE_PLUGINS", raising=False)
    yield saved
    forget_plugin(saved)


@pytest.fixture
def plugin(importable, monkeypatch):
    """The page's module importable as my_plugin and named in CHRONOPROBE_PLUGINS."""
    monkeypatch.setenv("CHRONOPROBE_PLUGINS", "my_plugin")


def tiny_roberta(texts: list[str], path: Path) -> Path:
    """A random masked LM whose tokenizer was learned on ``texts``."""
    tokenizer = train_tokenizer([t.replace("[MASK]", "x") for t in texts], "roberta")
    random_model("roberta", tokenizer, seed=0).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def invoke(*args) -> str:
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


def test_the_documented_plugin_adds_a_builder_a_view_and_a_tkg_model(tmp_path, plugin):
    world = tmp_path / "world"
    invoke("kg", "synth", "--facts", 300, "--no-text", "-o", world)
    assert "teams" in invoke("build", "--help") and "top1" in invoke("probe", "--help")
    built = invoke("build", "teams", world, "--year", 2015, "-o", tmp_path / "teams")
    rows = list(read_jsonl(tmp_path / "teams" / "examples.jsonl"))
    kg = TemporalKG.load(world)
    players = set(kg.facts_in("2015", relations=["P54"]).column("subject").to_pylist())
    assert [r["id"] for r in rows] == [f"{s}_2015" for s in sorted(players)]
    assert rows[0]["query"] == f"In 2015, {kg.label(sorted(players)[0])} played for [MASK]."
    teams = {label for r in rows for label in r["answer_labels"]}
    assert f"{len(rows)} players in {len(teams)} teams" in built  # the builder's own summary

    model_dir = tiny_roberta([r["query"] for r in rows], tmp_path / "tiny-roberta")
    invoke("probe", "top1", tmp_path / "teams", "-m", model_dir, "-o", tmp_path / "top1")
    predictions = pq.read_table(tmp_path / "top1" / "predictions.parquet").to_pylist()
    assert [p["id"] for p in predictions] == [r["id"] for r in rows]
    metrics = json.loads((tmp_path / "top1" / "metrics.json").read_text())
    right = sum(p["correct"] for p in predictions) / len(predictions)
    assert metrics["models"][str(model_dir)]["accuracy"] == pytest.approx(right)
    assert not (tmp_path / "top1" / "matrix.json").exists()  # the View's default: no drift view

    out = tmp_path / "emb"
    invoke("tkg", "train", world, "--arch", "tdistmult", "--rank", 4, "--epochs", 1, "-o", out)
    trained = json.loads((out / "metrics.json").read_text())
    assert trained["model"] == "tdistmult" and trained["split"] == "test"
    assert 0 < trained["mrr"] <= 1 and trained["queries"] > 0

    listed = json.loads(invoke("list", "teams", "--format", "json"))
    assert [(f["build"], f["views"], f["models"]) for f in listed] == [
        (["teams"], ["top1"], ["tdistmult"])
    ]
    assert listed[0]["report sections"] == ["build:teams", "probe:top1"]


def test_a_plugin_that_cannot_be_imported_is_one_line(monkeypatch):
    monkeypatch.setenv("CHRONOPROBE_PLUGINS", "no_such_plugin_module")
    result = runner.invoke(app, ["probe", "--help"])
    assert result.exit_code == 2
    assert "CHRONOPROBE_PLUGINS: cannot import 'no_such_plugin_module'" in result.output


def test_the_pages_config_runs_as_it_stands_and_is_reported_with_the_plugins_sections(
    tmp_path, importable, monkeypatch
):
    """The config block of the page, beside my_plugin.py and run from another folder (which
    holds the model): trusted with --trust-plugins, its plugin is found beside it, builds and
    probes; a later `report` (a new process: the plugin not imported) draws the plugin's
    sections, the run having recorded which plugin file it used, with no CHRONOPROBE_PLUGINS;
    once that file is edited, the report says in one line that it cannot load it and draws
    the steps' generic sections, until the user names the plugin in CHRONOPROBE_PLUGINS."""
    # Failed before: the page's block had no `name:` and no step `world`, and a plugin beside
    # the config was not importable without PYTHONPATH.
    experiment = tmp_path / "experiment"
    experiment.mkdir()
    config = experiment / "teams.yaml"
    config.write_text(config_source(), encoding="utf-8")
    (experiment / "my_plugin.py").write_text(plugin_source(), encoding="utf-8")
    work = tmp_path / "work"
    tiny_roberta(["In 2015, Ann Lee played for Ajax."], work / "my-roberta")
    monkeypatch.chdir(work)
    run_dir = work / "runs" / "teams"
    refused = runner.invoke(app, ["run", str(config), "-o", str(run_dir)])
    assert refused.exit_code != 0 and "--trust-plugins" in refused.output
    invoke("run", config, "-o", run_dir, "--trust-plugins")
    assert Path(sys.modules["my_plugin"].__file__) == experiment / "my_plugin.py"
    rows = list(read_jsonl(run_dir / "steps" / "teams" / "examples.jsonl"))
    assert len(rows) == 7  # the sample KG's players with a club in 2015
    assert rows[0]["query"].startswith("In 2015, ") and rows[0]["query"].endswith(
        " played for [MASK]."
    )
    metrics = json.loads((run_dir / "steps" / "top1" / "metrics.json").read_text())
    assert list(metrics["models"]) == ["./my-roberta"] and metrics["rows"] == 7

    forget_plugin(importable)
    said = invoke("report", run_dir)
    assert "warning" not in said
    page = (run_dir / "report.html").read_text(encoding="utf-8")
    assert 'class="error"' not in page
    assert "Teams: teams" in page and "Top-1 answers: top1" in page

    forget_plugin(importable)
    edited = plugin_source().replace('"Teams: ', '"Rosters: ')
    (experiment / "my_plugin.py").write_text(edited, encoding="utf-8")
    said = invoke("report", run_dir)
    assert "my_plugin" not in sys.modules
    assert said.count("warning: the run used plugin 'my_plugin', which is not loaded: ") == 1
    assert "(its SHA-256 differs); its steps show generic sections" in " ".join(said.split())
    plain = (run_dir / "report.html").read_text(encoding="utf-8")
    assert 'class="error"' not in plain
    assert "Probe set teams (teams)" in plain and "Probe top1: top1" in plain

    forget_plugin(importable)
    (experiment / "my_plugin.py").write_text(plugin_source(), encoding="utf-8")
    monkeypatch.chdir(experiment)
    monkeypatch.setenv("CHRONOPROBE_PLUGINS", "my_plugin")
    invoke("report", run_dir)
    page = (run_dir / "report.html").read_text(encoding="utf-8")
    assert 'class="error"' not in page
    assert "Teams: teams" in page and "Top-1 answers: top1" in page
    assert "The largest teams" in page and "Bars of each model&#x27;s accuracy" in page


def test_an_edited_plugin_is_computed_again_not_served_from_the_cache(
    tmp_path, importable, monkeypatch
):
    # Failed before: the cache key held nothing of the plugin, so the edited builder's step
    # was served its old rows, "cached".
    monkeypatch.setenv("CHRONOPROBE_PLUGINS", "my_plugin")
    world = tmp_path / "world"
    invoke("kg", "sample", "-o", world)
    build = ("build", "teams", world, "--year", 2015, "-o", tmp_path / "teams")
    assert "cached" not in invoke(*build)
    forget_plugin(importable)  # each command is a new process
    assert "cached" in invoke(*build)
    edited = plugin_source().replace("played for [MASK]", "was a member of [MASK]")
    Path("my_plugin.py").write_text(edited, encoding="utf-8")
    forget_plugin(importable)
    assert "cached" not in invoke(*build)
    rows = list(read_jsonl(tmp_path / "teams" / "examples.jsonl"))
    assert rows and all(r["query"].endswith(" was a member of [MASK].") for r in rows)


def test_a_plugin_named_by_its_file_is_refused_before_it_runs(importable, monkeypatch):
    monkeypatch.setenv("CHRONOPROBE_PLUGINS", "my_plugin.py")
    result = runner.invoke(app, ["build", "--help"])
    assert result.exit_code == 2 and "my_plugin" not in sys.modules
    assert (
        "error: CHRONOPROBE_PLUGINS: 'my_plugin.py' is a file name; name its module instead "
        f"(my_plugin), found in {Path.cwd()} (the current directory) or on the Python path"
    ) in " ".join(result.output.split())


def test_a_plugin_cannot_replace_a_built_in_view(importable, monkeypatch):
    # Failed before: the plugin's view replaced the built-in pll for every command, and the
    # cache served the one's results for the other.
    Path("my_pll.py").write_text(
        "import dataclasses\n"
        "from chronoprobe.probes.view import VIEWS\n"
        "VIEWS.add('pll', dataclasses.replace(VIEWS.get('single-token'), name='pll'))\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("CHRONOPROBE_PLUGINS", "my_pll")
    try:
        result = runner.invoke(app, ["probe", "--help"])
    finally:
        sys.modules.pop("my_pll", None)
    assert result.exit_code == 2
    assert (
        "error: CHRONOPROBE_PLUGINS: importing 'my_pll' failed: UserError: the view registry "
        "already has 'pll' (built in); register yours under another name"
    ) in " ".join(result.output.split())
    assert VIEWS.get("pll") is PLL  # the built-in, still


def test_a_registry_takes_each_name_once():
    first, second = object(), object()
    registry = Registry("colour", {"dumps": "json:dumps"})
    assert registry.add("red", first) is first
    assert registry.add("red", first) is first  # the same object again: a module imported twice
    with pytest.raises(
        ValueError, match="the colour registry already has 'red' \\(added earlier\\)"
    ):
        registry.add("red", second)
    with pytest.raises(ValueError, match="the colour registry already has 'dumps' \\(built in\\)"):
        registry.add("dumps", second)
    assert registry.add("dumps", json.dumps) is json.dumps and registry.get("red") is first


def test_a_plugins_value_error_is_one_line_and_shows_its_traceback_when_debugging(
    tmp_path, plugin, monkeypatch
):
    world = tmp_path / "world"
    invoke("kg", "sample", "-o", world)
    build = ["build", "teams", str(world), "--year", "1850", "-o", str(tmp_path / "teams")]
    result = runner.invoke(app, build)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert (
        result.output.strip()
        .splitlines()[-1]
        .startswith("error: no team memberships (P54) hold in 1850")
    )
    monkeypatch.setenv("CHRONOPROBE_DEBUG", "1")
    result = runner.invoke(app, build)
    assert isinstance(result.exception, ValueError)
    raised = traceback.extract_tb(result.exception.__cause__.__traceback__)
    assert raised[-1].name == "build_teams"  # where the plugin raised it


def test_a_plugins_bug_is_said_to_be_the_plugins_with_its_traceback(tmp_path, plugin, monkeypatch):
    """A bare exception from a plugin's own code is a bug, and the plugin's, not chronoprobe's."""
    world = tmp_path / "world"
    invoke("kg", "sample", "-o", world)
    build = ["build", "teams", str(world), "--year", "2015", "-o", str(tmp_path / "teams")]
    invoke("build", "--help")  # imports the plugin

    def broken(*args, **kwargs):
        raise ValueError("too many values to unpack")

    monkeypatch.setattr(sys.modules["my_plugin"], "write_jsonl", broken)
    result = runner.invoke(app, build)
    assert result.exit_code == 1 and "Traceback (most recent call last)" in result.output, (
        result.output
    )
    said = " ".join(result.output.split())
    assert "error: this is a bug in the plugin my_plugin, not a mistake of yours: please " in said
    assert "report it to its authors, with the command you ran and the traceback above" in said


def test_the_documented_spec_scheme_probes_a_model_of_its_zoo(tmp_path, monkeypatch, one_row_set):
    from chronoprobe.models.spec import SPEC_SCHEMES

    module = tmp_path / "zoo_scheme.py"
    module.write_text(block("python", "## A model spec scheme"), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    saved = dict(SPEC_SCHEMES._entries)
    tiny_roberta(["The capital of France is Paris."], tmp_path / "zoo" / "capitals")
    monkeypatch.setenv("MODEL_ZOO", str(tmp_path / "zoo"))
    monkeypatch.setenv("CHRONOPROBE_PLUGINS", "zoo_scheme")
    try:
        out = tmp_path / "out"
        invoke("probe", "pll", one_row_set, "-m", "zoo:capitals", "--device", "cpu", "-o", out)
        metrics = json.loads((out / "metrics.json").read_text())
        assert metrics["models"]["zoo:capitals"]["predicted"] == 1
        missing = runner.invoke(
            app, ["probe", "pll", str(one_row_set), "-m", "zoo:nope", "-o", str(tmp_path / "x")]
        )
        assert missing.exit_code == 2 and "zoo:nope: no model 'nope' in $MODEL_ZOO" in " ".join(
            missing.output.split()
        )
    finally:
        SPEC_SCHEMES._entries = saved
        sys.modules.pop("zoo_scheme", None)
