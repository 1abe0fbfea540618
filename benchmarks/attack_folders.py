"""Attack the folders chronoprobe writes, and print the table docs/reliability.md shows.

    python benchmarks/attack_folders.py            # every case, a table per class
    python benchmarks/attack_folders.py --verbose  # and each case's first output line

Each case builds a small situation in a fresh folder (a run directory, a command's ``--out``,
the step cache) with files a user cares about in and around it, runs real commands on it in
this process, and checks three things: nothing raised past the command line's one-line error
(a traceback), nothing ran past its time limit (a hang), and every file of the user's is
still there with its content (a lost file). Whether the command refused or went on is counted
too, and checked against what the case expects.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import tempfile
import textwrap
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from typer.testing import CliRunner

from chronoprobe.cli.main import app

LIMIT_S = 60  # a case still running after this is a hang
CONFIG = """
name: attack
steps:
  - {id: kg, kind: kg, params: {source: synth, facts: 200, text: false}}
"""


class Hang(Exception):
    pass


class Skip(Exception):
    """The case needs what this machine does not allow (mounting a file system, chattr)."""


@dataclass
class Situation:
    """A fresh folder, the user's files to keep, and what the commands printed."""

    root: Path
    kept: dict[Path, bytes | None] = field(default_factory=dict)  # None: a folder
    outputs: list[str] = field(default_factory=list)
    tracebacks: int = 0
    codes: list[int] = field(default_factory=list)
    undo: list[list[str]] = field(default_factory=list)  # commands that undo mounts, chattr

    def system(self, *command: str, undo: list[str] | None = None) -> None:
        """Run a command this case needs (``mount``, ``chattr``); skip the case without it."""
        import subprocess

        done = subprocess.run(command, capture_output=True, check=False)
        if done.returncode != 0:
            raise Skip(done.stderr.decode(errors="replace").strip())
        if undo:
            self.undo.append(undo)

    def small_disk(self, path: Path, size: str) -> Path:
        path.mkdir(parents=True)
        self.system(
            "mount",
            "-t",
            "tmpfs",
            "-o",
            f"size={size}",
            "tmpfs",
            str(path),
            undo=["umount", "-l", str(path)],
        )
        return path

    def keep(self, path: Path, content: str | bytes = "precious\n") -> Path:
        """A file of the user's, which must survive with this content."""
        path.parent.mkdir(parents=True, exist_ok=True)
        data = content.encode() if isinstance(content, str) else content
        path.write_bytes(data)
        self.kept[path] = data
        return path

    def lost(self) -> list[str]:
        return [str(p) for p, data in self.kept.items() if _read(p) != data]

    def config(self, text: str = CONFIG, name: str = "exp.yaml") -> Path:
        path = self.root / name
        path.write_text(textwrap.dedent(text).lstrip())
        return path

    def cli(self, *args: object) -> int:
        result = CliRunner().invoke(app, [str(a) for a in args])
        exception = result.exception
        if exception is not None and not isinstance(exception, SystemExit):
            if isinstance(exception, Hang):
                raise exception
            self.tracebacks += 1
            self.outputs.append(f"TRACEBACK {type(exception).__name__}: {exception}")
        else:
            self.outputs.append(" ".join(result.output.split()))
        self.codes.append(result.exit_code)
        return result.exit_code

    def run(self, out: Path, *extra: object, config: Path | None = None) -> int:
        return self.cli("run", config or self.config(), "--out", out, *extra)

    def synth(self, out: Path, facts: int = 200) -> int:
        return self.cli("kg", "synth", "--facts", facts, "--no-text", "-o", out)


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return b"<missing>"


# --- the cases ----------------------------------------------------------------------------

CASES: list[tuple[str, str, str, Callable[[Situation], None]]] = []


def case(group: str, expect: str, name: str):
    """Register a case: ``expect`` is "refused" (the last command exits 2), "done" (exits 0)
    or "either" (what matters is only that nothing is lost)."""

    def register(function: Callable[[Situation], None]) -> Callable[[Situation], None]:
        CASES.append((group, name, expect, function))
        return function

    return register


LOOK = "folders that look like chronoprobe's"
LINK = "symbolic and hard links"
TYPE = "files where folders go, and the reverse; pipes"
EDIT = "users' files and edits in chronoprobe's folders"
NAME = "names: long, unicode, markup, paths as plugins"
PLAN = "plan errors after an earlier run"
RACE = "second runs and commands, kills mid-write"
DISK = "read-only, immutable and full disks"
REPORT = "damaged run files under report and results"
TRUST = "plugins and trust"


def _run_dir(s: Situation) -> Path:
    run = s.root / "run"
    assert s.run(run) == 0, s.outputs[-1]
    return run


