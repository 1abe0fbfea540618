"""A small synthetic LAMA-TK set, and one tiny model trained on it, shared by the train tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from chronoprobe.datasets.lamatk import build_statements, subsample
from chronoprobe.datasets.lamatk_vocab import LABELS_FILE, write_labels
from chronoprobe.jsonl import write_jsonl
from chronoprobe.kg.synth import SynthConfig, synthesize
from chronoprobe.train.lamatk.memorize import TrainOptions, train

# enough steps for the tiny model to recall (almost) every statement, in seconds on one core
MEMORIZE = TrainOptions(epochs=45, batch_size=32, lr=2e-3, seed=0)


@pytest.fixture(scope="session")
def world():
    return synthesize(SynthConfig(seed=0, facts=200, text=False))


@pytest.fixture(scope="session")
def world_rows(world) -> list[dict]:
    """240 statements of a seeded synthetic world, conflicts (multi-answer rows) included."""
    rows, _ = build_statements(world.kg)
    return subsample(rows, 240, seed=0)


@pytest.fixture(scope="session")
def world_labels(world, world_rows) -> dict[str, str]:
    """The label of every entity the statements name, as the builder writes them."""
    named = {row[key] for row in world_rows for key in ("subject", "object")}
    return {entity: world.kg.label(entity) for entity in named}


@pytest.fixture(scope="session")
def write_statements(world_labels):
    """write(path, rows): a statements file with its labels file beside it, as built."""

    def write(path: Path, rows: list[dict]) -> Path:
        write_jsonl(path, rows)
        write_labels(path.parent / LABELS_FILE, world_labels)
        return path

    return write


@pytest.fixture(scope="session")
def statements_path(tmp_path_factory, world_rows, write_statements) -> Path:
    return write_statements(tmp_path_factory.mktemp("lamatk") / "statements.jsonl", world_rows)


@pytest.fixture(scope="session")
def memorized(tmp_path_factory, statements_path) -> Path:
    """A run directory whose last checkpoint has memorised ``statements_path``."""
    out = tmp_path_factory.mktemp("memorized")
    train(statements_path, out, MEMORIZE, device="cpu")
    return out
