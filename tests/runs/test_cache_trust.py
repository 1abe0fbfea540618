"""The cache serves only what it computed: entries are signed with a key of the cache's own.

Whoever writes a folder writes the digests in its step.json too, so they prove nothing; each
case below forges or moves an entry the way someone who can write files (but cannot read the
cache's key) would, and checks that the run computes the step instead of serving it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.runs.cache import INDEX_DIR, KEY_FILE, StepCache
from chronoprobe.runs.config import ConfigError
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
GENUINE = {"answers": ["Q180589", "Q264766"]}  # what summary computes on the tiny KG
FORGED = {"answers": ["Q1"]}
runner = CliRunner()


def run(config: Path, out: Path, **options):
    console = Console(record=True, width=400, file=open(os.devnull, "w"))  # noqa: SIM115
    result = run_experiment(config, out, console=console, **options)
    return result, " ".join(console.export_text().split())


def _writable(folder: Path) -> None:
    for path in [folder, *folder.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)


def forge(entry: Path, metrics: dict) -> None:
    """Write ``metrics`` into the entry and its step.json's digests, as a forger would."""
    _writable(entry)
    data = json.dumps(metrics).encode()
    (entry / "metrics.json").write_bytes(data)
    record = json.loads((entry / "step.json").read_text())
    record["files"]["metrics.json"].update(sha256=hashlib.sha256(data).hexdigest(), bytes=len(data))
    (entry / "step.json").write_text(json.dumps(record, indent=2) + "\n")


def link_elsewhere(entry: Path, decoy: Path) -> Path:
    """Move the entry to ``decoy`` and leave a symbolic link to it in its place."""
    shutil.copytree(entry, decoy)
    _writable(entry)
    shutil.rmtree(entry)
    entry.symlink_to(decoy)
    return decoy


def metrics(run_dir: Path, step: str = "sum") -> dict:
    return json.loads((run_dir / "steps" / step / "metrics.json").read_text())


@pytest.fixture
def first(write_config, tmp_path, private_cache):
    config = write_config(CONFIG)
    result, _ = run(config, tmp_path / "a")
    entry = private_cache / "summary" / result.step("sum").key
    return config, entry


def test_a_forged_entry_with_matching_digests_is_not_served(first, tmp_path):
    # Failed before: the digests matched the forged file, so it was served as `cached: yes`.
    config, entry = first
    forge(entry, FORGED)
    result, text = run(config, tmp_path / "b")
    assert not result.step("sum").cached and result.step("kg").cached
    assert f"cache entry {entry}: not made by this cache" in text
    assert "computing it again" in text
    assert metrics(tmp_path / "b") == GENUINE
    assert json.loads((entry / "metrics.json").read_text()) == GENUINE  # made whole again
    assert run(config, tmp_path / "c")[0].step("sum").cached


def test_a_forged_step_record_alone_is_not_served(first, tmp_path):
    """A record changed in a field no file digest covers (its params) is found out too."""
    config, entry = first
    _writable(entry)
    record = json.loads((entry / "step.json").read_text())
    record["params"] = {"forged": True}
    (entry / "step.json").write_text(json.dumps(record, indent=2) + "\n")
    assert not run(config, tmp_path / "b")[0].step("sum").cached


def test_an_entry_copied_from_another_cache_is_not_served(first, tmp_path, monkeypatch):
    config, entry = first
    other = tmp_path / "other-cache"
    monkeypatch.setenv("CHRONOPROBE_CACHE", str(other))
    run(config, tmp_path / "elsewhere")
    foreign = other / "summary" / entry.name
    forge(foreign, FORGED)  # forged in a cache of the forger's own, signed there with its key
    (other / INDEX_DIR / "summary" / entry.name).write_text(
        StepCache(other)._entry_mac("summary", entry.name, (foreign / "step.json").read_bytes())
    )
    assert run(config, tmp_path / "check")[0].step("sum").cached  # its own cache serves it
    monkeypatch.setenv("CHRONOPROBE_CACHE", str(entry.parent.parent))
    _writable(entry)
    shutil.rmtree(entry)
    shutil.copytree(foreign, entry)  # the entry and its MAC, both copied into ours
    mac = other / INDEX_DIR / "summary" / entry.name
    shutil.copy(mac, entry.parent.parent / INDEX_DIR / "summary" / entry.name)
    result, text = run(config, tmp_path / "b")
    assert not result.step("sum").cached and "not made by this cache" in text
    assert metrics(tmp_path / "b") == GENUINE


