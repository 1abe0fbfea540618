"""Loading from the Hugging Face hub without waiting on a network that is not there.

Without a network, ``from_pretrained("roberta-base")`` retries for half a minute before it
fails. Asking first whether the hub answers at all (about a second when it does not) lets a
load go straight to the local Hugging Face cache, and fail at once with a clear message when
the model is not there either. ``HF_HUB_OFFLINE=1`` skips the question.
"""

from __future__ import annotations

import os
import socket
from functools import lru_cache
from pathlib import Path

HUB_HOST = "huggingface.co"


@lru_cache(maxsize=1)
def hub_reachable(timeout: float = 1.5) -> bool:
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        return False
    endpoint = os.environ.get("HF_ENDPOINT", f"https://{HUB_HOST}")
    host = endpoint.split("://", 1)[-1].split("/", 1)[0]
    name, _, port = host.partition(":")
    try:
        with socket.create_connection((name, int(port or 443)), timeout=timeout):
            return True
    except OSError:
        return False


def is_hub_id(spec: str) -> bool:
    """A spec that names a hub repository rather than something on this machine."""
    return not Path(spec).expanduser().exists() and not spec.startswith((".", "/", "~"))


def load_options(spec: str) -> dict:
    """Extra ``from_pretrained`` arguments: the local cache only, when the hub is out of reach."""
    return {"local_files_only": True} if is_hub_id(spec) and not hub_reachable() else {}


def unreachable_hint(spec: str) -> str:
    """Why a hub id failed to load, when the hub could not be reached."""
    if is_hub_id(spec) and not hub_reachable():
        return (
            f"{spec!r} is not in the local Hugging Face cache and the hub ({HUB_HOST}) cannot "
            "be reached (or HF_HUB_OFFLINE is set); "
        )
    return ""
