"""Atomic writes: the target is the old file or the new one, and no temporary file survives."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from chronoprobe.atomic import atomic_path, atomic_write_text


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def test_replaces_target_on_success(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old")
    with atomic_path(target) as tmp:
        assert tmp.parent == tmp_path and tmp != target
        tmp.write_text("new")
        assert target.read_text() == "old"  # nothing visible until the block ends
    assert target.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_exception_leaves_old_file_and_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError, match="disk full"), atomic_path(target) as tmp:
        tmp.write_text("half of the n")
        raise RuntimeError("disk full")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_exception_without_old_file_creates_nothing(tmp_path: Path) -> None:
    target = tmp_path / "new.txt"
    with pytest.raises(KeyboardInterrupt), atomic_path(target):
        raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []


def test_write_text_creates_parents(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "c.json"
    atomic_write_text(target, '{"é": 1}\n')
    assert target.read_bytes() == '{"é": 1}\n'.encode()
    atomic_write_text(str(target), "second\n")
    assert target.read_text() == "second\n"
    assert [p.name for p in target.parent.iterdir()] == ["c.json"]


def test_new_files_follow_the_umask(tmp_path: Path, umask_022: None) -> None:
    # Failed before: mkstemp's private 0600 mode leaked into every output file.
    target = tmp_path / "shared.txt"
    atomic_write_text(target, "x")
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
