"""The experiment configs that ship inside the package, so that an installed chronoprobe runs
its main job with no checkout at hand: ``chronoprobe demo``, or ``chronoprobe run demo``.

A checkout's ``experiments/demo.yaml`` is a link to the same file, its one source.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

SUFFIX = ".yaml"


def packaged_configs() -> dict[str, Path]:
    """The configs shipped, by name (``demo`` for ``configs/demo.yaml``)."""
    folder = Path(str(resources.files("chronoprobe.runs") / "configs"))
    return {path.stem: path for path in sorted(folder.glob(f"*{SUFFIX}"))}


def config_file(given: Path) -> Path:
    """The config file ``chronoprobe run`` reads: ``given`` where it exists (a file of the
    user's always wins), else the shipped config of that name (``demo``, or ``demo.yaml``
    where no such file is here); anything else is ``given`` as it is, for the loader to say
    what is wrong with it."""
    if given.exists() or given.parent != Path("."):
        return given
    return packaged_configs().get(given.name.removesuffix(SUFFIX), given)
