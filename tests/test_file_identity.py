"""Input files are keyed by what they hold, not by a size and a time an edit can keep."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import time

import pytest

from chronoprobe import inputs as identity
from chronoprobe.inputs import CONTENT_LIMIT, file_identity, tree_identity

OLD = 1_500_000_000  # a modification time far in the past (2017), as `cp -p` keeps one


def write(path, data: bytes, mtime: int = OLD):
    path.write_bytes(data)
    os.utime(path, ns=(mtime * 10**9, mtime * 10**9))
    return path


def test_a_small_file_is_keyed_by_its_bytes(tmp_path):
    path = write(tmp_path / "facts.jsonl", b'{"s": "Q1"}\n')
    assert file_identity(path) == ["sha256", hashlib.sha256(b'{"s": "Q1"}\n').hexdigest()]


def test_an_edit_that_keeps_size_and_time_changes_the_key(tmp_path):
    """`touch -r`: the same size, the old time put back; the key follows the bytes."""
    path = write(tmp_path / "facts.jsonl", b'{"s": "Q1"}\n')
    before = file_identity(path)
    write(path, b'{"s": "Q2"}\n')  # same size, same mtime
    assert os.stat(path).st_mtime_ns == OLD * 10**9
    assert file_identity(path) != before


def test_cp_p_over_an_input_changes_the_key(tmp_path):
    path = write(tmp_path / "facts.jsonl", b"A" * 100)
    before = file_identity(path)
    other = write(tmp_path / "other.jsonl", b"B" * 100)
    subprocess.run(["cp", "-p", str(other), str(path)], check=True)
    assert os.stat(path).st_mtime_ns == OLD * 10**9 and os.stat(path).st_size == 100
    assert file_identity(path) != before


def test_the_same_bytes_written_again_key_the_same(tmp_path):
    """A cached step writing its output anew is no new input to the steps after it."""
    path = write(tmp_path / "rows.jsonl", b"row\n" * 10)
    before = file_identity(path)
    path.unlink()
    write(path, b"row\n" * 10, mtime=OLD + 99)
    assert file_identity(path) == before


def test_a_large_file_is_keyed_by_its_identity_on_disk(tmp_path, monkeypatch):
    monkeypatch.setattr(identity, "CONTENT_LIMIT", 10)
    path = write(tmp_path / "weights.bin", b"W" * 100)
    info = os.stat(path)
    assert file_identity(path) == [
        "stat",
        100,
        info.st_mtime_ns,
        info.st_ctime_ns,
        info.st_dev,
        info.st_ino,
    ]


def test_a_large_file_edited_with_its_time_put_back_changes_the_key(tmp_path, monkeypatch):
    """touch -r cannot set the change time back: the key of a large file holds it."""
    monkeypatch.setattr(identity, "CONTENT_LIMIT", 10)
    path = write(tmp_path / "dump.json", b"X" * 100)
    before = file_identity(path)
    time.sleep(0.01)
    with open(path, "r+b") as stream:  # edited in place: the same inode
        stream.write(b"Y")
    os.utime(path, ns=(OLD * 10**9, OLD * 10**9))
    after = file_identity(path)
    assert after[1:3] == before[1:3] and after[5] == before[5]  # size, mtime, inode kept
    assert after != before


def test_a_large_file_copied_or_extracted_is_a_new_input(tmp_path, monkeypatch):
    monkeypatch.setattr(identity, "CONTENT_LIMIT", 10)
    path = write(tmp_path / "dump.json", b"X" * 100)
    before = file_identity(path)
    shutil.copy2(path, tmp_path / "copy.json")
    os.replace(tmp_path / "copy.json", path)  # rsync -a, tar x: a new file in its place
    assert file_identity(path) != before


def test_a_hard_linked_input_edited_in_place_changes_the_key(tmp_path):
    """Edited through its other name, the input's own times may say nothing."""
    path = write(tmp_path / "facts.jsonl", b"first\n")
    os.link(path, tmp_path / "elsewhere.jsonl")
    before = file_identity(path)
    write(tmp_path / "elsewhere.jsonl", b"other\n")
    assert file_identity(path) != before


def test_a_file_is_hashed_once_per_process(tmp_path, monkeypatch):
    calls = []
    original = identity._sha256_of_stream
    monkeypatch.setattr(
        identity, "_sha256_of_stream", lambda stream: calls.append(1) or original(stream)
    )
    monkeypatch.setattr(identity, "_RECENT_NS", 0)
    path = write(tmp_path / "a.jsonl", b"a\n")
    time.sleep(0.01)
    assert file_identity(path) == file_identity(path)
    assert len(calls) == 1


def test_a_file_changed_just_now_is_hashed_again(tmp_path, monkeypatch):
    """Its times may not move again for an edit within the file system's clock tick."""
    calls = []
    original = identity._sha256_of_stream
    monkeypatch.setattr(
        identity, "_sha256_of_stream", lambda stream: calls.append(1) or original(stream)
    )
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"a\n")  # changed now: within the last two seconds
    file_identity(path)
    file_identity(path)
    assert len(calls) == 2


def test_a_pipe_is_refused_without_waiting_on_it(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="not a regular file"):
        file_identity(fifo)


def test_a_folder_is_keyed_by_every_file_in_it(tmp_path):
    folder = tmp_path / "kg"
    (folder / "part").mkdir(parents=True)
    write(folder / "facts.parquet", b"f")
    write(folder / "part" / "x.json", b"x")
    outside = tmp_path / "outside"
    outside.mkdir()
    write(outside / "big.bin", b"o")
    (folder / "linked").symlink_to(outside)  # a link to a folder is not entered
    (folder / "alias.json").symlink_to(folder / "part" / "x.json")  # a link to a file is read
    listing = tree_identity(folder)
    assert [row[0] for row in listing] == ["alias.json", "facts.parquet", "part/x.json"]
    assert listing[0][1:] == listing[2][1:]
    assert tree_identity(folder / "facts.parquet") == [
        ["facts.parquet", *file_identity(folder / "facts.parquet")]
    ]


def test_the_limit_is_64_mib():
    assert CONTENT_LIMIT == 64 * 1024 * 1024
