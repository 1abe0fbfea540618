"""A verdict depends on the row, its KG and the answer alone: judging a probe file and random
subsets of it (the same KG beside each) gives every answer the same verdict by every rule."""

from __future__ import annotations

import hashlib
import random
import shutil
from pathlib import Path

import pytest

from chronoprobe.jsonl import read_jsonl, write_jsonl
from chronoprobe.probes.generate import GenerateParams, predict_generate, read_asked_rows
from chronoprobe.probes.responses import Responses
from chronoprobe.set_files import NAMES_FILE
from chronoprobe.time import period_range


@pytest.fixture(scope="module")
def drift(tmp_path_factory) -> Path:
    from chronoprobe.datasets.writers import write_drift
    from chronoprobe.kg.samples import load_sample

    out = tmp_path_factory.mktemp("drift")
    write_drift(load_sample(), out, period_range("2008", "2022"))
    return out


def _answers(rows: list[dict], names: list[dict]) -> dict[str, list[str]]:
    """Three answers a row, drawn (by a hash of its id) from every name of its relation in
    the KG, and said the ways a model says them: alone, in a sentence, with more words."""
    pool: dict[str, list[str]] = {}
    for entity in names:
        pool.setdefault(entity["relation"], []).extend(entity["names"])
    out = {}
    for row in rows:
        seed = int(hashlib.sha256(row["id"].encode()).hexdigest(), 16)
        chosen = random.Random(seed).sample(pool[row["relation"]], 3)
        label = (row["answer_labels"] or chosen)[0]
        out[row["id"]] = [
            chosen[0],
            f"In {row['period']}, it was {chosen[1]}, I believe",
            f"{label} {chosen[2].split()[0]}" if seed % 2 else f"the {label} of the United States",
        ]
    return out


def _verdicts(folder: Path, answers: dict[str, list[str]]) -> dict[str, tuple]:
    rows = read_asked_rows(folder / "examples.jsonl")
    ids = [r.id for r in rows]
    given = Responses(folder / "r.jsonl", "r", {i: answers[i] for i in ids}, {})
    predictions = predict_generate(given, rows, GenerateParams(), None)
    return {
        p["id"]: (p["correct"], p["category"], p["greedy_judged"] + p["sample_judged"])
        for p in predictions
    }


@pytest.mark.parametrize("kg", [True, False], ids=["with-names-file", "rows-alone"])
def test_a_file_and_its_subsets_are_judged_alike(drift, tmp_path, kg):
    rows = list(read_jsonl(drift / "examples.jsonl"))
    answers = _answers(rows, list(read_jsonl(drift / NAMES_FILE)))
    source = tmp_path / "whole"
    write_jsonl(source / "examples.jsonl", rows)
    if kg:
        shutil.copyfile(drift / NAMES_FILE, source / NAMES_FILE)
    whole = _verdicts(source, answers)
    assert len(whole) == len(rows) > 300
    judged = [v for _, _, js in whole.values() for v in js]
    # the answers are a mix: every rule finds some right and some wrong
    for rule in judged[0]:
        assert 0 < sum(j[rule] for j in judged) < len(judged), rule
    for draw in range(3):
        subset = random.Random(draw).sample(rows, len(rows) // (3 + draw))
        folder = tmp_path / f"subset-{draw}"
        write_jsonl(folder / "examples.jsonl", subset)
        if kg:  # the same KG beside each; without one, the rows alone
            shutil.copyfile(drift / NAMES_FILE, folder / NAMES_FILE)
        got = _verdicts(folder, answers)
        assert got == {row["id"]: whole[row["id"]] for row in subset}
