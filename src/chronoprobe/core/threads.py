"""How many CPU threads torch's operations use, and how its idle threads wait.

Torch splits an operation between its threads, which meet at its end. OpenMP's waiting threads
spin there for a while before they sleep: on idle cores that costs nothing, but on cores busy
with other work the thread still computing must wait for a core while the others spin through
their turns, at every operation, so a small model trains many times slower, not by the share
of the CPU it lost. The ``chronoprobe`` command therefore has waiting threads sleep
(``OMP_WAIT_POLICY=PASSIVE``) and uses one thread per core it may run on, its affinity capped
by its container's CPU quota. Both are set in the environment before torch is imported, so
the processes it starts inherit them. docs/performance.md has the measurements.
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

WAIT_POLICY = "OMP_WAIT_POLICY"
NUM_THREADS = "OMP_NUM_THREADS"
CGROUP_CPU_MAX = Path("/sys/fs/cgroup/cpu.max")


def affinity_cores() -> int:
    """The cores this process may run on (``taskset``, a batch scheduler's share): torch's own
    thread count, one per core."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1  # macOS, Windows


def quota_cores(cpu_max: Path = CGROUP_CPU_MAX) -> int | None:
    """This process's cgroup (v2) CPU quota in whole cores, rounded up; None where there is
    none. A container given 2 CPUs of a 64-core host has an affinity of 64 cores."""
    try:
        quota, period = cpu_max.read_text().split()[:2]
        return None if quota == "max" else max(1, math.ceil(int(quota) / int(period)))
    except (OSError, ValueError):
        return None


def usable_cores(cpu_max: Path = CGROUP_CPU_MAX) -> int:
    """The cores this process may run on, capped by its CPU quota."""
    quota = quota_cores(cpu_max)
    return min(affinity_cores(), quota) if quota is not None else affinity_cores()


def configure_threads(threads: int | None = None, cpu_max: Path = CGROUP_CPU_MAX) -> None:
    """Set how torch's idle threads wait and, where needed, how many threads it uses, before
    torch is imported (by this process or the ones it starts).

    ``OMP_WAIT_POLICY`` stays as the user set it, PASSIVE otherwise. ``threads``
    (``--threads``) sets the thread count, in torch as well where it is imported already.
    Otherwise ``OMP_NUM_THREADS`` stays as the user set it; unset, it is set only where a CPU
    quota leaves fewer cores than torch would use (one per core of the affinity), so that
    tools that size their workers' threads themselves when it is unset (Ray) still do.
    """
    os.environ.setdefault(WAIT_POLICY, "PASSIVE")
    if threads is not None:
        os.environ[NUM_THREADS] = str(threads)
        if "torch" in sys.modules:
            sys.modules["torch"].set_num_threads(threads)
        return
    if NUM_THREADS not in os.environ and usable_cores(cpu_max) < affinity_cores():
        os.environ[NUM_THREADS] = str(usable_cores(cpu_max))
