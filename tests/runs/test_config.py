"""Config validation: every error names the YAML line and the key path, with the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from chronoprobe.runs.config import ConfigError, load_experiment

GOOD = """
name: exp
seed: 3
plugins: [chronoprobe_test_steps]
steps:
  - id: kg
    kind: tiny_kg
  - id: sq
    kind: squares
    params:
      shards: 4
  - id: sum
    kind: summary
    inputs: {kg: kg}
"""


def problems(path: Path, overrides: tuple[str, ...] = ()) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_experiment(path, overrides)
    return caught.value.problems


def test_good_config_fills_defaults(write_config):
    experiment = load_experiment(write_config(GOOD))
    assert experiment.config.seed == 3
    assert [s.id for s in experiment.config.steps] == ["kg", "sq", "sum"]
    resolved = experiment.resolved()
    assert resolved["steps"][1]["params"] == {
        "shards": 4,
        "rows_per_shard": 10,
        "delay": 0.0,
        "side_file": None,
    }
    assert resolved["steps"][2]["inputs"] == {"kg": "kg"}


def test_unknown_top_level_key(write_config):
    path = write_config(GOOD.replace("seed: 3", "seed: 3\nsed: 4"))
    assert problems(path) == ["exp.yaml:3: sed: unknown key (did you mean 'seed'?)"]


def test_unknown_param_key(write_config):
    path = write_config(GOOD.replace("shards: 4", "shards: 4\n      shard: 5"))
    assert problems(path) == [
        "exp.yaml:11: steps[1].params.shard: unknown key (did you mean 'shards'?)"
    ]


def test_wrong_type_in_params(write_config):
    path = write_config(GOOD.replace("shards: 4", "shards: many"))
    assert problems(path) == [
        "exp.yaml:10: steps[1].params.shards: Input should be a valid integer, "
        "unable to parse string as an integer"
    ]


def test_wrong_type_at_top_level(write_config):
    path = write_config(GOOD.replace("seed: 3", "seed: [3]"))
    assert problems(path) == ["exp.yaml:2: seed: Input should be a valid integer"]


def test_steps_written_as_a_mapping_are_told_the_list_form(write_config):
    path = write_config("name: exp\nsteps:\n  kg:\n    kind: tiny_kg\n")
    assert problems(path) == [
        "exp.yaml:2: steps: a list of steps, not a mapping: write each step as `- id: NAME` "
        "followed by its kind, params and inputs (`- id: kg`, not `kg:`)"
    ]


def test_missing_required_key_points_at_its_mapping(write_config):
    path = write_config(GOOD.replace("    kind: squares\n", ""))
    assert problems(path) == ["exp.yaml:7: steps[1].kind: required key is missing"]


def test_duplicate_step_id(write_config):
    path = write_config(GOOD.replace("id: sq", "id: kg"))
    assert problems(path) == ["exp.yaml:7: steps[1].id: duplicate step id 'kg'"]


def test_input_naming_an_unknown_step(write_config):
    path = write_config(GOOD.replace("{kg: kg}", "{kg: world}"))
    assert problems(path) == [
        "exp.yaml:13: steps[2].inputs.kg: 'world' is no such step; "
        "inputs name earlier steps (kg, sq)"
    ]


def test_input_naming_a_later_step(write_config):
    text = GOOD.replace("    kind: tiny_kg\n", "    kind: tiny_kg\n    inputs: {later: sum}\n")
    assert problems(write_config(text)) == [
        "exp.yaml:7: steps[0].inputs.later: 'sum' is a later step; inputs name earlier steps (none)"
    ]


def test_unknown_kind(write_config):
    [problem] = problems(write_config(GOOD.replace("kind: squares", "kind: squeres")))
    assert problem.startswith(
        "exp.yaml:8: steps[1].kind: unknown step kind 'squeres' (did you mean 'squares'?); known:"
    )
    assert "squares" in problem and "kg" in problem


def test_unimportable_plugin(write_config):
    path = write_config(GOOD.replace("[chronoprobe_test_steps]", "[no_such_plugin_module]"))
    with pytest.raises(ConfigError) as caught:
        load_experiment(path, trust_plugins=True)
    [first, *_] = caught.value.problems
    assert first.startswith("exp.yaml:3: plugins[0]: cannot import 'no_such_plugin_module'")


def test_every_problem_is_reported_at_once(write_config):
    text = GOOD.replace("shards: 4", "shards: x").replace("kind: summary", "kind: nope")
    assert [p.split(": ")[:2] for p in problems(write_config(text))] == [
        ["exp.yaml:10", "steps[1].params.shards"],
        ["exp.yaml:12", "steps[2].kind"],
    ]


def test_invalid_yaml_names_the_line(write_config):
    [problem] = problems(write_config(GOOD.replace("seed: 3", "seed: [3")))
    assert problem.startswith("exp.yaml:3: invalid YAML:")


def test_missing_config_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such experiment config"):
        load_experiment(tmp_path / "absent.yaml")


KG_CONVERT = """
name: exp
steps:
  - id: world
    kind: kg
    params:
      source: convert
      format: jsonl
      paths: [data/facts.jsonl]