@case(LOOK, "refused", "web app folder (manifest.json, .session.tmp) as run --out")
def _(s):
    app_dir = s.root / "app"
    s.keep(app_dir / "manifest.json", '{"name": "app"}')
    s.keep(app_dir / ".session.tmp", "session")
    s.run(app_dir)


@case(LOOK, "refused", "a KG directory as run --out")
def _(s):
    s.synth(s.root / "kg")
    for path in (s.root / "kg").iterdir():
        s.keep(path, path.read_bytes())
    s.run(s.root / "kg")


@case(LOOK, "refused", "kg synth output as kg convert -o, NOTES.md in it")
def _(s):
    s.synth(s.root / "kg")
    s.keep(s.root / "kg" / "NOTES.md")
    source = s.keep(s.root / "f.jsonl", '{"subject": "Q1", "relation": "P1", "object": "Q2"}\n')
    s.cli("kg", "convert", source, "-f", "jsonl", "-o", s.root / "kg")


@case(LOOK, "refused", "a run directory as kg synth -o")
def _(s):
    run = _run_dir(s)
    s.keep(run / "notes.txt")
    s.synth(run)


@case(LOOK, "refused", "a run's step folder as kg synth -o")
def _(s):
    run = _run_dir(s)
    s.keep(run / "steps" / "kg" / "facts.parquet", (run / "steps/kg/facts.parquet").read_bytes())
    s.synth(run / "steps" / "kg", 300)


@case(LOOK, "refused", "a folder with a hand-made step.json naming the command")
def _(s):
    out = s.root / "mine"
    s.keep(out / "step.json", json.dumps({"id": "kg synth", "outputs": []}))
    s.keep(out / "data.csv", "a,b\n")
    s.synth(out)


@case(LOOK, "refused", "an output marker naming the command, a NOTES.md beside it")
def _(s):
    out = s.root / "kg"
    s.synth(out)
    s.keep(out / "NOTES.md")
    s.synth(out, 300)


@case(LOOK, "refused", "a run marker that is a folder")
def _(s):
    run = _run_dir(s)
    (run / ".chronoprobe-run").unlink()
    s.keep(run / ".chronoprobe-run" / "x")
    s.run(run)


@case(LOOK, "refused", "a run marker of a newer format")
def _(s):
    run = _run_dir(s)
    s.keep(run / ".chronoprobe-run", '{"format": 7}')
    s.run(run)


@case(LOOK, "refused", "a run marker that is not JSON")
def _(s):
    run = _run_dir(s)
    s.keep(run / ".chronoprobe-run", "\x00\xff garbage")
    s.run(run)


@case(LOOK, "refused", "a home-like folder (dotfiles, documents) as run --out")
def _(s):
    home = s.root / "home"
    for name in (".bashrc", ".ssh/id_ed25519", "Documents/thesis.tex", "steps/x/y.txt"):
        s.keep(home / name)
    s.run(home)


@case(LOOK, "refused", "--out . and --out .. (they hold the working directory)")
def _(s):
    here = s.root / "work"
    s.keep(here / "notes.txt")
    os.chdir(here)
    s.synth(Path("."))
    s.run(Path(".."))


@case(LOOK, "refused", "--out holding the step cache")
def _(s):
    s.keep(Path(os.environ["CHRONOPROBE_CACHE"]) / "mine.txt")
    s.run(Path(os.environ["CHRONOPROBE_CACHE"]).parent)


@case(LOOK, "refused", "report --out over a user's HTML file")
def _(s):
    run = _run_dir(s)
    s.cli("report", run, "--out", s.keep(s.root / "index.html", "<p>mine</p>"))


@case(LOOK, "refused", "report --out over the run's config.yaml")
def _(s):
    run = _run_dir(s)
    s.keep(run / "config.yaml", (run / "config.yaml").read_bytes())
    s.cli("report", run, "--out", run / "config.yaml")


@case(LOOK, "either", "results on a folder with a steps/ of its own (results.duckdb kept)")
def _(s):
    folder = s.root / "mine"
    s.keep(folder / "steps" / "a" / "step.json", '{"id": "a", "kind": "x"}')
    s.keep(folder / "results.duckdb", "my database")
    s.cli("results", folder)


@case(LOOK, "refused", "the old layout faked: config.yaml, environment.json {}, steps/")
def _(s):
    folder = s.root / "mine"
    for name in ("config.yaml", "environment.json", "steps/a/step.json", "manifest.json"):
        s.keep(folder / name, "{}")
    s.run(folder)


@case(LOOK, "done", "an empty folder, then a missing one, as run --out")
def _(s):
    (s.root / "empty").mkdir()
    assert s.run(s.root / "empty") == 0
    s.run(s.root / "a" / "b" / "c")


