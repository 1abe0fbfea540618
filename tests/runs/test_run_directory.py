"""A run never touches files it did not create, and two runs never share a run directory."""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.runs.config import ConfigError
from chronoprobe.runs.engine import run_experiment

CONFIG = """
name: {name}
plugins: [chronoprobe_test_steps]
steps:
  - id: kg
    kind: tiny_kg
"""


def quiet() -> Console:
    return Console(file=open(os.devnull, "w"))


def users_files(folder: Path) -> dict[str, str]:
    """A folder as a user might have it: their own config, log and a steps/ of their own."""
    files = {
        "config.yaml": "mine: true\n",
        "run.log": "my notes\n",
        "environment.json": "{}",
        "steps/analysis/notes.txt": "precious\n",
    }
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return files


@pytest.mark.parametrize("name", ["..", "."])
def test_dot_names_are_refused_and_nothing_is_touched(name, write_config, tmp_path, monkeypatch):
    work = tmp_path / "work"
    (work / "runs").mkdir(parents=True)
    before = users_files(work)
    monkeypatch.chdir(work / "runs" if name == ".." else work)
    with pytest.raises(ConfigError, match="not a usable name"):
        run_experiment(write_config(CONFIG.format(name=name)), console=quiet())
    for file, text in before.items():
        assert (work / file).read_text() == text


