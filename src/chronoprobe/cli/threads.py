"""``--threads``, before the command (``chronoprobe --threads 1 probe ...``) or after it
(``chronoprobe probe ... --threads 1``): one option, set by one function wherever it is given."""

from __future__ import annotations

from typing import Any

import typer

THREADS_HELP = (
    "CPU threads for torch's operations. Default: OMP_NUM_THREADS where set, otherwise one per "
    "core this process may use (its affinity, capped by a container's CPU quota). Waiting "
    "threads sleep (OMP_WAIT_POLICY=PASSIVE, unless set), so a machine busy with other work "
    "slows a run by about the CPU share it lost. Before the command or after it: chronoprobe "
    "--threads 1 run experiments/demo.yaml, or chronoprobe run experiments/demo.yaml --threads 1"
)


def threads_option(**extra: Any) -> Any:
    """The ``--threads`` option (``extra``: more of typer's settings, e.g. its envvar)."""
    return typer.Option(None, "--threads", min=1, help=THREADS_HELP, **extra)


def use_threads(threads: int | None) -> None:
    """Set torch's CPU threads to ``threads``, as the root ``--threads`` does; None leaves the
    number the root chose."""
    if threads is not None:
        from chronoprobe.core.threads import configure_threads

        configure_threads(threads)