@case(LOOK, "done", "a run directory of the previous version (no marker) is adopted")
def _(s):
    run = _run_dir(s)
    (run / ".chronoprobe-run").unlink()
    (run / "manifest.json").write_text(json.dumps({"chronoprobe": "0.3.0", "steps": ["kg"]}))
    s.keep(run / "steps" / "mine" / "notes.txt")
    s.run(run)


@case(LINK, "refused", "run.log a link to a file outside")
def _(s):
    run = _run_dir(s)
    (run / "run.log").unlink()
    (run / "run.log").symlink_to(s.keep(s.root / "outside.txt"))
    s.run(run)


@case(LINK, "refused", "run.log a hard link to a file outside")
def _(s):
    run = _run_dir(s)
    (run / "run.log").unlink()
    os.link(s.keep(s.root / "outside.txt"), run / "run.log")
    s.run(run)


@case(LINK, "refused", "steps/kg a link to a folder outside")
def _(s):
    run = _run_dir(s)
    shutil.rmtree(run / "steps" / "kg")
    s.keep(s.root / "outside" / "data.txt")
    (run / "steps" / "kg").symlink_to(s.root / "outside")
    s.run(run)


@case(LINK, "refused", "steps a link to a folder outside")
def _(s):
    run = _run_dir(s)
    shutil.move(run / "steps", s.root / "outside")
    s.keep(s.root / "outside" / "mine.txt")
    (run / "steps").symlink_to(s.root / "outside")
    s.run(run)


@case(LINK, "done", ".chronoprobe-tmp a link to a folder outside (the link goes)")
def _(s):
    run = _run_dir(s)
    s.keep(s.root / "outside" / "data.txt")
    (run / ".chronoprobe-tmp").symlink_to(s.root / "outside")
    s.run(run)


@case(LINK, "refused", "config.yaml a link to a file outside")
def _(s):
    run = _run_dir(s)
    (run / "config.yaml").unlink()
    (run / "config.yaml").symlink_to(s.keep(s.root / "outside.yaml"))
    s.run(run)


@case(LINK, "refused", "environment.json a link to a file outside")
def _(s):
    run = _run_dir(s)
    (run / "environment.json").unlink()
    (run / "environment.json").symlink_to(s.keep(s.root / "outside.json"))
    s.run(run)


@case(LINK, "refused", "report.html a link to a file outside, then report")
def _(s):
    run = _run_dir(s)
    (run / "report.html").symlink_to(s.keep(s.root / "outside.html"))
    s.cli("report", run)


@case(LINK, "refused", "an output file of a step a link to a file outside")
def _(s):
    run = _run_dir(s)
    (run / "steps/kg/facts.parquet").unlink()
    (run / "steps/kg/facts.parquet").symlink_to(s.keep(s.root / "outside.parquet"))
    s.run(run, "--set", "steps.kg.params.facts=300")


@case(LINK, "refused", "a folder inside a step folder a link outside")
def _(s):
    run = _run_dir(s)
    s.keep(s.root / "outside" / "data.txt")
    (run / "steps/kg/sub").symlink_to(s.root / "outside")
    s.run(run, "--set", "steps.kg.params.facts=300")


@case(LINK, "refused", "a file of a command's output a link outside")
def _(s):
    out = s.root / "kg"
    s.synth(out)
    (out / "metrics.json").unlink()
    (out / "metrics.json").symlink_to(s.keep(s.root / "outside.json"))
    s.synth(out, 300)


@case(LINK, "done", "a command output's .chronoprobe-tmp a link outside (the link goes)")
def _(s):
    out = s.root / "kg"
    s.synth(out)
    s.keep(s.root / "outside" / "data.txt")
    (out / ".chronoprobe-tmp").symlink_to(s.root / "outside")
    s.synth(out, 300)


@case(LINK, "done", "--out a link to an earlier run directory")
def _(s):
    run = _run_dir(s)
    (s.root / "alias").symlink_to(run)
    s.run(s.root / "alias")


@case(LINK, "done", "run.log a link to /dev/zero, then report (never read through)")
def _(s):
    run = _run_dir(s)
    (run / "run.log").unlink()
    (run / "run.log").symlink_to("/dev/zero")
    s.cli("report", run)


@case(LINK, "done", "step.json a link to /dev/zero, then report")
def _(s):
    run = _run_dir(s)
    (run / "steps/kg/step.json").unlink()
    (run / "steps/kg/step.json").symlink_to("/dev/zero")
    s.cli("report", run)


@case(LINK, "refused", "the run marker a link to a marker elsewhere")
def _(s):
    run, other = _run_dir(s), s.root / "other"
    assert s.run(other) == 0
    (run / ".chronoprobe-run").unlink()
    (run / ".chronoprobe-run").symlink_to(other / ".chronoprobe-run")
    s.keep(run / "mine.txt")
    s.run(run)


