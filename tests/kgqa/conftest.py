"""Shared fixtures: a small synthetic world with TKG embeddings and questions, and a stub encoder.

The world, its TComplEx embeddings (a few epochs) and its CronQuestions split are built once per
session; torch runs on one thread so float sums (and so resume comparisons) are reproducible.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from torch import nn

from chronoprobe.kgqa.encoder import QuestionEncoder


@pytest.fixture(autouse=True)
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


class StubModel(nn.Module):
    """Stands in for a transformer where only the scoring after the encoder is under test."""

    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.config = SimpleNamespace(hidden_size=hidden)


@pytest.fixture
def stub() -> QuestionEncoder:
    """An encoder of width 4 that is never called: tests pass question vectors themselves."""
    return QuestionEncoder(tokenizer=None, model=StubModel(4), spec="stub")


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    """KG directory, TComplEx and ComplEx checkpoints, and a cronq directory of one world."""
    from chronoprobe.datasets.writers import write_cronq
    from chronoprobe.kg.synth import SynthConfig, synthesize
    from chronoprobe.tkg.data import split_kg
    from chronoprobe.tkg.params import TKGTrainParams
    from chronoprobe.tkg.train import train

    root = tmp_path_factory.mktemp("kgqa")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    kg = synthesize(SynthConfig(seed=0, facts=1500, text=False)).kg
    kg_dir = kg.save(root / "world")
    data = split_kg(kg, seed=0)
    dirs = {}
    for name, epochs in (("tcomplex", 8), ("complex", 2)):
        config = TKGTrainParams(arch=name, rank=32, epochs=epochs, batch_size=500, device="cpu")
        train(data, config, root / name, progress=False)
        dirs[name] = root / name
    write_cronq(kg, root / "cronq", max_per_template=150, seed=0)
    torch.set_num_threads(threads)
    return SimpleNamespace(
        kg=kg_dir, tcomplex=dirs["tcomplex"], complex=dirs["complex"], cronq=root / "cronq"
    )


@pytest.fixture(scope="session")
def trained(world: SimpleNamespace, tmp_path_factory: pytest.TempPathFactory):
    """CronKGQA over the TComplEx embeddings, trained briefly; (result, checkpoint dir)."""
    from chronoprobe.kgqa.params import KGQATrainParams
    from chronoprobe.kgqa.train import train

    out = tmp_path_factory.mktemp("qa") / "cronkgqa"
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    config = KGQATrainParams(arch="cronkgqa", epochs=10, batch_size=32, device="cpu")
    result = train(world.cronq, world.tcomplex, config, out, progress=False)
    torch.set_num_threads(threads)
    return result, out
