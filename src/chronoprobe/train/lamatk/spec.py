"""The ``symbolic`` model spec scheme: a LAMA-TK memorisation checkpoint (``train memorize``),
told from what its folder holds, loaded as the symbolic adapter
(:class:`~chronoprobe.train.lamatk.symbolic.SymbolicLM`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chronoprobe.errors import UserError
from chronoprobe.models.spec import LoadOptions, ModelSource, ModelSpec


def resolve(path: str | Path) -> Path | None:
    """The checkpoint directory ``path`` names: a run directory (its newest) or a checkpoint."""
    path = Path(path)
    if (path / "train.json").is_file():
        return path
    last = path / "last"
    if last.is_file():
        return path / "checkpoints" / last.read_text(encoding="utf-8").strip()
    return None


class SymbolicSpec(ModelSpec):
    scheme = "symbolic"

    @classmethod
    def claims(cls, text: str) -> bool:
        path = Path(text).expanduser()
        return path.is_dir() and resolve(path) is not None

    def locate(self) -> ModelSource:
        path = Path(self.body).expanduser()
        if not path.is_dir() or resolve(path) is None:
            raise FileNotFoundError(f"{self.body}: no checkpoint here (no train.json, no 'last')")
        return ModelSource(str(path))

    def load(self, options: LoadOptions) -> Any:
        from chronoprobe.core.devices import resolve_device
        from chronoprobe.models.local import adapter_class

        if options.family not in (None, "symbolic"):
            raise UserError(
                f"{self.text} is a LAMA-TK memorisation checkpoint, read by the symbolic "
                f"adapter, not a {options.family} model: leave out --family"
            )
        symbolic = adapter_class("symbolic")
        device = resolve_device(options.device)
        return symbolic.load(
            self.source().location, device, batch_size=options.batch_size, name=self.text
        )