@case(TYPE, "refused", "steps is a file")
def _(s):
    run = _run_dir(s)
    shutil.rmtree(run / "steps")
    s.keep(run / "steps", "mine")
    s.run(run)


@case(TYPE, "refused", "config.yaml is a folder")
def _(s):
    run = _run_dir(s)
    (run / "config.yaml").unlink()
    s.keep(run / "config.yaml" / "mine.txt")
    s.run(run)


@case(TYPE, "refused", "run.log is a folder")
def _(s):
    run = _run_dir(s)
    (run / "run.log").unlink()
    s.keep(run / "run.log" / "mine.txt")
    s.run(run)


@case(TYPE, "refused", "run.log is a pipe")
def _(s):
    run = _run_dir(s)
    (run / "run.log").unlink()
    os.mkfifo(run / "run.log")
    s.run(run)


@case(TYPE, "refused", ".chronoprobe-tmp is a file")
def _(s):
    run = _run_dir(s)
    s.keep(run / ".chronoprobe-tmp", "mine")
    s.run(run)


@case(TYPE, "refused", "run --out is a file")
def _(s):
    s.run(s.keep(s.root / "a-file"))


@case(TYPE, "refused", "run --out lies under a file")
def _(s):
    s.run(s.keep(s.root / "a-file") / "run")


@case(TYPE, "refused", "kg synth -o is a file")
def _(s):
    s.synth(s.keep(s.root / "a-file"))


@case(TYPE, "refused", "steps/kg is a file")
def _(s):
    run = _run_dir(s)
    shutil.rmtree(run / "steps/kg")
    s.keep(run / "steps/kg", "mine")
    s.run(run)


@case(TYPE, "refused", "a step's step.json is a pipe, then run")
def _(s):
    run = _run_dir(s)
    (run / "steps/kg/step.json").unlink()
    os.mkfifo(run / "steps/kg/step.json")
    s.run(run)


@case(TYPE, "done", "a step's step.json is a pipe, then report (an error box)")
def _(s):
    run = _run_dir(s)
    (run / "steps/kg/step.json").unlink()
    os.mkfifo(run / "steps/kg/step.json")
    s.cli("report", run)


@case(TYPE, "done", "a step's metrics.json is a pipe, then report (an error box)")
def _(s):
    run = _run_dir(s)
    (run / "steps/kg/metrics.json").unlink()
    os.mkfifo(run / "steps/kg/metrics.json")
    s.cli("report", run)


@case(TYPE, "done", "a pipe named like a Parquet output, then report (an error box)")
def _(s):
    run = _run_dir(s)
    os.mkfifo(run / "steps/kg/extra.parquet")
    s.cli("report", run)


@case(TYPE, "done", "environment.json is a folder, then report (an error box)")
def _(s):
    run = _run_dir(s)
    (run / "environment.json").unlink()
    s.keep(run / "environment.json" / "mine.txt")
    s.cli("report", run)


@case(TYPE, "refused", "report --out RUN/steps")
def _(s):
    run = _run_dir(s)
    s.cli("report", run, "--out", run / "steps")


@case(TYPE, "refused", "kg export -o a folder")
def _(s):
    s.synth(s.root / "kg")
    s.keep(s.root / "dest" / "mine.txt")
    s.cli("kg", "export", s.root / "kg", "-o", s.root / "dest")


@case(TYPE, "refused", "the step cache is a file")
def _(s):
    cache = s.keep(s.root / "cache-file", "mine")
    os.environ["CHRONOPROBE_CACHE"] = str(cache)
    s.run(s.root / "run")


@case(EDIT, "done", ".my-notes.tmp in a run directory and .x.tmp in steps/ survive")
def _(s):
    run = _run_dir(s)
    s.keep(run / ".my-notes.tmp")
    s.keep(run / "steps" / ".x.old-1234.tmp")
    s.run(run)


@case(EDIT, "refused", "NOTES.md in a step folder the run replaces")
def _(s):
    run = _run_dir(s)
    s.keep(run / "steps/kg/NOTES.md")
    s.run(run, "--set", "steps.kg.params.facts=300")


@case(EDIT, "refused", "an output of a step edited by hand")
def _(s):
    run = _run_dir(s)
    s.keep(run / "steps/kg/metrics.json", '{"edited": true}')
    s.run(run)


@case(EDIT, "done", "a row appended to one run's output is not served to the next")
def _(s):
    run = _run_dir(s)
    path = run / "steps/kg/metrics.json"
    s.keep(path, path.read_bytes() + b'{"row": "appended"}\n')
    assert s.run(s.root / "second") == 0
    served = (s.root / "second/steps/kg/metrics.json").read_bytes()
    assert b"appended" not in served, "the edit reached the cache"


