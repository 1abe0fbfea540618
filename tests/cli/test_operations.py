"""Commands generated from step kinds: options from params, one-step runs, same files as a step."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pytest
import typer
from pydantic import Field
from rich.console import Console
from typer.testing import CliRunner

from chronoprobe.cli.operations import group_commands
from chronoprobe.params import Params, choice_of
from chronoprobe.registry import Registry
from chronoprobe.runs.engine import run_experiment
from chronoprobe.steps import STEP_KINDS, Input, Variant, get_kind, step_kind, variant_kind

COLORS: Registry[int] = Registry("colour")
COLORS.add("red", 1)
COLORS.add("blue", 2)


class PaintParams(Params):
    size: int = Field(3, ge=1, description="How many coats.")
    color: choice_of(COLORS) = Field("red", description="Which colour.")
    finish: Literal["matt", "gloss"] = "matt"
    tags: list[str] | None = None
    seed: int | None = None


def paint(ctx, params: PaintParams, inputs: dict[str, Path]) -> None:
    """Paint the input: writes paint.txt."""
    wall = (inputs["wall"] / "wall.txt").read_text()
    text = f"{wall} {params.size} {params.color} {params.finish} {params.tags} {ctx.seed}"
    (ctx.out_dir / "paint.txt").write_text(text)


class BrickParams(Params):
    rows: int = Field(2, description="Rows of bricks.")


class PlankParams(Params):
    wood: str = Field("oak", description="Wood.")


def bricks(ctx, params: BrickParams, inputs) -> None:
    (ctx.out_dir / "wall.txt").write_text("brick " * params.rows)


def planks(ctx, params: PlankParams, inputs) -> None:
    (ctx.out_dir / "wall.txt").write_text(params.wood)


@pytest.fixture(scope="module")
def app() -> typer.Typer:
    if "paint" not in STEP_KINDS:
        inputs = [Input("wall", "A wall directory.")]
        step_kind("paint", PaintParams, inputs=inputs, command=("paint", "on"))(paint)
        walls: Registry[Variant] = Registry("wall material")
        walls.add("bricks", Variant("bricks", BrickParams, bricks, "A brick wall."))
        walls.add("planks", Variant("planks", PlankParams, planks, "A wooden wall."))
        variant_kind("wall", "material", walls, inputs=[])  # the command group "wall"
    app = typer.Typer()
    kinds = [get_kind("paint"), get_kind("wall")]
    for group in ("paint", "wall"):
        commands = typer.Typer()
        for name, function in group_commands(kinds, group):
            commands.command(name)(function)
        app.add_typer(commands, name=group)
    return app


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CHRONOPROBE_CACHE", str(tmp_path / "cache"))


def invoke(app, *args: str):
    result = CliRunner().invoke(app, [str(a) for a in args])
    return result


def test_options_come_from_the_params_model(app):
    text = " ".join(invoke(app, "paint", "on", "--help").output.split())
    for expected in ("How many coats.", "[default: 3]", "blue|red", "matt|gloss", "--out"):
        assert expected in text


def test_a_command_runs_the_step_and_chains_through_the_cache(app, tmp_path):
    result = invoke(app, "wall", "bricks", "--rows", 3, "-o", tmp_path / "wall")
    assert result.exit_code == 0, result.output
    result = invoke(
        app,
        "paint",
        "on",
        tmp_path / "wall",
        "--color",
        "blue",
        "--tags",
        "a",
        "--tags",
        "b",
        "-o",
        tmp_path / "painted",
    )
    assert result.exit_code == 0, result.output
    assert (
        tmp_path / "painted/paint.txt"
    ).read_text() == "brick brick brick  3 blue matt ['a', 'b'] 0"
    again = invoke(
        app,
        "paint",
        "on",
        tmp_path / "wall",
        "--color",
        "blue",
        "--tags",
        "a",
        "--tags",
        "b",
        "-o",
        tmp_path / "again",
    )
    assert "✓ paint on (paint) cached" in again.output


def test_invalid_values_name_the_option_and_write_nothing(app, tmp_path):
    (tmp_path / "wall").mkdir()
    result = invoke(app, "paint", "on", tmp_path / "wall", "--size", 0, "-o", tmp_path / "out")
    assert result.exit_code == 2
    assert "--size: Input should be greater than or equal to 1" in result.output
    assert not (tmp_path / "out").exists()
    result = invoke(
        app, "paint", "on", tmp_path / "wall", "--color", "green", "-o", tmp_path / "out"
    )
    assert result.exit_code != 0 and "green" in result.output


def test_command_and_step_write_the_same_files(app, tmp_path):
    invoke(app, "wall", "planks", "--wood", "pine", "-o", tmp_path / "wall")
    invoke(app, "paint", "on", tmp_path / "wall", "--size", 2, "-o", tmp_path / "painted")
    config = tmp_path / "same.yaml"
    config.write_text(
        "name: same\nsteps:\n"
        "  - {id: w, kind: wall, params: {material: planks, wood: pine}}\n"
        "  - {id: p, kind: paint, inputs: {wall: w}, params: {size: 2}}\n"
    )
    run_experiment(config, tmp_path / "run", console=Console(file=open("/dev/null", "w")))  # noqa: SIM115
    step, command = tmp_path / "run/steps/p", tmp_path / "painted"
    assert (step / "paint.txt").read_bytes() == (command / "paint.txt").read_bytes()
    # the command's input was the wall command's output: same key as the step's, one entry
    assert (tmp_path / "cache/paint").is_dir()
    assert len([p for p in (tmp_path / "cache/paint").iterdir() if p.is_dir()]) == 1


def test_out_must_not_be_someone_elses_folder(app, tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine/notes.txt").write_text("keep")
    result = invoke(app, "wall", "bricks", "-o", tmp_path / "mine")
    assert result.exit_code == 2 and "was not written by chronoprobe" in result.output
    assert (tmp_path / "mine/notes.txt").read_text() == "keep"


def test_a_model_spec_given_as_the_trained_folder_gets_a_hint(tmp_path):
    """`probe ... --trained package:smollm2` names a training step's folder; the error says so
    and names -m, which takes model specs."""
    from typer.testing import CliRunner

    from chronoprobe.cli.main import app

    data = tmp_path / "rows"
    data.mkdir()
    args = ["probe", "pll", str(data), "--trained", "package:smollm2", "-o", str(tmp_path / "o")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code != 0
    out = " ".join(result.output.split())
    assert "package:smollm2: no such file or directory (input --trained)" in out
    assert "use -m/--model package:smollm2" in out
    assert not (tmp_path / "o").exists()
