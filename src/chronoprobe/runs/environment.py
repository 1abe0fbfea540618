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


def installed_versions() -> dict[str, str]:
    """Every distribution installed beside chronoprobe, by normalised name (what ``pip
    freeze`` lists): the whole environment, which is the lock's when it was installed from
    it."""
    versions = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if name:
            versions.setdefault(re.sub(r"[-_.]+", "-", name).lower(), dist.version)
    return dict(sorted(versions.items()))


# the lock of a checkout, beside src/ (a wheel has none)
LOCK_FILES = ("lock/requirements.txt", "lock/no-deps.txt")
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)", re.MULTILINE)


def lock_record(installed: dict[str, str]) -> dict[str, Any] | None:
    """The checkout's lock, when chronoprobe runs from one: its files, and each locked
    package whose installed version is another (``"name": [locked, installed or None]``),
    empty when the environment is the lock's. None for an installed package (no lock)."""
    root = Path(__file__).resolve().parents[3]  # src/chronoprobe/runs/environment.py
    paths = [root / name for name in LOCK_FILES]
    if not paths[0].is_file():
        return None
    locked: dict[str, str] = {}
    for path in paths:
        if path.is_file():
            for name, version in _PIN.findall(path.read_text(encoding="utf-8")):
                locked[re.sub(r"[-_.]+", "-", name).lower()] = version
    differs = {
        name: [version, installed.get(name)]
        for name, version in sorted(locked.items())
        if installed.get(name) != version
    }
    return {"files": [str(p) for p in paths if p.is_file()], "differs": differs}


def plugins_used() -> dict[str, dict[str, str | None]]:
    """The plugin modules loaded, each with its file, the SHA-256 of it (the one every cache
    key holds) and the installed distribution that declares it, if any: what ``chronoprobe
    report`` imports again, where the same file is found."""
    from chronoprobe.core.plugins import installed_plugins
    from chronoprobe.registry import loaded_plugins

    declared = {p.module: p for p in installed_plugins().values()}
    used = {}
    for module, digest in loaded_plugins().items():
        plugin = declared.get(module)
        used[module] = {
            "sha256": digest,
            "file": getattr(sys.modules.get(module), "__file__", None),
            "distribution": f"{plugin.distribution} {plugin.version}" if plugin else None,
        }
    return used


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
    """The record of a run: chronoprobe's version, the versions of its dependencies and of
    the whole environment (with how it departs from the checkout's lock), the plugins loaded,
    the device, the seed, the commit and the time."""
    installed = installed_versions()
    return {
        "chronoprobe": __version__,
        "python": sys.version.split()[0],
        "packages": package_versions(),
        "installed": installed,
        "lock": lock_record(installed),
        "plugins": plugins_used(),
        "device": device(),
        "seed": seed,
        "git_revision": git_revision(),
        "started": datetime.now(UTC).isoformat(timespec="seconds"),
        "platform": platform.platform(),
    }