def test_out_holding_the_working_directory_is_refused(write_config, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    with pytest.raises(ValueError, match="holds the working directory"):
        run_experiment(write_config(CONFIG.format(name="exp")), tmp_path, console=quiet())


def test_out_holding_the_cache_is_refused(write_config, tmp_path, private_cache):
    with pytest.raises(ValueError, match="holds the step cache"):
        run_experiment(write_config(CONFIG.format(name="exp")), tmp_path, console=quiet())


def test_a_users_non_empty_folder_is_refused(write_config, tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    before = users_files(folder)
    with pytest.raises(ValueError, match="not a chronoprobe run directory"):
        run_experiment(write_config(CONFIG.format(name="exp")), folder, console=quiet())
    assert {f: (folder / f).read_text() for f in before} == before


def test_tidy_up_deletes_only_the_steps_its_manifest_lists(write_config, tmp_path):
    config = write_config(CONFIG.format(name="exp") + "  - id: old\n    kind: tiny_kg\n")
    run_dir = tmp_path / "run"
    run_experiment(config, run_dir, console=quiet())
    (run_dir / "steps" / "mine").mkdir()  # a user's folder among the steps
    (run_dir / "steps" / "mine" / "notes.txt").write_text("keep me")
    config.write_text(CONFIG.format(name="exp"))  # step `old` removed from the config
    run_experiment(config, run_dir, console=quiet())
    assert sorted(p.name for p in (run_dir / "steps").iterdir()) == ["kg", "mine"]
    assert (run_dir / "steps/mine/notes.txt").read_text() == "keep me"
    assert "left alone in steps/ (not made by this run): mine" in (run_dir / "run.log").read_text()


def make_legacy(run_dir: Path, manifest: bool = True) -> None:
    """Turn a run directory into what chronoprobe 0.3.0 left: no marker, a manifest.json
    listing its steps (or none, as before manifests), step records without file digests."""
    (run_dir / ".chronoprobe-run").unlink()
    steps = sorted(p.name for p in (run_dir / "steps").iterdir())
    if manifest:
        text = json.dumps({"chronoprobe": "0.3.0", "steps": steps}, indent=2)
        (run_dir / "manifest.json").write_text(text)
    for step in steps:
        path = run_dir / "steps" / step / "step.json"
        record = json.loads(path.read_text())
        del record["files"]
        path.write_text(json.dumps(record))


def test_a_run_directory_from_before_markers_is_adopted(write_config, tmp_path):
    config = write_config(CONFIG.format(name="exp") + "  - id: old\n    kind: tiny_kg\n")
    run_dir = tmp_path / "run [/old]"  # a name that is no markup
    run_experiment(config, run_dir, console=quiet())
    make_legacy(run_dir)
    (run_dir / "steps" / "someone").mkdir()  # not listed in its manifest: left alone
    config.write_text(CONFIG.format(name="exp"))
    run_experiment(config, run_dir, console=quiet())
    marker = json.loads((run_dir / ".chronoprobe-run").read_text())
    assert marker["steps"] == ["kg"]
    assert not (run_dir / "manifest.json").exists()  # its list is in the marker now
    assert sorted(p.name for p in (run_dir / "steps").iterdir()) == ["kg", "someone"]
    assert "added the run marker" in (run_dir / "run.log").read_text()


def test_a_run_directory_from_before_manifests_is_adopted_without_deleting(write_config, tmp_path):
    config = write_config(CONFIG.format(name="exp") + "  - id: old\n    kind: tiny_kg\n")
    run_dir = tmp_path / "run"
    run_experiment(config, run_dir, console=quiet())
    make_legacy(run_dir, manifest=False)
    config.write_text(CONFIG.format(name="exp"))
    run_experiment(config, run_dir, console=quiet())
    assert sorted(p.name for p in (run_dir / "steps").iterdir()) == ["kg", "old"]


def test_a_second_run_on_a_locked_directory_fails_at_once(write_config, tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    holder = os.open(run_dir, os.O_RDONLY)  # another run holds the directory
    fcntl.flock(holder, fcntl.LOCK_EX)
    try:
        result = CliRunner().invoke(
            app, ["run", str(write_config(CONFIG.format(name="exp"))), "--out", str(run_dir)]
        )
    finally:
        os.close(holder)
    assert result.exit_code == 2
    assert "another chronoprobe run is working in" in result.output
    assert list(run_dir.iterdir()) == []  # it wrote nothing
    run_experiment(write_config(CONFIG.format(name="exp")), run_dir, console=quiet())


# --- a run directory is recognised by its marker, never by a name others use too ------------


def test_a_folder_with_a_manifest_json_is_not_taken_for_a_run_directory(write_config, tmp_path):
    # Failed before: any folder holding manifest.json was a run directory; a web app's had its
    # manifest replaced and its .session.tmp deleted.
    app_dir = tmp_path / "webapp"
    app_dir.mkdir()
    (app_dir / "manifest.json").write_text('{"name": "my app"}')
    (app_dir / ".session.tmp").write_text("session")
    with pytest.raises(ValueError) as caught:
        run_experiment(write_config(CONFIG.format(name="exp")), app_dir, console=quiet())
    assert str(caught.value) == (
        f"run directory {app_dir} is not empty and is not a chronoprobe run directory (no "
        ".chronoprobe-run; it holds .session.tmp, manifest.json); pass --out to a new or empty "
        "folder"
    )
    assert sorted(p.name for p in app_dir.iterdir()) == [".session.tmp", "manifest.json"]
    assert (app_dir / "manifest.json").read_text() == '{"name": "my app"}'


def test_a_kg_folder_given_as_out_still_loads(write_config, tmp_path):
    from chronoprobe.kg import TemporalKG

    run_experiment(write_config(CONFIG.format(name="exp")), tmp_path / "run", console=quiet())
    kg_dir = tmp_path / "mykg"
    TemporalKG.load(tmp_path / "run/steps/kg").save(kg_dir)
    before = {p.name: p.read_bytes() for p in kg_dir.iterdir()}
    with pytest.raises(ValueError, match="not a chronoprobe run directory"):
        run_experiment(write_config(CONFIG.format(name="exp")), kg_dir, console=quiet())
    assert {p.name: p.read_bytes() for p in kg_dir.iterdir()} == before
    assert TemporalKG.load(kg_dir).facts.num_rows == 2


def test_a_look_alike_of_the_old_layout_is_not_adopted(write_config, tmp_path):
    # config.yaml, environment.json and steps/ alone do not make a run: environment.json must
    # be the record chronoprobe writes
    folder = tmp_path / "mine"
    users_files(folder)
    (folder / "manifest.json").write_text('{"chronoprobe": "0.3.0", "steps": ["analysis"]}')
    with pytest.raises(ValueError, match="not a chronoprobe run directory"):
        run_experiment(write_config(CONFIG.format(name="exp")), folder, console=quiet())
    assert (folder / "steps/analysis/notes.txt").read_text() == "precious\n"


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        ('{"format": 2, "chronoprobe": "9.0"}', "written by a newer chronoprobe (9.0, format 2)"),
        ("not json", "damaged marker"),
        ('{"format": 1, "steps": "kg"}', "damaged marker (steps is not a list of ids)"),
        # a crafted marker must not make the run delete a folder outside steps/
        ('{"format": 1, "steps": ["../../elsewhere"]}', "damaged marker (steps is not a list"),
    ],
)
def test_a_marker_it_cannot_read_is_refused(write_config, tmp_path, marker, message):
    run_dir = tmp_path / "run"
    run_experiment(write_config(CONFIG.format(name="exp")), run_dir, console=quiet())
    (run_dir / ".chronoprobe-run").write_text(marker)
    with pytest.raises(ValueError, match=re.escape(message)):
        run_experiment(write_config(CONFIG.format(name="exp")), run_dir, console=quiet())
    assert (run_dir / "steps/kg/facts.parquet").is_file()


def test_an_empty_or_missing_folder_is_a_new_run_directory(write_config, tmp_path):
    (tmp_path / "empty").mkdir()
    for out in (tmp_path / "empty", tmp_path / "new" / "deeper"):
        run_experiment(write_config(CONFIG.format(name="exp")), out, console=quiet())
        assert (out / ".chronoprobe-run").is_file() and (out / "steps/kg/step.json").is_file()


# --- temporaries: only the tool's own folder of them is ever deleted -------------------------


def test_files_named_like_temporaries_survive(write_config, tmp_path):
    # Failed before: any .NAME.tmp in the run directory or in steps/ was deleted.
    config = write_config(CONFIG.format(name="exp"))
    run_dir = tmp_path / "run"
    run_experiment(config, run_dir, console=quiet())
    (run_dir / ".my-notes.tmp").write_text("notes")
    (run_dir / "steps" / ".draft.old-1234.tmp").write_text("draft")
    (run_dir / ".chronoprobe-tmp").mkdir()  # what a killed run leaves: its own
    (run_dir / ".chronoprobe-tmp" / "new-abc").mkdir()
    run_experiment(config, run_dir, console=quiet())
    assert (run_dir / ".my-notes.tmp").read_text() == "notes"
    assert (run_dir / "steps" / ".draft.old-1234.tmp").read_text() == "draft"
    assert not (run_dir / ".chronoprobe-tmp").exists()


# --- the whole plan is checked before anything is written ------------------------------------


def test_a_config_error_leaves_the_previous_outputs(write_config, tmp_path):
    # Failed before: the previous run's steps were tidied away, then the config failed.
    config = write_config(CONFIG.format(name="exp") + "  - id: old\n    kind: tiny_kg\n")
    run_dir = tmp_path / "run"
    run_experiment(config, run_dir, console=quiet())
    before = sorted(p.relative_to(run_dir).as_posix() for p in run_dir.rglob("*"))
    bad = CONFIG.format(name="exp") + (
        "  - id: report\n    kind: report\n"
        "  - id: use\n    kind: summary\n    inputs: {kg: report}\n"
    )
    with pytest.raises(ConfigError) as caught:
        run_experiment(write_config(bad, "bad.yaml"), run_dir, console=quiet())
    assert caught.value.problems == [
        "bad.yaml:10: steps[2].inputs.kg: 'report' is a report step, which reads the whole run "
        "and leaves no outputs for another step to read"
    ]
    assert sorted(p.relative_to(run_dir).as_posix() for p in run_dir.rglob("*")) == before


def test_a_users_report_html_is_refused_before_any_step_runs(write_config, tmp_path):
    """The report step found the user's report.html only after every step had run (and
    config.yaml had been rewritten)."""
    config = write_config(CONFIG.format(name="exp"))
    run_dir = tmp_path / "run"
    run_experiment(config, run_dir, console=quiet())
    (run_dir / "report.html").write_text("my analysis")
    before = {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()}
    with_report = CONFIG.format(name="exp") + "  - id: sq\n    kind: squares\n"
    with_report += "  - id: report\n    kind: report\n"
    with pytest.raises(ValueError, match=r"report\.html exists and is not a chronoprobe report"):
        run_experiment(write_config(with_report, "report.yaml"), run_dir, console=quiet())
    assert {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()} == before


def test_a_step_that_fails_leaves_the_steps_the_config_dropped(write_config, tmp_path, monkeypatch):
    config = write_config(CONFIG.format(name="exp") + "  - id: old\n    kind: tiny_kg\n")
    run_dir = tmp_path / "run"
    run_experiment(config, run_dir, console=quiet())
    config.write_text(CONFIG.format(name="exp") + "  - id: sq\n    kind: squares\n")
    monkeypatch.setenv("CHRONOPROBE_TEST_FAIL_AT", "1")
    with pytest.raises(RuntimeError, match="failing at shard 1"):
        run_experiment(config, run_dir, console=quiet())
    assert (run_dir / "steps/old/facts.parquet").is_file()  # deleted only once all steps ran
    monkeypatch.delenv("CHRONOPROBE_TEST_FAIL_AT")
    run_experiment(config, run_dir, console=quiet())
    assert sorted(p.name for p in (run_dir / "steps").iterdir()) == ["kg", "sq"]


def test_a_param_path_inside_the_run_directory_is_refused(write_config, tmp_path):
    run_dir = tmp_path / "run"
    run_experiment(write_config(CONFIG.format(name="exp")), run_dir, console=quiet())
    facts = run_dir / "steps/kg/facts.jsonl"
    facts.parent.joinpath("facts.jsonl").write_text("")  # a user's file there, read as input
    text = "name: c\nsteps:\n  - id: kg\n    kind: kg\n"
    text += f"    params: {{source: convert, format: jsonl, paths: [{facts}]}}\n"
    with pytest.raises(ConfigError) as caught:
        run_experiment(write_config(text, "c.yaml"), run_dir, console=quiet())
    assert caught.value.problems == [
        f"c.yaml: steps[0].params.paths[0]: {facts} is inside the run directory {run_dir}, which "
        "the run rewrites; name the step that makes it under `inputs:`, or copy the file elsewhere"
    ]


@pytest.mark.parametrize("where", ["step id", "name"])
def test_a_300_character_name_is_a_config_error(write_config, tmp_path, monkeypatch, where):
    # Failed before: OSError: File name too long, after the run directory was tidied.
    monkeypatch.chdir(tmp_path)
    long = "k" * 300
    text = CONFIG.format(name=long if where == "name" else "exp")
    if where == "step id":
        text = text.replace("id: kg", f"id: {long}")
    with pytest.raises(ConfigError) as caught:
        run_experiment(write_config(text), console=quiet())
    key = "name" if where == "name" else "steps[0].id"
    line = 1 if where == "name" else 4
    assert caught.value.problems == [
        f"exp.yaml:{line}: {key}: String should have at most 100 characters"
    ]
    assert not (tmp_path / "runs").exists()


def test_odd_characters_in_ids_are_refused_and_odd_paths_work(write_config, tmp_path):
    text = CONFIG.format(name="exp").replace("id: kg", "id: é/../x")
    with pytest.raises(ConfigError, match=re.escape("steps[0].id: String should match pattern")):
        run_experiment(write_config(text), tmp_path / "run", console=quiet())
    odd = tmp_path / "runs [é] ☃ $HOME" / "a b"
    result = run_experiment(write_config(CONFIG.format(name="exp")), odd, console=quiet())
    assert (odd / "steps/kg/facts.parquet").is_file() and result.run_dir == odd


# --- links are never followed, never deleted through -----------------------------------------


def test_a_run_log_that_is_a_link_is_refused(write_config, tmp_path):
    # Failed before: the run appended to the file the link points to.
    config = write_config(CONFIG.format(name="exp"))
    run_dir = tmp_path / "run"
    run_experiment(config, run_dir, console=quiet())
    outside = tmp_path / "outside.txt"
    outside.write_text("mine\n")
    (run_dir / "run.log").unlink()
    (run_dir / "run.log").symlink_to(outside)
    with pytest.raises(ValueError) as caught:
        run_experiment(config, run_dir, console=quiet())
    assert str(caught.value) == (
        f"{run_dir / 'run.log'} is a symbolic link; a run writes a file there. Nothing was "
        "changed: move these away, or pass --out to another folder"
    )
    assert outside.read_text() == "mine\n"


def test_the_log_is_opened_without_following_a_link_made_meanwhile(tmp_path):
    # the check above runs first; the log itself is opened with O_NOFOLLOW as well
    from chronoprobe.runs.engine import open_log

    outside = tmp_path / "outside.txt"
    outside.write_text("mine\n")
    (tmp_path / "run.log").symlink_to(outside)
    with pytest.raises(ValueError, match=r"run\.log is a symbolic link"):
        open_log(tmp_path / "run.log")
    os.mkfifo(tmp_path / "fifo.log")  # opening a pipe for writing would wait for a reader
    with pytest.raises(ValueError, match=r"fifo\.log is a pipe"):
        open_log(tmp_path / "fifo.log")
    assert outside.read_text() == "mine\n"


def test_a_step_folder_that_is_a_link_is_refused_and_its_target_kept(write_config, tmp_path):
    # Failed before: "Cannot call rmtree on a symbolic link", and the run directory was stuck.
    config = write_config(CONFIG.format(name="exp"))
    run_dir = tmp_path / "run"
    run_experiment(config, run_dir, console=quiet())
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "precious.txt").write_text("keep")
    shutil.rmtree(run_dir / "steps/kg")
    (run_dir / "steps/kg").symlink_to(elsewhere)
    with pytest.raises(ValueError, match=r"steps/kg is a symbolic link, not a step folder"):
        run_experiment(config, run_dir, console=quiet())
    assert [p.name for p in elsewhere.iterdir()] == ["precious.txt"]
    (run_dir / "steps/kg").unlink()  # what the message asks for: then the run goes on
    run_experiment(config, run_dir, console=quiet())
    assert (run_dir / "steps/kg/facts.parquet").is_file()


