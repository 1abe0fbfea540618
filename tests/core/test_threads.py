"""Torch's CPU threads and their wait policy: set before torch is imported, user's settings kept.

On cores busy with other work, OpenMP threads that spin while they wait made a tiny model train
up to tens of times slower (benchmarks/bench_busy.py); the command now has them sleep, and uses
a thread per usable core.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch

from chronoprobe.core import threads
from chronoprobe.core.threads import configure_threads, quota_cores, usable_cores


@pytest.fixture
def clean_env(monkeypatch):
    """No OpenMP settings of the user's, and torch's thread count restored after the test."""
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    before = torch.get_num_threads()
    yield monkeypatch
    torch.set_num_threads(before)


def cpu_max(tmp_path, text: str):
    path = tmp_path / "cpu.max"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    "text, cores",
    [
        ("200000 100000\n", 2),
        ("150000 100000\n", 2),  # 1.5 CPUs: a second thread still gets half a core
        ("50000 100000\n", 1),
        ("max 100000\n", None),
        ("", None),
        ("lots of cpu\n", None),
    ],
)
def test_a_cgroup_quota_in_whole_cores(tmp_path, text, cores):
    assert quota_cores(cpu_max(tmp_path, text)) == cores


def test_no_cgroup_file_is_no_quota(tmp_path):
    assert quota_cores(tmp_path / "absent") is None


def test_usable_cores_are_the_affinity_capped_by_the_quota(tmp_path, monkeypatch):
    monkeypatch.setattr(threads, "affinity_cores", lambda: 8)
    assert usable_cores(cpu_max(tmp_path, "300000 100000")) == 3
    assert usable_cores(cpu_max(tmp_path, "6400000 100000")) == 8
    assert usable_cores(tmp_path / "absent") == 8
    monkeypatch.undo()
    assert threads.affinity_cores() == len(os.sched_getaffinity(0))


def test_by_default_idle_threads_sleep_and_torch_keeps_its_count(clean_env, tmp_path):
    torch.set_num_threads(1)
    configure_threads(None, tmp_path / "absent")
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"
    assert "OMP_NUM_THREADS" not in os.environ  # torch's own: one per core; Ray sizes its own
    assert torch.get_num_threads() == 1  # imported already (here, by the tests): left alone


def test_a_quota_below_the_affinity_sets_the_count(clean_env, tmp_path):
    clean_env.setattr(threads, "affinity_cores", lambda: 16)
    configure_threads(None, cpu_max(tmp_path, "200000 100000"))
    assert os.environ["OMP_NUM_THREADS"] == "2"


def test_the_users_settings_are_kept(clean_env, tmp_path):
    clean_env.setenv("OMP_WAIT_POLICY", "ACTIVE")  # a machine of one's own
    clean_env.setenv("OMP_NUM_THREADS", "5")
    clean_env.setattr(threads, "affinity_cores", lambda: 16)
    configure_threads(None, cpu_max(tmp_path, "200000 100000"))
    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE" and os.environ["OMP_NUM_THREADS"] == "5"


def test_threads_given_win_and_reach_an_imported_torch(clean_env, tmp_path):
    clean_env.setenv("OMP_NUM_THREADS", "5")
    configure_threads(3, tmp_path / "absent")
    assert os.environ["OMP_NUM_THREADS"] == "3" and torch.get_num_threads() == 3
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"


CLI = """
import json, os, sys
from chronoprobe.cli.main import app
from chronoprobe.steps import COMMAND_GROUPS as GROUPS
found = []
for root, env in json.loads(sys.argv[1]):
    for name in [name for name in os.environ if name.startswith(("OMP_", "CHRONOPROBE_"))]:
        del os.environ[name]
    os.environ.update(env)
    for args in ([*root, "kg", "--help"], *([group, "--help"] for group in GROUPS)):
        try:
            app(list(args), prog_name="chronoprobe")
        except SystemExit:
            pass
    found.append({
        "torch imported": "torch" in sys.modules,
        "wait": os.environ.get("OMP_WAIT_POLICY"),
        "threads": os.environ.get("OMP_NUM_THREADS"),
    })
print(json.dumps(found))
"""
# Unset, the count is set only where a CPU quota leaves fewer cores than the affinity.
DEFAULT = None if usable_cores() == threads.affinity_cores() else str(usable_cores())
CASES = [  # root options, environment: the settings the command leaves
    ([], {}, {"wait": "PASSIVE", "threads": DEFAULT}),
    (["--threads", "3"], {}, {"wait": "PASSIVE", "threads": "3"}),
    ([], {"CHRONOPROBE_THREADS": "2"}, {"wait": "PASSIVE", "threads": "2"}),
    ([], {"OMP_WAIT_POLICY": "ACTIVE", "OMP_NUM_THREADS": "4"}, {"wait": "ACTIVE", "threads": "4"}),
    (["--threads", "1"], {"OMP_NUM_THREADS": "4"}, {"wait": "PASSIVE", "threads": "1"}),
]


def test_the_command_sets_them_before_anything_imports_torch():
    # A fresh interpreter: the root callback has run and every command group has been resolved
    # (click imports a group's module then, before the callback), and torch is still not
    # imported: the command body that imports it starts its thread pools with these settings.
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OMP_", "CHRONOPROBE_"))}
    cases = json.dumps([(root, env) for root, env, _ in CASES])
    done = subprocess.run(
        [sys.executable, "-c", CLI, cases], env=clean, capture_output=True, text=True, check=True
    )
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found == [{"torch imported": False, **expected} for _, _, expected in CASES]
