"""A plugin installed the ecosystem's way: a distribution declares its module under the
entry-point group ``chronoprobe.plugins``. It is found without being named, and still runs
nothing until the user allows it; once allowed (for the version installed), every command
imports it and its file's digest keys the cache; a run records it, and ``chronoprobe report``
draws its sections again with no CHRONOPROBE_PLUGINS.

The installed distribution is what pip leaves in site-packages, laid by hand on a temporary
folder of the Python path: the package, and a dist-info with METADATA and entry_points.txt.
"""

from __future__ import annotations

import hashlib
import json
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.core.plugins import installed_plugins, user_plugins
from chronoprobe.registry import loaded_plugins
from chronoprobe.report.sections import SECTIONS
from chronoprobe.runs.config import ConfigError, load_experiment
from chronoprobe.steps import STEP_KINDS

runner = CliRunner()
MODULE = "chronoprobe_stamp.steps"

PLUGIN = """
import json
from pathlib import Path

from pydantic import BaseModel

from chronoprobe.report.blocks import Text, Section
from chronoprobe.report.sections import section
from chronoprobe.steps import step_kind

Path({evidence!r}).write_text("imported")


class StampParams(BaseModel):
    word: str = "tick"


@step_kind("stamp", StampParams)
def stamp(ctx, params, inputs):
    (ctx.out_dir / "metrics.json").write_text(json.dumps({{"word": params.word}}))


@section("stamp")
def stamp_section(step_dir, record):
    word = json.loads((step_dir / "metrics.json").read_text())["word"]
    return Section(f"Stamped {{record['id']}}", [Text(f"the word was {{word}}")])
"""

CONFIG = """
name: stamped
plugins: [stamp]
steps:
  - {id: mark, kind: stamp, params: {word: tock}}
  - {id: report, kind: report}
"""


def install(site: Path, version: str, evidence: Path) -> Path:
    """The plugin's distribution as pip installs it into ``site``; returns the module file."""
    for old in site.glob("chronoprobe_stamp-*.dist-info"):
        for file in old.iterdir():
            file.unlink()
        old.rmdir()
    package = site / "chronoprobe_stamp"
    package.mkdir(exist_ok=True)
    (package / "__init__.py").write_text("")
    module = package / "steps.py"
    module.write_text(PLUGIN.format(evidence=str(evidence)))
    info = site / f"chronoprobe_stamp-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: chronoprobe-stamp\nVersion: {version}\n"
    )
    (info / "entry_points.txt").write_text(f"[chronoprobe.plugins]\nstamp = {MODULE}\n")
    return module


def forget() -> None:
    """As in a new process: the plugin not imported, its entries not registered."""
    for name in (MODULE, "chronoprobe_stamp"):
        sys.modules.pop(name, None)
    STEP_KINDS._entries.pop("stamp", None)
    SECTIONS._entries.pop("stamp", None)


@pytest.fixture
def site(tmp_path, monkeypatch):
    """An installed chronoprobe-stamp 0.1.0, a file of allowances of the test's own, and no
    CHRONOPROBE_PLUGINS; yields the file the plugin leaves when it is imported."""
    monkeypatch.delenv("CHRONOPROBE_PLUGINS", raising=False)
    monkeypatch.setenv("CHRONOPROBE_ALLOWED_PLUGINS", str(tmp_path / "allowed.json"))
    (tmp_path / "site").mkdir()
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    evidence = tmp_path / "imported"
    install(tmp_path / "site", "0.1.0", evidence)
    forget()
    yield evidence
    forget()


def invoke(*args) -> str:
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