def test_links_elsewhere_in_the_run_directory(write_config, tmp_path):
    config = write_config(CONFIG.format(name="exp") + "  - id: old\n    kind: tiny_kg\n")
    run_dir = tmp_path / "run"
    run_experiment(config, run_dir, console=quiet())
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "precious.txt").write_text("keep")
    # a link among a step's files: the step folder is not replaced
    (run_dir / "steps/kg/facts.parquet").unlink()
    (run_dir / "steps/kg/facts.parquet").symlink_to(elsewhere / "precious.txt")
    with pytest.raises(ValueError, match=r"facts.parquet \(a symbolic link\)"):
        run_experiment(config, run_dir, console=quiet())
    (run_dir / "steps/kg/facts.parquet").unlink()
    # steps/ itself a link
    shutil.move(run_dir / "steps", tmp_path / "moved-steps")
    (run_dir / "steps").symlink_to(tmp_path / "moved-steps")
    with pytest.raises(ValueError, match="steps is a symbolic link; a run keeps its steps there"):
        run_experiment(config, run_dir, console=quiet())
    (run_dir / "steps").unlink()
    shutil.move(tmp_path / "moved-steps", run_dir / "steps")
    # its own temporaries' folder a link: the link goes, never what it points to
    (run_dir / ".chronoprobe-tmp").symlink_to(elsewhere)
    # a dropped step holding a link: left alone (the run goes on), named in the log
    (run_dir / "steps/old/link").symlink_to(elsewhere)
    config.write_text(CONFIG.format(name="exp"))
    run_experiment(config, run_dir, console=quiet())
    assert [p.name for p in elsewhere.iterdir()] == ["precious.txt"]
    assert not (run_dir / ".chronoprobe-tmp").exists()
    assert (run_dir / "steps/old/link").is_symlink()
    assert "left alone (not deleted):" in (run_dir / "run.log").read_text()


