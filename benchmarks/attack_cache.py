"""Attack the step cache and the keys of inputs, and print the table docs/reliability.md shows.

    python benchmarks/attack_cache.py            # every case, a table per class
    python benchmarks/attack_cache.py --verbose  # and each case's last output line

Each case builds a small situation in a fresh folder (a run, a command's ``--out``, the step
cache, a cache shipped beside a config) as someone who can write files there but cannot read
the cache's key would, runs the real commands in this process, and checks what
``attack_folders.py`` checks (no traceback, no hang, no file of the user's lost, the exit code
the case expects) and one thing more, counted as a wrong outcome: what was served is what
chronoprobe computes, never what the attacker wrote, and an edited input is computed again.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path

from attack_folders import (
    Situation,
    attack,
    print_table,
)  # run as a script: benchmarks/ is on the path

CASES: list[tuple[str, str, str, Callable[[Situation], None]]] = []

FORGE = "forged and foreign cache entries"
SHIP = "caches shipped with a config, or shared"
CLINK = "links and pipes in the cache"
KEYS = "inputs edited with their size and time kept"
KEEP = "upstream steps run again"
DAMAGE = "damaged tables under results"
OWNED = "annotated reports, plugins that exit"

FACTS = 200
FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "jsonl" / "presidents.jsonl"


def case(group: str, expect: str, name: str):
    """Register a case: ``expect`` is "refused" (the last command exits 2), "done" (exits 0)
    or "either"."""

    def register(function: Callable[[Situation], None]) -> Callable[[Situation], None]:
        CASES.append((group, name, expect, function))
        return function

    return register


def cache_root() -> Path:
    return Path(os.environ["CHRONOPROBE_CACHE"])


def kg_entry(s: Situation) -> Path:
    """A run's kg step, and the folder of its cache entry."""
    assert s.run(s.root / "first") == 0, s.outputs[-1]
    [entry] = [p for p in (cache_root() / "kg").iterdir() if p.is_dir() and "." not in p.name]
    return entry


def writable(folder: Path) -> None:
    for path in [folder, *folder.rglob("*")]:
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | stat.S_IWUSR)


def forge_file(entry: Path, name: str, data: bytes) -> None:
    """Write ``data`` as the entry's ``name``, with its digest in the entry's step.json."""
    writable(entry)
    (entry / name).write_bytes(data)
    record = json.loads((entry / "step.json").read_text())
    record["files"][name] = {
        **record["files"].get(name, {}),
        "sha256": hashlib.sha256(data).hexdigest(),
        "bytes": len(data),
    }
    (entry / "step.json").write_text(json.dumps(record, indent=2) + "\n")


def served_genuine(s: Situation, out: Path, name: str = "metrics.json") -> None:
    """The second run's output is chronoprobe's own: equal to the first run's."""
    assert s.run(out) == 0, s.outputs[-1]
    first = (s.root / "first" / "steps" / "kg" / name).read_bytes()
    assert (out / "steps" / "kg" / name).read_bytes() == first, "the forged file was served"


FORGED_METRICS = json.dumps({"facts": 1, "forged": True}).encode()


@case(FORGE, "done", "metrics.json forged, its sha256 in step.json recomputed")
def _(s):
    forge_file(kg_entry(s), "metrics.json", FORGED_METRICS)
    served_genuine(s, s.root / "second")


@case(FORGE, "done", "KG facts forged (another pyarrow table), digest recomputed")
def _(s):
    import pyarrow.parquet as pq

    entry = kg_entry(s)
    facts = pq.read_table(entry / "facts.parquet")
    forged = s.root / "forged.parquet"
    pq.write_table(facts.slice(0, 1).cast(facts.schema), forged)
    forge_file(entry, "facts.parquet", forged.read_bytes())
    served_genuine(s, s.root / "second", "facts.parquet")


