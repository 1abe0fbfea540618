"""What every loader takes, and the registry of source formats (imported lazily by name)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from chronoprobe.errors import UserError
from chronoprobe.registry import Registry

if TYPE_CHECKING:
    from chronoprobe.kg.graph import TemporalKG
    from chronoprobe.kg.io.problems import Problems
    from chronoprobe.kg.io.sparql_mapping import VariableMapping


# (bytes of the inputs read so far, bytes of all inputs): called now and then on long loads
ProgressCallback = Callable[[float, float], None]


@dataclass(frozen=True)
class LoadOptions:
    relations: frozenset[str] | None = None  # keep only these relation ids (None: all)
    lang: str = "en"  # language of labels, aliases and descriptions
    processes: int = 1  # worker processes, for formats that parallelise
    progress: ProgressCallback | None = None  # told how far a long load has come
    sparql: VariableMapping | None = None  # SPARQL variables -> roles (None: the defaults)
    engine: str = "local"  # "ray": formats that parallelise run as Ray tasks
    address: str | None = None  # the Ray cluster (None: a running session, or a local one)
    work_dir: Path | None = None  # where a distributed load keeps its finished parts


Loader = Callable[[Sequence[Path], LoadOptions, "Problems"], "TemporalKG"]

# source format -> its loader; modules are imported only when their format is used
LOADERS: Registry[Loader] = Registry(
    "source format",
    {
        "wikidata-json": "chronoprobe.kg.io.wikidata_load:load",
        "wikidata-sparql": "chronoprobe.kg.io.wikidata_sparql:load",
        "cronquestions": "chronoprobe.kg.io.cronquestions:load",
        "jsonl": "chronoprobe.kg.io.jsonl:load",
    },
)


def get_loader(name: str) -> Loader:
    try:
        return LOADERS.get(name)
    except KeyError as err:
        raise UserError(err.args[0]) from None
