"""Where chronoprobe keeps what it reuses across runs: step outputs, converted models, answers."""

from __future__ import annotations

import os
from pathlib import Path


def default_cache_dir() -> Path:
    if os.environ.get("CHRONOPROBE_CACHE"):
        return Path(os.environ["CHRONOPROBE_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "chronoprobe"
