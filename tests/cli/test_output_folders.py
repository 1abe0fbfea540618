"""A command replaces only a folder it wrote itself (its marker says which command), or an
empty one: another command's output, a user's notes, a link or an edited output stop it."""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.runs import single
from chronoprobe.runs.single import input_key

PRESIDENTS = Path(__file__).parents[1] / "fixtures/jsonl/presidents.jsonl"


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CHRONOPROBE_CACHE", str(tmp_path / "cache"))


def invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def synth(out: Path, facts: int = 200):
    result = invoke("kg", "synth", "--facts", facts, "--no-text", "-o", out)
    assert result.exit_code == 0, result.output
    return result


def contents(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def test_kg_convert_over_another_commands_output_is_refused(tmp_path):
    # Failed before: any folder with a step.json was replaced, the user's NOTES.md with it.
    out = tmp_path / "world"
    synth(out)
    (out / "NOTES.md").write_text("my notes")
    before = contents(out)
    result = invoke("kg", "convert", PRESIDENTS, "-f", "jsonl", "-o", out)
    assert result.exit_code == 2
    assert " ".join(result.output.split()) == (
        f"error: --out {out} holds the output of `chronoprobe kg synth`, not of `chronoprobe kg "
        "convert`; a command replaces only its own earlier output: pass another folder; nothing "
        f"written to {out}"
    )
    assert contents(out) == before


def test_a_step_folder_of_a_run_is_not_a_commands_output(tmp_path):
    step = tmp_path / "run/steps/world"
    synth(step)
    (step / ".chronoprobe-output").unlink()  # as a run's step folder is: a step.json only
    record = json.loads((step / "step.json").read_text())
    (step / "step.json").write_text(json.dumps({**record, "id": "world"}))
    result = invoke("kg", "synth", "--facts", 300, "--no-text", "-o", step)
    assert result.exit_code == 2 and "holds the output of the run step 'world'" in result.output
    run_dir = tmp_path / "run"
    (run_dir / ".chronoprobe-run").write_text('{"format": 1, "steps": ["world"]}')
    result = invoke("kg", "synth", "--facts", 300, "--no-text", "-o", run_dir)
    assert result.exit_code == 2 and "is a run directory (made by `chronoprobe run`)" in (
        " ".join(result.output.split())
    )


def test_the_same_command_replaces_its_output_but_no_users_file(tmp_path):
    out = tmp_path / "world"
    synth(out)
    marker = json.loads((out / ".chronoprobe-output").read_text())
    assert marker["command"] == "kg synth"
    assert marker["files"] == sorted(p.name for p in out.iterdir() if not p.name.startswith("."))
    synth(out, 300)  # its own output: replaced
    assert json.loads((out / "metrics.json").read_text())["facts"] > 244
    (out / "NOTES.md").write_text("keep")
    result = invoke("kg", "synth", "--facts", 200, "--no-text", "-o", out)
    assert result.exit_code == 2
    assert "it holds what `chronoprobe kg synth` did not write: NOTES.md" in result.output
    assert (out / "NOTES.md").read_text() == "keep"
    (out / "NOTES.md").unlink()
    (out / "metrics.json").write_text("{}")  # an output edited by hand: not overwritten
    result = invoke("kg", "synth", "--facts", 200, "--no-text", "-o", out)
    assert result.exit_code == 2 and "metrics.json changed since chronoprobe wrote it" in (
        " ".join(result.output.split())
    )
    (out / "metrics.json").unlink()
    synth(out)
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == [
        ".chronoprobe-output"
    ]


def test_an_output_from_before_markers_is_adopted_by_its_own_command_only(tmp_path):
    out = tmp_path / "world"
    synth(out)
    (out / ".chronoprobe-output").unlink()
    record = json.loads((out / "step.json").read_text())
    del record["files"]
    (out / "step.json").write_text(json.dumps(record))
    result = invoke("kg", "convert", PRESIDENTS, "-f", "jsonl", "-o", out)
    assert result.exit_code == 2 and "holds the output of `chronoprobe kg synth`" in result.output
    synth(out, 300)
    assert json.loads((out / ".chronoprobe-output").read_text())["command"] == "kg synth"


def test_links_files_and_odd_things_where_out_goes(tmp_path):
    out = tmp_path / "world"
    synth(out)
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("keep")
    (out / "facts.parquet").unlink()
    (out / "facts.parquet").symlink_to(elsewhere)
    result = invoke("kg", "synth", "--facts", 200, "--no-text", "-o", out)
    assert result.exit_code == 2 and "facts.parquet (a symbolic link)" in result.output
    assert elsewhere.read_text() == "keep"
    result = invoke("kg", "synth", "--facts", 200, "--no-text", "-o", elsewhere)
    assert result.exit_code == 2 and "elsewhere.txt is a file; pass a folder" in result.output
    result = invoke("kg", "synth", "--facts", 200, "--no-text", "-o", elsewhere / "sub")
    assert result.exit_code == 2 and "is a file, so no folder can be made there" in result.output
    long = tmp_path / ("x" * 300)
    result = invoke("kg", "synth", "--facts", 200, "--no-text", "-o", long)
    assert result.exit_code == 2 and "File name too long" in result.output
    assert "Traceback" not in result.output


def test_a_second_command_on_the_same_out_is_refused(tmp_path):
    out = tmp_path / "world"
    out.mkdir()
    holder = os.open(out, os.O_RDONLY)
    fcntl.flock(holder, fcntl.LOCK_EX)  # another command writing there
    try:
        result = invoke("kg", "synth", "--facts", 200, "--no-text", "-o", out)
    finally:
        os.close(holder)
    assert result.exit_code == 2
    assert "another chronoprobe command is writing to --out" in result.output
    assert list(out.iterdir()) == []


def test_a_kill_while_the_files_are_swapped_is_repaired_by_the_next_command(tmp_path, monkeypatch):
    out = tmp_path / "world"
    synth(out)
    real = os.replace

    def killed(source, target):  # the old files moved aside, then one new one in, then kill
        real(source, target)
        if Path(source).parent.name.startswith("new-") and Path(target).parent == out:
            raise KeyboardInterrupt

    monkeypatch.setattr(single.os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        single.run_operation(*_synth_operation(300), out, "kg synth", console=_quiet())
    monkeypatch.setattr(single.os, "replace", real)
    assert not (out / "step.json").exists()  # half swapped: no record, so never an input key
    synth(out, 300)
    assert json.loads((out / "step.json").read_text())["params"]["facts"] == 300
    assert not (out / ".chronoprobe-tmp").exists()


def _refuse(monkeypatch, aside: str, back: str | None = None) -> None:
    """os.replace failing as a read-only file does: when ``aside`` is moved out of the way
    (into old-...), and when ``back`` is moved back from there."""
    real = os.replace

    def replace(source, target):
        source, target = Path(source), Path(target)
        if (source.name == aside and target.parent.name.startswith("old-")) or (
            target.name == back and source.parent.name.startswith("old-")
        ):
            raise PermissionError(1, "Operation not permitted", str(source), None, str(target))
        real(source, target)

    monkeypatch.setattr(os, "replace", replace)


def test_a_rename_failing_mid_swap_leaves_the_earlier_outputs_as_they_were(tmp_path, monkeypatch):
    """metrics.json could not be moved aside (read-only): the files moved before it were left
    in the temporaries and deleted, and the KG no longer loaded."""
    out = tmp_path / "world"
    synth(out)
    before = contents(out)
    _refuse(monkeypatch, "metrics.json")
    result = invoke("kg", "synth", "--facts", 300, "--no-text", "-o", out)
    monkeypatch.undo()
    assert result.exit_code == 2
    said = " ".join(result.output.split())
    assert "nothing was replaced: the earlier outputs are as they were" in said
    assert contents(out) == before and not (out / ".chronoprobe-tmp").exists()
    synth(out, 300)  # and the next attempt replaces them
    assert json.loads((out / "step.json").read_text())["params"]["facts"] == 300


def test_earlier_outputs_that_cannot_be_put_back_are_kept_not_cleared(tmp_path, monkeypatch):
    """Should the undo fail too (step.json, moved aside first, cannot go back), the earlier
    outputs are kept in the temporaries as kept-..., never cleared, and the error says where."""
    out = tmp_path / "world"
    synth(out)
    before = contents(out)
    _refuse(monkeypatch, "metrics.json", back="step.json")
    result = invoke("kg", "synth", "--facts", 300, "--no-text", "-o", out)
    monkeypatch.undo()
    assert result.exit_code == 2
    (kept,) = (out / ".chronoprobe-tmp").iterdir()
    assert kept.name.startswith("kept-old-")
    assert f"could not be put back are in {kept}" in " ".join(result.output.split())
    assert (kept / "step.json").read_bytes() == before["step.json"]
    assert {**contents(out), "step.json": before["step.json"]} == before


def test_an_input_is_keyed_by_its_record_only_while_unchanged(tmp_path):
    out = tmp_path / "world"
    synth(out)
    key = json.loads((out / "step.json").read_text())["key"]
    assert input_key(out) == key
    with open(out / "metrics.json", "a") as stream:
        stream.write("\n")
    assert input_key(out) != key  # an edited input is what it holds now, not the cache's
    (out / "metrics.json").unlink()
    assert input_key(out) != key


def _synth_operation(facts: int):
    from chronoprobe.steps import get_kind

    kind = get_kind("kg")
    params = kind.params.model_validate({"source": "synth", "facts": facts, "text": False})
    return kind, params, {}


def _quiet():
    from rich.console import Console

    return Console(file=open(os.devnull, "w"))


def test_kg_export_replaces_an_existing_file_only_when_told_and_never_inside_the_kg(tmp_path):
    """kg export -o wrote over any file, the exported KG's own manifest.json included."""
    kg = tmp_path / "world"
    synth(kg)
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes")
    refused = invoke("kg", "export", kg, "--out", notes)
    assert refused.exit_code == 2
    assert f"--out {notes} exists; pass --force to replace it" in " ".join(refused.output.split())
    assert notes.read_text() == "my notes"
    manifest = (kg / "manifest.json").read_bytes()
    inside = invoke("kg", "export", kg, "--out", kg / "manifest.json", "--force")
    assert inside.exit_code == 2 and "is inside the KG directory" in inside.output
    assert (kg / "manifest.json").read_bytes() == manifest
    assert invoke("kg", "export", kg, "--out", notes, "--force").exit_code == 0
    assert notes.read_text().startswith('{"subject":')
