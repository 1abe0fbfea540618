"""The commands the docs show are commands the tool has.

Every ``chronoprobe ...`` line in a code block of README.md and docs/*.md is parsed by the real
command tree, as the shell would hand it over: its command path must exist and each option must
be one of that command's, with a value of the right type. Every leaf command's ``--help`` ends
with an example, parsed the same way. The README's quick start is run as written, at the tiny
sizes of ``TINY`` (the only change made to its lines), so it cannot break unnoticed. And
all the pages' commands, run one after another in one folder, write each output once.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import os
import re
import shlex
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer.main
import yaml
from typer._click import ClickException, Context
from typer._click.exceptions import UsageError
from typer.core import TyperGroup
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.cli.run import parse_seeds
from chronoprobe.runs.single import run_operation

ROOT = Path(__file__).parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^\s*```")
STOP = {"|", "||", "&&", ";", ">", ">>", "2>&1", "&"}  # the shell's, not the command's


def code_lines(path: Path) -> Iterator[tuple[int, int, str]]:
    """(block number, line number, text) of each line inside the file's fenced code blocks,
    continuation lines (ending in a backslash) joined to the line they continue."""
    inside, pending, start, block = False, "", 0, 0
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if FENCE.match(line):
            inside, pending, block = not inside, "", block + 1
            continue
        if not inside:
            continue
        if not pending:
            start = number
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        yield block, start, pending + line
        pending = ""


def command_words(line: str) -> list[str] | None:
    """The arguments of a ``chronoprobe`` command line (after a ``$`` prompt, ``VAR=value``
    settings and ``nice``, up to a pipe or a redirection), or None for any other line."""
    try:
        words = shlex.split(line, comments=True)
    except ValueError:
        return None
    words = words[1:] if words[:1] == ["$"] else words
    while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", words[0]):
        words = words[1:]
    if words[:1] == ["nice"]:
        words = words[3:] if words[1:2] == ["-n"] else words[1:]
    if not words or words[0].rpartition("bin/")[2] != "chronoprobe":
        return None
    cut = next((i for i, w in enumerate(words) if w in STOP), len(words))
    return words[1:cut]


PLUGINS = re.compile(r"^\s*export CHRONOPROBE_PLUGINS=(\S+)")


def documented_commands() -> list[tuple[str, list[str], str | None]]:
    """(file:line, arguments, the plugin an ``export CHRONOPROBE_PLUGINS=`` line of the same
    block names) of every command line of the docs."""
    found = []
    for path in DOCS:
        plugin, current = None, None
        for block, number, line in code_lines(path):
            if block != current:
                plugin, current = None, block
            named = PLUGINS.match(line)
            plugin = named.group(1) if named else plugin
            words = command_words(line)
            if words is not None:
                found.append((f"{path.relative_to(ROOT)}:{number}", words, plugin))
    return found


@functools.cache
def command_tree():
    """The click command of the whole app, made once (its groups fill as they are asked)."""
    return typer.main.get_command(app)


def parsed(words: list[str], command=None) -> tuple[list[str], Context]:
    """The command path ``words`` name and the context of that command, after click has parsed
    every level's options and arguments as a run would (unknown commands and options, bad
    values, missing or extra arguments raise click's usage errors). Nothing runs.
    ``command``: another tree (one made with a plugin)."""
    command = command or command_tree()
    path, name, args = [], "chronoprobe", list(words)
    while True:
        ctx = command.make_context(name, list(args))
        if not isinstance(command, TyperGroup):
            return path, ctx
        rest = [*ctx._protected_args, *ctx.args]
        if not rest:
            raise UsageError(f"{' '.join(path) or 'chronoprobe'}: no command given")
        name, command, args = command.resolve_command(ctx, rest)
        path.append(name)


def parse(words: list[str], command=None) -> list[str]:
    """The command path ``words`` name (see :func:`parsed`)."""
    return parsed(words, command)[0]


def leaves() -> Iterator[tuple[list[str], object]]:
    def walk(command, path):
        if isinstance(command, TyperGroup):
            ctx = Context(command)
            for name in command.list_commands(ctx):
                yield from walk(command.get_command(ctx, name), [*path, name])
        else:
            yield path, command

    yield from walk(command_tree(), [])


DOCUMENTED = documented_commands()


@pytest.fixture
def extending_plugin(tmp_path, monkeypatch):
    """docs/extending.md's plugin module, importable as my_plugin and named in
    CHRONOPROBE_PLUGINS, for the commands it adds; the registries are given back after."""
    from chronoprobe.datasets.builders import BUILDERS
    from chronoprobe.families import FAMILIES
    from chronoprobe.probes.view import VIEWS
    from chronoprobe.report.sections import SECTIONS
    from chronoprobe.tkg.params import TKG_MODELS

    registries = (BUILDERS, VIEWS, TKG_MODELS, SECTIONS, FAMILIES)
    for registry in registries:  # built-ins register as their modules load: load them first,
        registry.items()  # or the saved entries would lack them for good once given back
    saved = [dict(r._entries) for r in registries]
    page = (ROOT / "docs" / "extending.md").read_text(encoding="utf-8")
    after = page[page.index("The whole of `my_plugin.py`") :]
    source = re.search(r"```python\n(.*?)```", after, re.DOTALL).group(1)
    (tmp_path / "my_plugin.py").write_text(source, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("CHRONOPROBE_PLUGINS", "my_plugin")
    yield
    sys.modules.pop("my_plugin", None)
    for registry, entries in zip(registries, saved, strict=True):
        registry._entries = entries


def test_the_docs_show_commands():
    """The collector sees the docs' commands (a broken collector would pass everything)."""
    where = {place.split(":")[0] for place, _, _ in DOCUMENTED}
    assert {"README.md", "docs/lamatk.md", "docs/runs.md", "docs/ecbd.md"} <= where
    assert len(DOCUMENTED) > 60
    assert {plugin for _, _, plugin in DOCUMENTED} == {None, "my_plugin"}


