"""Suite-wide set-up: torch on one thread, a private step cache per test, a one-row probe set.

The models in the tests are tiny: one thread is faster than two handing work back and forth
on a busy 2-core machine, and a fixed thread count keeps float sums (and so the comparisons of
resumed and uninterrupted training) reproducible.
"""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _private_step_cache(tmp_path_factory, monkeypatch):
    """Every test gets its own step cache (and its own allowed plugins): commands and runs
    cache their steps, and a test must neither see another test's entries nor the user's.
    Converted model weights (tens of seconds each) stay where they are shared."""
    from chronoprobe.models.spec import models_dir

    monkeypatch.setenv("CHRONOPROBE_MODELS", str(models_dir()))
    monkeypatch.setenv("CHRONOPROBE_CACHE", str(tmp_path_factory.mktemp("cache")))
    # nor the user's allowed installed plugins: a command would import them
    allowed = tmp_path_factory.mktemp("config") / "allowed-plugins.json"
    monkeypatch.setenv("CHRONOPROBE_ALLOWED_PLUGINS", str(allowed))


@pytest.fixture(autouse=True, scope="session")
def _one_torch_thread():
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def ray_session():
    """One local Ray instance with two CPU workers, shared by every test that needs Ray."""
    ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'chronoprobe[ray]'")
    ray.init(num_cpus=2, include_dashboard=False, logging_level="warning")
    yield ray
    ray.shutdown()


@pytest.fixture
def one_row_set(tmp_path):
    """A drift probe set of one row ("The capital of France is [MASK]."), for tests of what
    commands say about their options, no model run."""
    from chronoprobe.jsonl import write_jsonl

    row = {
        "id": "q1",
        "period": "2019",
        "relation": "P36",
        "subject": "Q142",
        "query": "The capital of France is [MASK].",
        "answers": [],
        "answer_labels": ["Paris"],
        "split": None,
    }
    write_jsonl(tmp_path / "drift" / "examples.jsonl", [row])
    return tmp_path / "drift"
