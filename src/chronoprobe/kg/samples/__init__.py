"""A small real temporal KG shipped with chronoprobe, to try every stage offline.

Hand-curated from Wikidata (see README.md next to the data); it stands in for real dumps, which
``chronoprobe kg convert`` turns into a KG of any size.
"""

from __future__ import annotations

from importlib.resources import as_file, files
from pathlib import Path

from chronoprobe.kg.graph import TemporalKG

SAMPLE_FILE = "real_sample.jsonl"


def sample_path() -> Path:
    """Path of the sample's JSONL file inside the installed package."""
    return Path(str(files(__name__).joinpath(SAMPLE_FILE)))


def load_sample() -> TemporalKG:
    """The sample as a TemporalKG, loaded strictly: a bad row in shipped data is our bug."""
    # Imported here so that importing the package stays cheap.
    from chronoprobe.kg.io.jsonl import load
    from chronoprobe.kg.io.options import LoadOptions
    from chronoprobe.kg.io.problems import Problems

    with as_file(files(__name__).joinpath(SAMPLE_FILE)) as path:
        kg = load([path], LoadOptions(), Problems(strict=True))
    kg.name = "real-sample"
    kg.meta = {"source": {"format": "jsonl", "inputs": [f"chronoprobe.kg.samples:{SAMPLE_FILE}"]}}
    return kg
