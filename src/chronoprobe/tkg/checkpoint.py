"""Checkpoint directories: weights in safetensors, the id vocabulary and the config in JSON.

    DIR/model.safetensors      the embedding tables ([re | im] rows), what downstream QA loads
    DIR/optimizer.safetensors  Adagrad's accumulators and steps (groups in its metadata)
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

from chronoprobe.atomic import atomic_write_text
from chronoprobe.core.checkpoint import (
    GROUPS,
    MODEL_FILE,
    OPTIMIZER_FILE,
    check_epoch,
    load_optimizer,
    metadata_of,
    read_config,
    read_tensors,
    save_tensors,
    save_weights,
)
from chronoprobe.errors import UserError
from chronoprobe.jsonl import read_json_object
from chronoprobe.tkg.data import SPLITS, TimeMode, TKGData, Vocab
from chronoprobe.tkg.models import TKGModel, build_model

FORMAT = "chronoprobe-tkg"
FILES = (
    MODEL_FILE,
    OPTIMIZER_FILE,
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
    # Adagrad's state_dict; None for a checkpoint of chronoprobe 0.2 (its optimizer file has
    # no parameter groups): it still evaluates and feeds QA training, but cannot be resumed
    optimizer_state: dict | None

    @property
    def epoch(self) -> int:
        return int(self.config["epoch"])

    @property
    def vocab(self) -> Vocab:
        return self.data.vocab


def save(
    directory: Path,
    model: TKGModel,
    optimizer: torch.optim.Optimizer | None,
    data: TKGData,
    config: dict,
) -> Path:
    """Write a checkpoint; ``config`` needs "epoch" and may carry anything JSON can hold."""
    epoch = int(config["epoch"])
    directory = save_weights(directory, model, optimizer, FORMAT, epoch)
    splits = {name: torch.from_numpy(data.split(name)).to(torch.int32) for name in SPLITS}
    save_tensors(directory / FILES[2], splits, FORMAT, epoch)
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


def load(directory: Path, device: torch.device | str = "cpu") -> Checkpoint:
    """A checkpoint directory back; errors name the file and what is wrong with it."""
    directory = Path(directory)
    config = read_config(directory, FORMAT, FILES, "TKG")
    vocab_json = read_json_object(directory / "vocab.json")
    try:
        vocab = Vocab.from_json(vocab_json)
        mode = TimeMode(config["mode"])
        model = build_model(config["model"])
    except (KeyError, TypeError, ValueError) as err:
        raise UserError(f"{directory}: inconsistent checkpoint JSON: {err!r}") from err
    remedy = "train again from scratch or restore the directory"
    for name in TENSOR_FILES:
        check_epoch(directory / name, config.get("epoch"), directory / FILES[4], remedy)
    model.load_state_dict(read_tensors(directory / FILES[0]))
    model.to(device)
    optimizer = directory / FILES[1]
    optimizer_state = load_optimizer(optimizer) if GROUPS in metadata_of(optimizer) else None
    splits = read_tensors(directory / FILES[2])
    data = TKGData(
        vocab,
        mode,
        *(splits[name].to(torch.int64).numpy() for name in SPLITS),
        skipped=config["skipped"],
        origin=config.get("split_origin", "seeded"),
        kg_fingerprint=config.get("kg_fingerprint"),
    )
    return Checkpoint(model, data, config, optimizer_state)