@case(EDIT, "done", "a cache entry edited in place is computed again")
def _(s):
    run = _run_dir(s)
    entry = next(Path(os.environ["CHRONOPROBE_CACHE"]).glob("kg/*/metrics.json"))
    entry.chmod(0o644)
    entry.write_text('{"facts": 1}')
    assert s.run(s.root / "second") == 0
    assert json.loads((s.root / "second/steps/kg/metrics.json").read_text())["facts"] > 1
    assert (run / "steps/kg/metrics.json").read_bytes() == (
        s.root / "second/steps/kg/metrics.json"
    ).read_bytes()


@case(EDIT, "done", "a command output edited by hand is keyed by its content as an input")
def _(s):
    from chronoprobe.runs.single import input_key

    s.synth(s.root / "kg")
    before = input_key(s.root / "kg")
    s.keep(s.root / "kg" / "metrics.json", b'{"facts": 1}')
    assert input_key(s.root / "kg") != before


@case(EDIT, "done", "NOTES.md in a step the config dropped: left alone, the run goes on")
def _(s):
    run = _run_dir(s)
    s.keep(run / "steps/kg/NOTES.md")
    config = s.config(CONFIG.replace("id: kg", "id: world"), "other.yaml")
    s.run(run, config=config)


@case(EDIT, "refused", "a step.json damaged by hand in a step the run replaces")
def _(s):
    run = _run_dir(s)
    s.keep(run / "steps/kg/step.json", "{damaged")
    s.run(run)


@case(NAME, "refused", "a 300-character step id")
def _(s):
    s.run(s.root / "run", config=s.config(CONFIG.replace("id: kg", "id: " + "k" * 300)))


@case(NAME, "refused", "a 300-character experiment name (default run directory)")
def _(s):
    os.chdir(s.root)
    s.cli("run", s.config(CONFIG.replace("name: attack", "name: " + "n" * 300)))


@case(NAME, "refused", "a step id with a slash, and one in another script")
def _(s):
    s.run(s.root / "run", config=s.config(CONFIG.replace("id: kg", "id: a/../../b")))
    s.run(s.root / "run", config=s.config(CONFIG.replace("id: kg", "id: κγ")))


@case(NAME, "refused", "two step ids that differ only in case")
def _(s):
    text = CONFIG + "  - {id: KG, kind: kg, params: {source: sample}}\n"
    s.run(s.root / "run", config=s.config(text))


@case(NAME, "done", "run and report into a path with rich markup and unicode: 'r[/]é ☃'")
def _(s):
    run = s.root / "r[/]é ☃ [bold]"
    assert s.run(run) == 0
    s.cli("report", run)


@case(NAME, "done", "kg synth -o and kg export -o paths with markup")
def _(s):
    assert s.synth(s.root / "w[/]") == 0
    s.cli("kg", "export", s.root / "w[/]", "-o", s.root / "e[/].jsonl")


@case(NAME, "refused", "-o with a 300-character folder name")
def _(s):
    s.synth(s.root / ("x" * 300))


@case(NAME, "refused", 'plugins: ["../../x"] (with --trust-plugins)')
def _(s):
    text = 'name: p\nplugins: ["../../x"]\nsteps:\n  - {id: r, kind: report}\n'
    s.run(s.root / "run", "--trust-plugins", config=s.config(text))


@case(NAME, "refused", 'plugins: ["/etc/passwd", "a b"] (with --trust-plugins)')
def _(s):
    text = 'name: p\nplugins: ["/etc/passwd", "a b"]\nsteps:\n  - {id: r, kind: report}\n'
    s.run(s.root / "run", "--trust-plugins", config=s.config(text))


@case(NAME, "refused", "CHRONOPROBE_PLUGINS=../../x")
def _(s):
    os.environ["CHRONOPROBE_PLUGINS"] = "../../x"
    s.cli("build", "lamatk", "--help")


@case(NAME, "refused", "experiment names . and ..")
def _(s):
    os.chdir(s.root)
    s.keep(s.root / "notes.txt")
    s.cli("run", s.config(CONFIG.replace("name: attack", "name: '..'")))
    s.cli("run", s.config(CONFIG.replace("name: attack", "name: '.'")))


@case(PLAN, "refused", "a report step as a KG input, after a run with one more step")
def _(s):
    run = s.root / "run"
    assert (
        s.run(run, config=s.config(CONFIG + "  - {id: old, kind: kg, params: {source: sample}}\n"))
        == 0
    )
    for path in (run / "steps/old").iterdir():
        s.keep(path, path.read_bytes())
    text = CONFIG + (
        "  - {id: report, kind: report}\n"
        "  - {id: lamatk, kind: build, inputs: {kg: report}, params: {family: lamatk}}\n"
    )
    s.run(run, config=s.config(text, "bad.yaml"))