@case(FORGE, "done", "step.json's params forged (no file's digest covers them)")
def _(s):
    entry = kg_entry(s)
    writable(entry)
    record = json.loads((entry / "step.json").read_text())
    record["params"]["facts"] = 1
    (entry / "step.json").write_text(json.dumps(record))
    served_genuine(s, s.root / "second")


@case(FORGE, "done", "an entry and its MAC copied from another user's cache")
def _(s):
    entry = kg_entry(s)
    theirs = s.root / "their-cache"
    mine = os.environ["CHRONOPROBE_CACHE"]
    os.environ["CHRONOPROBE_CACHE"] = str(theirs)
    assert s.run(s.root / "theirs") == 0
    os.environ["CHRONOPROBE_CACHE"] = mine
    forge_file(theirs / "kg" / entry.name, "metrics.json", FORGED_METRICS)
    from chronoprobe.runs.cache import INDEX_DIR, StepCache

    record = (theirs / "kg" / entry.name / "step.json").read_bytes()
    mac = StepCache(theirs)._entry_mac("kg", entry.name, record)  # signed with their key
    writable(entry)
    shutil.rmtree(entry)
    shutil.copytree(theirs / "kg" / entry.name, entry)
    (cache_root() / INDEX_DIR / "kg" / entry.name).write_text(mac + "\n")
    served_genuine(s, s.root / "second")


@case(FORGE, "done", "an entry's MAC deleted")
def _(s):
    entry = kg_entry(s)
    (cache_root() / ".chronoprobe-index" / "kg" / entry.name).unlink()
    served_genuine(s, s.root / "second")


@case(FORGE, "done", "an entry's MAC replaced by another entry's")
def _(s):
    entry = kg_entry(s)
    assert s.run(s.root / "other", "--set", "steps.kg.params.facts=300") == 0
    index = cache_root() / ".chronoprobe-index" / "kg"
    other = next(p for p in index.iterdir() if p.name != entry.name and "." not in p.name)
    forge_file(entry, "metrics.json", FORGED_METRICS)
    shutil.copy(other, index / entry.name)
    served_genuine(s, s.root / "second")


@case(FORGE, "done", "an entry's MAC file a FIFO (not waited on)")
def _(s):
    entry = kg_entry(s)
    mac = cache_root() / ".chronoprobe-index" / "kg" / entry.name
    mac.unlink()
    os.mkfifo(mac)
    served_genuine(s, s.root / "second")


