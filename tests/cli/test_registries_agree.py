"""Every registry and step kind has its command, and the command says what the params say.

The commands are generated from the step kinds' params models; this walks the real command
line (as a user's shell sees it) and holds each option's name, default and choices to the
field it came from, and each registry's names to the commands and choices that offer them.
"""

from __future__ import annotations

import typing

import pytest
import typer.main
from pydantic_core import PydanticUndefined

from chronoprobe.cli.main import app
from chronoprobe.models.registry import ADAPTERS
from chronoprobe.params import Params
from chronoprobe.registry import Registry
from chronoprobe.steps import COMMAND_GROUPS as GROUPS
from chronoprobe.steps import STEP_KINDS

ROOT = typer.main.get_command(app)


def command(*path: str):
    current = ROOT
    for name in path:
        assert hasattr(current, "get_command"), f"{' '.join(path)}: {name} has no subcommands"
        found = current.get_command(current.context_class(current), name)
        assert found is not None, f"no command `chronoprobe {' '.join(path)}`"
        current = found
    return current


def shipped() -> list:
    """The step kinds chronoprobe ships (other tests register kinds of their own)."""
    return [STEP_KINDS.get(name) for name in STEP_KINDS.builtin_names()]


def operations() -> list[tuple[tuple[str, ...], type[Params], str]]:
    """(command path, params model, kind) of every operation the step kinds declare."""
    out = []
    for kind in shipped():
        name = kind.name
        if not kind.command:
            continue
        if kind.variants is not None:
            for member in kind.variants.members():
                out.append(((*kind.command, member.name), member.params, name))
        else:
            out.append((kind.command, kind.model, name))
    return out


def offered_choices(option) -> list[str]:
    """The values the command line accepts for an option that offers a fixed set."""
    annotation = option.type_descriptor.annotation
    while typing.get_origin(annotation) is list:
        (annotation,) = typing.get_args(annotation)
    if typing.get_origin(annotation) is typing.Literal:
        return [str(v) for v in typing.get_args(annotation)]
    return []


def option_of(cmd, field: str):
    return next((p for p in cmd.params if p.name == field), None)


def test_every_kind_with_a_command_sits_in_a_listed_group():
    groups = {kind.command[0] for kind in shipped() if kind.command}
    assert groups <= set(GROUPS), f"kinds name groups the CLI lacks: {groups - set(GROUPS)}"
    listed = set(ROOT.list_commands(ROOT.context_class(ROOT)))
    assert set(GROUPS) <= listed


@pytest.mark.parametrize("path, params, kind", operations(), ids=lambda v: str(v))
def test_options_names_defaults_and_choices_follow_the_params(path, params, kind):
    cmd = command(*path)
    variants = STEP_KINDS.get(kind).variants
    for name, field in params.model_fields.items():
        if variants is not None and name == variants.key:
            continue  # the member's name is the command itself
        option = option_of(cmd, name)
        assert option is not None, f"`chronoprobe {' '.join(path)}` has no option for {name}"
        if field.default is not PydanticUndefined and field.default is not None:
            default = field.default
            shown = option.default
            if isinstance(default, list):
                assert list(shown or []) == [str(v) if isinstance(v, str) else v for v in default]
            elif isinstance(default, bool) or not isinstance(default, str | int | float):
                pass  # flags and dicts are shown their own way
            else:
                assert shown == default, f"{name}: option default {shown!r}, param {default!r}"
        offered = offered_choices(option)
        if offered:
            assert set(offered) == set(field_choices(field)), name


def field_choices(field) -> list[str]:
    """The names a field admits: its registry's (``choice_of``), else its Literal's."""
    for meta in field.metadata:
        if isinstance(getattr(meta, "registry", None), Registry):
            return meta.registry.names()
    return _choices(field.annotation)


def _choices(annotation) -> list[str]:
    """The values a field admits by its type: a Literal's, or a registry's names."""
    if typing.get_origin(annotation) is typing.Literal:
        return [str(v) for v in typing.get_args(annotation)]
    for meta in getattr(annotation, "__metadata__", ()):
        registry = getattr(meta, "registry", None)
        if isinstance(registry, Registry):
            return registry.names()
    for arg in typing.get_args(annotation):
        if found := _choices(arg):
            return found
    return []


def test_every_member_of_a_registry_backed_kind_is_a_command():
    for kind in shipped():
        name = kind.name
        if kind.variants is None or not kind.command:
            continue
        group = command(*kind.command)
        listed = group.list_commands(group.context_class(group))
        assert set(kind.variants.registry.names()) <= set(listed), name


def test_registries_resolve_every_name_they_list():
    from chronoprobe.datasets.builders import BUILDERS
    from chronoprobe.kg.io.options import LOADERS
    from chronoprobe.kg.ops import KG_SOURCES
    from chronoprobe.kgqa.params import QA_MODELS
    from chronoprobe.probes.view import VIEWS
    from chronoprobe.tkg.params import TKG_MODELS

    for registry in (BUILDERS, LOADERS, KG_SOURCES, QA_MODELS, VIEWS, TKG_MODELS, ADAPTERS):
        assert registry.names(), registry
        for name in registry.names():
            assert registry.get(name) is not None


def test_model_choices_are_the_registries_names():
    from chronoprobe.kgqa.params import QA_MODELS
    from chronoprobe.tkg.params import TKG_MODELS

    for path, registry in ((("tkg", "train"), TKG_MODELS), (("kgqa", "train"), QA_MODELS)):
        option = option_of(command(*path), "model")
        assert set(offered_choices(option)) == set(registry.names())
    family = option_of(command("probe", "pll"), "family")
    assert set(offered_choices(family)) == set(ADAPTERS.names())


def test_a_command_writes_the_files_its_step_writes(tmp_path, monkeypatch):
    """`kg synth` then `build lamatk` on the command line, and the same two steps in a run:
    every output file is byte for byte the same (the step record aside, which names the run)."""
    import textwrap

    from typer.testing import CliRunner

    from chronoprobe.runs.engine import run_experiment

    runner = CliRunner()
    world, built = tmp_path / "world", tmp_path / "lamatk"
    for args in (
        ["kg", "synth", "--facts", "200", "--no-text", "--seed", "3", "-o", str(world)],
        ["build", "lamatk", str(world), "--sample", "60", "--seed", "3", "-o", str(built)],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
    config = tmp_path / "same.yaml"
    config.write_text(
        textwrap.dedent(
            """
            name: same
            seed: 3
            steps:
              - {id: world, kind: kg, params: {source: synth, facts: 200, text: false}}
              - id: lamatk
                kind: build
                inputs: {kg: world}
                params: {family: lamatk, sample: 60}
            """
        )
    )
    monkeypatch.setenv("CHRONOPROBE_CACHE", str(tmp_path / "other-cache"))
    run_experiment(config, tmp_path / "run")
    for ours, theirs in ((world, "world"), (built, "lamatk")):
        step = tmp_path / "run" / "steps" / theirs
        files = sorted(p.relative_to(ours) for p in ours.rglob("*") if p.is_file())
        assert files[0].name == ".chronoprobe-output"  # the command's marker, then the same files
        assert files[1:] == sorted(p.relative_to(step) for p in step.rglob("*") if p.is_file())
        files = files[1:]
        for name in files:
            if name.name != "step.json":
                assert (ours / name).read_bytes() == (step / name).read_bytes(), name