@pytest.mark.parametrize(
    ("place", "words", "plugin"), DOCUMENTED, ids=[p for p, _, _ in DOCUMENTED]
)
def test_a_documented_command_exists_with_its_options(request, place, words, plugin):
    tree = None
    if plugin is not None:
        request.getfixturevalue("extending_plugin")
        tree = typer.main.get_command(app)  # its groups list the plugin's commands
    try:
        parse(words, tree)
    except ClickException as err:
        pytest.fail(f"{place}: chronoprobe {shlex.join(words)}: {err.format_message()}")


@pytest.mark.parametrize(
    "words",
    [
        ["probe", "recite", "data", "--modle", "m", "-o", "o"],  # a misspelt option
        ["build", "drift", "kg", "--first", "2016", "--last", "2020"],  # -o missing
        ["kg", "synth", "--facts", "many", "-o", "kg"],  # not a number
        ["probe", "pll", "a", "b", "-m", "x", "-o", "o"],  # an extra argument
        ["train", "memorise", "x", "-o", "o"],  # no such command
        ["probe", "pll", "data", "--dtype", "float8", "-m", "x", "-o", "o"],  # no such choice
    ],
)
def test_a_broken_command_line_is_caught(words):
    with pytest.raises(UsageError):
        parse(words)


def test_the_line_reader_joins_continuations_and_stops_at_the_shell(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "chronoprobe kg info outside/a/block\n"
        "```bash\n"
        "$ CHRONOPROBE_THREADS=1 chronoprobe kg synth --facts 10 \\\n"
        "    -o kg/   # a comment\n"
        "chronoprobe kg info kg/ | head\n"
        "python -m something\n"
        "nice -n 10 chronoprobe kg info kg/\n"
        "```\n",
        encoding="utf-8",
    )
    lines = [(n, command_words(text)) for _, n, text in code_lines(page)]
    assert lines == [
        (3, ["kg", "synth", "--facts", "10", "-o", "kg/"]),
        (5, ["kg", "info", "kg/"]),
        (6, None),
        (7, ["kg", "info", "kg/"]),
    ]


def test_every_leaf_command_teaches_by_an_example_that_parses():
    found = list(leaves())
    assert len(found) >= 32
    for path, command in found:
        examples = re.findall(r"^Example: (chronoprobe .+)$", command.help or "", re.MULTILINE)
        assert examples, f"chronoprobe {' '.join(path)} --help shows no example"
        for example in examples:
            try:
                assert parse(command_words(example)) == path, example
            except ClickException as err:
                pytest.fail(f"{' '.join(path)}: {example}: {err.format_message()}")


