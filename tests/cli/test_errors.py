"""A user's mistake is one line and exit code 2; anything else is a bug: its traceback, a line
saying whose bug it is and where to report it, and exit code 1; CHRONOPROBE_DEBUG lets both
through as raised. No chronoprobe module raises a bare ValueError for a user's mistake."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import chronoprobe
from chronoprobe.cli.main import app
from chronoprobe.errors import UserError

runner = CliRunner()
COMMAND = ["models", "path", "package:smollm2"]


def _raise(error: Exception):
    def weights_directory(spec: str):
        raise error

    return weights_directory


def test_a_user_error_is_one_line_with_exit_code_2(monkeypatch):
    monkeypatch.setattr(
        "chronoprobe.models.weights.weights_directory", _raise(UserError("x.gguf: no such file"))
    )
    result = runner.invoke(app, COMMAND)
    assert result.exit_code == 2, result.output
    assert result.output.strip() == "error: x.gguf: no such file"


@pytest.mark.parametrize("error", [ValueError("too many values to unpack"), KeyError("period")])
def test_any_other_exception_is_a_bug_with_its_traceback_and_where_to_report_it(monkeypatch, error):
    monkeypatch.setattr("chronoprobe.models.weights.weights_directory", _raise(error))
    result = runner.invoke(app, COMMAND)
    assert result.exit_code == 1, result.output
    assert "Traceback (most recent call last)" in result.output
    assert f"{type(error).__name__}: " in result.output
    last = " ".join(result.output.strip().splitlines()[-2:])
    assert re.search(
        rf"error: this is a bug in chronoprobe {re.escape(chronoprobe.__version__)}, not a "
        r"mistake of yours: please report it (at \S+|to chronoprobe's maintainers), with the "
        r"command you ran and the traceback above",
        " ".join(last.split()),
    ), result.output


def test_debugging_lets_both_through_as_raised(monkeypatch):
    monkeypatch.setenv("CHRONOPROBE_DEBUG", "1")
    for error in (UserError("bad"), KeyError("period")):
        monkeypatch.setattr("chronoprobe.models.weights.weights_directory", _raise(error))
        result = runner.invoke(app, COMMAND)
        assert result.exception is error


def test_no_module_raises_a_bare_value_error():
    """A user's mistake is a UserError (or a subclass), so that the command line can tell it
    from a bug; a bare ValueError would print as a bug."""
    source = Path(chronoprobe.__file__).parent
    found = [
        f"{path.relative_to(source)}:{number}"
        for path in sorted(source.rglob("*.py"))
        if path != source / "errors.py"  # UserError itself
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.match(r"raise ValueError\b|class \w+\(ValueError\)", line.strip())
    ]
    assert found == [], found