@case(FORGE, "done", "the cache's key replaced by a key of the attacker's")
def _(s):
    entry = kg_entry(s)
    key = cache_root() / ".chronoprobe-key"
    key.unlink()
    handle = os.open(key, os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(handle, (os.urandom(32).hex() + "\n").encode())
    os.close(handle)
    forge_file(entry, "metrics.json", FORGED_METRICS)
    served_genuine(s, s.root / "second")


@case(FORGE, "refused", "the cache's key made readable by every user")
def _(s):
    kg_entry(s)
    (cache_root() / ".chronoprobe-key").chmod(0o644)
    s.run(s.root / "second")


@case(FORGE, "refused", "the cache's key a link to a key elsewhere")
def _(s):
    kg_entry(s)
    key = cache_root() / ".chronoprobe-key"
    shutil.copy(key, s.root / "elsewhere.key")
    key.unlink()
    key.symlink_to(s.root / "elsewhere.key")
    s.run(s.root / "second")


@case(FORGE, "refused", "the cache's key empty")
def _(s):
    kg_entry(s)
    (cache_root() / ".chronoprobe-key").write_text("")
    s.run(s.root / "second")


@case(FORGE, "done", "an entry's step.json a FIFO")
def _(s):
    entry = kg_entry(s)
    writable(entry)
    (entry / "step.json").unlink()
    os.mkfifo(entry / "step.json")
    served_genuine(s, s.root / "second")


@case(FORGE, "done", "an entry's file a link to a forged file elsewhere")
def _(s):
    entry = kg_entry(s)
    writable(entry)
    (s.root / "forged.json").write_bytes(FORGED_METRICS)
    (entry / "metrics.json").unlink()
    (entry / "metrics.json").symlink_to(s.root / "forged.json")
    served_genuine(s, s.root / "second")


SHIPPED = """
name: shipped
cache_dir: cache
steps:
  - {id: kg, kind: kg, params: {source: synth, facts: 200, text: false}}
"""


def shipped_config(s: Situation) -> Path:
    """A config with a cache folder beside it, forged by whoever sent both."""
    folder = s.root / "download"
    folder.mkdir()
    config = folder / "exp.yaml"
    config.write_text(SHIPPED.lstrip())
    return config


@case(SHIP, "refused", "a config's cache_dir: a cache shipped beside it")
def _(s):
    config = shipped_config(s)
    s.run(s.root / "run", config=config)
    assert not (config.parent / "cache").exists(), "the shipped cache was used"


@case(SHIP, "refused", "--set cache_dir=FOLDER on a config")
def _(s):
    s.run(s.root / "run", "--set", f"cache_dir={s.root / 'theirs'}")


@case(SHIP, "done", "a config's cache_dir with --trust-cache-dir")
def _(s):
    config = shipped_config(s)
    s.run(s.root / "run", "--trust-cache-dir", config=config)


@case(SHIP, "done", "a config's cache_dir naming the user's own cache (no flag needed)")
def _(s):
    config = s.config(SHIPPED.replace("cache_dir: cache", f"cache_dir: {cache_root()}"))
    s.run(s.root / "run", config=config)


@case(SHIP, "refused", "CHRONOPROBE_CACHE a world-writable folder")
def _(s):
    shared = s.root / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    os.environ["CHRONOPROBE_CACHE"] = str(shared)
    s.run(s.root / "run")


@case(SHIP, "refused", "CHRONOPROBE_CACHE in a world-writable folder without the sticky bit")
def _(s):
    shared = s.root / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    os.environ["CHRONOPROBE_CACHE"] = str(shared / "mine")
    s.synth(s.root / "kg")


@case(SHIP, "done", "CHRONOPROBE_CACHE in a world-writable folder with the sticky bit (/tmp)")
def _(s):
    shared = s.root / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    os.environ["CHRONOPROBE_CACHE"] = str(shared / "mine")
    s.synth(s.root / "kg")


@case(SHIP, "refused", "CHRONOPROBE_CACHE a folder owned by another user")
def _(s):
    if os.geteuid() != 0:
        from attack_folders import Skip

        raise Skip("only root can give a folder to another user")
    theirs = s.root / "theirs"
    theirs.mkdir()
    os.chown(theirs, 12345, 12345)
    os.environ["CHRONOPROBE_CACHE"] = str(theirs)
    s.run(s.root / "run")


@case(SHIP, "done", "CHRONOPROBE_CACHE a link to a folder of the user's")
def _(s):
    (s.root / "big-disk").mkdir()
    (s.root / "alias").symlink_to(s.root / "big-disk")
    os.environ["CHRONOPROBE_CACHE"] = str(s.root / "alias")
    assert s.run(s.root / "run") == 0
    s.run(s.root / "again")
    assert "cached" in s.outputs[-1], "not served from the cache behind the link"


@case(CLINK, "done", "--no-cache with a link at the entry (to a folder of the user's)")
def _(s):
    entry = kg_entry(s)
    s.keep(s.root / "mine" / "thesis.tex")
    writable(entry)
    shutil.rmtree(entry)
    entry.symlink_to(s.root / "mine")
    s.run(s.root / "second", "--no-cache")


@case(CLINK, "done", "a link at the entry, cached run")
def _(s):
    entry = kg_entry(s)
    s.keep(s.root / "mine" / "thesis.tex")
    writable(entry)
    shutil.rmtree(entry)
    entry.symlink_to(s.root / "mine")
    s.run(s.root / "second")


@case(CLINK, "done", "the lock file a link to a file of the user's")
def _(s):
    entry = kg_entry(s)
    lock = entry.with_name(entry.name + ".lock")
    lock.unlink()
    lock.symlink_to(s.keep(s.root / "notes.txt"))
    s.run(s.root / "second", "--no-cache")


@case(CLINK, "done", "the unfinished attempt a link to a folder of the user's")
def _(s):
    entry = kg_entry(s)
    s.keep(s.root / "mine" / "thesis.tex")
    entry.with_name(entry.name + ".partial").symlink_to(s.root / "mine")
    s.run(s.root / "second", "--no-cache")


@case(CLINK, "done", "the MAC index a link to a folder of the user's")
def _(s):
    kg_entry(s)
    index = cache_root() / ".chronoprobe-index"
    shutil.rmtree(index)
    s.keep(s.root / "mine" / "kg" / "notes.txt")
    index.symlink_to(s.root / "mine")
    s.run(s.root / "second", "--no-cache")


def convert(s: Situation, source: Path) -> int:
    return s.cli("kg", "convert", source, "-f", "jsonl", "-o", s.root / "kg")


def converted_again(s: Situation, source: Path) -> None:
    """The edited source is converted again, not served the earlier KG."""
    before = (s.root / "kg" / "facts.parquet").read_bytes()
    assert convert(s, source) == 0, s.outputs[-1]
    assert "cached" not in s.outputs[-1], "the edited input was served the earlier result"
    assert (s.root / "kg" / "facts.parquet").read_bytes() != before


def edited(source: Path) -> bytes:
    text = source.read_bytes()
    return text.replace(b'"start": "2009-01-20"', b'"start": "2008-01-20"', 1)


def source_file(s: Situation) -> Path:
    source = s.root / "facts.jsonl"
    shutil.copy(FIXTURE, source)
    assert convert(s, source) == 0, s.outputs[-1]
    return source


def keep_times(path: Path, info: os.stat_result) -> None:
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))


