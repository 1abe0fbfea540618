"""The family table names what the registries hold, once each, and `chronoprobe list` shows it:
every part a family names is registered, every registered part belongs to one family (or is
shared by all), and the README's family table is what `list families` prints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.datasets.builders import BUILDERS
from chronoprobe.datasets.imports import IMPORTERS
from chronoprobe.families import FAMILIES, SHARED_KINDS, SHARED_MODELS, Family, family_named
from chronoprobe.kgqa.params import QA_MODELS
from chronoprobe.models.registry import ADAPTERS
from chronoprobe.probes.view import VIEWS
from chronoprobe.report.sections import SECTIONS
from chronoprobe.steps import STEP_KINDS, Variant
from chronoprobe.tkg.params import TKG_MODELS

ROOT = Path(__file__).parents[1]
runner = CliRunner()


def parts() -> dict[str, tuple[list[str], set[str]]]:
    """Family field -> (every family's names in it, the names registered)."""
    families = [f for _, f in FAMILIES.items()]
    models = {*ADAPTERS.names(), *TKG_MODELS.names(), *QA_MODELS.names()}
    registered = {
        "builders": set(BUILDERS.names()),
        "importers": set(IMPORTERS.names()),
        "views": set(VIEWS.builtin_names()),
        "kinds": set(STEP_KINDS.builtin_names()) - set(SHARED_KINDS),
        "models": models - set(SHARED_MODELS),
    }
    return {
        field: ([n for f in families for n in getattr(f, field)], names)
        for field, names in registered.items()
    }


@pytest.mark.parametrize("field", ["builders", "importers", "views", "kinds", "models"])
def test_every_registered_part_belongs_to_exactly_one_family(field):
    named, registered = parts()[field]
    assert sorted(n for n in set(named) if named.count(n) > 1) == []  # claimed twice
    assert sorted(set(named) - registered) == []  # named, not registered
    assert sorted(registered - set(named)) == []  # registered, no family's


def test_names_and_aliases_tell_families_apart_and_docs_exist():
    names = [n for _, f in FAMILIES.items() for n in (f.name, *f.aliases)]
    assert sorted(n for n in set(names) if names.count(n) > 1) == []
    for _, family in FAMILIES.items():
        for page in family.docs:
            assert (ROOT / page).is_file(), f"{family.name}: no {page}"
    assert family_named("tkg").name == family_named("kgqa").name == "cronq"
    assert family_named("span-ppl").name == "ecbd"
    with pytest.raises(KeyError, match="unknown family 'nope'"):
        family_named("nope")


def test_a_family_has_the_sections_of_its_kinds_builders_and_views():
    cronq = FAMILIES.get("cronq")
    assert cronq.sections(SECTIONS.names()) == ["build:cronq", "kgqa", "tkg"]
    lamatk = FAMILIES.get("lamatk")
    assert lamatk.sections(SECTIONS.names()) == ["build:lamatk", "memorize", "probe:recite"]


def invoke(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_list_families_gives_each_family_with_its_parts():
    rows = {row["family"]: row for row in json.loads(invoke("list", "--format", "json"))}
    assert sorted(rows) == sorted(FAMILIES.names())
    assert rows["cronq"] == {
        "family": "cronq",
        "title": "CronQuestions (temporal KG embeddings and QA)",
        "also": ["kgqa", "tkg"],
        "build": ["cronq"],
        "import": ["cronquestions"],
        "views": [],
        "train": ["tkg", "kgqa"],
        "evaluate": ["tkg-eval", "kgqa-eval"],
        "models": ["complex", "tcomplex", "tntcomplex", "timeplex", "cronkgqa", "embedkgqa", "lm"],
        "report sections": ["build:cronq", "kgqa", "tkg"],
        "docs": ["docs/cronq.md", "docs/tkg.md"],
        "paper": "Saxena et al., Question Answering Over Temporal Knowledge Graphs, ACL 2021",
    }
    assert rows["lamatk"]["train"] == ["memorize", "pretrain"]
    printed = invoke("list", "tkg")  # a family by another of its names, its paper shown
    assert "Saxena et al." in printed and "tkg-eval" in printed


def test_list_of_a_registry_names_each_entry_with_its_family():
    views = {row["view"]: row for row in json.loads(invoke("list", "views", "--format", "json"))}
    assert views["pll"]["family"] == "drift" and views["pll"]["drift rows"] is True
    assert views["pll"]["report section"] == "probe:pll"
    assert views["generate"]["report section"] == "probe:generate"
    kinds = {row["kind"]: row for row in json.loads(invoke("list", "kinds", "--format", "json"))}
    assert kinds["memorize"]["family"] == "lamatk" and kinds["memorize"]["trains"] is True
    assert kinds["memorize"]["command"] == "chronoprobe train memorize"
    assert kinds["probe"]["family"] == "(shared)"
    sections = json.loads(invoke("list", "sections", "--format", "json"))
    pll = next(s for s in sections if s["section"] == "probe:pll")
    assert pll == {
        "section": "probe:pll",
        "family": "drift",
        "module": "chronoprobe.report.drift_section",
        "about": pll["about"],
    }
    assert pll["about"].startswith("The models x periods matrix")


def test_a_plugins_family_and_builder_are_listed(monkeypatch):
    saved = dict(FAMILIES._entries), dict(BUILDERS._entries)
    try:
        BUILDERS.add("teams", Variant("teams", Family, lambda *a: None, "Who played where."))
        FAMILIES.add("teams", Family("teams", "Teams", "none", (), builders=("teams",)))
        rows = json.loads(invoke("list", "builders", "--format", "json"))
        assert {"builder": "teams", "family": "teams", "report section": "build"} | {
            "about": "Who played where."
        } in rows
    finally:
        FAMILIES._entries, BUILDERS._entries = saved


def test_an_unknown_list_is_one_line():
    result = runner.invoke(app, ["list", "famillies"])
    assert result.exit_code == 2
    assert result.output.startswith("error: list famillies: choose one of families, views")
    assert result.output.count("\n") == 1
    bad = runner.invoke(app, ["list", "--format", "yaml"])
    assert bad.exit_code == 2 and "--format yaml: choose one of table, json, markdown" in bad.output


def test_the_readme_family_table_is_list_families_as_markdown():
    table = invoke("list", "families", "--format", "markdown")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert table.strip() in readme, "regenerate it: chronoprobe list families --format markdown"
