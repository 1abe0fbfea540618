"""The environment record of a run: enough to tell two runs' results apart and to redo one."""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from chronoprobe.version import __version__


def package_versions() -> dict[str, str | None]:
    """Versions of chronoprobe's declared dependencies, as installed (None when absent)."""
    try:
        requirements = metadata.requires("chronoprobe") or []
    except metadata.PackageNotFoundError:
        requirements = []
    names = sorted(
        {re.split(r"[\s;<>=!~\[(]", r, maxsplit=1)[0] for r in requirements if "extra ==" not in r}
    )
    versions: dict[str, str | None] = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def device() -> str:
    """``cpu`` or ``cuda:0 (name)``, without importing torch just to ask (it costs seconds)."""
    if os.environ.get("CUDA_VISIBLE_DEVICES", "unset").strip() in ("", "-1"):
        return "cpu"
    torch = sys.modules.get("torch")
    if torch is not None:
        if torch.cuda.is_available():
            return f"cuda:0 ({torch.cuda.get_device_name(0)})"
        return "cpu"
    if shutil.which("nvidia-smi"):
        try:
            out = subprocess.run(
                ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                capture_output=True,
                text=True,
                timeout=10,
                check=True,
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return "cpu"
        if out:
            return f"cuda:0 ({out.splitlines()[0]})"
    return "cpu"


def git_revision() -> str | None:
    """The commit of the chronoprobe checkout in use, or None outside a git checkout."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=Path(__file__).parent,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def environment(seed: int) -> dict[str, Any]:
    return {
        "chronoprobe": __version__,
        "python": sys.version.split()[0],
        "packages": package_versions(),
        "device": device(),
        "seed": seed,
        "git_revision": git_revision(),
        "started": datetime.now(UTC).isoformat(timespec="seconds"),
        "platform": platform.platform(),
    }
