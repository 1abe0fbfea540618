"""The step cache's key: what made a step, plugins' code included, and nothing else, so that
entries written before plugins were keyed stay valid."""

from __future__ import annotations

import hashlib
import json
import sys

from chronoprobe import __version__
from chronoprobe.registry import import_plugin, loaded_plugins
from chronoprobe.runs.cache import step_key

PARAMS, INPUTS = {"family": "drift", "first": 2015}, {"kg": "0123abcd"}


def test_without_plugins_the_key_is_the_payload_it_always_was():
    payload = {
        "kind": "build",
        "params": PARAMS,
        "inputs": INPUTS,
        "seed": 0,
        "fingerprint": None,
        "chronoprobe": __version__,
    }
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    expected = hashlib.sha256(text.encode()).hexdigest()
    assert step_key("build", PARAMS, INPUTS, 0) == expected
    assert step_key("build", PARAMS, INPUTS, 0, None, {}) == expected  # none loaded


def test_each_plugins_digest_is_part_of_the_key():
    keys = {
        step_key("build", PARAMS, INPUTS, 0, None, plugins)
        for plugins in (None, {"teams": "aa"}, {"teams": "bb"}, {"teams": "aa", "more": "cc"})
    }
    assert len(keys) == 4


def test_a_loaded_plugin_is_known_by_the_digest_of_its_own_file(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.chdir(tmp_path)  # found in the current directory
    source = "import key_helper_module\nVALUE = 1\n"
    (tmp_path / "key_plugin_module.py").write_text(source, encoding="utf-8")
    (tmp_path / "key_helper_module.py").write_text("HELPER = 2\n", encoding="utf-8")
    before = loaded_plugins()  # other tests' plugins this process still holds
    try:
        assert import_plugin("key_plugin_module") is None
        digest = hashlib.sha256(source.encode()).hexdigest()
        assert loaded_plugins() == {**before, "key_plugin_module": digest}  # not its helper's
    finally:
        sys.modules.pop("key_plugin_module", None)
        sys.modules.pop("key_helper_module", None)
    assert loaded_plugins() == before  # forgotten with its module
