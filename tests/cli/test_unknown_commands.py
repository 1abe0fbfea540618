"""An unknown command name gets the command it was likely meant to be: the same name in lower
case, the group that has it (TempLAMA is imported, not built), or the nearest name."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app

runner = CliRunner()


def refused(*args: str) -> str:
    result = runner.invoke(app, [*args, "file.jsonl"], terminal_width=200)
    assert result.exit_code == 2, result.output
    return " ".join(result.output.replace("│", " ").split())


@pytest.mark.parametrize("name", ["templama", "TempLAMA", "templam"])
def test_an_importer_asked_to_build_says_how_to_import(name):
    assert (
        f"No such command {name!r}. 'templama' is an importer of released data: "
        "chronoprobe import templama PATHS... -o OUT; its --help says more"
    ) in refused("build", name)


def test_a_view_asked_to_build_names_its_arguments():
    assert "'pll' is a view: chronoprobe probe pll DATA -o OUT" in refused("build", "pll")


@pytest.mark.parametrize(
    ("group", "name", "meant"),
    [
        ("import", "TempLAMA", "Did you mean 'templama'? (command names are lower case)"),
        ("import", "Templam", "Did you mean 'templama'?"),
        ("import", "Cronquestion", "Did you mean 'cronquestions'?"),
        ("probe", "recit", "Did you mean 'recite'?"),
    ],
)
def test_a_name_in_other_case_or_misspelt_gets_the_nearest(group, name, meant):
    assert f"No such command {name!r}. {meant}" in refused(group, name)


def test_a_name_like_none_is_refused_without_a_guess():
    message = refused("build", "zzz")
    assert "No such command 'zzz'." in message and "mean" not in message
