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


@pytest.fixture
def machine(monkeypatch):
    """Pretend this machine has ``gpus`` CUDA devices and Apple's MPS or not."""

    def have(gpus: int, mps: bool) -> None:
        monkeypatch.setattr(torch.cuda, "device_count", lambda: gpus)
        monkeypatch.setattr(torch.backends.mps, "is_available", lambda: mps)
        monkeypatch.setattr(torch.backends.cuda, "is_built", lambda: True)

    return have


@pytest.mark.parametrize(
    ("gpus", "mps", "auto"),
    [(2, True, "cuda:0"), (0, True, "mps"), (0, False, "cpu"), (1, False, "cuda:0")],
)
def test_auto_takes_cuda_then_mps_then_the_cpu(machine, gpus, mps, auto):
    machine(gpus, mps)
    assert str(resolve_device("auto")) == auto
    assert str(resolve_device("cpu")) == "cpu"


def test_a_named_device_must_be_here(machine):
    machine(2, False)
    assert str(resolve_device("cuda:1")) == str(resolve_device("GPU:1")) == "cuda:1"
    assert str(resolve_device("cuda")) == "cuda:0"
    with pytest.raises(ValueError) as caught:
        resolve_device("cuda:2")
    assert str(caught.value) == (
        "--device cuda:2: no such device is visible; available here: cuda:0, cuda:1, cpu"
    )
    with pytest.raises(ValueError, match="available here: cuda:0, cuda:1, cpu"):
        resolve_device("mps")
    machine(0, True)
    assert str(resolve_device("mps")) == "mps"


def test_every_trainer_and_view_resolves_and_documents_devices_one_way(machine):
    """LAMA-TK memorisation took CUDA or the CPU and never MPS; every device option now says
    the same thing, in the same words."""
    from chronoprobe.core import devices
    from chronoprobe.steps import STEP_KINDS
    from chronoprobe.train.lamatk import memorize

    machine(0, True)
    assert memorize.resolve_device is devices.resolve_device
    assert str(memorize.resolve_device("auto")) == "mps"
    helps = {}
    for name in STEP_KINDS.builtin_names():
        kind = STEP_KINDS.get(name)
        models = [m.params for m in kind.variants.members()] if kind.variants else [kind.model]
        for model in models:
            if "device" in model.model_fields:
                helps[f"{name}:{model.__name__}"] = model.model_fields["device"].description
    assert len(helps) >= 8  # probe views, series, pretrain, memorize, tkg, kgqa and their evals
    assert set(helps.values()) == {devices.DEVICE_HELP}


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
