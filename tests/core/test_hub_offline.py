"""A hub id that is neither in the local Hugging Face cache nor reachable is refused at once:
HF_HUB_OFFLINE and the local cache are looked at before any network attempt, a name server
that never answers costs at most the reach timeout, and the command line answers before it
imports torch."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import pytest

from chronoprobe.core import hub

FAKE = "no-such-org/no-such-model-xyz"


@pytest.fixture(autouse=True)
def fresh_reachability(monkeypatch, tmp_path):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf"))
    hub.hub_reachable.cache_clear()
    yield
    hub.hub_reachable.cache_clear()


def no_network(*args, **kwargs):
    raise AssertionError("the network was asked")


def test_offline_answers_without_asking_the_network(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    said = hub.missing_hub_model(FAKE)
    assert said.startswith(f"{FAKE!r} is not in the local Hugging Face cache")
    assert hub.load_options(FAKE) == {"local_files_only": True}


def test_a_model_in_the_local_cache_is_not_refused_and_the_network_is_not_asked(
    monkeypatch, tmp_path
):
    (tmp_path / "hf" / "models--no-such-org--no-such-model-xyz" / "snapshots" / "abc").mkdir(
        parents=True
    )
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    assert hub.missing_hub_model(FAKE) is None


def test_only_hub_ids_are_judged_so_and_bare_ones_too(monkeypatch, tmp_path):
    """The params tell a hub id by its spec's scheme: a package, a server, a folder are never
    looked up, and a bare id (roberta-base) is judged as one with an owner is."""
    from chronoprobe.probes.ops import _unreachable_hub_ids
    from chronoprobe.probes.view import ModelOptions

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    (tmp_path / "org" / "model").mkdir(parents=True)
    (tmp_path / "org" / "model" / "config.json").write_text("{}")
    monkeypatch.chdir(tmp_path)
    local = ["package:smollm2", "openai:gpt-4o", "smollm2", "org/model"]
    assert _unreachable_hub_ids(ModelOptions(model=local)) == []
    (said,) = _unreachable_hub_ids(ModelOptions(model=["roberta-base", "smollm2"]))
    assert said.startswith("model: 'roberta-base' is not in the local Hugging Face cache")


def test_a_name_server_that_never_answers_costs_the_reach_timeout_only(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(socket, "getaddrinfo", lambda *a, **k: time.sleep(60))
    began = time.monotonic()
    assert hub.missing_hub_model(FAKE) is not None
    assert time.monotonic() - began < hub.REACH_SECONDS + 5  # not the name server's minute


HANGING_DNS = """
import atexit, socket, sys, time
socket.getaddrinfo = lambda *a, **k: time.sleep(60)  # a name server that never answers
atexit.register(lambda: print("torch imported:", "torch" in sys.modules, file=sys.stderr))
from chronoprobe.cli.main import app
app(prog_name="chronoprobe")
"""


def test_the_command_line_refuses_an_uncached_id_before_loading_anything(tmp_path, one_row_set):
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_OFFLINE"}
    env["HF_HUB_CACHE"] = str(tmp_path / "hf")
    command = [sys.executable, "-c", HANGING_DNS, "probe", "generate", str(one_row_set)]
    command += ["-m", FAKE, "-o", str(tmp_path / "out")]
    began = time.monotonic()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    said = " ".join(done.stderr.split())
    assert f"error: model: {FAKE!r} is not in the local Hugging Face cache" in said, said
    assert "torch imported: False" in said  # refused while the options were read
    assert time.monotonic() - began < 60  # the hung name server was not waited for
    assert not (tmp_path / "out").exists()
    assert json.dumps(sorted(os.listdir(tmp_path))).count("out") == 0
