"""Checkpoint primitives: an optimizer's state survives the flat safetensors form exactly, and
a tensor file of another epoch than its checkpoint's JSON is refused."""

from __future__ import annotations

import copy

import pytest
import torch

from chronoprobe.core.checkpoint import (
    check_epoch,
    load_optimizer,
    save_optimizer,
    save_tensors,
)


def _steps(model: torch.nn.Module, optimizer: torch.optim.Optimizer, seeds: range) -> None:
    for seed in seeds:
        inputs = torch.randn(5, 4, generator=torch.Generator().manual_seed(seed))
        optimizer.zero_grad()
        model(inputs).square().mean().backward()
        optimizer.step()


@pytest.mark.parametrize(
    "make",
    [
        lambda params: torch.optim.Adagrad(params, lr=0.1),
        lambda params: torch.optim.AdamW(params, lr=0.01, betas=(0.9, 0.98), foreach=True),
    ],
    ids=["adagrad", "adamw"],
)
def test_an_optimizer_resumed_from_its_file_steps_exactly_as_the_original(tmp_path, make):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Linear(3, 2))
    optimizer = make(model.parameters())
    _steps(model, optimizer, range(3))
    save_optimizer(tmp_path / "optimizer.safetensors", optimizer, "test-format", 3)
    resumed_model = copy.deepcopy(model)
    resumed = make(resumed_model.parameters())
    resumed.load_state_dict(load_optimizer(tmp_path / "optimizer.safetensors"))
    _steps(model, optimizer, range(3, 6))
    _steps(resumed_model, resumed, range(3, 6))
    for name, tensor in model.state_dict().items():
        assert torch.equal(tensor, resumed_model.state_dict()[name]), name


def test_a_tensor_file_of_another_epoch_is_refused(tmp_path):
    path = tmp_path / "model.safetensors"
    save_tensors(path, {"w": torch.ones(2)}, "test-format", 4)
    check_epoch(path, 4, tmp_path / "config.json", "train again")
    with pytest.raises(
        ValueError,
        match=r"model\.safetensors: holds another epoch than config\.json \(a save was "
        r"interrupted\); train again$",
    ):
        check_epoch(path, 5, tmp_path / "config.json", "train again")


def test_an_optimizer_file_without_its_groups_is_refused(tmp_path):
    path = tmp_path / "optimizer.safetensors"
    save_tensors(path, {"entity": torch.ones(2), "step/entity": torch.ones(1)}, "test-format", 1)
    with pytest.raises(ValueError, match=r"optimizer\.safetensors: no parameter groups"):
        load_optimizer(path)
