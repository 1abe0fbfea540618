"""Checkpoint directories for memorisation runs, one per epoch, each complete or absent.

    OUT/last                              the name of the newest complete checkpoint
    OUT/checkpoints/epoch-0007/
        config.json, model.safetensors    the model (Hugging Face layout, safetensors weights)
        tokenizer/                        the word tokenizer
        entity_vocab.json                 entities (with labels) and years, in token order
        train.json                        options, epoch, step, loss history, symbol offset
        optimizer.safetensors             AdamW's state, its parameter groups in the metadata
                                          (the learning rate schedule follows from the step)

A checkpoint is written into a hidden temporary directory and renamed into place, then ``last``
is replaced atomically: a crash leaves the previous checkpoint as the newest one.
"""

from __future__ import annotations

import json
import secrets
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import torch
from transformers import AutoModelForMaskedLM, AutoTokenizer, PreTrainedModel

from chronoprobe.atomic import atomic_write_text
from chronoprobe.core.checkpoint import OPTIMIZER_FILE, check_epoch, load_optimizer, save_optimizer
from chronoprobe.datasets.lamatk_vocab import EntityVocab
from chronoprobe.errors import UserError
from chronoprobe.jsonl import read_json_object
from chronoprobe.train.lamatk.encoding import StatementEncoder
from chronoprobe.train.lamatk.spec import resolve
from chronoprobe.train.model import quiet_transformers

FORMAT = "chronoprobe-lamatk-checkpoint/2"
RETRAIN = "train again into another output directory"


@dataclass
class Checkpoint:
    model: PreTrainedModel
    encoder: StatementEncoder
    state: dict = field(default_factory=dict)  # train.json: options, epoch, step, history

    @property
    def vocab(self) -> EntityVocab:
        return self.encoder.vocab

    @property
    def epoch(self) -> int:
        return int(self.state.get("epoch", 0))


def save(
    out: Path,
    checkpoint: Checkpoint,
    optimizer: torch.optim.Optimizer | None = None,
    keep: int = 1,
) -> Path:
    """Write ``checkpoint`` (and the optimizer's state, to resume) as OUT/checkpoints/epoch-N."""
    name = f"epoch-{checkpoint.epoch:04d}"
    root = Path(out) / "checkpoints"
    root.mkdir(parents=True, exist_ok=True)
    tmp = root / f".{name}.{secrets.token_hex(4)}.tmp"
    try:
        with quiet_transformers():
            checkpoint.model.save_pretrained(tmp)
        checkpoint.encoder.tokenizer.save_pretrained(tmp / "tokenizer")
        checkpoint.vocab.save(tmp / "entity_vocab.json")
        state = {"format": FORMAT, "offset": checkpoint.encoder.offset, **checkpoint.state}
        (tmp / "train.json").write_text(json.dumps(state, indent=2) + "\n", encoding="utf-8")
        if optimizer is not None:
            save_optimizer(tmp / OPTIMIZER_FILE, optimizer, FORMAT, checkpoint.epoch)
        final = root / name
        if final.exists():
            shutil.rmtree(final)
        tmp.rename(final)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    atomic_write_text(Path(out) / "last", name + "\n")
    for old in sorted(root.glob("epoch-*"))[:-keep]:
        if old.name != name:
            shutil.rmtree(old)
    return final


def load(
    path: str | Path, device: torch.device | str = "cpu", optimizer: bool = True
) -> tuple[Checkpoint, dict | None]:
    """The checkpoint at ``path`` (run or checkpoint directory) and its optimizer's state_dict
    (None without ``optimizer``: for a model that is only asked, not trained further)."""
    directory = resolve(path)
    if directory is None:
        raise FileNotFoundError(f"{path}: no checkpoint here (no train.json, no 'last' file)")
    state = read_json_object(directory / "train.json")
    _check_format(directory / "train.json", state.get("format"))
    with quiet_transformers():
        model = AutoModelForMaskedLM.from_pretrained(directory).to(device)
    tokenizer = AutoTokenizer.from_pretrained(directory / "tokenizer")
    vocab = EntityVocab.load(directory / "entity_vocab.json")
    saved = directory / OPTIMIZER_FILE
    training = None
    if optimizer and saved.is_file():
        check_epoch(saved, state.get("epoch", 0), directory / "train.json", RETRAIN)
        training = load_optimizer(saved)
    encoder = StatementEncoder(tokenizer, vocab, int(state.pop("offset")))
    state.pop("format")
    return Checkpoint(model, encoder, state), training


def _check_format(path: Path, found: object) -> None:
    family = FORMAT.rsplit("/", 1)[0]
    if isinstance(found, str) and found.startswith(f"{family}/") and found != FORMAT:
        raise UserError(
            f"{path}: a {found} checkpoint, from an older chronoprobe that this one cannot "
            f"resume or read; {RETRAIN}"
        )
    if found != FORMAT:
        raise UserError(f"{path}: not a {FORMAT} checkpoint")
