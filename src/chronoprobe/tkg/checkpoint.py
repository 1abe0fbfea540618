"""Checkpoint directories: weights in safetensors, the id vocabulary and the config in JSON.

    DIR/model.safetensors      the embedding tables ([re | im] rows), what downstream QA loads
    DIR/optimizer.safetensors  Adagrad's accumulators, so training resumes exactly
    DIR/splits.safetensors     the train/valid/test facts as (s, r, o, first, last) index rows
    DIR/vocab.json             entity ids, relation ids and years, in row order
    DIR/config.json            model shape, training and data options, epoch, history

Every file is written atomically and config.json last; the tensor files carry the epoch in
their metadata so a save interrupted between files is detected instead of resumed from. The
splits travel with the weights so that evaluation needs no access to the KG it came from.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import torch
from safetensors.torch import load_file, safe_open, save_file

from chronoprobe.atomic import atomic_path, atomic_write_text
from chronoprobe.jsonl import read_json_object
from chronoprobe.tkg.data import SPLITS, TimeMode, TKGData, Vocab
from chronoprobe.tkg.models import TKGModel, build_model

FORMAT = "chronoprobe-tkg"
FILES = (
    "model.safetensors",
    "optimizer.safetensors",
    "splits.safetensors",
    "vocab.json",
    "config.json",
)
TENSOR_FILES = FILES[:3]


@dataclass
class Checkpoint:
    model: TKGModel
    data: TKGData
    config: dict  # "model", "train", "data", "epoch", "history"
    optimizer_state: dict[str, torch.Tensor]  # parameter name -> Adagrad sum; "step/<name>"

    @property
    def epoch(self) -> int:
        return int(self.config["epoch"])

    @property
    def vocab(self) -> Vocab:
        return self.data.vocab


def _save_tensors(tensors: dict[str, torch.Tensor], path: Path, epoch: int) -> None:
    contiguous = {k: v.detach().to("cpu").contiguous() for k, v in tensors.items()}
    with atomic_path(path) as tmp:
        save_file(contiguous, str(tmp), metadata={"format": FORMAT, "epoch": str(epoch)})


def optimizer_tensors(model: TKGModel, optimizer: torch.optim.Optimizer) -> dict[str, torch.Tensor]:
    """Adagrad's per-parameter state, keyed by parameter name (stable across processes)."""
    tensors = {}
    for name, parameter in model.named_parameters():
        state = optimizer.state.get(parameter, {})
        if "sum" in state:
            tensors[name] = state["sum"]
            tensors[f"step/{name}"] = torch.as_tensor(state["step"], dtype=torch.float32).reshape(1)
    return tensors


def restore_optimizer(
    model: TKGModel, optimizer: torch.optim.Optimizer, tensors: dict[str, torch.Tensor]
) -> None:
    for name, parameter in model.named_parameters():
        if name in tensors:
            state = optimizer.state[parameter]
            state["sum"] = tensors[name].to(parameter.device, parameter.dtype)
            state["step"] = tensors[f"step/{name}"].reshape(()).clone()


def save(
    directory: Path,
    model: TKGModel,
    optimizer: torch.optim.Optimizer | None,
    data: TKGData,
    config: dict,
) -> Path:
    """Write a checkpoint; ``config`` needs "epoch" and may carry anything JSON can hold."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    epoch = int(config["epoch"])
    _save_tensors(dict(model.state_dict()), directory / FILES[0], epoch)
    state = optimizer_tensors(model, optimizer) if optimizer is not None else {}
    _save_tensors(state, directory / FILES[1], epoch)
    splits = {name: torch.from_numpy(data.split(name)).to(torch.int32) for name in SPLITS}
    _save_tensors(splits, directory / FILES[2], epoch)
    atomic_write_text(directory / FILES[3], json.dumps(data.vocab.to_json()) + "\n")
    body = {
        "format": FORMAT,
        "model": model.config(),
        "mode": str(data.mode),
        "skipped": data.skipped,
        "split_origin": data.origin,
        "kg_fingerprint": data.kg_fingerprint,
        **config,
    }
    atomic_write_text(directory / FILES[4], json.dumps(body, indent=2) + "\n")
    return directory


def exists(directory: Path) -> bool:
    return (Path(directory) / "config.json").is_file()


def _epoch_of(path: Path) -> int:
    with safe_open(str(path), framework="pt") as handle:
        return int((handle.metadata() or {}).get("epoch", -1))


def load(directory: Path, device: torch.device | str = "cpu") -> Checkpoint:
    """A checkpoint directory back; errors name the file and what is wrong with it."""
    directory = Path(directory)
    if not exists(directory):
        raise FileNotFoundError(
            f"{directory}: not a TKG checkpoint (no config.json); "
            "create one with `chronoprobe tkg train`"
        )
    for name in FILES:
        if not (directory / name).is_file():
            raise FileNotFoundError(f"{directory / name}: missing; not a complete TKG checkpoint")
    config = read_json_object(directory / "config.json")
    vocab_json = read_json_object(directory / "vocab.json")
    if config.get("format") != FORMAT:
        raise ValueError(
            f"{directory / 'config.json'}: format is {config.get('format')!r}, not {FORMAT!r}"
        )
    try:
        vocab = Vocab.from_json(vocab_json)
        mode = TimeMode(config["mode"])
        model = build_model(config["model"])
    except (KeyError, TypeError, ValueError) as err:
        raise ValueError(f"{directory}: inconsistent checkpoint JSON: {err!r}") from err
    for name in TENSOR_FILES:
        if _epoch_of(directory / name) != config.get("epoch"):
            raise ValueError(
                f"{directory / name}: holds another epoch than config.json (a save was "
                "interrupted); train again from scratch or restore the directory"
            )
    model.load_state_dict(load_file(str(directory / FILES[0])))
    model.to(device)
    optimizer_state = load_file(str(directory / FILES[1]))
    splits = load_file(str(directory / FILES[2]))
    data = TKGData(
        vocab,
        mode,
        *(splits[name].to(torch.int64).numpy() for name in SPLITS),
        skipped=config["skipped"],
        origin=config.get("split_origin", "seeded"),
        kg_fingerprint=config.get("kg_fingerprint"),
    )
    return Checkpoint(model, data, config, optimizer_state)