def test_files_of_the_wrong_type_where_the_run_writes(write_config, tmp_path):
    config = write_config(CONFIG.format(name="exp"))
    run_dir = tmp_path / "run"
    run_experiment(config, run_dir, console=quiet())
    (run_dir / "config.yaml").unlink()
    (run_dir / "config.yaml").mkdir()
    (run_dir / "config.yaml" / "mine.txt").write_text("mine")
    with pytest.raises(ValueError, match=r"config\.yaml is a folder; a run writes a file there"):
        run_experiment(config, run_dir, console=quiet())
    shutil.rmtree(run_dir / "config.yaml")
    (run_dir / ".chronoprobe-tmp").write_text("a file of mine")
    with pytest.raises(ValueError, match="chronoprobe-tmp is a file, where chronoprobe keeps"):
        run_experiment(config, run_dir, console=quiet())
    (run_dir / ".chronoprobe-tmp").unlink()
    shutil.rmtree(run_dir / "steps")
    (run_dir / "steps").write_text("not a folder")
    with pytest.raises(ValueError, match="steps is a file; a run keeps its steps there"):
        run_experiment(config, run_dir, console=quiet())
    (run_dir / "steps").unlink()
    (tmp_path / "a-file").write_text("x")
    with pytest.raises(ValueError, match="a-file is a file, so no folder can be made there"):
        run_experiment(config, tmp_path / "a-file" / "run", console=quiet())
    run_experiment(config, run_dir, console=quiet())