@case(PLAN, "refused", "a param path inside the run directory")
def _(s):
    run = _run_dir(s)
    (run / "steps/kg/facts.parquet").read_bytes()
    text = CONFIG.replace(
        "{source: synth, facts: 200, text: false}",
        f"{{source: convert, format: jsonl, paths: [{run / 'steps/kg/metrics.json'}]}}",
    )
    s.keep(run / "steps/kg/facts.parquet", (run / "steps/kg/facts.parquet").read_bytes())
    s.run(run, config=s.config(text, "c.yaml"))


@case(PLAN, "refused", "an unknown kind after a run with more steps")
def _(s):
    run = s.root / "run"
    assert (
        s.run(run, config=s.config(CONFIG + "  - {id: old, kind: kg, params: {source: sample}}\n"))
        == 0
    )
    for path in (run / "steps/old").iterdir():
        s.keep(path, path.read_bytes())
    s.run(run, config=s.config(CONFIG + "  - {id: new, kind: nope}\n", "bad.yaml"))


@case(PLAN, "refused", "a step failing at run time after one was dropped from the config")
def _(s):
    run = s.root / "run"
    assert (
        s.run(run, config=s.config(CONFIG + "  - {id: old, kind: kg, params: {source: sample}}\n"))
        == 0
    )
    for path in (run / "steps/old").iterdir():
        s.keep(path, path.read_bytes())
    broken = s.keep(s.root / "broken.jsonl", "not json\n")
    params = f"{{source: convert, format: jsonl, paths: [{broken}]}}"
    text = CONFIG + f"  - {{id: new, kind: kg, params: {params}}}\n"
    s.run(run, config=s.config(text, "bad.yaml"))


@case(RACE, "refused", "a second run while the first holds the run directory")
def _(s):
    import fcntl

    run = _run_dir(s)
    holder = os.open(run, os.O_RDONLY)
    fcntl.flock(holder, fcntl.LOCK_EX)
    try:
        s.run(run)
    finally:
        os.close(holder)


@case(RACE, "refused", "a second command while the first writes the same -o")
def _(s):
    import fcntl

    out = s.root / "kg"
    s.synth(out)
    holder = os.open(out, os.O_RDONLY)
    fcntl.flock(holder, fcntl.LOCK_EX)
    try:
        s.synth(out, 300)
    finally:
        os.close(holder)


