from __future__ import annotations

import json

import pytest
import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file

from chronoprobe.tkg import checkpoint
from chronoprobe.tkg.data import TimeMode, split_kg
from chronoprobe.tkg.evaluate import evaluate
from chronoprobe.tkg.params import TKGTrainParams
from chronoprobe.tkg.train import full_softmax_cross_entropy, train


def test_full_softmax_matches_cross_entropy_value_and_gradients():
    torch.manual_seed(0)
    queries = torch.randn(37, 6, dtype=torch.float64, requires_grad=True)
    table = torch.randn(11, 6, dtype=torch.float64, requires_grad=True)
    targets = torch.randint(0, 11, (37,))
    ours = full_softmax_cross_entropy(queries, table, targets, chunk=5)
    (3 * ours).backward()
    grads = queries.grad.clone(), table.grad.clone()
    queries.grad, table.grad = None, None
    reference = F.cross_entropy(queries @ table.t(), targets)
    (3 * reference).backward()
    torch.testing.assert_close(ours, reference)
    torch.testing.assert_close(grads[0], queries.grad)
    torch.testing.assert_close(grads[1], table.grad)


@pytest.fixture(scope="module")
def data(synth_kg):
    return split_kg(synth_kg, valid_fraction=0.05, test_fraction=0.05, seed=0)


def _config(**changes) -> TKGTrainParams:
    base = {"arch": "tcomplex", "rank": 16, "epochs": 3, "batch_size": 500, "device": "cpu"}
    return TKGTrainParams(**(base | changes))


@pytest.mark.parametrize("model", ["tcomplex", "complex"])
def test_training_drives_mrr_far_above_chance(data, model):
    n = len(data.vocab.entities)
    chance = sum(1 / k for k in range(1, n + 1)) / n  # MRR of a uniformly random ranking
    before = train(data, _config(arch=model, epochs=0), progress=False).metrics
    after = train(data, _config(arch=model, epochs=4, time_loss=1.0), progress=False)
    assert before["mrr"] < 3 * chance
    assert after.metrics["mrr"] > 10 * chance  # chance is about 0.009 here
    assert after.metrics["hits@10"] > 0.3
    losses = [row["loss"] for row in after.history]
    assert losses == sorted(losses, reverse=True)
    if model == "tcomplex":  # held-out years are hard to guess; chance is 1 in 75
        assert after.metrics["time_accuracy"] > 3 / data.vocab.n_times
        assert after.metrics["time_mrr"] > 1.5 * before["time_mrr"]


def test_resume_after_interruption_equals_an_uninterrupted_run(data, tmp_path):
    config = _config(arch="timeplex", epochs=3, rank=8, batch_size=1000)
    straight = train(data, config, tmp_path / "a", progress=False)

    class Interrupt(Exception):
        pass

    def stop_after_two(message: str) -> None:
        if message.startswith("epoch 2:"):
            raise Interrupt  # as Ctrl-C would, once epoch 2 is logged, before it is saved

    out = tmp_path / "b"
    with pytest.raises(Interrupt):
        train(data, config, out, progress=False, log=stop_after_two)
    assert checkpoint.load(out).epoch == 1
    resumed = train(data, config, out, progress=False)
    assert resumed.started_at_epoch == 1
    for name, tensor in straight.model.state_dict().items():
        assert torch.equal(tensor, resumed.model.state_dict()[name]), name
    assert resumed.metrics == straight.metrics
    assert [r["loss"] for r in resumed.history] == [r["loss"] for r in straight.history]


def test_sampled_mode_resumes_exactly_too(synth_kg, tmp_path):
    data = split_kg(synth_kg, seed=1, mode=TimeMode.sampled)
    straight = train(data, _config(epochs=2), progress=False)
    train(data, _config(epochs=1), tmp_path, progress=False)
    resumed = train(data, _config(epochs=2), tmp_path, progress=False)
    assert torch.equal(straight.model.time, resumed.model.time)


def test_checkpoint_round_trip(data, tmp_path):
    result = train(data, _config(arch="tntcomplex", epochs=1), tmp_path, progress=False)
    saved = checkpoint.load(tmp_path)
    assert saved.epoch == 1 and saved.config["train"]["arch"] == "tntcomplex"
    assert saved.vocab == data.vocab and saved.data.mode is data.mode
    for name in ("train", "valid", "test"):
        assert (saved.data.split(name) == data.split(name)).all()
    for name, tensor in result.model.state_dict().items():
        assert torch.equal(tensor, saved.model.state_dict()[name])
    assert evaluate(saved.model, saved.data) == result.metrics
    vocab = json.loads((tmp_path / "vocab.json").read_text())
    assert vocab["years"][0] == data.vocab.first_year and len(vocab["entities"]) == len(
        data.vocab.entities
    )


def test_a_save_interrupted_between_files_is_detected(data, tmp_path):
    train(data, _config(epochs=1), tmp_path, progress=False)
    path = tmp_path / "model.safetensors"
    save_file(load_file(path), path, metadata={"format": "chronoprobe-tkg", "epoch": "7"})
    with pytest.raises(ValueError, match=r"model\.safetensors: holds another epoch"):
        checkpoint.load(tmp_path)


def test_resuming_into_another_models_checkpoint_is_refused(data, tmp_path):
    train(data, _config(epochs=1), tmp_path, progress=False)
    with pytest.raises(ValueError, match="holds a checkpoint of another model or data"):
        train(data, _config(epochs=1, rank=8), tmp_path, progress=False)
    (tmp_path / "config.json").write_text("{oops")
    with pytest.raises(ValueError, match=r"config.json:1: invalid JSON"):
        checkpoint.load(tmp_path)


def test_zero_epochs_still_writes_a_checkpoint_that_resumes(data, tmp_path):
    config = _config(arch="tcomplex", epochs=0, rank=8)
    untrained = train(data, config, tmp_path, progress=False)
    saved = checkpoint.load(tmp_path, torch.device("cpu"))
    assert saved.epoch == 0
    again = train(data, _config(arch="tcomplex", epochs=1, rank=8), tmp_path, progress=False)
    assert again.started_at_epoch == 0 and len(again.history) == 1
    assert untrained.metrics["mrr"] != again.metrics["mrr"]


def test_a_checkpoint_of_chronoprobe_0_2_evaluates_but_does_not_resume(data, tmp_path):
    trained = train(data, _config(epochs=1), tmp_path, progress=False)
    path = tmp_path / "optimizer.safetensors"  # 0.2 kept no parameter groups in its metadata
    save_file(load_file(path), path, metadata={"format": "chronoprobe-tkg", "epoch": "1"})
    saved = checkpoint.load(tmp_path)
    assert saved.optimizer_state is None
    assert evaluate(saved.model, saved.data)["mrr"] == trained.metrics["mrr"]
    with pytest.raises(ValueError, match="an older chronoprobe, whose optimizer state cannot"):
        train(data, _config(epochs=2), tmp_path, progress=False)
