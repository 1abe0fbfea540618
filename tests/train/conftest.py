"""A small synthetic LAMA-TK set, and one tiny model trained on it, shared by the train tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from chronoprobe.datasets.lamatk import build_statements, subsample
from chronoprobe.jsonl import write_jsonl
from chronoprobe.kg.synth import SynthConfig, synthesize
from chronoprobe.train.memorize import TrainOptions, train

# enough steps for the tiny model to recall (almost) every statement, in seconds on one core
MEMORIZE = TrainOptions(epochs=45, batch_size=32, lr=2e-3, seed=0)


@pytest.fixture(scope="session")
def world_rows() -> list[dict]:
    """240 statements of a seeded synthetic world, conflicts (multi-answer rows) included."""
    world = synthesize(SynthConfig(seed=0, facts=200, text=False))
    rows, _ = build_statements(world.kg)
    return subsample(rows, 240, seed=0)


@pytest.fixture(scope="session")
def statements_path(tmp_path_factory, world_rows) -> Path:
    path = tmp_path_factory.mktemp("lamatk") / "statements.jsonl"
    write_jsonl(path, world_rows)
    return path


@pytest.fixture(scope="session")
def memorized(tmp_path_factory, statements_path) -> Path:
    """A run directory whose last checkpoint has memorised ``statements_path``."""
    out = tmp_path_factory.mktemp("memorized")
    train(statements_path, out, MEMORIZE, device="cpu")
    return out
