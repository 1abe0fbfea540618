"""A probe step reads each model spec once, and both caches key on what the spec resolves to:
new weights behind an unchanged spec are new answers, in the step cache and the answer cache."""

from __future__ import annotations

import os
import sys

import pytest

import chronoprobe
from chronoprobe.models import local, spec
from chronoprobe.models.tiny import random_model


class Asked:
    """Counts the requests that reach the weights (the answer cache sits in front)."""

    def __init__(self) -> None:
        self.scored = 0

    def wrap(self, monkeypatch) -> None:
        load = local.load_transformers

        def loaded(chosen, source, options):
            model = load(chosen, source, options)
            score = model.score

            def counted(requests, *args, **kwargs):
                self.scored += len(requests)
                return score(requests, *args, **kwargs)

            model.score = counted
            return model

        monkeypatch.setattr(local, "load_transformers", loaded)


def test_each_spec_is_resolved_once_per_step(model_dirs, examples, monkeypatch):
    resolved: list[str] = []
    resolve = spec.resolve_spec
    monkeypatch.setattr(
        spec, "resolve_spec", lambda chosen: resolved.append(str(chosen)) or resolve(chosen)
    )
    names = [str(d) for d in model_dirs]
    result = chronoprobe.probe("pll", examples, model=names, device="cpu")
    assert result.models == names
    assert sorted(resolved) == sorted(names)  # once each: the step key and the loading share it


@pytest.fixture
def package(tmp_path, tiny, monkeypatch):
    """``package:fake``: a Python package on the path that ships a tiny causal model folder."""
    root = tmp_path / "site"
    weights = root / "fakeweights" / "model"
    weights.mkdir(parents=True)
    (root / "fakeweights" / "__init__.py").write_text("")
    tiny("llama").model.save_pretrained(weights)
    tiny("llama").tokenizer.save_pretrained(weights)
    monkeypatch.syspath_prepend(str(root))
    sys.modules.pop("fakeweights", None)
    packages = {**spec.PACKAGES, "fake": spec.PackageWeights("fakeweights", "model", "fake")}
    monkeypatch.setattr(spec, "PACKAGES", packages)
    monkeypatch.setattr(local, "PACKAGES", packages)
    return weights


def test_new_weights_behind_a_package_spec_are_asked_again(package, tiny, examples, monkeypatch):
    asked = Asked()
    asked.wrap(monkeypatch)
    first = chronoprobe.probe("pll", examples, model="package:fake", device="cpu")
    scored = asked.scored
    assert scored > 0
    again = chronoprobe.probe("pll", examples, model="package:fake", device="cpu", cache=False)
    assert asked.scored == scored  # the step recomputed; every answer came from the cache
    assert again.predictions == first.predictions
    # other weights under the same spec, with the same sizes and modification times (as cp -p,
    # rsync -a or tar x leave them): the step and every answer are computed again
    files = sorted(package.rglob("*.safetensors"))
    times = {f: os.stat(f).st_mtime_ns for f in files}
    random_model("llama", tiny("llama").tokenizer, seed=7).save_pretrained(package)
    for f in files:
        os.utime(f, ns=(times[f], times[f]))
    other = chronoprobe.probe("pll", examples, model="package:fake", device="cpu")
    assert asked.scored == 2 * scored
    assert other.rows()[0]["label_scores"] != first.rows()[0]["label_scores"]
