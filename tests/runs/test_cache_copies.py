"""Outputs are copies of the cache, never shared with it: a user's edit never reaches the cache,
and an entry changed in place is found out by its digests and computed again."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from rich.console import Console

from chronoprobe.runs.engine import run_experiment

CONFIG = """
name: exp
plugins: [chronoprobe_test_steps]
steps:
  - id: kg
    kind: tiny_kg
  - id: sum
    kind: summary
    inputs: {kg: kg}
"""


def run(config: Path, out: Path, console: Console | None = None):
    return run_experiment(config, out, console=console or Console(file=open(os.devnull, "w")))


def test_a_row_appended_to_an_output_is_not_served_to_the_next_run(
    write_config, tmp_path, private_cache
):
    # Failed before: outputs were hard links into the cache, so the appended row was in the
    # cache entry too and the next run was served it as "cached".
    config = write_config(CONFIG)
    first = run(config, tmp_path / "a")
    metrics = tmp_path / "a/steps/kg/metrics.json"
    original = metrics.read_bytes()
    with open(metrics, "a") as stream:
        stream.write('{"facts": 999}\n')
    second = run(config, tmp_path / "b")
    assert second.step("kg").cached  # served from the cache, which the edit did not reach
    assert (tmp_path / "b/steps/kg/metrics.json").read_bytes() == original
    entry = private_cache / "tiny_kg" / first.step("kg").key
    assert (entry / "metrics.json").read_bytes() == original
    # and the edited run directory is not overwritten either: the edit is named
    with pytest.raises(ValueError, match=r"steps/kg: metrics\.json changed since chronoprobe"):
        run(config, tmp_path / "a")
    assert metrics.read_bytes().endswith(b'{"facts": 999}\n')


def test_an_entry_changed_in_place_is_computed_again(write_config, tmp_path, private_cache):
    config = write_config(CONFIG)
    first = run(config, tmp_path / "a")
    entry = private_cache / "tiny_kg" / first.step("kg").key
    damaged = entry / "metrics.json"
    assert stat.S_IMODE(damaged.stat().st_mode) & 0o222 == 0  # read-only: an edit takes intent
    damaged.chmod(0o644)
    damaged.write_text('{"facts": 999}')
    console = Console(record=True, width=300, file=open(os.devnull, "w"))  # noqa: SIM115
    second = run(config, tmp_path / "b", console)
    text = console.export_text()
    assert f"cache entry {entry}: metrics.json was changed after it was written" in text
    assert not second.step("kg").cached  # computed again, and so is the step it feeds
    assert json.loads((tmp_path / "b/steps/kg/metrics.json").read_text()) == {"facts": 2}
    assert json.loads(damaged.read_text()) == {"facts": 2}  # the entry is whole again
    assert run(config, tmp_path / "c").step("kg").cached


@pytest.mark.parametrize("damage", ["no digests", "extra file", "missing file"])
def test_entries_that_are_not_as_recorded_are_not_served(
    write_config, tmp_path, private_cache, damage
):
    config = write_config(CONFIG)
    first = run(config, tmp_path / "a")
    entry = private_cache / "tiny_kg" / first.step("kg").key
    entry.chmod(0o755)
    if damage == "no digests":  # as an older chronoprobe left it: hard-linked, not checkable
        record = json.loads((entry / "step.json").read_text())
        del record["files"]
        (entry / "step.json").chmod(0o644)
        (entry / "step.json").write_text(json.dumps(record))
    elif damage == "extra file":
        (entry / "notes.txt").write_text("x")
    else:
        (entry / "facts.parquet").unlink()
    assert not run(config, tmp_path / "b").step("kg").cached
    assert sorted(p.name for p in (tmp_path / "b/steps/kg").iterdir()) == sorted(
        p.name for p in (tmp_path / "a/steps/kg").iterdir()
    )


def test_a_step_record_lists_each_output_with_its_digest(write_config, tmp_path):
    import hashlib

    run(write_config(CONFIG), tmp_path / "a")
    step = tmp_path / "a/steps/kg"
    record = json.loads((step / "step.json").read_text())
    assert sorted(record["files"]) == record["outputs"]
    for name, entry in record["files"].items():
        data = (step / name).read_bytes()
        assert entry["sha256"] == hashlib.sha256(data).hexdigest()
        assert entry["bytes"] == len(data)
