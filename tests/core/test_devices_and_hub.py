"""Everyday mistakes get one clear line: a GPU that is not there, a hub that cannot be reached."""

from __future__ import annotations

import pytest
import torch

from chronoprobe.core import hub
from chronoprobe.core.devices import resolve_device
from chronoprobe.models.spec import load_model


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
@pytest.mark.parametrize("name", ["cuda", "gpu", "cuda:1"])
def test_a_missing_gpu_is_one_line_naming_what_is_there(name):
    with pytest.raises(ValueError) as caught:
        resolve_device(name)
    message = str(caught.value)
    assert message.startswith(f"--device {name}: ")
    assert message.endswith("available here: cpu") or "available here: mps, cpu" in message


def test_auto_and_cpu():
    assert resolve_device("cpu").type == "cpu"
    expected = "cuda" if torch.cuda.is_available() else None
    assert resolve_device("auto").type in {expected, "mps", "cpu"} - {None}


def test_not_a_device_name():
    with pytest.raises(ValueError, match="not a device name"):
        resolve_device("tpu-v9")


def test_an_unreachable_hub_fails_at_once_with_the_reason(monkeypatch):
    """The message comes from the local-cache-only load, which makes no network attempt."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    hub.hub_reachable.cache_clear()
    try:
        with pytest.raises(ValueError) as caught:
            load_model("no-such-org/no-such-model-xyz", device="cpu")
    finally:
        hub.hub_reachable.cache_clear()
    assert "not in the local Hugging Face cache and the hub (huggingface.co) cannot be reached" in (
        str(caught.value)
    )
