"""Loading from the Hugging Face hub without waiting on a network that is not there.

Without a network, ``from_pretrained("roberta-base")`` retries for half a minute before it
fails, and resolving the hub's name alone can take as long where no name server answers. So
an id is judged before anything is loaded: ``HF_HUB_OFFLINE`` first, then the local Hugging
Face cache, and only then the network, asked whether the hub answers at all (a name lookup
and a connection, at most :data:`REACH_SECONDS` together). A model that is neither cached nor
reachable is refused at once, before torch is imported; one in the cache loads from it, with
no network attempt, when the hub is out of reach.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from functools import lru_cache
from pathlib import Path

HUB_HOST = "huggingface.co"
REACH_SECONDS = 1.5


def hub_offline() -> bool:
    """``HF_HUB_OFFLINE`` is set: the hub is not to be asked."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def _resolve(host: str, port: int, timeout: float) -> list | None:
    """The addresses of ``host``, or None when the name server gives none within
    ``timeout`` (``getaddrinfo`` itself has no timeout: it waits in a thread of its own)."""
    found: list = []

    def lookup() -> None:
        with contextlib.suppress(OSError):
            found.extend(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))

    worker = threading.Thread(target=lookup, daemon=True)
    worker.start()
    worker.join(timeout)
    return found or None


@lru_cache(maxsize=1)
def hub_reachable(timeout: float = REACH_SECONDS) -> bool:
    if hub_offline():
        return False
    endpoint = os.environ.get("HF_ENDPOINT", f"https://{HUB_HOST}")
    host = endpoint.split("://", 1)[-1].split("/", 1)[0]
    name, _, port = host.partition(":")
    addresses = _resolve(name, int(port or 443), timeout)
    if not addresses:
        return False
    family, kind, proto, _, address = addresses[0]
    try:
        with socket.socket(family, kind, proto) as connection:
            connection.settimeout(timeout)
            connection.connect(address)
            return True
    except OSError:
        return False


def is_hub_id(spec: str) -> bool:
    """A spec that names a hub repository rather than something on this machine."""
    return not Path(spec).expanduser().exists() and not spec.startswith((".", "/", "~"))


def in_local_cache(repo_id: str) -> bool:
    """Whether the local Hugging Face cache holds a snapshot of ``repo_id`` (a model)."""
    from huggingface_hub import constants

    snapshots = Path(constants.HF_HUB_CACHE) / f"models--{repo_id.replace('/', '--')}" / "snapshots"
    try:
        return any(snapshots.iterdir())
    except OSError:
        return False


def load_options(spec: str) -> dict:
    """Extra ``from_pretrained`` arguments: the local cache only, when the hub is not to be
    asked or out of reach (a cached model then loads with no network attempt)."""
    return {"local_files_only": True} if is_hub_id(spec) and not hub_reachable() else {}


def unreachable_hint(spec: str) -> str:
    """Why a hub id failed to load, when the hub could not be reached."""
    if is_hub_id(spec) and not hub_reachable():
        return (
            f"{spec!r} is not in the local Hugging Face cache and the hub ({HUB_HOST}) cannot "
            "be reached (or HF_HUB_OFFLINE is set); "
        )
    return ""


def missing_hub_model(repo_id: str) -> str | None:
    """Why the hub id ``repo_id`` cannot load: neither in the local cache nor reachable; None
    when it may. Asks the network only for an id the cache lacks, and only when allowed."""
    if in_local_cache(repo_id) or hub_reachable():
        return None
    return (
        f"{unreachable_hint(repo_id)}offline, pass a local directory or a package's weights "
        "(package:smollm2; `chronoprobe list models` lists the forms)"
    )