# --- a user's files and edits inside step folders --------------------------------------------


def test_a_users_file_in_a_step_folder_stops_the_run(write_config, tmp_path):
    config = write_config(CONFIG.format(name="exp"))
    run_dir = tmp_path / "run"
    run_experiment(config, run_dir, console=quiet())
    (run_dir / "steps/kg/NOTES.md").write_text("my notes")
    with pytest.raises(ValueError) as caught:
        run_experiment(config, run_dir, ["steps.kg.params.last_pm=Q1"], console=quiet())
    assert str(caught.value).startswith(
        f"{run_dir / 'steps/kg'} holds what chronoprobe did not write there: NOTES.md"
    )
    assert (run_dir / "steps/kg/NOTES.md").read_text() == "my notes"


def test_an_edited_output_is_detected_not_overwritten(write_config, tmp_path):
    config = write_config(CONFIG.format(name="exp"))
    run_dir = tmp_path / "run"
    run_experiment(config, run_dir, console=quiet())
    metrics = run_dir / "steps/kg/metrics.json"
    metrics.write_text(metrics.read_text() + "\n")  # same name, other content
    with pytest.raises(ValueError, match=r"steps/kg: metrics.json changed since chronoprobe"):
        run_experiment(config, run_dir, console=quiet())
    assert metrics.read_text().endswith("\n")
    os.utime(run_dir / "steps/kg/facts.parquet")  # only touched: not a change
    metrics.unlink()  # the user's choice: the run restores it
    run_experiment(config, run_dir, console=quiet())
    assert json.loads(metrics.read_text()) == {"facts": 2}