"""


def test_kg_convert_input_file_must_exist(write_config, tmp_path):
    path = write_config(KG_CONVERT)
    assert problems(path) == [
        f"exp.yaml:8: steps[0].params.paths[0]: no such file or directory: "
        f"{tmp_path / 'data/facts.jsonl'}"
    ]
    (tmp_path / "data").mkdir()
    (tmp_path / "data/facts.jsonl").write_text("")
    experiment = load_experiment(path)  # relative to the config's folder, stored absolute
    assert experiment.params["world"].root.paths == [tmp_path / "data/facts.jsonl"]


def test_kg_params_errors_skip_the_source_tag(write_config):
    path = write_config(KG_CONVERT.replace("format: jsonl", "format: csv\n      fact: 1"))
    assert problems(path) == [
        f"exp.yaml:9: steps[0].params.paths[0]: no such file or directory: "
        f"{path.parent / 'data/facts.jsonl'}",
        "exp.yaml:7: steps[0].params.format: unknown source format 'csv'; choose one of: "
        "cronquestions, jsonl, wikidata-json, wikidata-sparql",
        "exp.yaml:8: steps[0].params.fact: unknown key (did you mean 'format'?)",
    ]


def test_kg_wrong_type(write_config):
    text = (
        "name: d\nsteps:\n  - id: world\n    kind: kg\n    params: {source: synth, facts: lots}\n"
    )
    assert problems(write_config(text)) == [
        "exp.yaml:5: steps[0].params.facts: Input should be a valid integer, "
        "unable to parse string as an integer"
    ]


@pytest.mark.parametrize(
    ("params", "reason"),
    [
        ("{builder: drift}", "required key is missing: the builder, one of cronq, dates, drift"),
        ("{}", "required key is missing: the builder, one of cronq, dates, drift"),
        ("{family: drfit}", "unknown builder 'drfit' (did you mean 'drift'?); one of cronq"),
        ("{family: [1, 2]}", "unknown builder [1, 2]; one of cronq"),
    ],
)
def test_a_step_that_names_no_variant_is_told_the_ones_there_are(write_config, params, reason):
    """A build step without its family crashed in the spelling hint (TypeError on None)."""
    text = (
        "name: d\nsteps:\n  - id: world\n    kind: kg\n    params: {source: sample}\n"
        f"  - id: b\n    kind: build\n    inputs: {{kg: world}}\n    params: {params}\n"
    )
    (problem,) = problems(write_config(text))
    assert problem.startswith(f"exp.yaml:9: steps[1].params.family: {reason}")


def test_a_year_written_as_a_number_is_that_period(write_config):
    """`first: 2015` in YAML is the number 2015: the year, as `--first 2015` is on the
    command line (it was refused as "Input should be a valid string")."""
    text = (
        "name: d\nsteps:\n  - id: world\n    kind: kg\n    params: {source: sample}\n"
        "  - id: b\n    kind: build\n    inputs: {kg: world}\n"
        "    params: {family: drift, first: 2015, last: 2017}\n"
    )
    params = load_experiment(write_config(text)).params["b"].root
    assert (params.first, params.last) == ("2015", "2017")
    assert [str(p) for p in params.periods()] == ["2015", "2016", "2017"]
    assert problems(write_config(text.replace("first: 2015", "first: true"))) == [
        "exp.yaml:9: steps[1].params.first: Input should be a valid string"
    ]


def test_overrides_set_values_by_step_id(write_config):
    path = write_config(GOOD)
    experiment = load_experiment(path, ["seed=7", "steps.sq.params.shards=9", "name=other"])
    assert experiment.config.seed == 7
    assert experiment.config.name == "other"
    assert experiment.params["sq"].shards == 9


def test_bad_override_values_are_blamed_on_the_override(write_config):
    path = write_config(GOOD)
    assert problems(path, ("steps.sq.params.shards=many",)) == [
        "--set steps.sq.params.shards=many: steps[1].params.shards: Input should be a valid "
        "integer, unable to parse string as an integer"
    ]
    assert problems(path, ("steps.cube.params.shards=1",)) == [
        "--set steps.cube.params.shards=1: no step 'cube' (steps: kg, sq, sum)"
    ]
    assert problems(path, ("seed",)) == [
        "--set seed: expected KEY=VALUE, e.g. steps.world.params.facts=5000"
    ]


def test_a_yaml_alias_bomb_is_refused_quickly(write_config):
    import time

    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}]" for i in range(1, 20)]
    path = write_config(GOOD + "\n".join(lines) + "\n")
    began = time.perf_counter()
    assert problems(path) == [
        "exp.yaml:1: the document expands to more than 100,000 values once its aliases (*name) "
        "are resolved; refusing to read it"
    ]
    assert time.perf_counter() - began < 5


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("a: &a [*a]\n", 14),  # hung, growing without bound
        ("a: &a {b: [1, *a]}\n", 14),
        ("a: &a {<<: *a}\n", 14),  # a merge key naming its own mapping
        ("a: &a\n  - &b [*b]\n", 15),
    ],
)
def test_a_recursive_alias_is_refused_at_its_line(write_config, text, line):
    assert problems(write_config(GOOD + text)) == [
        f"exp.yaml:{line}: the alias *{text.split('*')[1][0]} refers to a collection that holds "
        "it (a recursive alias, which stands for an endless value)"
    ]


def test_a_long_string_named_many_times_is_refused(write_config):
    lines = [f"s: &s0 '{'x' * 100_000}'"]  # 100 kB, named 10**4 times: 1 GB written back
    lines += [f"s{i}: &s{i} [{', '.join([f'*s{i - 1}'] * 10)}]" for i in range(1, 5)]
    [problem] = problems(write_config(GOOD + "\n".join(lines) + "\n"))
    assert problem.endswith(
        "the document expands to more than 67,108,864 characters once its aliases (*name) are "
        "resolved; refusing to read it"
    )


def test_deep_nesting_is_one_line_not_a_recursion_error(write_config):
    path = write_config(GOOD + "deep: " + "[" * 5000 + "]" * 5000 + "\n")
    assert problems(path) == ["exp.yaml:14: nested more than 64 levels deep"]
    [problem] = problems(write_config(GOOD), ("steps=" + "[" * 5000,))
    assert problem == f"--set steps={'[' * 40}...: nested more than 64 levels deep"
    # block style nests as deep without brackets
    assert problems(write_config(GOOD + "deep:\n" + "- " * 3000 + "x\n")) == [
        "exp.yaml:15: nested more than 64 levels deep"
    ]


def test_aliases_and_merge_keys_within_bounds_still_work(write_config):
    text = GOOD.replace("params:\n      shards: 4", "params: &sq\n      shards: 4")
    text += "  - id: sq2\n    kind: squares\n    params: {<<: *sq, delay: 0.5}\n"
    experiment = load_experiment(write_config(text))
    assert experiment.params["sq2"].shards == 4 and experiment.params["sq2"].delay == 0.5


def test_a_duplicated_key_is_an_error_not_a_silent_overwrite(write_config):
    path = write_config(GOOD.replace("      shards: 4", "      shards: 4\n      shards: 5"))
    assert problems(path) == ["exp.yaml:11: shards: duplicate key"]


def test_an_override_that_is_not_yaml_is_one_line_naming_it(write_config):
    [problem] = problems(write_config(GOOD), ("seed=[1",))
    assert problem.startswith("--set seed=[1: the value '[1' is not valid YAML")
