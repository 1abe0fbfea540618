"""One vocabulary: each renamed option works under its new name, and under its old one until
0.6.0 with one line on stderr saying what to use; the old name is out of --help, both names
together are refused, a config's old key is told at its line, ``--set`` and Python's old
keywords too, and the cache key does not depend on the name used."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

import chronoprobe
from chronoprobe.cli.main import app
from chronoprobe.errors import UserError
from chronoprobe.runs.config import ConfigError, load_experiment

from .test_build_cli import save_kg
from .test_help_width import commands

runner = CliRunner()


class Captured(UserError):
    """Raised in place of running the step: the params and inputs the command built."""

    def __init__(self, params, inputs):
        super().__init__("captured")
        self.params = getattr(params, "root", params)
        self.inputs = inputs


@pytest.fixture
def captured(tmp_path, monkeypatch):
    """The step each command would run, instead of running it."""
    seen = []

    def capture(kind, params, inputs, *args, **kwargs):
        seen.append(Captured(params, inputs))
        raise seen[-1]

    monkeypatch.setattr("chronoprobe.runs.single.run_operation", capture)
    monkeypatch.chdir(tmp_path)
    for folder in ("kg", "data", "questions", "tkg", "checkpoint"):
        (tmp_path / folder).mkdir()
    return seen


# (command and its other arguments, old option, new option, value, field, the field's value)
RENAMED = [
    (["kg", "synth"], "--start-year", "--first", "1980", "first", 1980),
    (["kg", "synth"], "--end-year", "--last", "2030", "last", 2030),
    (["build", "dates", "kg"], "--first-year", "--first", "1990", "first", 1990),
    (["build", "dates", "kg"], "--max-facts", "--sample", "7", "sample", 7),
    (["build", "timeline", "kg"], "--per-kind", "--per-group", "7", "per_group", 7),
    (["build", "cronq", "kg"], "--max-per-template", "--per-group", "7", "per_group", 7),
    (
        ["build", "drift", "kg", "--first", "2000", "--last", "2003"],
        "--top-subjects",
        "--per-group",
        "7",
        "per_group",
        7,
    ),
    (["probe", "pll", "data", "-m", "package:smollm2"], "--limit", "--sample", "7", "sample", 7),
    (["probe", "pll", "data"], "--models", "--model", "package:smollm2", "model", None),
    (["kgqa", "eval", "checkpoint", "questions"], "--limit", "--sample", "7", "sample", 7),
    (["tkg", "train", "kg"], "--model", "--arch", "complex", "arch", "complex"),
    (["kgqa", "train", "questions", "--tkg", "tkg"], "--model", "--arch", "lm", "arch", "lm"),
]
IDS = [f"{' '.join(words[:2])} {old}" for words, old, *_ in RENAMED]


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def chosen(captured: list, field: str):
    value = getattr(captured[-1].params, field)
    return [str(v) for v in value] if field == "model" else value


@pytest.mark.parametrize(("words", "old", "new", "value", "field", "expected"), RENAMED, ids=IDS)
def test_the_new_name_works_and_the_old_one_warns(
    captured, words, old, new, value, field, expected
):
    expected = ["package:smollm2"] if field == "model" else expected
    code, _, stderr = run(*words, new, value, "-o", "out")
    assert (code, chosen(captured, field)) == (2, expected), stderr
    assert "deprecated" not in stderr
    new_params = captured[-1].params

    code, _, stderr = run(*words, old, value, "-o", "out")
    assert (code, chosen(captured, field)) == (2, expected), stderr
    assert f"{old} is deprecated (removed in 0.6.0): use {new}\n" in stderr
    assert captured[-1].params == new_params  # the same step: the same cache key

    code, _, stderr = run(*words, old, value, new, value, "-o", "out")
    assert code == 2 and len(captured) == 2
    said = f"error: {new} and {old} are the same setting ({old} is its old name): give {new}"
    assert said in " ".join(stderr.split())


@pytest.mark.parametrize(("words", "old", "new", "value", "field", "expected"), RENAMED, ids=IDS)
def test_the_old_name_is_not_in_help(words, old, new, value, field, expected):
    code, out, _ = run(*words[:2], "--help")
    assert code == 0
    flags = set(re.findall(r"--[a-z][a-z-]*", out))
    assert new in flags and old not in flags


def test_a_trained_step_folder_given_to_model_is_taken_as_trained(captured, tmp_path):
    step = tmp_path / "mem"
    step.mkdir()
    (step / "step.json").write_text(json.dumps({"outputs": []}))
    code, _, stderr = run("probe", "recite", "data", "--model", "mem", "-o", "out")
    assert code == 2 and captured[-1].inputs["trained"] == Path("mem")
    assert captured[-1].params.model is None
    assert "--model mem is deprecated (removed in 0.6.0): use --trained mem\n" in stderr
    run("probe", "recite", "data", "--trained", "mem", "-o", "out")
    assert captured[-1].inputs["trained"] == Path("mem") and len(captured) == 2


RETIRED = [
    "--models",
    "--limit",
    "--max-facts",
    "--per-kind",
    "--max-per-template",
    "--top-subjects",
    "--start-year",
    "--end-year",
    "--first-year",
]


def test_no_help_names_a_retired_option_and_model_is_always_a_spec():
    checked = 0
    for path, command in commands():
        if hasattr(command, "list_commands"):
            continue
        code, out, _ = run(*path, "--help")
        assert code == 0, path
        said = set(re.findall(r"--[a-z][a-z-]*", out))
        assert not said & set(RETIRED), (path, said & set(RETIRED))
        for param in command.params:
            if "--model" in param.opts and not param.hidden:
                assert "-m" in param.opts, f"{' '.join(path)}: --model is not a model spec"
        checked += 1
    assert checked >= 40


def test_the_retired_names_still_parse_in_a_config_and_warn_at_their_line(tmp_path, capsys):
    config = tmp_path / "old.yaml"
    config.write_text(
        "name: old\n"
        "steps:\n"
        "  - id: world\n"
        "    kind: kg\n"
        "    params: {source: synth, facts: 300, start_year: 1980}\n"
        "  - id: dates\n"
        "    kind: build\n"
        "    inputs: {kg: world}\n"
        "    params:\n"
        "      family: dates\n"
        "      max_facts: 5\n"
        "  - id: recited\n"
        "    kind: probe\n"
        "    inputs: {data: dates, model: dates}\n"
        "    params: {view: recite}\n",
        encoding="utf-8",
    )
    old = load_experiment(config)
    said = capsys.readouterr().err.splitlines()
    assert said == [
        "old.yaml:5: steps[0].params.start_year is deprecated (removed in 0.6.0): use first",
        "old.yaml:11: steps[1].params.max_facts is deprecated (removed in 0.6.0): use sample",
        "old.yaml:14: steps[2].inputs.model is deprecated (removed in 0.6.0): use trained",
    ]
    assert old.params["dates"].root.sample == 5 and old.params["world"].root.first == 1980
    assert old.config.steps[2].inputs == {"data": "dates", "trained": "dates"}

    new_text = config.read_text().replace("start_year", "first").replace("max_facts", "sample")
    config.write_text(new_text.replace("model: dates", "trained: dates"), encoding="utf-8")
    new = load_experiment(config)
    assert capsys.readouterr().err == ""
    assert new.params == old.params
    assert [s.inputs for s in new.config.steps] == [s.inputs for s in old.config.steps]

    load_experiment(config, ["steps.dates.params.sample=6"])
    assert capsys.readouterr().err == ""
    with pytest.raises(ConfigError) as refused:
        load_experiment(config, ["steps.dates.params.max_facts=6"])
    assert capsys.readouterr().err == ""  # refused, not told
    assert refused.value.problems == [
        "old.yaml:9: steps[1].params: sample and max_facts are the same setting (max_facts is "
        "its old name): give sample"
    ]
    config.write_text(new_text.replace("sample: 5", "max_facts: 5"), encoding="utf-8")
    overridden = load_experiment(config, ["steps.dates.params.max_facts=6"])
    assert overridden.params["dates"].root.sample == 6
    assert capsys.readouterr().err.startswith("--set steps.dates.params.max_facts=6: ")


def test_a_step_run_under_the_old_name_is_cached_under_the_new(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CHRONOPROBE_CACHE", str(tmp_path / "cache"))
    save_kg(tmp_path / "kg")
    code, _, stderr = run("build", "dates", "kg", "--max-facts", "3", "-o", "old")
    assert code == 0, stderr
    assert "--max-facts is deprecated (removed in 0.6.0): use --sample" in stderr
    code, _, stderr = run("build", "dates", "kg", "--sample", "3", "-o", "new")
    assert code == 0 and "cached" in stderr, stderr
    assert (tmp_path / "old" / "statements.jsonl").read_bytes() == (
        tmp_path / "new" / "statements.jsonl"
    ).read_bytes()


def test_python_old_keywords_warn_and_work(captured, tmp_path):
    with pytest.warns(DeprecationWarning) as said, pytest.raises(Captured):
        chronoprobe.probe("pll", tmp_path / "data", models=["package:smollm2"], limit=4)
    assert [str(w.message) for w in said] == [
        "models= is deprecated (removed in 0.6.0): use model=",
        "limit= is deprecated (removed in 0.6.0): use sample=",
    ]
    assert said[0].filename == __file__  # told at the caller's line
    old = captured[-1].params
    assert [str(m) for m in old.model] == ["package:smollm2"] and old.sample == 4
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(Captured):
            chronoprobe.probe("pll", tmp_path / "data", model="package:smollm2", sample=4)
    assert captured[-1].params == old
    with pytest.raises(UserError, match="sample and limit are the same setting"):
        chronoprobe.probe("pll", tmp_path / "data", model="package:smollm2", sample=4, limit=4)


def test_params_built_in_python_with_an_old_name_warn():
    from chronoprobe.tkg.params import TKGTrainParams

    with pytest.warns(DeprecationWarning, match=r"^model is deprecated \(removed in 0.6.0\)"):
        assert TKGTrainParams(model="complex").arch == "complex"


def test_an_input_renamed_by_a_plugin_keeps_its_old_option(captured, tmp_path):
    """``Input(..., formerly=...)`` whose old option no field took: a hidden option of its own."""
    import typer

    from chronoprobe.cli.operations import make_command
    from chronoprobe.params import Params
    from chronoprobe.steps import Input, StepKind

    class TeamsParams(Params):
        year: int = 2015

    kind = StepKind(
        name="teams",
        model=TeamsParams,
        run=lambda ctx, params, inputs: None,
        inputs=(Input("league", "The league.", option=True, formerly="clubs"),),
        command=("teams",),
    )
    plugin = typer.Typer()
    plugin.command("teams")(make_command(kind, TeamsParams, "Teams."))
    plugin.command("other")(lambda: None)  # a group, as chronoprobe's commands are
    result = runner.invoke(plugin, ["teams", "--clubs", "kg", "-o", "out"])
    assert result.exit_code == 2 and captured[-1].inputs == {"league": Path("kg")}
    assert result.stderr.startswith("--clubs is deprecated (removed in 0.6.0): use --league\n")
    result = runner.invoke(plugin, ["teams", "--clubs", "kg", "--league", "kg", "-o", "out"])
    assert "give --league" in result.stderr and len(captured) == 1
    result = runner.invoke(plugin, ["teams", "-o", "out"])  # still required
    assert result.exit_code == 2 and "--league: required: The league." in result.stderr
    shown = runner.invoke(plugin, ["teams", "--help"]).stdout
    assert "--league" in shown and "--clubs" not in shown