@case(KEYS, "done", "edited in place, size and time put back (touch -r)")
def _(s):
    source = source_file(s)
    info = source.stat()
    source.write_bytes(edited(source))
    keep_times(source, info)
    converted_again(s, source)


@case(KEYS, "done", "another file of the same size copied over it with cp -p")
def _(s):
    source = source_file(s)
    other = s.root / "other.jsonl"
    other.write_bytes(edited(source))
    keep_times(other, source.stat())
    subprocess.run(["cp", "-p", str(other), str(source)], check=True)
    converted_again(s, source)


@case(KEYS, "done", "replaced from a tar archive (tar x keeps the time)")
def _(s):
    source = source_file(s)
    other = s.root / "packed" / "facts.jsonl"
    other.parent.mkdir()
    other.write_bytes(edited(source))
    keep_times(other, source.stat())
    with tarfile.open(s.root / "facts.tar", "w") as archive:
        archive.add(other, arcname="facts.jsonl")
    with tarfile.open(s.root / "facts.tar") as archive:
        archive.extractall(s.root, filter="data")
    converted_again(s, source)


@case(KEYS, "done", "renamed over by another file with the same time (rsync -a's way)")
def _(s):
    source = source_file(s)
    other = s.root / ".facts.jsonl.rsync-tmp"
    other.write_bytes(edited(source))
    keep_times(other, source.stat())
    os.replace(other, source)
    converted_again(s, source)


@case(KEYS, "done", "a hard link to the input edited in place, its times put back")
def _(s):
    source = source_file(s)
    os.link(source, s.root / "alias.jsonl")
    info = source.stat()
    with open(s.root / "alias.jsonl", "r+b") as stream:
        stream.write(edited(source))
    keep_times(source, info)
    converted_again(s, source)


@case(KEYS, "done", "a large input (keyed by its inode and times) edited, time put back")
def _(s):
    from chronoprobe import inputs

    limit = inputs.CONTENT_LIMIT
    inputs.CONTENT_LIMIT = 100  # the fixture counts as large: the stat key is used
    try:
        source = source_file(s)
        info = source.stat()
        with open(source, "r+b") as stream:
            stream.write(edited(source))
        keep_times(source, info)
        converted_again(s, source)
    finally:
        inputs.CONTENT_LIMIT = limit


