"""The request cache: the same answers as the bare model, asked of it only once."""

from __future__ import annotations

import pytest

from chronoprobe.models.request_cache import CachedModel, RequestStore, model_fingerprint
from chronoprobe.models.requests import Cloze, GenerateRequest, RankRequest, ScoreRequest
from chronoprobe.models.spec import parse_spec

CLOZES = [Cloze.from_query(q) for q in ("Alice works for [MASK].", "[MASK] is in Paris.")]


class Counting:
    """Delegates to an adapter and counts the requests it is really asked."""

    def __init__(self, model):
        self.model, self.asked = model, 0

    def __getattr__(self, name):
        method = getattr(self.model, name)
        if name not in ("rank", "score", "generate"):
            return method

        def counted(requests, *args, **options):
            self.asked += len(requests)
            return method(requests, *args, **options)

        return counted


@pytest.fixture
def cached(adapters, tmp_path):
    def make(architecture: str = "roberta", fingerprint: str = "m1"):
        counting = Counting(adapters(architecture))
        return counting, CachedModel(counting, fingerprint, RequestStore(tmp_path / "r.sqlite"))

    return make


def test_answers_equal_the_models_and_are_asked_once(adapters, cached):
    bare = adapters("roberta")
    counting, model = cached()
    ranks = [RankRequest(c, candidates=(5, 9)) for c in CLOZES]
    assert model.rank(ranks, top_k=4) == bare.rank(ranks, top_k=4)
    scores = [ScoreRequest(c, "Acme") for c in CLOZES]
    assert model.score(scores) == bare.score(scores)
    generated = [GenerateRequest(c, max_tokens=2) for c in CLOZES]
    assert model.generate(generated) == bare.generate(generated)
    assert counting.asked == 6
    # again, in another order and mixed with a new request: only the new one is asked
    new = RankRequest(Cloze.from_query("Bob lives in [MASK]."))
    again = model.rank([ranks[1], new, ranks[0]], top_k=4)
    assert counting.asked == 7
    assert again == [*bare.rank([ranks[1], new], top_k=4), bare.rank([ranks[0]], top_k=4)[0]]
    assert (model.hits, model.misses) == (2, 7)


def test_options_and_weights_are_part_of_the_key(cached, tmp_path):
    counting, model = cached()
    request = [RankRequest(CLOZES[0])]
    model.rank(request, top_k=4)
    model.rank(request, top_k=5)  # another option: asked again
    assert counting.asked == 2
    other, retrained = cached(fingerprint="m2")
    retrained.rank(request, top_k=4)  # other weights: asked again
    assert other.asked == 1


def test_a_reopened_store_keeps_the_answers(adapters, tmp_path):
    store = RequestStore(tmp_path / "r.sqlite")
    CachedModel(adapters("llama"), "m", store).score([ScoreRequest(CLOZES[0], "Acme")])
    store.close()
    counting = Counting(adapters("llama"))
    reopened = CachedModel(counting, "m", RequestStore(tmp_path / "r.sqlite"))
    reopened.score([ScoreRequest(CLOZES[0], "Acme")])
    assert counting.asked == 0 and reopened.hits == 1


def test_the_fingerprint_follows_the_weight_files(adapters, tmp_path):
    model = adapters("roberta")
    model.model.save_pretrained(tmp_path / "m")
    spec = parse_spec(str(tmp_path / "m"))
    first = model_fingerprint(spec, model)
    assert first == model_fingerprint(spec, model)
    (tmp_path / "m" / "config.json").write_text("{}")
    assert model_fingerprint(spec, model) != first


def test_the_store_commits_without_syncing_the_disk_at_each_answer(tmp_path):
    """A served run commits every answer as it arrives; a full sync each time cost about a
    millisecond an answer. In WAL mode a commit is in the log before the call returns, so
    a killed process still loses none (tests/probes/test_served.py kills a run with SIGKILL
    and counts what is asked again)."""
    store = RequestStore(tmp_path / "r.sqlite")
    assert store.connection.execute("pragma journal_mode").fetchone() == ("wal",)
    assert store.connection.execute("pragma synchronous").fetchone() == (1,)  # NORMAL
    store.close()
