"""Inputs are keyed by content, and a cached step leaves its unchanged outputs untouched.

An edit that keeps a file's size and time (``cp -p``, ``touch -r``, ``rsync -a``, ``tar x``)
served the previous result; and running an upstream command again (served from the cache)
rewrote its output folder, so every command after it computed again (``train memorize`` took
48 s instead of 3). Both are checked here as a user meets them: CLI commands chained by their
``--out`` folders, and config runs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from rich.console import Console
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.runs.engine import run_experiment

FIXTURE = Path(__file__).parents[1] / "fixtures" / "jsonl" / "presidents.jsonl"
runner = CliRunner()


def cli(*args: object) -> str:
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


def stamps(folder: Path) -> dict[str, tuple[int, int, int]]:
    """Each output's inode, modification and change time: what "untouched" means."""
    return {
        p.name: (p.stat().st_ino, p.stat().st_mtime_ns, p.stat().st_ctime_ns)
        for p in sorted(folder.iterdir())
        if p.is_file() and p.name not in ("step.json", ".chronoprobe-output")
    }


def edit_keeping_size_and_time(path: Path, old: bytes, new: bytes) -> None:
    """Replace ``old`` by ``new`` (as long) in ``path``, then put its times back (touch -r)."""
    info = path.stat()
    text = path.read_bytes()
    assert len(old) == len(new) and old in text
    path.write_bytes(text.replace(old, new, 1))
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert path.stat().st_size == info.st_size and path.stat().st_mtime_ns == info.st_mtime_ns


def test_rerunning_a_cached_upstream_command_leaves_the_downstream_cached(tmp_path):
    """kg synth -> build timeline -> build timeline-oracle --questions FILE: the last keys on
    one file of the folder before it, which re-running `build timeline` must leave as it was."""
    kg, timeline, oracle = tmp_path / "kg", tmp_path / "timeline", tmp_path / "oracle"
    cli("kg", "synth", "--facts", 200, "--no-text", "-o", kg)
    build = ["build", "timeline", kg, "--per-group", 5, "-o", timeline]
    cli(*build)
    ask = ["build", "timeline-oracle", kg, "--questions", timeline / "test.jsonl", "-o", oracle]
    assert "✓ build timeline-oracle (build) cached" not in cli(*ask)
    kept_kg, kept_timeline = stamps(kg), stamps(timeline)

    assert "✓ kg synth (kg) cached" in cli("kg", "synth", "--facts", 200, "--no-text", "-o", kg)
    assert "✓ build timeline (build) cached" in cli(*build)
    assert stamps(kg) == kept_kg and stamps(timeline) == kept_timeline  # untouched
    record = json.loads((timeline / "step.json").read_text())
    assert record["cached"] is True  # the record says what this run did
    assert "✓ build timeline-oracle (build) cached" in cli(*ask)


def test_a_rewritten_input_with_the_same_bytes_is_no_work_again(tmp_path):
    """Content keys: the questions file written anew (a copy, a new inode, a new time) with
    the same bytes keys as before."""
    kg, timeline, oracle = tmp_path / "kg", tmp_path / "timeline", tmp_path / "oracle"
    cli("kg", "synth", "--facts", 200, "--no-text", "-o", kg)
    cli("build", "timeline", kg, "--per-group", 5, "-o", timeline)
    questions = tmp_path / "questions.jsonl"
    shutil.copy(timeline / "test.jsonl", questions)
    cli("build", "timeline-oracle", kg, "--questions", questions, "-o", oracle)
    questions.unlink()
    shutil.copy(timeline / "test.jsonl", questions)
    out = cli("build", "timeline-oracle", kg, "--questions", questions, "-o", oracle)
    assert "✓ build timeline-oracle (build) cached" in out


def test_an_input_edited_with_its_size_and_time_kept_is_computed_again(tmp_path):
    # Failed before: keyed by (path, size, mtime), the edited file was served the old KG.
    source, kg = tmp_path / "facts.jsonl", tmp_path / "kg"
    shutil.copy(FIXTURE, source)
    cli("kg", "convert", source, "-f", "jsonl", "-o", kg)
    before = (kg / "facts.parquet").read_bytes()
    edit_keeping_size_and_time(source, b'"start": "2009-01-20"', b'"start": "2008-01-20"')
    out = cli("kg", "convert", source, "-f", "jsonl", "-o", kg)
    assert "cached" not in out
    assert (kg / "facts.parquet").read_bytes() != before


