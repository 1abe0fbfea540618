"""docs/extending.md's plugin, run as a user would: one file adds a builder, a view and a TKG
model, and the command line offers and runs all three."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.datasets.ops import BUILDERS
from chronoprobe.jsonl import read_jsonl
from chronoprobe.kg.graph import TemporalKG
from chronoprobe.models.tiny import random_model
from chronoprobe.models.tokenizer import train_tokenizer
from chronoprobe.probes.view import VIEWS
from chronoprobe.tkg.ops import TKG_MODELS

DOC = Path(__file__).parents[1] / "docs" / "extending.md"
runner = CliRunner()


def plugin_source() -> str:
    """The ```python block that follows "The whole of `my_plugin.py`" in the page."""
    text = DOC.read_text(encoding="utf-8")
    after = text[text.index("The whole of `my_plugin.py`") :]
    return re.search(r"```python\n(.*?)```", after, re.DOTALL).group(1)


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """The page's module importable as my_plugin and named in CHRONOPROBE_PLUGINS; the
    registries are given back as they were."""
    registries = (BUILDERS, VIEWS, TKG_MODELS)
    saved = [dict(r._entries) for r in registries]
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "my_plugin.py").write_text(plugin_source(), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path / "plugins"))
    monkeypatch.setenv("CHRONOPROBE_PLUGINS", "my_plugin")
    yield
    sys.modules.pop("my_plugin", None)
    for registry, entries in zip(registries, saved, strict=True):
        registry._entries = entries


def invoke(*args) -> str:
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


def test_the_documented_plugin_adds_a_builder_a_view_and_a_tkg_model(tmp_path, plugin):
    world = tmp_path / "world"
    invoke("kg", "synth", "--facts", 300, "--no-text", "-o", world)
    assert "teams" in invoke("build", "--help") and "top1" in invoke("probe", "--help")
    invoke("build", "teams", world, "--year", 2015, "-o", tmp_path / "teams")
    rows = list(read_jsonl(tmp_path / "teams" / "examples.jsonl"))
    kg = TemporalKG.load(world)
    players = set(kg.facts_in("2015", relations=["P54"]).column("subject").to_pylist())
    assert [r["id"] for r in rows] == [f"{s}_2015" for s in sorted(players)]
    assert rows[0]["query"] == f"In 2015, {kg.label(sorted(players)[0])} played for [MASK]."

    tokenizer = train_tokenizer([r["query"].replace("[MASK]", "x") for r in rows], "roberta")
    model_dir = tmp_path / "tiny-roberta"
    random_model("roberta", tokenizer, seed=0).save_pretrained(model_dir)
    tokenizer.save_pretrained(model_dir)
    invoke("probe", "top1", tmp_path / "teams", "-m", model_dir, "-o", tmp_path / "top1")
    predictions = pq.read_table(tmp_path / "top1" / "predictions.parquet").to_pylist()
    assert [p["id"] for p in predictions] == [r["id"] for r in rows]
    metrics = json.loads((tmp_path / "top1" / "metrics.json").read_text())
    right = sum(p["correct"] for p in predictions) / len(predictions)
    assert metrics["models"][str(model_dir)]["accuracy"] == pytest.approx(right)

    out = tmp_path / "emb"
    invoke("tkg", "train", world, "--model", "tdistmult", "--rank", 4, "--epochs", 1, "-o", out)
    trained = json.loads((out / "metrics.json").read_text())
    assert trained["model"] == "tdistmult" and trained["split"] == "test"
    assert 0 < trained["mrr"] <= 1 and trained["queries"] > 0


def test_a_plugin_that_cannot_be_imported_is_one_line(monkeypatch):
    monkeypatch.setenv("CHRONOPROBE_PLUGINS", "no_such_plugin_module")
    result = runner.invoke(app, ["probe", "--help"])
    assert result.exit_code == 2
    assert "CHRONOPROBE_PLUGINS: cannot import 'no_such_plugin_module'" in result.output
