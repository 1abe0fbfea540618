"""docs/extending.md's plugin, run as a user would: one file adds a builder, a view and a TKG
model, the command line offers and runs all three, and a run of its builder and view (the view
left at the View's defaults) is reported with the plugin's own sections and no error box."""

from __future__ import annotations

import json
import os
import re
import sys
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
from chronoprobe.probes.view import VIEWS
from chronoprobe.report.sections import SECTIONS
from chronoprobe.tkg.params import TKG_MODELS

DOC = Path(__file__).parents[1] / "docs" / "extending.md"
runner = CliRunner()


def plugin_source() -> str:
    """The ```python block that follows "The whole of `my_plugin.py`" in the page."""
    text = DOC.read_text(encoding="utf-8")
    after = text[text.index("The whole of `my_plugin.py`") :]
    return re.search(r"```python\n(.*?)```", after, re.DOTALL).group(1)


REGISTRIES = (BUILDERS, VIEWS, TKG_MODELS, SECTIONS, FAMILIES)


def forget_plugin(saved: list[dict]) -> None:
    """As if my_plugin had never been imported: a new process's registries."""
    sys.modules.pop("my_plugin", None)
    for registry, entries in zip(REGISTRIES, saved, strict=True):
        registry._entries = dict(entries)


@pytest.fixture
def importable(tmp_path, monkeypatch):
    """The page's module importable as my_plugin (not yet imported); yields the registries as
    they were, and gives them back so at the end."""
    SECTIONS.items()  # built-in sections register as their modules load: load them first
    saved = [dict(r._entries) for r in REGISTRIES]
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "my_plugin.py").write_text(plugin_source(), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path / "plugins"))
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
    invoke("tkg", "train", world, "--model", "tdistmult", "--rank", 4, "--epochs", 1, "-o", out)
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


def test_a_run_of_the_plugin_is_reported_with_its_own_sections_and_no_error_box(
    tmp_path, importable
):
    """Trusted with --trust-plugins, the config's plugin builds and probes; a later `report`
    (a new process: the plugin not imported) draws the plugin's sections once the user names
    it in CHRONOPROBE_PLUGINS, and the steps' generic sections without it."""
    model_dir = tiny_roberta(["In 2015, Ann Lee played for Ajax."], tmp_path / "tiny-roberta")
    config = tmp_path / "teams.yaml"
    config.write_text(
        "name: teams\n"
        "plugins: [my_plugin]\n"
        "steps:\n"
        "  - {id: world, kind: kg, params: {source: synth, facts: 300, text: false}}\n"
        "  - {id: teams, kind: build, inputs: {kg: world}, params: {family: teams, year: '2015'}}\n"
        "  - {id: top1, kind: probe, inputs: {data: teams}, "
        f"params: {{view: top1, models: [{model_dir}]}}}}\n",
        encoding="utf-8",
    )
    run_dir = tmp_path / "run"
    refused = runner.invoke(app, ["run", str(config), "-o", str(run_dir)])
    assert refused.exit_code != 0 and "--trust-plugins" in refused.output
    invoke("run", config, "-o", run_dir, "--trust-plugins")

    forget_plugin(importable)
    invoke("report", run_dir)
    plain = (run_dir / "report.html").read_text(encoding="utf-8")
    assert 'class="error"' not in plain
    assert "Probe set teams (teams)" in plain and "Probe top1: top1" in plain

    forget_plugin(importable)
    os.environ["CHRONOPROBE_PLUGINS"] = "my_plugin"
    try:
        invoke("report", run_dir)
    finally:
        del os.environ["CHRONOPROBE_PLUGINS"]
    page = (run_dir / "report.html").read_text(encoding="utf-8")
    assert 'class="error"' not in page
    assert "Teams: teams" in page and "Top-1 answers: top1" in page
    assert "The largest teams" in page and "Bars of each model&#x27;s accuracy" in page
