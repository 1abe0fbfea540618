"""Every --help fits a 100-column terminal with room for its descriptions: option names and
types take capped columns, and the descriptions the rest (typer's own layout left probe
generate's 22 characters). `chronoprobe --help` opens with commands to start with."""

from __future__ import annotations

import re

import typer.main
from rich.table import Table
from rich.text import Text
from typer.testing import CliRunner

from chronoprobe.cli.help_text import NAMES_WIDTH, TYPES_WIDTH, _broken_at_bars
from chronoprobe.cli.main import START_HERE, app

from .test_docs_commands import command_words, parse, quick_start

runner = CliRunner()
COLUMNS = 100
DESCRIPTIONS = 48  # the description column's least width at 100 columns


def commands() -> list[tuple[list[str], typer.core.TyperCommand]]:
    """(path, click command) of every command and group, the root's path being []."""
    root = typer.main.get_command(app)
    ctx = root.make_context("chronoprobe", [], resilient_parsing=True)
    found, todo = [], [([], root)]
    while todo:
        path, command = todo.pop()
        found.append((path, command))
        if hasattr(command, "list_commands"):
            for name in command.list_commands(ctx):
                todo.append(([*path, name], command.get_command(ctx, name)))
    return sorted(found, key=lambda item: item[0])


def command_paths() -> list[list[str]]:
    return [path for path, _ in commands()]


def test_every_help_fits_100_columns_with_room_for_its_descriptions():
    paths = command_paths()
    assert len(paths) >= 45
    for path in paths:
        result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": str(COLUMNS)})
        assert result.exit_code == 0, (path, result.output)
        lines = result.output.splitlines()
        assert max(map(len, lines)) <= COLUMNS, path
        # every option row shares the columns: the --help row shows where descriptions start
        row = next(line for line in lines if "Show this message and exit." in line)
        width = COLUMNS - row.index("Show this message and exit.") - 2  # less the border
        assert width >= DESCRIPTIONS, (" ".join(path), width)


def test_brackets_in_a_help_are_shown_as_written():
    """Typer reads help as rich markup: `pip install 'chronoprobe[serve]'` lost its extra."""
    checked = 0
    for path, command in commands():
        texts = [command.help or "", *(getattr(p, "help", None) or "" for p in command.params)]
        # as written: a help escaped for rich (`\[MASK]`) reads `[MASK]`
        plain = " ".join(texts).replace("\\[", "[")
        written = set(re.findall(r"[\w.-]*\[[\w,-]+\]", plain))
        if not written:
            continue
        said = runner.invoke(app, [*path, "--help"], env={"COLUMNS": str(COLUMNS)}).output
        assert {w for w in written if w not in said} == set(), path
        checked += 1
    assert checked >= 5  # models serve, kg convert's extra, the [MASK] of builders


def test_a_long_name_and_a_list_of_choices_wrap_in_their_columns():
    result = runner.invoke(app, ["probe", "generate", "--help"], env={"COLUMNS": "100"})
    lines = result.output.splitlines()
    (flag,) = [n for n, line in enumerate(lines) if re.match(r"│\s+--trust-remote-code ", line)]
    assert "--no-trust-remote-code" in lines[flag + 1]  # its negative form under it
    (dtype,) = [n for n, line in enumerate(lines) if re.match(r"│\s+--dtype ", line)]
    assert "<auto|float32|" in lines[dtype] and "bfloat16|" in lines[dtype + 1]
    kind = _broken_at_bars(Text("<auto|float32|bfloat16|float16>"))
    assert kind.plain.split("\n") == ["<auto|float32|", "bfloat16|", "float16>"]
    assert all(len(line) <= TYPES_WIDTH for line in kind.plain.split("\n"))
    assert NAMES_WIDTH < COLUMNS // 3


def test_typer_lays_options_out_in_the_columns_the_narrowing_reads():
    """The narrowing reads typer's table of (required,) names, short names, negative names,
    their short names, type and help: a typer that lays it out otherwise fails here."""
    from typer import rich_utils

    seen = []
    real = rich_utils._print_options_panel

    def spy(**options):
        class Console:
            def print(self, panel, *args, **kwargs):
                seen.append(panel.renderable)

        real(**{**options, "console": Console()})

    rich_utils._print_options_panel = spy
    try:
        runner.invoke(app, ["probe", "pll", "--help"])
    finally:
        rich_utils._print_options_panel = real
    assert seen and all(isinstance(t, Table) and len(t.columns) in (6, 7) for t in seen)


def test_the_top_help_starts_with_commands_from_the_quick_start():
    result = runner.invoke(app, ["--help"], env={"COLUMNS": "100"})
    said = result.output
    assert said.index("Start here") < said.index("Options")
    shown = [line.strip() for line in START_HERE.splitlines() if line.startswith("  chronoprobe")]
    assert len(shown) == 3 and all(line in said for line in shown)
    readme = {" ".join(command_words(line)) for line in quick_start()}
    for line in shown:
        words = command_words(line)
        parse(words)
        assert " ".join(words) in readme, line  # so the quick start test runs it
    assert re.search(r"chronoprobe run experiments/demo\.yaml --out runs/demo", START_HERE)
