"""Weights that are damaged or hostile, and a family that contradicts the config: one line each,
and nothing in a weights file ever runs."""

from __future__ import annotations

import os
import pickle
import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from chronoprobe.core.checkpoint import metadata_of, read_tensors
from chronoprobe.models import load_model

from .conftest import make_adapter


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Path:
    """A tiny RoBERTa saved as save_pretrained writes it (safetensors)."""
    path = tmp_path_factory.mktemp("roberta")
    adapter = make_adapter("roberta")
    adapter.model.save_pretrained(path)
    adapter.tokenizer.save_pretrained(path)
    return path


def copy_of(saved: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(saved, tmp_path / "model"))


@pytest.mark.parametrize(
    ("keep", "reason"),
    [
        (0.5, "incomplete metadata, file not fully covered"),
        (0.0, "header too small"),
    ],
)
def test_truncated_safetensors_weights_are_one_line(saved, tmp_path, keep, reason):
    model = copy_of(saved, tmp_path)
    weights = model / "model.safetensors"
    data = weights.read_bytes()
    weights.write_bytes(data[: int(len(data) * keep)])
    with pytest.raises(ValueError) as caught:  # was an uncaught SafetensorError
        load_model(str(model), device="cpu")
    assert str(caught.value) == (
        f"cannot load model {str(model)!r}: its safetensors weights are damaged or cut short "
        f"(Error while deserializing header: {reason})"
    )


class _RunsCode:
    """Unpickling this calls os.system: the payload of a hostile pytorch_model.bin."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.mark.parametrize("wrapped", [False, True])
def test_a_code_running_pickle_as_weights_is_refused_and_never_runs(saved, tmp_path, wrapped):
    model = copy_of(saved, tmp_path)
    (model / "model.safetensors").unlink()
    marker = tmp_path / "payload-ran"
    payload = {"roberta.embeddings.word_embeddings.weight": _RunsCode(marker)}
    if wrapped:  # the payload inside a real torch.save zip, beside real tensors
        torch.save(
            {**load_file(str(saved / "model.safetensors")), "x": _RunsCode(marker)},
            model / "pytorch_model.bin",
        )
    else:
        (model / "pytorch_model.bin").write_bytes(pickle.dumps(payload))
    with pytest.raises(ValueError) as caught:  # was an uncaught UnpicklingError
        load_model(str(model), device="cpu")
    assert str(caught.value) == (
        f"cannot load model {str(model)!r}: its pytorch_model.bin holds more than tensors (a "
        "pickle that would run code or build other objects), and torch's weights-only "
        "unpickler refused it; nothing in it ran. Load weights you trust, preferably as "
        "safetensors"
    )
    assert not marker.exists()


def test_a_cut_pytorch_model_bin_is_one_line(saved, tmp_path):
    model = copy_of(saved, tmp_path)
    (model / "model.safetensors").unlink()
    weights = model / "pytorch_model.bin"
    torch.save(load_file(str(saved / "model.safetensors")), weights)
    assert load_model(str(model), device="cpu").family == "masked"  # whole, it loads
    weights.write_bytes(weights.read_bytes()[:2000])
    with pytest.raises(ValueError, match=r"its pytorch_model\.bin is damaged or cut short"):
        load_model(str(model), device="cpu")


def test_a_damaged_config_names_the_file_without_hub_advice(saved, tmp_path):
    model = copy_of(saved, tmp_path)
    (model / "config.json").write_text("{not json")
    with pytest.raises(ValueError) as caught:
        load_model(str(model), device="cpu")
    assert "config.json" in str(caught.value) and "offline" not in str(caught.value)


@pytest.mark.parametrize("family", ["causal", "seq2seq"])
def test_a_family_the_config_contradicts_is_refused(saved, family):
    with pytest.raises(ValueError) as caught:  # causal ran without a word
        load_model(str(saved), family=family, device="cpu")
    assert str(caught.value) == (
        f"model {str(saved)!r} is a masked model (RobertaForMaskedLM), not {family}: read as "
        f"a {family} model its answers would mean nothing; leave out --family, or pass "
        "--family masked"
    )
    assert load_model(str(saved), family="masked", device="cpu").family == "masked"


def test_checkpoint_tensor_files_cut_short_are_named(tmp_path, saved):
    path = tmp_path / "model.safetensors"
    path.write_bytes((saved / "model.safetensors").read_bytes()[:100])
    for read in (metadata_of, read_tensors):
        with pytest.raises(ValueError) as caught:
            read(path)
        assert str(caught.value).startswith(f"{path}: damaged tensor file, not read (")