@case(KEYS, "done", "the same bytes written again (a copy): no work again")
def _(s):
    source = source_file(s)
    source.unlink()
    shutil.copy(FIXTURE, source)
    assert convert(s, source) == 0
    assert "cached" in s.outputs[-1], "the same input was computed again"


def stamps(folder: Path) -> dict[str, tuple[int, int]]:
    return {
        p.name: (p.stat().st_ino, p.stat().st_mtime_ns)
        for p in folder.iterdir()
        if p.is_file() and p.name != "step.json" and not p.name.startswith(".")
    }


@case(KEEP, "done", "kg synth run again, then build timeline on its output")
def _(s):
    kg, timeline = s.root / "kg", s.root / "timeline"
    s.synth(kg)
    build = ("build", "timeline", kg, "--per-group", 5, "-o", timeline)
    assert s.cli(*build) == 0
    before = stamps(kg)
    assert s.synth(kg) == 0 and "cached" in s.outputs[-1]
    assert stamps(kg) == before, "the cached step rewrote its outputs"
    assert s.cli(*build) == 0
    assert "cached" in s.outputs[-1], "the step after it was computed again"


@case(KEEP, "done", "build timeline run again, then timeline-oracle on one of its files")
def _(s):
    kg, timeline = s.root / "kg", s.root / "timeline"
    s.synth(kg)
    build = ("build", "timeline", kg, "--per-group", 5, "-o", timeline)
    oracle = ("build", "timeline-oracle", kg, "--questions", timeline / "test.jsonl")
    assert s.cli(*build) == 0 and s.cli(*oracle, "-o", s.root / "oracle") == 0
    assert s.cli(*build) == 0 and "cached" in s.outputs[-1]
    assert s.cli(*oracle, "-o", s.root / "oracle") == 0
    assert "cached" in s.outputs[-1], "the step after it was computed again"


@case(KEEP, "done", "a config run again: its step folders untouched")
def _(s):
    run = s.root / "run"
    assert s.run(run) == 0
    before = stamps(run / "steps" / "kg")
    assert s.run(run) == 0
    assert stamps(run / "steps" / "kg") == before, "the cached step rewrote its outputs"


def ran(s: Situation) -> Path:
    run = s.root / "run"
    assert s.run(run) == 0
    return run


def damage(s: Situation, make: Callable[[Path], None]) -> None:
    run = ran(s)
    facts = run / "steps" / "kg" / "facts.parquet"
    facts.unlink()
    make(facts)
    s.cli("results", run)


@case(DAMAGE, "refused", "facts.parquet that is CSV")
def _(s):
    damage(s, lambda p: p.write_text("a,b\n1,2\n"))


@case(DAMAGE, "refused", "facts.parquet cut short, its marks kept")
def _(s):
    damage(s, lambda p: p.write_bytes(b"PAR1" + b"\x00" * 64 + b"PAR1"))


@case(DAMAGE, "refused", "facts.parquet empty")
def _(s):
    damage(s, lambda p: p.write_bytes(b""))


@case(DAMAGE, "refused", "facts.parquet a folder")
def _(s):
    damage(s, lambda p: p.mkdir())


@case(DAMAGE, "refused", "facts.parquet a FIFO (not waited on)")
def _(s):
    damage(s, os.mkfifo)


@case(DAMAGE, "refused", "facts.parquet a link to a table outside the run")
def _(s):
    outside = s.keep(s.root / "outside.parquet", b"PAR1 not yours PAR1")
    damage(s, lambda p: p.symlink_to(outside))


@case(DAMAGE, "refused", "facts.parquet a link to /dev/zero")
def _(s):
    damage(s, lambda p: p.symlink_to("/dev/zero"))


