"""Errors on the command line name what the user typed: options and arguments (--rows, DATA,
--base-url), not a config's keys and inputs; a KG given where a probe set belongs is named so;
a refused choice reads without pydantic's "Value error, "."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.cli.wording import spoken
from chronoprobe.probes.cloze_views import PllParams
from chronoprobe.steps import get_kind

runner = CliRunner()


def said(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 2, result.output
    return " ".join(result.output.split())


def test_fields_and_inputs_are_spelled_as_options_and_arguments():
    probe = get_kind("probe")
    message = (
        "input `data` must hold rows (another file of it with `rows`); input `series` is a "
        "folder; `base_url` applies to openai: models only; with `view: recite`, input `nosuch`"
    )
    assert spoken(message, probe, PllParams) == (
        "DATA must hold rows (another file of it with --rows); --series is a folder; "
        "--base-url applies to openai: models only; with `view: recite`, input `nosuch`"
    )


def test_a_field_with_the_value_a_config_gives_it_is_spelled_as_its_option():
    """A step's messages name an option with its value as a config writes it: on the command
    line they read as the option typed, a switch as its flag."""
    probe = get_kind("probe")
    model = probe.variants.get("multi-token").params
    message = (
        "or, with `gap_first: skip`, leaves them out; `include_deleted: true` counts them; "
        "`reuse_answers: false` asks again; `nosuch: x` and `view: pll` stay"
    )
    assert spoken(message, probe, model) == (
        "or, with --gap-first skip, leaves them out; --include-deleted counts them; "
        "--no-reuse-answers asks again; `nosuch: x` and `view: pll` stay"
    )


def test_a_missing_rows_file_names_data_and_the_rows_option(tmp_path, one_row_set):
    message = said(
        "probe", "pll", str(one_row_set), "-m", "package:smollm2", "--rows", "no.jsonl",
        "--out", str(tmp_path / "out"),
    )  # fmt: skip
    assert f"error: {one_row_set / 'no.jsonl'}: no such file; DATA must hold" in message
    assert "(no.jsonl; another file of it with --rows); nothing written to" in message
    assert "input `data`" not in message


@pytest.mark.parametrize("command", [["probe", "pll"], ["export", "lm-eval"]])
def test_a_kg_given_as_the_probe_set_is_named_a_kg(tmp_path, command):
    kg = tmp_path / "kg"
    kg.mkdir()
    (kg / "manifest.json").write_text(json.dumps({"name": "kg"}))
    models = ["-m", "package:smollm2"] if command[0] == "probe" else []
    message = said(*command, str(kg), *models, "--out", str(tmp_path / "out"))
    assert (
        f"error: {kg}: a KG (it holds manifest.json), not a probe set; build a probe set from "
        f"it first, e.g. chronoprobe build drift {kg} --out drift/"
    ) in message


def test_a_served_option_for_a_local_model_is_named_as_typed(tmp_path, one_row_set):
    message = said(
        "probe", "generate", str(one_row_set), "-m", "package:smollm2",
        "--base-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path / "out"),
    )  # fmt: skip
    assert message == "error: --base-url applies to openai: models only (-m openai:MODEL)"


@pytest.mark.parametrize(
    ("options", "error"),
    [
        (
            ["--form", "question", "--gap-first", "skip"],
            "error: --gap-first applies to rows asked by the template; with --form question "
            "every row is asked as a question",
        ),
        (
            ["--protocol", "chroknowledge", "--samples", "3"],
            "error: --protocol chroknowledge sets --samples to 5, not 3: leave --samples out, "
            "or give no --protocol",
        ),
        (["--match", "judge"], "error: --match judge needs a judge model: give one with --judge"),
    ],
)
def test_a_check_of_several_options_names_them_as_typed(tmp_path, one_row_set, options, error):
    """The checks that weigh options against each other write them as a config does
    (`gap_first`, `form: question`); a command says them as the user typed them."""
    out = tmp_path / "out"
    message = said(
        "probe", "generate", str(one_row_set), "-m", "package:smollm2", *options, "-o", str(out)
    )
    assert message == error
    assert "`" not in message and "gap_first" not in message


def test_a_refused_choice_has_no_pydantic_prefix(tmp_path):
    result = runner.invoke(app, ["build", "drift", str(tmp_path), "--granularity", "decade"])
    assert result.exit_code == 2
    message = " ".join(result.output.replace("│", " ").split())
    assert "Invalid value for '--granularity': 'decade' is not one of 'year'," in message
    assert "Value error" not in message
