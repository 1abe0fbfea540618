"""chronoprobe as users install it, with no checkout: the sdist and the wheel are built from
the files a release holds, installed into a fresh venv, and run from another folder with no
PYTHONPATH, so that a module, a config or a data file missing from the package fails here.

The fresh venv gets its dependencies without a network and in about a second: its
site-packages is made of links to the entries of the site-packages this suite runs in (the
lock's, or test-latest's, or test-oldest's: whatever is under test), chronoprobe's own entries
(its editable install) left out, so the only chronoprobe it can import is the one installed
into it, by pip with --no-deps --no-index. The sdist is installed without build isolation (an
isolated build would fetch setuptools from the registry): the setuptools of that same
environment builds it, compiling the dump scanner.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]

TINY = """
name: tiny
steps:
  - {id: sample, kind: kg, params: {source: sample}}
  - id: drift
    kind: build
    inputs: {kg: sample}
    params: {family: drift, first: "2010", last: "2012", relations: [P54]}
  - {id: report, kind: report}
"""


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    """An sdist built from the release's files (pyproject.toml, README.md, src/), and the
    wheel built from that sdist, as `uv build` makes them."""
    uv = pytest.importorskip("uv", reason="uv is not installed: `make` installs it (dev extra)")
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    leftovers = shutil.ignore_patterns("__pycache__", "*.so", "*.egg-info")
    shutil.copytree(ROOT / "src", source / "src", ignore=leftovers)
    out = tmp_path_factory.mktemp("dist")
    build = [uv.find_uv_bin(), "build", "--offline", "--no-build-isolation", "--quiet"]
    built = subprocess.run(
        [*build, "--python", sys.executable, "--out-dir", str(out), str(source)],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    return out


def fresh_venv(folder: Path) -> Path:
    """A new venv whose site-packages links to this environment's, less chronoprobe."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    python = folder / "bin" / "python"
    site = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    ours = Path(sysconfig.get_path("purelib"))
    for entry in ours.iterdir():
        if "chronoprobe" not in entry.name.lower() and not (site / entry.name).exists():
            (site / entry.name).symlink_to(entry)
    return python


def pip_install(python: Path, target: Path, *flags: str) -> None:
    installed = subprocess.run(
        [python, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", *flags, target],
        capture_output=True,
        text=True,
        env=clean_env(),
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr


def clean_env(**extra: str) -> dict[str, str]:
    """This environment less anything that would put the checkout on the path."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return {**env, "PIP_DISABLE_PIP_VERSION_CHECK": "1", **extra}


def run(command: list, cwd: Path, **env: str) -> str:
    done = subprocess.run(
        [str(c) for c in command], cwd=cwd, capture_output=True, text=True, env=clean_env(**env)
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


@pytest.mark.slow
def test_the_wheel_installs_and_runs_a_job_with_no_checkout(dist, tmp_path):
    wheels = list(dist.glob(f"chronoprobe-{VERSION}-*.whl"))
    assert len(wheels) == 1 and len(list(dist.glob(f"chronoprobe-{VERSION}.tar.gz"))) == 1
    python = fresh_venv(tmp_path / "venv")
    pip_install(python, wheels[0])
    work = tmp_path / "work"  # elsewhere: no checkout below or above
    work.mkdir()
    (work / "tiny.yaml").write_text(TINY)
    command = tmp_path / "venv" / "bin" / "chronoprobe"
    assert run([command, "--version"], work).strip() == f"chronoprobe {VERSION}"
    where = run([python, "-c", "import chronoprobe; print(chronoprobe.__file__)"], work)
    assert Path(where.strip()).is_relative_to(tmp_path / "venv")

    cache = str(tmp_path / "cache")
    run([command, "run", "tiny.yaml", "-o", "run"], work, CHRONOPROBE_CACHE=cache)
    run_dir = work / "run"
    rows = (run_dir / "steps" / "drift" / "examples.jsonl").read_text().splitlines()
    assert rows and all(json.loads(row)["relation"] == "P54" for row in rows)
    assert "chronoprobe report" in (run_dir / "report.html").read_text()
    environment = json.loads((run_dir / "environment.json").read_text())
    assert environment["chronoprobe"] == VERSION and environment["lock"] is None

    # the main job's config ships inside: it validates, and `run demo` / `demo` find it
    check = (
        "from chronoprobe.runs.config import load_experiment;"
        "from chronoprobe.runs.packaged import packaged_configs;"
        "print(len(load_experiment(packaged_configs()['demo']).config.steps))"
    )
    steps = (ROOT / "experiments" / "demo.yaml").read_text().count("\n  - id: ")
    assert run([python, "-c", check], work).strip() == str(steps)
    assert "Run the main job" in run([command, "demo", "--help"], work)


@pytest.mark.slow
def test_the_sdist_installs_and_compiles_the_scanner(dist, tmp_path):
    if shutil.which(sysconfig.get_config_var("CC").split()[0]) is None:
        pytest.skip("no C compiler: the scanner is optional, and left out")
    python = fresh_venv(tmp_path / "venv")
    pip_install(python, dist / f"chronoprobe-{VERSION}.tar.gz", "--no-build-isolation")
    found = run(
        [python, "-c", "import chronoprobe.kg.io._dumpscan as m; print(m.__file__)"], tmp_path
    )
    assert Path(found.strip()).is_relative_to(tmp_path / "venv")
