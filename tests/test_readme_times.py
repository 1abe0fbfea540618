"""The times the README gives agree with each other: `make demo` is no quicker than the run it
makes, a command shown twice takes the same time in both places, and a command that is a step
of the demo (the same kind and options as the demo's step) is no slower alone than the whole
demo, nor are all of them together. The times themselves are measured by hand (with the load
of the machine said); this keeps them from contradicting one another."""

from __future__ import annotations

import re
from pathlib import Path

import typer.main
import yaml

from chronoprobe.cli.main import app
from chronoprobe.steps import STEP_KINDS

from .cli.test_docs_commands import command_words

ROOT = Path(__file__).parents[1]
TIME = re.compile(r"#[^#]*?\b(\d+(?:\.\d+)?)\s*(s|min|h)\b")
UNITS = {"s": 1, "min": 60, "h": 3600}
# options that are no step param: where the output goes, how a command is run
NOT_PARAMS = {"out", "no_cache", "as_json", "threads", "max_record"}


def seconds(text: str) -> float | None:
    found = TIME.search(text)
    return float(found[1]) * UNITS[found[2]] if found else None


def blocks() -> dict[str, list[str]]:
    """The bash blocks of the Quick start and of the families section, by section."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    out = {}
    for title in ("## Quick start", "## The four probe families", "## Running experiments"):
        section = text[text.index(title) :]
        block = re.search(r"```bash\n(.*?)```", section, re.DOTALL).group(1)
        out[title] = [line for line in block.splitlines() if command_words(line)]
    return out


def timed_lines() -> list[tuple[str, list[str], float]]:
    return [
        (title, command_words(line), seconds(line))
        for title, lines in blocks().items()
        for line in lines
        if seconds(line) is not None
    ]


# the most a time in words can be: "(minutes on 2 cores)" is under an hour
AT_MOST = {"seconds": 60, "minutes": 3600, "hours": float("inf")}


def make_demo_seconds() -> float:
    """The most seconds `make demo` takes by the README's Set up line: its figure ("about
    5 min"), or where it says a time in words ("minutes"), the most those words cover."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    line = next(line for line in text.splitlines() if line.startswith("make demo"))
    found = re.search(r"about (\d+(?:\.\d+)?) (s|min|h)\b", line)
    if found:
        return float(found[1]) * UNITS[found[2]]
    word = re.search(r"\b(seconds|minutes|hours)\b", line)
    assert word, f"the README's make demo line gives no time: {line}"
    return AT_MOST[word[1]]


def run_demo_seconds() -> float:
    for _, words, time in timed_lines():
        if words[:2] == ["run", "experiments/demo.yaml"]:
            return time
    raise AssertionError("the README gives no time of `chronoprobe run experiments/demo.yaml`")


def step_of(words: list[str]) -> tuple[str, dict, dict, dict, str | None, str | None]:
    """(step kind, the options given as params, the other options' defaults, the inputs
    given, variant key, variant) of a command line."""
    root = typer.main.get_command(app)
    ctx = root.make_context("chronoprobe", [], resilient_parsing=True)
    command, rest, path = root, list(words), []
    while hasattr(command, "get_command"):
        path.append(rest.pop(0))
        command = command.get_command(ctx, path[-1])
    ctx = command.make_context(path[-1], rest, parent=ctx)
    typed, defaults = {}, {}
    for name, value in ctx.params.items():
        if name in NOT_PARAMS:
            continue
        given = getattr(ctx.get_parameter_source(name), "name", "") == "COMMANDLINE"
        (typed if given else defaults)[name] = value
    for kind in (STEP_KINDS.get(n) for n in STEP_KINDS.names()):
        inputs = {i.name for i in kind.inputs or ()}
        given = {n: v for n, v in typed.items() if n not in inputs}
        read = {n: Path(v) for n, v in typed.items() if n in inputs}
        if kind.variants is not None and tuple(path[:-1]) == kind.command:
            return kind.name, given, defaults, read, kind.variants.key, path[-1]
        if kind.command and kind.variants is None and tuple(path) == kind.command:
            return kind.name, given, defaults, read, None, None
    raise AssertionError(f"no step kind runs chronoprobe {' '.join(path)}")