def test_an_entry_whose_mac_is_deleted_is_computed_again(first, tmp_path, private_cache):
    config, entry = first
    (private_cache / INDEX_DIR / "summary" / entry.name).unlink()
    result, text = run(config, tmp_path / "b")
    assert not result.step("sum").cached and "not made by this cache" in text
    assert run(config, tmp_path / "c")[0].step("sum").cached  # signed again


def test_a_replaced_key_serves_nothing_it_did_not_sign(first, tmp_path, private_cache):
    config, _entry = first
    key = private_cache / KEY_FILE
    key.unlink()
    descriptor = os.open(key, os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(descriptor, (os.urandom(32).hex() + "\n").encode())
    os.close(descriptor)
    result, _ = run(config, tmp_path / "b")
    assert [s.cached for s in result.steps] == [False, False]


def test_the_key_is_made_readable_by_its_owner_only(first, private_cache):
    info = os.stat(private_cache / KEY_FILE)
    assert stat.S_IMODE(info.st_mode) == 0o600 and info.st_uid == os.geteuid()
    assert len(bytes.fromhex((private_cache / KEY_FILE).read_text().strip())) == 32
    assert stat.S_IMODE(os.stat(private_cache).st_mode) == 0o700  # made by the run


@pytest.mark.parametrize("damage", ["readable by others", "a link", "not hex", "another's"])
def test_a_key_that_is_not_the_caches_own_is_refused_in_one_line(
    first, tmp_path, private_cache, damage
):
    config, _ = first
    key = private_cache / KEY_FILE
    if damage == "readable by others":
        key.chmod(0o644)
    elif damage == "a link":
        target = tmp_path / "key-elsewhere"
        target.write_text(key.read_text())
        target.chmod(0o600)
        key.unlink()
        key.symlink_to(target)
    elif damage == "not hex":
        key.write_text("not a key\n")
    else:
        if os.geteuid() != 0:
            pytest.skip("only root can give a file to another user")
        os.chown(key, 12345, 12345)
    result = runner.invoke(app, ["run", str(config), "--out", str(tmp_path / "b")])
    assert result.exit_code == 2, result.output
    assert f"{key}: not the key chronoprobe keeps there" in " ".join(result.output.split())
    assert "Traceback" not in result.output


def test_a_symbolic_link_at_an_entry_is_never_served_nor_deleted_through(
    first, tmp_path, private_cache
):
    config, entry = first
    decoy = link_elsewhere(entry, tmp_path / "decoy")
    result, _ = run(config, tmp_path / "b")
    assert not result.step("sum").cached
    assert entry.is_dir() and not entry.is_symlink()  # the link replaced by a real entry
    assert decoy.is_dir() and (decoy / "metrics.json").is_file()  # what it pointed to is kept


def test_no_cache_with_a_link_at_the_entry_recomputes(first, tmp_path):
    # Failed before, every time: OSError: Cannot call rmtree on a symbolic link.
    config, entry = first
    decoy = link_elsewhere(entry, tmp_path / "decoy")
    result, _ = run(config, tmp_path / "b", use_cache=False)
    assert not result.step("sum").cached and metrics(tmp_path / "b") == GENUINE
    assert not entry.is_symlink() and (decoy / "metrics.json").is_file()


def test_a_link_at_the_lock_file_is_not_followed(first, tmp_path, private_cache):
    config, entry = first
    target = tmp_path / "not-yours.txt"
    lock = entry.with_name(f"{entry.name}.lock")
    lock.unlink()
    lock.symlink_to(target)
    run(config, tmp_path / "b", use_cache=False)
    assert not target.exists() and not lock.is_symlink()


def test_forged_shards_of_an_unfinished_attempt_are_not_resumed(
    write_config, tmp_path, private_cache
):
    """A work directory the cache did not make (shipped, or planted) is started afresh: its
    shards would otherwise be merged into a result the cache then signs as its own."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from chronoprobe.runs.cache import step_key

    config = write_config(
        "name: sq\nplugins: [chronoprobe_test_steps]\nsteps:\n"
        "  - {id: sq, kind: squares, params: {shards: 3, rows_per_shard: 2}}\n"
    )
    params = {"shards": 3, "rows_per_shard": 2, "delay": 0.0, "side_file": None}
    key = step_key("squares", params, {}, 0, None, _loaded_plugins())
    work = private_cache / "squares" / f"{key}.partial" / ".shards" / "squares"
    work.mkdir(parents=True)
    forged = pa.table({"i": [0, 1], "square": [666, 666], "noise": [0.0, 0.0]})
    pq.write_table(forged, work / "00000.parquet")
    result, text = run(config, tmp_path / "run")
    assert result.step("sq").key == key  # the planted attempt was the step's own
    assert "an unfinished attempt this cache did not make; started afresh" in text
    table = pq.read_table(tmp_path / "run/steps/sq/squares.parquet")
    assert table["square"].to_pylist() == [0, 1, 4, 9, 16, 25]


def _loaded_plugins():
    from chronoprobe.registry import loaded_plugins

    return loaded_plugins()


def test_an_unfinished_attempt_of_the_cache_own_is_resumed(write_config, tmp_path, monkeypatch):
    """The signature binds the attempt to its folder: a failed attempt resumes its shards."""
    side = tmp_path / "side.txt"
    config = write_config(
        "name: sq\nplugins: [chronoprobe_test_steps]\nsteps:\n"
        f"  - {{id: sq, kind: squares, params: {{shards: 4, side_file: {side}}}}}\n"
    )
    monkeypatch.setenv("CHRONOPROBE_TEST_FAIL_AT", "2")
    with pytest.raises(RuntimeError, match="failing at shard 2"):
        run(config, tmp_path / "run")
    monkeypatch.delenv("CHRONOPROBE_TEST_FAIL_AT")
    _result, text = run(config, tmp_path / "run")
    assert "did not make" not in text
    assert side.read_text().split() == ["0", "1", "2", "2", "3"]  # 0 and 1 not again


def test_only_a_signed_entry_is_continued_from(write_config, tmp_path, private_cache):
    """A training goes on from a finished run of fewer epochs: never from a forged one."""
    config = write_config(
        "name: c\nplugins: [chronoprobe_test_steps]\nsteps:\n"
        "  - {id: c, kind: count_up, params: {epochs: 2}}\n"
    )
    first, _ = run(config, tmp_path / "a")
    genuine = private_cache / "count_up" / first.step("c").key
    forged = genuine.with_name("f" * 64)
    shutil.copytree(genuine, forged)
    _writable(forged)
    state = json.dumps({"epochs": 4, "from": 0, "note": "forged"}).encode()
    (forged / "state.json").write_bytes(state)
    record = json.loads((forged / "step.json").read_text())
    record["params"]["epochs"] = 4
    record["files"]["state.json"].update(sha256=hashlib.sha256(state).hexdigest(), bytes=len(state))
    (forged / "step.json").write_text(json.dumps(record))
    _result, text = run(config, tmp_path / "b", overrides=["steps.c.params.epochs=5"])
    assert "continues from a finished run of epochs 2" in text
    done = json.loads((tmp_path / "b/steps/c/state.json").read_text())
    assert done == {"epochs": 5, "from": 2, "note": ""}


def test_a_config_cache_dir_is_used_only_when_trusted(write_config, tmp_path):
    """A config and a cache folder shipped beside it: the cache would decide the results."""
    shipped = tmp_path / "shipped-cache"
    config = write_config(CONFIG + "cache_dir: shipped-cache\n")
    with pytest.raises(ConfigError, match=r"exp\.yaml:\d+: cache_dir: the config names a step"):
        run(config, tmp_path / "a")
    assert not shipped.exists() and not (tmp_path / "a").exists()  # nothing was written
    result = runner.invoke(app, ["run", str(config), "--out", str(tmp_path / "a")])
    assert result.exit_code == 2 and "--trust-cache-dir" in result.output
    result = runner.invoke(
        app, ["run", str(config), "--out", str(tmp_path / "a"), "--trust-cache-dir"]
    )
    assert result.exit_code == 0, result.output
    assert (shipped / KEY_FILE).is_file()  # the trusted folder is the run's cache


def test_a_config_naming_the_users_own_cache_needs_no_flag(write_config, tmp_path, private_cache):
    config = write_config(CONFIG + f"cache_dir: {private_cache}\n")
    assert run(config, tmp_path / "a")[0].steps


def test_set_cache_dir_is_refused_without_the_flag(write_config, tmp_path):
    config = write_config(CONFIG)
    with pytest.raises(ConfigError, match="--set cache_dir=elsewhere"):
        run(config, tmp_path / "a", overrides=["cache_dir=elsewhere"])


def test_a_world_writable_cache_is_refused_in_one_line(write_config, tmp_path, monkeypatch):
    shared = tmp_path / "shared-cache"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv("CHRONOPROBE_CACHE", str(shared))
    config = write_config(CONFIG)
    result = runner.invoke(app, ["run", str(config), "--out", str(tmp_path / "a")])
    assert result.exit_code == 2
    line = " ".join(result.output.split())
    assert f"the step cache {shared} is writable by every user (mode 0777)" in line
    assert "set CHRONOPROBE_CACHE to a folder of your own" in line
    assert not (tmp_path / "a").exists() and not (shared / KEY_FILE).exists()


def test_a_cache_in_a_world_writable_folder_without_the_sticky_bit_is_refused(
    write_config, tmp_path, monkeypatch
):
    open_folder = tmp_path / "open"
    open_folder.mkdir()
    open_folder.chmod(0o777)
    monkeypatch.setenv("CHRONOPROBE_CACHE", str(open_folder / "cache"))
    with pytest.raises(ValueError, match=f"is in {open_folder}, which is writable by every"):
        run(write_config(CONFIG), tmp_path / "a")
    open_folder.chmod(0o1777)  # as /tmp: no one renames another user's folder out of it
    assert run(write_config(CONFIG), tmp_path / "a")[0].steps


def test_a_cache_owned_by_another_user_is_refused(write_config, tmp_path, monkeypatch):
    if os.geteuid() != 0:
        pytest.skip("only root can give a folder to another user")
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o755)
    os.chown(theirs, 12345, 12345)
    monkeypatch.setenv("CHRONOPROBE_CACHE", str(theirs))
    with pytest.raises(ValueError, match=r"is owned by another user \(uid 12345\)"):
        run(write_config(CONFIG), tmp_path / "a")


def test_a_group_writable_cache_is_warned_about(write_config, tmp_path, monkeypatch):
    import grp

    group = next((g for g in grp.getgrall() if g.gr_name not in ("root",)), None)
    if group is None or os.geteuid() != 0:
        pytest.skip("needs a group other than the user's own, and root to give it")
    folder = tmp_path / "team-cache"
    folder.mkdir()
    os.chown(folder, os.geteuid(), group.gr_gid)
    folder.chmod(0o770)
    monkeypatch.setenv("CHRONOPROBE_CACHE", str(folder))
    result, text = run(write_config(CONFIG), tmp_path / "a")
    assert result.steps
    assert f"warning: the step cache {folder} is writable by its group" in text


def test_a_step_that_calls_sys_exit_fails_the_run_in_one_line(write_config, tmp_path):
    # Failed before: sys.exit(0) in a plugin ended `chronoprobe run` silently with exit 0.
    config = write_config(
        "name: e\nplugins: [chronoprobe_test_steps]\nsteps:\n"
        "  - {id: kg, kind: tiny_kg}\n  - {id: bye, kind: exits}\n  - {id: after, kind: tiny_kg,"
        " params: {last_pm: Q1}}\n"
    )
    result = runner.invoke(app, ["run", str(config), "--out", str(tmp_path / "run")])
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert "error: step bye (exits): its code in chronoprobe_test_steps" in text
    assert "called sys.exit(0), which ended the step: the step failed" in text
    assert "failed in step bye" in text
    assert not (tmp_path / "run/steps/after").exists()  # the run stopped there