def test_cp_p_of_another_file_over_an_input_is_computed_again(tmp_path):
    source, other, kg = tmp_path / "facts.jsonl", tmp_path / "other.jsonl", tmp_path / "kg"
    shutil.copy(FIXTURE, source)
    cli("kg", "convert", source, "-f", "jsonl", "-o", kg)
    text = FIXTURE.read_bytes().replace(b'"end": "2017-01-20"', b'"end": "2016-01-20"', 1)
    other.write_bytes(text)
    info = source.stat()
    os.utime(other, ns=(info.st_atime_ns, info.st_mtime_ns))
    subprocess.run(["cp", "-p", str(other), str(source)], check=True)
    assert source.stat().st_mtime_ns == info.st_mtime_ns and source.stat().st_size == info.st_size
    assert "cached" not in cli("kg", "convert", source, "-f", "jsonl", "-o", kg)


def test_a_hard_linked_input_edited_through_its_other_name_is_computed_again(tmp_path):
    source, kg = tmp_path / "facts.jsonl", tmp_path / "kg"
    shutil.copy(FIXTURE, source)
    os.link(source, tmp_path / "the-same-file.jsonl")
    cli("kg", "convert", source, "-f", "jsonl", "-o", kg)
    edit_keeping_size_and_time(
        tmp_path / "the-same-file.jsonl", b'"start": "2009-01-20"', b'"start": "2010-01-20"'
    )
    assert "cached" not in cli("kg", "convert", source, "-f", "jsonl", "-o", kg)


def test_a_command_output_input_edited_with_its_time_kept_is_not_keyed_by_its_step(tmp_path):
    """A folder given as input is keyed by its step only while its files are as recorded; an
    edit with the time put back is found by the change time, and the content keys it."""
    kg, timeline = tmp_path / "kg", tmp_path / "timeline"
    cli("kg", "synth", "--facts", 200, "--no-text", "-o", kg)
    cli("build", "timeline", kg, "--per-group", 5, "-o", timeline)
    manifest = kg / "manifest.json"
    manifest.chmod(0o644)
    edit_keeping_size_and_time(manifest, b'": ', b'" :')  # the same JSON, other bytes
    assert "cached" not in cli("build", "timeline", kg, "--per-group", 5, "-o", timeline)


CONFIG = """
name: chain
plugins: [chronoprobe_test_steps]
steps:
  - id: kg
    kind: tiny_kg
  - id: sum
    kind: summary
    inputs: {kg: kg}
"""


def test_a_config_run_again_leaves_its_step_folders_untouched(write_config, tmp_path):
    config, run_dir = write_config(CONFIG), tmp_path / "run"
    console = Console(file=open(os.devnull, "w"))  # noqa: SIM115
    run_experiment(config, run_dir, console=console)
    kept = {step: stamps(run_dir / "steps" / step) for step in ("kg", "sum")}
    again = run_experiment(config, run_dir, console=console)
    assert [s.cached for s in again.steps] == [True, True]
    assert {step: stamps(run_dir / "steps" / step) for step in ("kg", "sum")} == kept
    assert json.loads((run_dir / "steps/kg/step.json").read_text())["cached"] is True


def test_a_config_step_computed_again_with_the_same_outputs_keeps_them(write_config, tmp_path):
    """--no-cache computes every step again; outputs that come out byte for byte the same
    are left where they were (and the step after them still finds them unchanged)."""
    config, run_dir = write_config(CONFIG), tmp_path / "run"
    console = Console(file=open(os.devnull, "w"))  # noqa: SIM115
    run_experiment(config, run_dir, console=console)
    kept = stamps(run_dir / "steps" / "sum")
    again = run_experiment(config, run_dir, console=console, use_cache=False)
    assert [s.cached for s in again.steps] == [False, False]
    assert stamps(run_dir / "steps" / "sum") == kept


def test_changed_outputs_replace_the_folder(write_config, tmp_path):
    config, run_dir = write_config(CONFIG), tmp_path / "run"
    console = Console(file=open(os.devnull, "w"))  # noqa: SIM115
    run_experiment(config, run_dir, console=console)
    run_experiment(config, run_dir, ["steps.kg.params.last_pm=Q1"], console=console)
    metrics = json.loads((run_dir / "steps/sum/metrics.json").read_text())
    assert metrics == {"answers": ["Q1", "Q264766"]}
    record = json.loads((run_dir / "steps/sum/step.json").read_text())
    for name, entry in record["files"].items():
        assert (run_dir / "steps/sum" / name).stat().st_mtime_ns == entry["mtime_ns"]
