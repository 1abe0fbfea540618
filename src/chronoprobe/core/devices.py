"""One place that turns a ``--device`` value into a torch device, or says plainly why not.

Every command and step that runs a model (probing, training an LM, a TKG or a QA model) takes
its device through :func:`resolve_device`, and documents it with :data:`DEVICE_HELP`.
"""

from __future__ import annotations

from chronoprobe.errors import UserError

ALIASES = {"gpu": "cuda"}
NAMES = "auto, cpu, cuda, cuda:N or mps"
DEVICE_HELP = f"Where the model runs: {NAMES} (auto: CUDA, then Apple's MPS, then the CPU)."


def available_devices() -> list[str]:
    """The devices torch can use here, e.g. ``['cuda:0', 'cuda:1', 'cpu']``."""
    import torch

    found = [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        found.append("mps")
    return [*found, "cpu"]


def resolve_device(name: str = "auto"):
    """``auto`` picks CUDA, then Apple's MPS, then the CPU; anything named must exist here."""
    import torch

    kind, colon, index = name.strip().lower().partition(":")
    wanted = ALIASES.get(kind, kind) + colon + index  # gpu:1 is cuda:1
    have = available_devices()
    if wanted == "auto":
        return torch.device(have[0])
    try:
        device = torch.device(wanted)
    except RuntimeError:
        raise UserError(f"--device {name}: not a device name; use {NAMES}") from None
    if device.type == "cpu":
        return device
    if device.type == "cuda" and device.index is None and any(d.startswith("cuda") for d in have):
        return torch.device("cuda:0")
    if str(device) in have:
        return device
    why = (
        "this torch was built without CUDA"
        if device.type == "cuda" and not torch.backends.cuda.is_built()
        else "no such device is visible"
    )
    raise UserError(f"--device {name}: {why}; available here: {', '.join(have)}")
