"""A config's plugins run code, so they are imported only with --trust-plugins (or when the
user names them in CHRONOPROBE_PLUGINS); bad plugin names and failing plugins are one line."""

from __future__ import annotations

import sys
import textwrap

import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.runs.config import ConfigError, load_experiment

CONFIG = """
name: exp
plugins: [{plugins}]
steps:
  - id: kg
    kind: tiny_kg
"""


@pytest.fixture
def evidence(tmp_path, monkeypatch):
    """A plugin module that leaves a file behind when it is imported, and no trust by default."""
    monkeypatch.delenv("CHRONOPROBE_PLUGINS")
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "leaves_evidence.py").write_text(
        textwrap.dedent(
            f"""
            from pathlib import Path
            Path({str(tmp_path / "imported")!r}).write_text("ran")
            import chronoprobe_test_steps  # noqa: F401 (the kinds this config uses)
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path / "plugins"))
    yield tmp_path / "imported"
    sys.modules.pop("leaves_evidence", None)


def test_a_configs_plugins_are_not_imported_without_trust(write_config, evidence):
    # Failed before: `plugins: [this]` printed the Zen of Python; any module ran.
    path = write_config(CONFIG.format(plugins="leaves_evidence"))
    with pytest.raises(ConfigError) as caught:
        load_experiment(path)
    assert caught.value.problems == [
        "exp.yaml:2: plugins: the config imports Python modules ('leaves_evidence'), which run "
        "code with your rights; if you trust them, run it with --trust-plugins (or name them in "
        "CHRONOPROBE_PLUGINS)"
    ]
    assert not evidence.exists()
    load_experiment(path, trust_plugins=True)
    assert evidence.read_text() == "ran"


def test_the_command_line_asks_for_the_flag(write_config, evidence, tmp_path):
    path = write_config(CONFIG.format(plugins="leaves_evidence"))
    args = ["run", str(path), "--out", str(tmp_path / "run")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and "--trust-plugins" in result.output
    assert not evidence.exists() and not (tmp_path / "run").exists()
    result = CliRunner().invoke(app, [*args, "--trust-plugins"])
    assert result.exit_code == 0, result.output
    assert evidence.exists() and (tmp_path / "run/steps/kg/facts.parquet").is_file()


def test_plugins_the_user_names_in_the_environment_need_no_flag(
    write_config, evidence, monkeypatch
):
    monkeypatch.setenv("CHRONOPROBE_PLUGINS", "other, leaves_evidence")
    load_experiment(write_config(CONFIG.format(plugins="leaves_evidence")))
    assert evidence.exists()
    with pytest.raises(ConfigError, match=r"Python modules \('this'\)"):  # the rest still not
        load_experiment(write_config(CONFIG.format(plugins="leaves_evidence, this")))


@pytest.mark.parametrize(
    ("plugin", "message"),
    [
        (
            '"../../x"',  # Failed before: TypeError (a relative import without a package)
            "exp.yaml:2: plugins[0]: '../../x' is not a module name; name a Python module "
            "found in {tmp} (the config's folder), {tmp}/cwd (the current directory) or on "
            "the Python path, e.g. my_plugin (for my_plugin.py) or my_package.steps, not a path",
        ),
        (
            "toyviews.py",  # Failed before: ran toyviews.py, then could not import 'toyviews.py'
            "exp.yaml:2: plugins[0]: 'toyviews.py' is a file name; name its module instead "
            "(toyviews), found in {tmp} (the config's folder), {tmp}/cwd (the current "
            "directory) or on the Python path",
        ),
        ('"/etc/passwd"', "plugins[0]: '/etc/passwd' is not a module name"),
        ('".hidden"', "plugins[0]: '.hidden' is not a module name"),
        ("no_such_module_x", "plugins[0]: cannot import 'no_such_module_x': No module named"),
        ("breaks_on_import", "plugins[0]: importing 'breaks_on_import' failed: ZeroDivisionError"),
    ],
)
def test_bad_plugins_are_one_line(write_config, tmp_path, monkeypatch, plugin, message):
    (tmp_path / "breaks_on_import.py").write_text("1 / 0\n")
    (tmp_path / "toyviews.py").write_text(f"open({str(tmp_path / 'ran')!r}, 'w')\n")
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    monkeypatch.setattr(sys, "path", list(sys.path))
    path = write_config(CONFIG.format(plugins=plugin))
    with pytest.raises(ConfigError) as caught:
        load_experiment(path, trust_plugins=True)
    message = message.format(tmp=tmp_path.resolve())
    assert caught.value.problems[0].startswith(message) or message in caught.value.problems[0]
    assert not (tmp_path / "ran").exists()  # a file name is refused before importing anything
    sys.modules.pop("breaks_on_import", None)


@pytest.mark.parametrize("command", [["build", "--help"], ["run", "exp.yaml"]])
def test_a_bad_name_in_the_environment_is_one_line(monkeypatch, command):
    """run, too, imports the user's plugins (it went on without a word of them)."""
    monkeypatch.setenv("CHRONOPROBE_PLUGINS", "../../x")
    result = CliRunner().invoke(app, command)
    assert result.exit_code == 2
    assert "error: CHRONOPROBE_PLUGINS: '../../x' is not a module name" in result.output
