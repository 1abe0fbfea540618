"""Shared set-up for the run-engine tests: the test plugin on the path, a private cache."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

HERE = Path(__file__).parent


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Never touch the user's cache; the test plugin importable as ``plugins: [...]`` says,
    and trusted as the user's own."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("CHRONOPROBE_CACHE", str(cache))
    monkeypatch.syspath_prepend(str(HERE))
    # named by the user, so trusted: configs may list it without --trust-plugins
    monkeypatch.setenv("CHRONOPROBE_PLUGINS", "chronoprobe_test_steps")
    return cache


@pytest.fixture
def write_config(tmp_path: Path):
    def write(text: str, name: str = "exp.yaml") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    return write