# The quick start at test sizes: each README value on the left is run as the one on the right.
TINY = {
    "--facts 20000": "--facts 300",
    "--sample 600": "--sample 20",
    "--epochs 30": "--epochs 1",
    "package:smollm2": "tiny-causal",  # a random causal LM the fixture saves there
}


def quick_start() -> list[str]:
    """The command lines of the README's Quick start block, as written."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("\n## Quick start") :]
    block = re.search(r"```bash\n(.*?)```", section, re.DOTALL).group(1)
    return [line for line in block.splitlines() if command_words(line) is not None]


def test_the_readme_quick_start_runs_at_tiny_sizes(tmp_path, monkeypatch):
    from chronoprobe.models.tiny import random_model
    from chronoprobe.models.tokenizer import train_tokenizer

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CHRONOPROBE_CACHE", str(tmp_path / "cache"))
    tokenizer = train_tokenizer(["Barack Obama was the president of the United States."], "gpt2")
    random_model("gpt2", tokenizer, seed=0).save_pretrained("tiny-causal")
    tokenizer.save_pretrained("tiny-causal")
    lines = quick_start()
    assert len(lines) >= 5 and all(any(k in line for k in TINY) for line in lines[:1])
    for line in lines:
        for written, tiny in TINY.items():
            line = line.replace(written, tiny)
        result = CliRunner().invoke(app, command_words(line))
        assert result.exit_code == 0, f"{line}\n{result.output}"


OUT_OPTIONS = ("-o", "--out")


def _written(words: list[str]) -> str | None:
    """The folder a command line writes (its -o/--out), as a page names it."""
    for i, word in enumerate(words[:-1]):
        if word in OUT_OPTIONS:
            return words[i + 1].rstrip("/")
    return next((w.split("=", 1)[1].rstrip("/") for w in words if w.startswith("--out=")), None)


def read_before_written() -> list[str]:
    """Each command of a page that reads a folder (or a file in it: a word with a slash) that
    a later command of the page writes with -o/--out: followed in order, the page fails at
    that line."""
    problems = []
    for path in DOCS:
        lines = [(n, w) for n, w, _ in DOCUMENTED if n.startswith(f"{path.relative_to(ROOT)}:")]
        outputs = [_written(words) for _, words in lines]
        for i, (place, words) in enumerate(lines):
            own = outputs[i]
            for word in words:
                folder = word.rstrip("/")
                read = {folder, *(str(p) for p in Path(folder).parents)} - {".", own}
                later = read & set(outputs[i + 1 :]) - set(outputs[:i])
                if "/" in word and not word.startswith("-") and later:
                    problems.append(f"{place}: reads {word} before a later line writes it")
    return problems


def test_each_page_makes_every_folder_before_a_command_reads_it():
    """A page's commands, run in order, find every output they read: a line reading
    oracle/answers.jsonl comes after the line that writes oracle/."""
    assert read_before_written() == []


# options that change how a command runs, not what it writes: reruns with them write the same
HOW = {"out", "no_cache", "as_json", "threads", "max_record", "max_record_bytes", "force"}
HOW |= {"trust_plugins", "trust_cache_dir", "open_browser"}
WORLDS = {("kg", "synth"), ("kg", "sample"), ("kg", "export")}  # commands that make a world


def leave_run_to_config(params: dict) -> None:
    """What a ``chronoprobe run`` line leaves to its config, set as the config says: --out
    (runs/<its name>) and --seeds (its ``seeds:``), for a config of this checkout (a user's own,
    not here, says neither)."""
    file = ROOT / params["config"]
    if file.is_file():
        config = yaml.safe_load(file.read_text(encoding="utf-8"))
        params["out"] = params["out"] or Path("runs") / config["name"]
        params["seeds"] = parse_seeds(params["seeds"]) or config.get("seeds", [])


def written_by(words: list[str], tree) -> tuple[Path | None, tuple]:
    """What a command line writes, as a path of the folder it runs in (its --out, or a run's
    default), and the command itself: its path and every parsed value that shapes what it
    writes (``-o kg/`` and ``--out kg``, an option left at its default and the default typed,
    are the same command)."""
    path, ctx = parsed(words, tree)
    params = dict(ctx.params)
    if path == ["run"]:
        leave_run_to_config(params)
    if "seed" in params and params["seed"] is None:  # the run's seed: a command runs with one
        params["seed"] = inspect.signature(run_operation).parameters["seed"].default
    out = params.get("out")
    values = sorted((k, repr(v)) for k, v in params.items() if k not in HOW)
    return (None if out is None else Path(os.path.normpath(out))), (tuple(path), tuple(values))


def collisions(commands: list[tuple[str, list[str]]], tree) -> list[str]:
    """Where the docs' commands, all run in one folder, get in each other's way: two commands
    write one path, one writes inside another's output, or one world (``kg synth``/``sample``
    /``export`` with the same values) is written under two names. Each as file:line vs
    file:line. (No page writes inside another output by design: what the tool puts in a run
    directory, its steps and report, it puts there itself, never through an --out.)"""
    writers: dict[Path, dict[tuple, list[str]]] = defaultdict(lambda: defaultdict(list))
    names: dict[tuple, dict[Path, list[str]]] = defaultdict(lambda: defaultdict(list))
    for place, words in commands:
        out, command = written_by(words, tree)
        if out is not None:
            writers[out][command].append(place)
            if command[0] in WORLDS:
                names[command][out].append(place)
    found = []
    for out, by_command in writers.items():
        for one, other in itertools.combinations(by_command.values(), 2):
            found += [f"{a} vs {b}: both write {out}" for a in one for b in other]
        for outer, outer_writers in writers.items():
            if out != outer and out.is_relative_to(outer):
                inside = [p for places in by_command.values() for p in places]
                outside = [p for places in outer_writers.values() for p in places]
                found += [f"{a} vs {b}: {out} is inside {outer}" for a in inside for b in outside]
    for by_name in names.values():
        for (one, a_places), (other, b_places) in itertools.combinations(by_name.items(), 2):
            found += [
                f"{a} vs {b}: the same world as {one} and as {other}"
                for a in a_places
                for b in b_places
            ]
    return found


def test_every_page_runs_in_one_folder_after_the_others(extending_plugin):
    """A user who follows the README and then every page, in one folder, never has a command
    refuse or replace what another page's command wrote, nor find a world under another name
    than the one another page gave it (the same command line on two pages is the same output).
    """
    tree = typer.main.get_command(app)  # with the plugin's commands, which extending.md runs
    found = collisions([(place, words) for place, words, _ in DOCUMENTED], tree)
    assert not found, "\n".join(found)


def test_commands_that_collide_are_named():
    commands = [
        ("a.md:1", ["kg", "synth", "--facts", "300", "-o", "kg/"]),
        ("a.md:2", ["kg", "synth", "--facts", "300", "--seed", "0", "--out", "kg"]),  # the same
        ("b.md:1", ["kg", "synth", "--facts", "500", "-o", "./kg"]),
        ("b.md:2", ["build", "lamatk", "kg", "-o", "kg/lamatk"]),
        ("c.md:1", ["kg", "synth", "--facts", "300", "-o", "kg-300"]),
        ("d.md:1", ["run", "experiments/cronq-comparison.yaml"]),  # into runs/cronq-comparison
        ("d.md:2", ["run", "experiments/cronq-comparison.yaml", "--seeds", "0,1,2"]),  # its seeds
        ("d.md:3", ["run", "experiments/cronq-comparison.yaml", "--seeds", "0"]),
    ]
    assert collisions(commands, command_tree()) == [
        "a.md:1 vs b.md:1: both write kg",
        "a.md:2 vs b.md:1: both write kg",
        "b.md:2 vs a.md:1: kg/lamatk is inside kg",
        "b.md:2 vs a.md:2: kg/lamatk is inside kg",
        "b.md:2 vs b.md:1: kg/lamatk is inside kg",
        "d.md:1 vs d.md:3: both write runs/cronq-comparison",
        "d.md:2 vs d.md:3: both write runs/cronq-comparison",
        "a.md:1 vs c.md:1: the same world as kg and as kg-300",
        "a.md:2 vs c.md:1: the same world as kg and as kg-300",
    ]