def test_an_installed_plugin_is_found_and_asks_for_trust(site, tmp_path):
    assert [p.describe() for p in installed_plugins().values()] == [
        f"stamp ({MODULE}, from chronoprobe-stamp 0.1.0)"
    ]
    said = invoke("plugins", "list")
    assert said == f"stamp ({MODULE}, from chronoprobe-stamp 0.1.0): not allowed\n"
    said = invoke("list", "kinds")
    assert "installed plugins not allowed: stamp" in said and "chronoprobe plugins allow" in said
    config = tmp_path / "stamped.yaml"
    config.write_text(CONFIG)
    with pytest.raises(ConfigError) as refused:
        load_experiment(config)
    assert "plugins: the config imports Python modules ('stamp')" in refused.value.problems[0]
    assert "stamp" not in STEP_KINDS.names()
    assert not site.exists()  # nothing of it ran

    said = invoke("plugins", "allow", "stamp")
    assert said.startswith(f"allowed stamp ({MODULE}, from chronoprobe-stamp 0.1.0) (kept in ")
    assert json.loads((tmp_path / "allowed.json").read_text()) == {
        "stamp": {"distribution": "chronoprobe-stamp", "version": "0.1.0"}
    }
    assert not site.exists()  # allowing imports nothing either
    invoke("list", "kinds")  # a command: it imports the plugins allowed
    assert site.read_text() == "imported" and "stamp" in STEP_KINDS.names()
    module_file = tmp_path / "site" / "chronoprobe_stamp" / "steps.py"
    assert loaded_plugins()[MODULE] == hashlib.sha256(module_file.read_bytes()).hexdigest()
    assert invoke("plugins", "list").endswith(": allowed\n")
    load_experiment(config)  # the config's plugin is the user's own now: no flag needed


def test_an_upgraded_plugin_asks_again_and_a_revoked_one_is_not_imported(site, tmp_path):
    invoke("plugins", "allow", "stamp")
    assert user_plugins() == [MODULE]
    install(tmp_path / "site", "0.2.0", site)
    assert user_plugins() == []
    assert invoke("plugins", "list").endswith(": allowed at another version: allow it again\n")
    invoke("plugins", "allow", "stamp")
    assert user_plugins() == [MODULE]
    invoke("plugins", "revoke", "stamp")
    assert user_plugins() == []
    invoke("list", "kinds")
    assert not site.exists()
    unknown = runner.invoke(app, ["plugins", "allow", "stomp"])
    assert unknown.exit_code == 2
    assert "no installed plugin 'stomp' (did you mean 'stamp'?); installed: stamp" in " ".join(
        unknown.output.split()
    )


def test_a_runs_report_uses_its_plugins_without_the_environment_variable(site, tmp_path):
    config = tmp_path / "stamped.yaml"
    config.write_text(CONFIG)
    run_dir = tmp_path / "run"
    invoke("run", config, "--trust-plugins", "-o", run_dir)
    module_file = tmp_path / "site" / "chronoprobe_stamp" / "steps.py"
    recorded = json.loads((run_dir / "environment.json").read_text())["plugins"]
    assert recorded[MODULE] == (  # with any other plugin this process loaded
        {
            "sha256": hashlib.sha256(module_file.read_bytes()).hexdigest(),
            "file": str(module_file),
            "distribution": "chronoprobe-stamp 0.1.0",
        }
    )
    assert "Stamped mark" in (run_dir / "report.html").read_text()

    forget()  # a new process, the plugin never allowed, CHRONOPROBE_PLUGINS unset
    (run_dir / "report.html").unlink()
    said = invoke("report", run_dir)
    assert "warning" not in said
    page = (run_dir / "report.html").read_text()
    assert "Stamped mark" in page and "the word was tock" in page

    forget()  # the plugin upgraded since: not the code the run used, so it is not imported
    module_file.write_text(module_file.read_text().replace("Stamped", "Marked"))
    site.unlink()
    said = " ".join(invoke("report", run_dir).split())
    assert said.count("warning:") == 1
    assert (
        f"warning: the run used plugin '{MODULE}', which is not loaded: {module_file} is not "
        "the file the run used (its SHA-256 differs); its steps show generic sections"
    ) in said
    assert not site.exists()
    page = (run_dir / "report.html").read_text()
    assert "Stamped mark" not in page and "Marked mark" not in page and 'class="error"' not in page


def test_the_config_names_an_installed_plugin_by_its_entry_point(site, tmp_path):
    config = tmp_path / "stamped.yaml"
    config.write_text(textwrap.dedent(CONFIG))
    experiment = load_experiment(config, trust_plugins=True)
    assert [step.kind for step in experiment.config.steps] == ["stamp", "report"]
    assert MODULE in loaded_plugins() and site.exists()
