"""An evaluation command run without --out computes into a temporary folder the user never
named: refused or interrupted, it says nothing of that folder (with --out it names --out)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.errors import UserError


@pytest.fixture
def refusing(monkeypatch):
    def refuse(*args, **kwargs):
        raise UserError("the split holds no fact")

    monkeypatch.setattr("chronoprobe.runs.single.run_operation", refuse)


def test_a_refused_command_without_out_names_no_folder(tmp_path, refusing):
    result = CliRunner().invoke(app, ["tkg", "eval", str(tmp_path)])
    assert result.exit_code == 2
    said = " ".join(result.output.split())
    assert said.endswith("error: the split holds no fact")
    assert "nothing written" not in said and "chronoprobe-" not in said


def test_a_refused_command_with_out_says_it_is_untouched(tmp_path, refusing):
    out = tmp_path / "eval"
    result = CliRunner().invoke(app, ["tkg", "eval", str(tmp_path), "-o", str(out)])
    assert result.exit_code == 2
    said = " ".join(result.output.split())
    assert said.endswith(f"error: the split holds no fact; nothing written to {out}")


def test_an_interrupted_command_without_out_names_no_folder(tmp_path, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("chronoprobe.runs.single.run_operation", interrupted)
    result = CliRunner().invoke(app, ["tkg", "eval", str(tmp_path)])
    assert result.exit_code == 130
    said = " ".join(result.output.split())
    assert said.endswith("interrupted: run the same command again to resume")
