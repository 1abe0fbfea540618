"""Ray, the optional engine of work beyond one process (``--engine ray``).

Ray is an extra (``pip install 'chronoprobe[ray]'``) and is imported only here, only when an
operation runs with ``--engine ray``: chronoprobe starts and works without it.
"""

from __future__ import annotations

from typing import Any

from chronoprobe.errors import UserError

INSTALL = "pip install 'chronoprobe[ray]'"


def connect(address: str | None = None) -> Any:
    """The ``ray`` module, connected: to a session this process already holds, else to the
    cluster at ``address`` (``auto``: the one this machine belongs to), else to a new local
    instance on this machine's cores. Raises ValueError saying how to install Ray without it."""
    try:
        import ray
    except ImportError:
        raise UserError(f"--engine ray needs Ray, which is not installed: {INSTALL}") from None
    if not ray.is_initialized():
        # a local instance starts without the dashboard; a cluster's options are its own
        local = {} if address else {"include_dashboard": False}
        ray.init(address=address, logging_level="warning", **local)
    return ray


def cluster_cpus(ray: Any) -> int:
    """The CPUs of the connected cluster (at least one)."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))