@case(RACE, "done", "killed (SIGKILL) in the middle of a run, run again")
def _(s):
    import subprocess
    import time

    run = s.root / "run"
    text = CONFIG.replace("facts: 200", "facts: 20000")
    process = subprocess.Popen(
        [sys.executable, "-m", "chronoprobe", "run", str(s.config(text)), "--out", str(run)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(2.5)
    process.kill()
    process.wait()
    s.keep(run / "steps" / ".mine.tmp") if run.is_dir() else None
    assert s.run(run, config=s.config(text)) == 0
    assert not (run / ".chronoprobe-tmp").exists()


@case(RACE, "done", "killed between the renames that replace a step folder, run again")
def _(s):
    from chronoprobe.runs import ownership

    run = _run_dir(s)
    real = os.replace

    def killed(source, target):
        real(source, target)
        if Path(source) == run / "steps" / "kg":
            raise KeyboardInterrupt

    ownership.os.replace = killed
    try:
        s.run(run, "--set", "steps.kg.params.facts=300")
    finally:
        ownership.os.replace = real
    assert s.run(run, "--set", "steps.kg.params.facts=300") == 0


@case(RACE, "done", "killed between the renames that replace a command's -o, run again")
def _(s):
    from chronoprobe.runs import single

    out = s.root / "kg"
    s.synth(out)
    real = os.replace

    def killed(source, target):
        real(source, target)
        if Path(source).parent.name.startswith("new-") and Path(target).parent == out:
            raise KeyboardInterrupt

    single.os.replace = killed
    try:
        s.synth(out, 300)
    finally:
        single.os.replace = real
    assert s.synth(out, 300) == 0


@case(DISK, "refused", "the run directory cannot be written to (immutable)")
def _(s):
    run = _run_dir(s)
    s.system("chattr", "+i", str(run), undo=["chattr", "-i", str(run)])
    s.run(run, "--set", "steps.kg.params.facts=300")
    assert (run / "steps/kg/facts.parquet").is_file()


@case(DISK, "refused", "steps/ cannot be written to (immutable): the step cannot be replaced")
def _(s):
    run = _run_dir(s)
    for path in (run / "steps/kg").iterdir():
        s.keep(path, path.read_bytes())
    s.system("chattr", "+i", str(run / "steps"), undo=["chattr", "-i", str(run / "steps")])
    s.run(run, "--set", "steps.kg.params.facts=300")


@case(DISK, "refused", "the run directory on a read-only file system")
def _(s):
    disk = s.small_disk(s.root / "disk", "4m")
    run = disk / "run"
    assert s.run(run) == 0
    s.system("mount", "-o", "remount,ro", str(disk))
    s.run(run, "--set", "steps.kg.params.facts=300")
    assert (run / "steps/kg/facts.parquet").is_file()


@case(DISK, "refused", "the run directory's disk full, a user's file filling it")
def _(s):
    disk = s.small_disk(s.root / "disk", "2m")
    run = disk / "run"
    assert s.run(run) == 0
    kept = {p: p.read_bytes() for p in (run / "steps/kg").iterdir()}
    free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
    s.keep(disk / "big.bin", b"x" * max(0, free - 4096))
    s.run(run, "--set", "steps.kg.params.facts=2000")
    assert all(p.read_bytes() == data for p, data in kept.items()), "the old outputs were lost"


@case(DISK, "refused", "the step cache's disk full")
def _(s):
    os.environ["CHRONOPROBE_CACHE"] = str(s.small_disk(s.root / "disk", "64k"))
    s.run(s.root / "run", config=s.config(CONFIG.replace("facts: 200", "facts: 5000")))


@case(REPORT, "done", "a step.json that is not JSON")
def _(s):
    run = _run_dir(s)
    (run / "steps/kg/step.json").write_text("{broken")
    s.cli("report", run)


@case(REPORT, "done", "a step.json whose inputs are a list")
def _(s):
    run = _run_dir(s)
    (run / "steps/kg/step.json").write_text('{"id": "kg", "kind": "kg", "inputs": [1]}')
    s.cli("report", run)


@case(REPORT, "done", "environment.json whose packages are a list")
def _(s):
    run = _run_dir(s)
    (run / "environment.json").write_text('{"packages": [1]}')
    s.cli("report", run)


@case(REPORT, "done", "a config.yaml that refers to itself (&a {self: *a})")
def _(s):
    run = _run_dir(s)
    (run / "config.yaml").write_text("&a {name: x, self: *a}\n")
    s.cli("report", run)


@case(REPORT, "done", "a config.yaml with a billion laughs")
def _(s):
    run = _run_dir(s)
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    (run / "config.yaml").write_text("\n".join(lines) + "\nsteps: *a8\n")
    s.cli("report", run)


@case(REPORT, "done", "a config.yaml nested 10,000 deep")
def _(s):
    run = _run_dir(s)
    (run / "config.yaml").write_text("steps: " + "[" * 10_000 + "]" * 10_000 + "\n")
    s.cli("report", run)


@case(REPORT, "refused", "results with a step.json that is not JSON")
def _(s):
    run = _run_dir(s)
    (run / "steps/kg/step.json").write_text("{broken")
    s.cli("results", run)


@case(REPORT, "refused", "results with a metrics.json that is not JSON")
def _(s):
    run = _run_dir(s)
    (run / "steps/kg/metrics.json").write_text("{broken")
    s.cli("results", run)


@case(TRUST, "refused", "plugins: [this] without --trust-plugins (no Zen printed)")
def _(s):
    sys.modules.pop("this", None)
    s.run(
        s.root / "run",
        config=s.config("name: p\nplugins: [this]\nsteps:\n  - {id: r, kind: report}\n"),
    )
    assert "this" not in sys.modules, "the plugin ran"


@case(TRUST, "refused", "--set plugins=[this] without --trust-plugins")
def _(s):
    sys.modules.pop("this", None)
    s.run(s.root / "run", "--set", "plugins=[this]")
    assert "this" not in sys.modules, "the plugin ran"


@case(TRUST, "refused", "a plugin that raises while imported (with --trust-plugins)")
def _(s):
    s.keep(s.root / "plugins" / "explodes.py", "raise SystemError('boom')\n")
    sys.path.insert(0, str(s.root / "plugins"))
    try:
        text = "name: p\nplugins: [explodes]\nsteps:\n  - {id: r, kind: report}\n"
        s.run(s.root / "run", "--trust-plugins", config=s.config(text))
    finally:
        sys.path.remove(str(s.root / "plugins"))


# --- running them --------------------------------------------------------------------------


def _alarm(signum, frame):
    raise Hang


def attack(group: str, name: str, expect: str, function: Callable[[Situation], None]) -> dict:
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        os.environ["CHRONOPROBE_CACHE"] = str(root / "cache")
        os.environ.pop("CHRONOPROBE_PLUGINS", None)
        situation = Situation(root)
        outcome = {"group": group, "name": name, "hang": False, "error": None}
        signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(LIMIT_S)
        try:
            function(situation)
        except Hang:
            outcome["hang"] = True
        except AssertionError as err:
            outcome["error"] = f"check failed: {err}"
        except Exception as err:  # the situation could not be built (an older layout)
            outcome["error"] = f"case failed: {type(err).__name__}: {err}"
        except Skip as why:
            outcome["skipped"] = str(why)
        finally:
            signal.alarm(0)
            lost = situation.lost()  # before the undo: a mount taken away hides its files
            for command in reversed(situation.undo):
                import subprocess

                subprocess.run(command, capture_output=True, check=False)
            os.chdir(saved_cwd)
            os.environ.clear()
            os.environ.update(saved_env)
        last = situation.codes[-1] if situation.codes else None
        if outcome.get("skipped"):
            return outcome
        if outcome["error"] is None and not outcome["hang"] and situation.tracebacks == 0:
            wanted = {"refused": {2}, "done": {0}, "either": {0, 2}}[expect]
            if last not in wanted:
                outcome["error"] = f"expected {expect}, exit code {last}"
        outcome.update(
            tracebacks=situation.tracebacks,
            lost=lost,
            refused=last == 2,
            first_line=(situation.outputs[-1] if situation.outputs else "")[:200],
        )
        return outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--verbose", action="store_true", help="Print each case's last output.")
    args = parser.parse_args()
    outcomes = []
    for group, name, expect, function in CASES:
        outcome = attack(group, name, expect, function)
        if outcome.get("skipped"):
            print(f"[skipped] {group}: {name}: {outcome['skipped']}", file=sys.stderr)
            continue
        outcomes.append(outcome)
        if (
            args.verbose
            or outcome["error"]
            or outcome["tracebacks"]
            or outcome["lost"]
            or (outcome["hang"])
        ):
            bad = outcome["error"] or outcome["tracebacks"] or outcome["lost"] or outcome["hang"]
            flag = "FAIL" if bad else "ok"
            print(f"[{flag}] {group}: {name}\n    {outcome['first_line']}", file=sys.stderr)
            hang = f"hang: still running after {LIMIT_S} s" if outcome["hang"] else None
            for problem in filter(None, [hang, outcome["error"], *outcome["lost"]]):
                print(f"    {problem}", file=sys.stderr)
    print_table(outcomes, "error")


def chosen_cases(doc: str, cases: list) -> tuple[argparse.Namespace, list]:
    """The command line of attack_inputs.py and attack_served.py (``--verbose``, ``--only``,
    ``--jobs``) and the cases it chooses, by their ``group``."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--verbose", action="store_true", help="Print each case's last line.")
    parser.add_argument("--only", default="", help="Only the classes whose name holds this.")
    parser.add_argument("--jobs", type=int, default=2, help="Cases run at once (default 2).")
    args = parser.parse_args()
    return args, [c for c in cases if args.only.lower() in c.group.lower()]


def print_table(
    outcomes: list[dict], wrong: str, lost: str = "lost files", timed: str | None = None
) -> None:
    """The markdown table of attack outcomes by class (docs/reliability.md's "Fresh attacks");
    ``wrong`` names the outcome field that holds a wrong result, ``lost`` what the ``lost``
    field lists (attack_served.py: answers asked again), ``timed`` the column of the outcome
    field ``over`` (a case past its time), where there is one. attack_inputs.py and
    attack_served.py use it too."""
    rows: dict[str, Counter] = defaultdict(Counter)
    for o in outcomes:
        row = rows[o["group"]]
        row["cases"] += 1
        row["refused in one line"] += o["refused"] and not o["tracebacks"]
        row["completed"] += not o["refused"] and not o["tracebacks"] and not o["hang"]
        row["tracebacks"] += bool(o["tracebacks"])
        row["hangs"] += o["hang"]
        if timed:
            row[timed] += o["over"]
        row[lost] += len(o["lost"])
        row["wrong outcome"] += bool(o[wrong])
    columns = ["cases", "refused in one line", "completed", "tracebacks", "hangs"]
    columns += [timed] if timed else []
    columns += [lost, "wrong outcome"]
    print(f"| class | {' | '.join(columns)} |")
    print("|---|" + "---:|" * len(columns))
    total: Counter = Counter()
    for group, row in rows.items():
        total.update(row)
        print(f"| {group} | {' | '.join(str(row[c]) for c in columns)} |")
    print(f"| all | {' | '.join(f'**{total[c]}**' for c in columns)} |")


if __name__ == "__main__":
    main()
