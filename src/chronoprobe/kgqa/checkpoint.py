"""KGQA checkpoint directories: weights in safetensors, everything else in JSON.

    DIR/model.safetensors      the whole QA model: encoder, projections, the (frozen) tables
    DIR/optimizer.safetensors  Adam's moments, so training resumes exactly
    DIR/vocab.json             the answer candidates: entity ids, then years
    DIR/encoder.json           the encoder's spec and config; DIR/tokenizer/ its tokenizer
    DIR/config.json            model, training and data options, epoch, per-epoch history
    DIR/best.safetensors       the model at its best epoch on the valid split (``best_epoch``)

The frozen TKG tables are copied in, so evaluation needs neither the TKG checkpoint nor a model
hub. As for TKG checkpoints, config.json is written last and the tensor files carry the epoch,
so a save cut short between files is detected instead of resumed from.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import torch

from chronoprobe.atomic import atomic_write_text
from chronoprobe.core import checkpoint as files
from chronoprobe.errors import UserError
from chronoprobe.jsonl import read_json_object
from chronoprobe.kgqa.data import AnswerVocab
from chronoprobe.kgqa.encoder import load_encoder
from chronoprobe.kgqa.models import QAModel, build_qa_model

FORMAT = "chronoprobe-kgqa"
MODEL, OPTIMIZER, CONFIG = files.MODEL_FILE, files.OPTIMIZER_FILE, files.CONFIG_FILE
VOCAB, BEST = "vocab.json", "best.safetensors"


@dataclass
class Checkpoint:
    model: QAModel
    vocab: AnswerVocab
    config: dict  # "model", "train", "data", "epoch", "history"
    optimizer_state: dict

    @property
    def epoch(self) -> int:
        return int(self.config["epoch"])


def shape_of(model: QAModel) -> dict:
    """What :func:`load` needs to rebuild ``model`` before loading its weights."""
    learned = isinstance(getattr(model, "time", None), torch.nn.Parameter)
    return {
        "name": model.name,
        "n_entities": model.n_entities,
        "n_times": model.n_times,
        "width": model.width,
        "learned_time": learned,
        "dropout": model.dropout.p,
    }


def save(
    directory: Path,
    model: QAModel,
    optimizer: torch.optim.Optimizer | None,
    vocab: AnswerVocab,
    config: dict,
) -> Path:
    """Write a checkpoint; ``config`` needs "epoch" and may carry anything JSON can hold."""
    directory = files.save_weights(directory, model, optimizer, FORMAT, int(config["epoch"]))
    atomic_write_text(directory / VOCAB, json.dumps(vocab.to_json()) + "\n")
    model.encoder.save(directory)
    body = {"format": FORMAT, "model": shape_of(model), **config}
    atomic_write_text(directory / CONFIG, json.dumps(body, indent=2) + "\n")
    return directory


def save_best(directory: Path, model: QAModel, epoch: int) -> None:
    """Keep ``model`` as the best so far; config.json's ``best_epoch`` names it once saved."""
    Path(directory).mkdir(parents=True, exist_ok=True)
    files.save_tensors(Path(directory) / BEST, dict(model.state_dict()), FORMAT, epoch)


def load_best(directory: Path, model: QAModel, epoch: int) -> None:
    """Put the weights ``save_best`` kept for ``epoch`` into ``model``."""
    path = Path(directory) / BEST
    if not path.is_file():
        raise FileNotFoundError(f"{path}: missing, but config.json names best epoch {epoch}")
    saved = files.metadata_of(path).get("epoch")
    if saved != str(epoch):
        raise UserError(f"{path}: holds epoch {saved}, config.json names best epoch {epoch}")
    model.load_state_dict(files.read_tensors(path))


def selected_epoch(config: dict) -> int:
    """The epoch whose model is tested: the best on the valid split unless ``select: last``."""
    best = config.get("best_epoch")
    if config.get("train", {}).get("select", "best-valid") == "best-valid" and best is not None:
        return int(best)
    return int(config["epoch"])


def exists(directory: Path) -> bool:
    return (Path(directory) / CONFIG).is_file()


def load(directory: Path, device: torch.device | str = "cpu", selected: bool = False) -> Checkpoint:
    """A checkpoint directory back; errors name the file and what is wrong with it.

    The model holds the last epoch's weights (to resume from), or with ``selected`` those of
    the epoch training tested (see :func:`selected_epoch`).
    """
    directory = Path(directory)
    config = files.read_config(directory, FORMAT, (MODEL, OPTIMIZER, VOCAB), "KGQA")
    try:
        vocab = AnswerVocab.from_json(read_json_object(directory / VOCAB))
        shape = config["model"]
        entity = torch.zeros(shape["n_entities"], shape["width"])
        time = None if shape["learned_time"] else torch.zeros(shape["n_times"], shape["width"])
        model = build_qa_model(
            shape["name"], load_encoder(directory), entity, time, shape["n_times"], shape["dropout"]
        )
    except (KeyError, TypeError) as err:
        raise UserError(f"{directory}: inconsistent checkpoint JSON: {err!r}") from err
    remedy = "train again with --no-resume or restore the directory"
    for name in (MODEL, OPTIMIZER):
        files.check_epoch(directory / name, config.get("epoch"), directory / CONFIG, remedy)
    model.load_state_dict(files.read_tensors(directory / MODEL))
    if selected and selected_epoch(config) != int(config["epoch"]):
        load_best(directory, model, selected_epoch(config))
    model.to(device)
    state = files.load_optimizer(directory / OPTIMIZER)
    return Checkpoint(model, vocab, config, state)