@case(DAMAGE, "refused", "metrics.json a FIFO")
def _(s):
    run = ran(s)
    (run / "steps/kg/metrics.json").unlink()
    os.mkfifo(run / "steps/kg/metrics.json")
    s.cli("results", run)


@case(DAMAGE, "refused", "a step folder a link to a folder outside the run")
def _(s):
    run = ran(s)
    shutil.copytree(run / "steps/kg", s.root / "outside")
    (run / "steps/other").symlink_to(s.root / "outside")
    s.cli("results", run)


@case(DAMAGE, "refused", "results.duckdb a link to a database outside the run")
def _(s):
    run = ran(s)
    assert s.cli("results", run) == 0
    shutil.move(run / "results.duckdb", s.root / "mine.duckdb")
    s.kept[s.root / "mine.duckdb"] = (s.root / "mine.duckdb").read_bytes()
    (run / "results.duckdb").symlink_to(s.root / "mine.duckdb")
    s.cli("results", run)


@case(OWNED, "refused", "report RUN over a report the user annotated")
def _(s):
    run = ran(s)
    assert s.cli("report", run) == 0
    page = (run / "report.html").read_text().replace("</main>", "<p>my notes</p></main>")
    s.keep(run / "report.html", page)
    s.cli("report", run)


@case(OWNED, "refused", "a run with a report step over an annotated report")
def _(s):
    config = s.config(
        "name: r\nsteps:\n  - {id: kg, kind: kg, params: {source: synth, facts: 200, "
        "text: false}}\n  - {id: report, kind: report}\n"
    )
    run = s.root / "run"
    assert s.run(run, config=config) == 0
    page = (run / "report.html").read_text().replace("<title>", "<title>[mine] ")
    s.keep(run / "report.html", page)
    s.run(run, config=config)


@case(OWNED, "refused", "a trusted plugin step calling sys.exit(0)")
def _(s):
    plugins = s.root / "plugins"
    s.keep(
        plugins / "quits.py",
        "from pydantic import BaseModel\nfrom chronoprobe.steps import step_kind\n\n\n"
        "class P(BaseModel):\n    pass\n\n\n@step_kind('quits', P)\ndef quits(ctx, params, "
        "inputs):\n    import sys\n\n    sys.exit(0)\n",
    )
    sys.path.insert(0, str(plugins))
    try:
        text = "name: p\nplugins: [quits]\nsteps:\n  - {id: q, kind: quits}\n"
        s.run(s.root / "run", "--trust-plugins", config=s.config(text))
    finally:
        sys.path.remove(str(plugins))
        sys.modules.pop("quits", None)
    assert "called sys.exit(0)" in s.outputs[-1], "the run did not say the plugin exited"


@case(OWNED, "refused", "a trusted plugin step calling sys.exit('done')")
def _(s):
    plugins = s.root / "plugins"
    s.keep(
        plugins / "quits2.py",
        "from pydantic import BaseModel\nfrom chronoprobe.steps import step_kind\n\n\n"
        "class P(BaseModel):\n    pass\n\n\n@step_kind('quits2', P)\ndef quits(ctx, params, "
        "inputs):\n    raise SystemExit('done')\n",
    )
    sys.path.insert(0, str(plugins))
    try:
        text = "name: p\nplugins: [quits2]\nsteps:\n  - {id: q, kind: quits2}\n"
        s.run(s.root / "run", "--trust-plugins", config=s.config(text))
    finally:
        sys.path.remove(str(plugins))
        sys.modules.pop("quits2", None)


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
        bad = outcome["error"] or outcome["tracebacks"] or outcome["lost"] or outcome["hang"]
        if args.verbose or bad:
            print(f"[{'FAIL' if bad else 'ok'}] {group}: {name}", file=sys.stderr)
            print(f"    {outcome['first_line']}", file=sys.stderr)
            for problem in filter(None, [outcome["error"], *outcome["lost"]]):
                print(f"    {problem}", file=sys.stderr)
    print_table(outcomes, "error")


if __name__ == "__main__":
    main()