def same(given, configured) -> bool:
    def flat(value) -> list[str]:
        values = value if isinstance(value, list | tuple) else [value]
        parts = [p.strip() for v in values for p in str(v).split(",")]
        return [p.removeprefix("package:") for p in parts]

    return flat(given) == flat(configured)


def _output(words: list[str]) -> Path | None:
    for flag in ("--out", "-o"):
        if flag in words:
            return Path(words[words.index(flag) + 1])
    return None


def demo_steps(lines: list[list[str]]) -> list[str | None]:
    """The demo's step that each command line runs alone, in order (None: none): the same
    kind (and member), every option given set alike in the step (the seed is the demo's own)
    and every other one of the step's at the command's default, and inputs made by earlier
    lines that run the step's inputs."""
    demo = yaml.safe_load((ROOT / "experiments" / "demo.yaml").read_text(encoding="utf-8"))
    made: dict[Path, str | None] = {}
    found = []
    for words in lines:
        kind, given, defaults, read, key, member = step_of(words)
        sources = {}
        for name, path in read.items():  # a folder an earlier line wrote, or a file in one
            sources[name] = next((made[p] for p in (path, *path.parents) if p in made), None)
        match = None
        for step in demo["steps"]:
            params = {"seed": demo.get("seed", 0), **(step.get("params") or {})}
            if step["kind"] != kind or (key is not None and params.get(key) != member):
                continue
            if (step.get("inputs") or {}) != sources:
                continue
            unsaid = {n: v for n, v in step.get("params", {}).items() if n in defaults}
            if all(n in params and same(v, params[n]) for n, v in given.items()) and all(
                same(defaults[n], v) for n, v in unsaid.items()
            ):
                match = step["id"]
                break
        found.append(match)
        if _output(words) is not None:
            made[_output(words)] = match
    return found


def test_make_demo_is_no_quicker_than_the_run_it_makes():
    assert make_demo_seconds() >= run_demo_seconds()


def test_a_command_shown_twice_is_given_one_time():
    times: dict[str, set[float]] = {}
    for _, words, time in timed_lines():
        times.setdefault(" ".join(words), set()).add(time)
    assert {line: t for line, t in times.items() if len(t) > 1} == {}


def test_no_step_of_the_demo_is_slower_alone_than_the_whole_demo():
    demo = run_demo_seconds()
    steps: dict[str, float] = {}
    found = blocks()  # the families' lines read what the quick start's wrote
    lines = found["## Quick start"] + found["## The four probe families"]
    for line, step in zip(lines, demo_steps([command_words(x) for x in lines]), strict=True):
        time = seconds(line)
        if step is None or time is None:
            continue
        steps[step] = time
        assert time <= demo, f"{line.strip()}: {time:.0f} s > the demo's {demo:.0f} s"
    assert len(steps) >= 8, steps  # the matching finds the demo's steps
    assert sum(steps.values()) <= demo, f"the demo's steps alone take {sum(steps.values())} s"


def test_the_matching_tells_a_demo_step_from_another_command():
    lines = [
        "kg synth --out kg/world --facts 20000 --seed 0",
        "build lamatk kg/world --out lamatk/ --sample 600",
        "train memorize lamatk/statements.jsonl --out mem/ --epochs 30 --preset tiny",
        "build lamatk kg/world --out other/ --sample 601",  # another size
        "train memorize other/statements.jsonl --out m2/ --epochs 30 --preset tiny",
        "kg sample -o kg/real",
        "build drift kg/real --first 2010 --last 2020 -o d",
        "probe pll d -m package:smollm2 -o p",  # not the demo's rows
    ]
    found = demo_steps([line.split() for line in lines])
    assert found == ["world", "lamatk", "memorize", None, None, "sample", None, None]