def test_an_edit_with_its_old_size_and_time_put_back_is_detected(
    write_config, tmp_path, monkeypatch
):
    """Same size, modification time restored (touch -r, cp -p): the step folder was taken for
    unchanged and replaced. The inode's change time, later than the step record's, gives it away."""
    from chronoprobe.runs import ownership

    config = write_config(CONFIG.format(name="exp"))
    run_dir = tmp_path / "run"
    run_experiment(config, run_dir, console=quiet())
    metrics = run_dir / "steps/kg/metrics.json"
    stamp = metrics.stat()
    metrics.write_text(metrics.read_text().replace("2", "3"))  # {"facts": 3}: same size
    os.utime(metrics, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert metrics.stat().st_size == stamp.st_size
    record = run_dir / "steps/kg/step.json"
    written = record.stat().st_ctime_ns - 3600 * 10**9  # as if the edit came an hour later
    monkeypatch.setattr(ownership, "_ctime", lambda path: written if path == record else None)
    with pytest.raises(ValueError, match=r"steps/kg: metrics.json changed since chronoprobe"):
        run_experiment(config, run_dir, ["steps.kg.params.last_pm=Q1"], console=quiet())
    assert json.loads(metrics.read_text()) == {"facts": 3}


def test_a_step_folder_without_a_record_is_left_to_the_user(write_config, tmp_path):
    config = write_config(CONFIG.format(name="exp"))
    run_dir = tmp_path / "run"
    run_experiment(config, run_dir, console=quiet())
    (run_dir / "steps/kg/step.json").write_text("{broken")
    with pytest.raises(ValueError, match=r"has no readable step\.json, so chronoprobe cannot tell"):
        run_experiment(config, run_dir, console=quiet())
    assert (run_dir / "steps/kg/facts.parquet").is_file()


# --- a second run at the same time, and a kill in the middle of writing ----------------------


def test_a_concurrent_second_run_is_refused_and_the_first_finishes(write_config, tmp_path):
    config = write_config(CONFIG.format(name="exp") + "  - id: sq\n    kind: squares\n")
    run_dir, cache = tmp_path / "run", tmp_path / "cache"
    path = os.pathsep.join(filter(None, [str(Path(__file__).parent), os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, CHRONOPROBE_TEST_BLOCK_AT="0", PYTHONPATH=path)
    first = subprocess.Popen(
        [sys.executable, "-m", "chronoprobe", "run", str(config), "--out", str(run_dir)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not list((cache / "squares").glob("*.partial")):  # the first is in its step
            assert first.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        result = CliRunner().invoke(app, ["run", str(config), "--out", str(run_dir)])
        assert result.exit_code == 2
        assert "another chronoprobe run is working in" in result.output
    finally:
        first.kill()
        first.wait()
    run_experiment(config, run_dir, console=quiet())  # the killed first one resumes
    assert not (run_dir / ".chronoprobe-tmp").exists()


def test_a_kill_between_the_renames_of_a_step_loses_nothing(write_config, tmp_path, monkeypatch):
    from chronoprobe.runs import ownership

    config = write_config(CONFIG.format(name="exp"))
    run_dir = tmp_path / "run"
    run_experiment(config, run_dir, console=quiet())
    real = os.replace

    def killed(source, target):  # the old folder moved aside, then the process dies
        if Path(source) == run_dir / "steps/kg":
            real(source, target)
            raise KeyboardInterrupt
        real(source, target)

    monkeypatch.setattr(ownership.os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        run_experiment(config, run_dir, ["steps.kg.params.last_pm=Q1"], console=quiet())
    monkeypatch.setattr(ownership.os, "replace", real)
    assert not (run_dir / "steps/kg").exists()
    run_experiment(config, run_dir, ["steps.kg.params.last_pm=Q1"], console=quiet())
    assert (run_dir / "steps/kg/facts.parquet").is_file()
    assert sorted(p.name for p in run_dir.iterdir() if p.name.startswith(".")) == [
        ".chronoprobe-run"
    ]


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_run_directory_is_one_line(write_config, tmp_path):
    config = write_config(CONFIG.format(name="exp"))
    run_dir = tmp_path / "run"
    run_experiment(config, run_dir, console=quiet())
    run_dir.chmod(0o555)
    try:
        result = CliRunner().invoke(app, ["run", str(config), "--out", str(run_dir)])
    finally:
        run_dir.chmod(0o755)
    assert result.exit_code == 2 and "Permission denied" in result.output
    assert (run_dir / "steps/kg/facts.parquet").is_file()


def test_a_run_killed_before_its_marker_was_written_is_run_again(write_config, tmp_path):
    run_dir = tmp_path / "run"
    (run_dir / ".chronoprobe-tmp" / "new-abc").mkdir(parents=True)  # all such a kill leaves
    run_experiment(write_config(CONFIG.format(name="exp")), run_dir, console=quiet())
    assert (run_dir / "steps/kg/facts.parquet").is_file()
    assert not (run_dir / ".chronoprobe-tmp").exists()


def test_a_step_folder_whose_replacement_fails_is_put_back(tmp_path, monkeypatch):
    """The old step folder is moved aside before the new one is moved in: when that second
    rename fails, the old one goes back instead of being cleared with the temporaries."""
    from chronoprobe.runs.ownership import replace_folder

    target, staged, tmp = tmp_path / "step", tmp_path / "new", tmp_path / "tmp"
    for folder, text in ((target, "old"), (staged, "new")):
        folder.mkdir()
        (folder / "out.txt").write_text(text)
    tmp.mkdir()
    real = os.replace

    def replace(source, destination):
        if Path(source) == staged:
            raise PermissionError(1, "Operation not permitted", str(source), None, str(destination))
        real(source, destination)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(PermissionError, match="nothing was replaced"):
        replace_folder(staged, target, tmp)
    assert (target / "out.txt").read_text() == "old" and list(tmp.iterdir()) == []
