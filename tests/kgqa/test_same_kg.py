"""KG fingerprints travel with the artefacts made from a KG; inputs of two KGs are an error."""

from __future__ import annotations

import json
import logging
import textwrap

import pytest
from rich.console import Console

from chronoprobe.kg.graph import TemporalKG, same_kg
from chronoprobe.runs.engine import run_experiment
from chronoprobe.tkg import checkpoint as tkg_checkpoint

CONFIG = """
name: t
seed: 1
steps:
  - id: world
    kind: kg
    params: {{source: synth, facts: 300, text: false, seed: 1}}
  - id: other
    kind: kg
    params: {{source: synth, facts: 300, text: false, seed: 2}}
  - id: cronq
    kind: build
    inputs: {{kg: world}}
    params: {{family: cronq, max_per_template: 20}}
  - id: emb
    kind: tkg
    inputs: {{kg: {embeddings_kg}}}
    params: {{arch: complex, rank: 4, epochs: 1, batch_size: 2000, device: cpu}}
  - id: qa
    kind: kgqa
    inputs: {{questions: cronq, tkg: emb}}
    params: {{arch: lm, epochs: 1, device: cpu}}
"""


def run(tmp_path, embeddings_kg: str):
    config = tmp_path / "exp.yaml"
    text = textwrap.dedent(CONFIG.format(embeddings_kg=embeddings_kg)).lstrip()
    config.write_text(text, encoding="utf-8")
    with open("/dev/null", "w") as sink:
        run_experiment(config, tmp_path / "run", console=Console(file=sink))
    return tmp_path / "run" / "steps"


def test_fingerprints_travel_from_the_kg_to_questions_and_embeddings(tmp_path, monkeypatch):
    monkeypatch.setenv("CHRONOPROBE_CACHE", str(tmp_path / "cache"))
    steps = run(tmp_path, "world")
    kg = TemporalKG.load(steps / "world")
    assert kg.fingerprint and len(kg.fingerprint) == 24
    source = json.loads((steps / "cronq" / "kg.json").read_text())
    assert source == {"name": kg.name, "fingerprint": kg.fingerprint}
    assert tkg_checkpoint.load(steps / "emb").data.kg_fingerprint == kg.fingerprint
    qa = json.loads((steps / "qa" / "config.json").read_text())
    assert qa["data"]["kg_fingerprint"] == kg.fingerprint
    # the same tables saved again give the same fingerprint; other tables another
    again = TemporalKG.load(steps / "world").save(tmp_path / "again")
    assert TemporalKG.load(again).fingerprint == kg.fingerprint
    assert TemporalKG.load(steps / "other").fingerprint != kg.fingerprint


def test_questions_and_embeddings_of_two_kgs_stop_the_qa_step(tmp_path, monkeypatch):
    monkeypatch.setenv("CHRONOPROBE_CACHE", str(tmp_path / "cache"))
    with pytest.raises(Exception) as err:
        run(tmp_path, "other")
    steps = tmp_path / "run" / "steps"
    world = TemporalKG.load(steps / "world").fingerprint
    other = TemporalKG.load(steps / "other").fingerprint
    message = str(err.value)
    assert f"the questions ({steps / 'cronq' / 'kg.json'}) come from KG {world}" in message
    assert f"the embeddings ({steps / 'emb'}) from KG {other}: inputs of different KGs" in message


def test_an_artefact_without_a_fingerprint_passes_with_a_warning():
    warnings: list[str] = []
    same_kg(("the questions (q)", None), ("the embeddings (e)", "abc"), warnings.append)
    assert warnings == [
        "the questions (q): records no KG fingerprint (made by an older chronoprobe); "
        "cannot check that the inputs come from one KG"
    ]
    same_kg(("a", "abc"), ("b", "abc"), warnings.append)
    assert len(warnings) == 1
    with pytest.raises(ValueError, match=r"^the questions \(q\) come from KG abc, the embed"):
        same_kg(("the questions (q)", "abc"), ("the embeddings (e)", "abd"), logging.warning)
