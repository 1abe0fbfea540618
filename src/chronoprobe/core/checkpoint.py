"""What every trainer's checkpoint is made of: tensors in safetensors, everything else in JSON.

A checkpoint is several files written one after another, each atomically, with the JSON file
that names the epoch last. Every tensor file carries that epoch in its metadata, so a save cut
short between two files is found on loading (:func:`check_epoch`) instead of resumed from.

An optimizer's state (any torch optimizer: Adagrad's sums, Adam's moments, the step counts) is
stored as flat tensors named "<parameter index>/<key>", its parameter groups (learning rate,
betas, ...) as JSON in the file's metadata; loading it back gives the ``state_dict`` that
``optimizer.load_state_dict`` takes, so training resumes exactly.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_file, save_file

from chronoprobe.atomic import atomic_path
from chronoprobe.errors import UserError
from chronoprobe.jsonl import read_json_object

GROUPS = "param_groups"
MODEL_FILE, OPTIMIZER_FILE, CONFIG_FILE = (
    "model.safetensors",
    "optimizer.safetensors",
    "config.json",
)


def read_config(directory: Path, fmt: str, files: tuple[str, ...], what: str) -> dict:
    """The config.json of the ``fmt`` checkpoint in ``directory`` (a ``what``: "TKG", "KGQA"),
    once ``files`` are found beside it; errors name the file and say what is wrong."""
    path = directory / CONFIG_FILE
    if not path.is_file():
        command = what.lower()
        raise FileNotFoundError(
            f"{directory}: not a {what} checkpoint (no {CONFIG_FILE}); "
            f"create one with `chronoprobe {command} train`"
        )
    for name in files:
        if not (directory / name).is_file():
            raise FileNotFoundError(
                f"{directory / name}: missing; not a complete {what} checkpoint"
            )
    config = read_json_object(path)
    if config.get("format") != fmt:
        raise UserError(f"{path}: format is {config.get('format')!r}, not {fmt!r}")
    return config


def save_tensors(
    path: Path, tensors: dict[str, torch.Tensor], fmt: str, epoch: int, **metadata: str
) -> None:
    """Write ``tensors`` to ``path`` atomically, with the format and epoch in the metadata."""
    contiguous = {k: v.detach().to("cpu").contiguous() for k, v in tensors.items()}
    with atomic_path(path) as tmp:
        save_file(contiguous, str(tmp), metadata={"format": fmt, "epoch": str(epoch), **metadata})


def damaged(path: Path, err: Exception) -> ValueError:
    """The error for a tensor file safetensors cannot read (cut short, overwritten)."""
    reason = str(err).splitlines()[0] if str(err) else type(err).__name__
    return ValueError(f"{path}: damaged tensor file, not read ({reason}); restore or retrain it")


def metadata_of(path: Path) -> dict[str, str]:
    try:
        with safe_open(str(path), framework="pt") as handle:
            return handle.metadata() or {}
    except SafetensorError as err:
        raise damaged(path, err) from None


def read_tensors(path: Path) -> dict[str, torch.Tensor]:
    """The tensors of a safetensors file; a damaged file is a ValueError naming it."""
    try:
        return load_file(str(path))
    except SafetensorError as err:
        raise damaged(path, err) from None


def check_epoch(path: Path, epoch: int, source: Path, remedy: str) -> None:
    """A ValueError unless ``path`` holds ``epoch``, the epoch that ``source`` names."""
    if metadata_of(path).get("epoch") != str(epoch):
        raise UserError(
            f"{path}: holds another epoch than {source.name} (a save was interrupted); {remedy}"
        )


def optimizer_tensors(state: dict) -> tuple[dict[str, torch.Tensor], str]:
    """An optimizer's ``state_dict`` as flat tensors and its parameter groups as JSON."""
    tensors = {
        f"{index}/{key}": torch.as_tensor(value)
        for index, entries in state["state"].items()
        for key, value in entries.items()
    }
    return tensors, json.dumps(state[GROUPS])


def save_optimizer(
    path: Path, optimizer: torch.optim.Optimizer | None, fmt: str, epoch: int
) -> None:
    """Write ``optimizer``'s state (none: an empty one, for an untrained model) to ``path``."""
    state = optimizer.state_dict() if optimizer is not None else {"state": {}, GROUPS: []}
    tensors, groups = optimizer_tensors(state)
    save_tensors(path, tensors, fmt, epoch, **{GROUPS: groups})


def load_optimizer(path: Path) -> dict:
    """The ``state_dict`` :func:`save_optimizer` wrote to ``path``."""
    metadata = metadata_of(path)
    if GROUPS not in metadata:
        raise UserError(
            f"{path}: no parameter groups in its metadata: an optimizer state of an older "
            "version; train again from scratch"
        )
    state: dict = {"state": {}, GROUPS: json.loads(metadata[GROUPS])}
    for key, value in read_tensors(path).items():
        index, name = key.split("/", 1)
        state["state"].setdefault(int(index), {})[name] = value
    return state


def save_weights(
    directory: str | Path,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer | None,
    fmt: str,
    epoch: int,
) -> Path:
    """Create ``directory`` and write the model's and optimizer's tensor files into it."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    save_tensors(directory / MODEL_FILE, dict(model.state_dict()), fmt, epoch)
    save_optimizer(directory / OPTIMIZER_FILE, optimizer, fmt, epoch)
    return directory
