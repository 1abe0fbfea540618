"""A KG's own train/valid/test split: kept from CronQuestions' released files through
`kg convert`, trained and ranked on by `tkg train`, or taken from elsewhere with --split-from;
ranking is among every entity of the KG either way."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.kg.graph import TemporalKG
from chronoprobe.tkg import checkpoint
from chronoprobe.tkg.data import given_split

runner = CliRunner()
RELEASE = Path(__file__).parents[1] / "fixtures" / "cronquestions" / "kg"
# Hand-counted in the fixture's split files: the timed facts of each (train.txt's line with
# 0 and 9999 has no time), all 17 entities and the years -59 to 2022.
COUNTS = {"train": 5, "valid": 4, "test": 4}
ENTITIES = 17
YEARS = 2022 - (-59) + 1


def _convert(source: Path, out: Path) -> Path:
    result = runner.invoke(
        app, ["kg", "convert", str(source), "--format", "cronquestions", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    return out


def _train(kg: Path, out: Path, *extra: str):
    args = ["tkg", "train", str(kg), "--out", str(out), "--rank", "4", "--epochs", "1"]
    return runner.invoke(app, [*args, "--device", "cpu", *extra])


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> Path:
    return _convert(RELEASE, tmp_path_factory.mktemp("kg") / "cronq")


@pytest.fixture(scope="module")
def unsplit(tmp_path_factory) -> Path:
    """The same KG from full.txt alone: no split of its own."""
    source = tmp_path_factory.mktemp("full")
    for name in ("full.txt", "wd_id2entity_text.txt"):
        shutil.copy(RELEASE / name, source)
    return _convert(source, tmp_path_factory.mktemp("kg") / "full")


def _counts(data) -> dict[str, int]:
    return {name: len(data.split(name)) for name in COUNTS}


def test_the_given_split_is_trained_and_ranked_on(released, tmp_path):
    kg = TemporalKG.load(released)
    assert kg.has_split and len(kg.entities) == ENTITIES
    data = given_split(kg)
    assert _counts(data) == COUNTS and data.origin == "given"
    assert data.skipped == {
        "facts without a start or end year": 0,
        "facts in no split": 0,
        "duplicate facts": 0,
    }
    result = _train(released, tmp_path / "emb")
    assert result.exit_code == 0, result.output
    assert "5 train, 4 valid, 4 test (the KG's own split)" in " ".join(result.output.split())
    metrics = json.loads((tmp_path / "emb" / "metrics.json").read_text())
    assert metrics["split_origin"] == "given" and metrics["split"] == "test"
    assert (metrics["candidate_entities"], metrics["candidate_years"]) == (ENTITIES, YEARS)
    assert metrics["queries"] == 2 * COUNTS["test"]
    saved = checkpoint.load(tmp_path / "emb")
    assert _counts(saved.data) == COUNTS and saved.data.origin == "given"
    assert saved.model.sizes["n_entities"] == ENTITIES


def test_resplit_splits_with_the_seed_and_still_ranks_among_all_entities(released, tmp_path):
    result = _train(released, tmp_path / "emb", "--resplit", "--test-fraction", "0.3")
    assert result.exit_code == 0, result.output
    metrics = json.loads((tmp_path / "emb" / "metrics.json").read_text())
    assert metrics["split_origin"] == "seeded" and metrics["candidate_entities"] == ENTITIES
    # round(0.3 * 13) test facts, round(0.05 * 13) valid ones, the rest train
    assert _counts(checkpoint.load(tmp_path / "emb").data) == {"train": 8, "valid": 1, "test": 4}


def test_a_kg_split_with_the_seed_ranks_among_entities_without_a_timed_fact(tiny_kg, tmp_path):
    # "nobody held nothing" has no time: no training fact names them, yet they are candidates
    kg = tiny_kg.save(tmp_path / "tiny")
    result = _train(kg, tmp_path / "emb", "--test-fraction", "0.2")
    assert result.exit_code == 0, result.output
    metrics = json.loads((tmp_path / "emb" / "metrics.json").read_text())
    assert metrics["split_origin"] == "seeded" and metrics["candidate_entities"] == 10
    vocab = checkpoint.load(tmp_path / "emb").vocab
    assert {"nobody", "nothing"} <= set(vocab.entities)


@pytest.mark.parametrize("source", ["kg", "release"])
def test_split_from_takes_another_directory_s_split(released, unsplit, tmp_path, source):
    result = _train(unsplit, tmp_path / "emb")  # no split of its own: split with the seed
    assert json.loads((tmp_path / "emb" / "metrics.json").read_text())["split_origin"] == "seeded"
    other = released if source == "kg" else RELEASE
    result = _train(unsplit, tmp_path / "from", "--split-from", str(other))
    assert result.exit_code == 0, result.output
    metrics = json.loads((tmp_path / "from" / "metrics.json").read_text())
    assert metrics["split_origin"] == "split-from" and metrics["candidate_entities"] == ENTITIES
    taken, given = checkpoint.load(tmp_path / "from"), checkpoint.load(tmp_path / "emb")
    assert _counts(taken.data) == COUNTS
    assert taken.vocab == given.vocab


def test_split_from_a_kg_without_those_facts_is_a_clear_error(synth_dir, released, tmp_path):
    result = _train(synth_dir, tmp_path / "emb", "--split-from", str(released))
    assert result.exit_code == 2, result.output
    message = " ".join(result.output.split("error: ", 1)[1].split())
    assert message == (
        f"{released}: 13 of its 13 split facts are not facts of the KG 'synthetic-world', e.g. "
        "(Q7186, P166, Q38104, 1903, 1903); give the split of this KG's own facts; nothing "
        f"written to {tmp_path / 'emb'}"
    )
    assert not (tmp_path / "emb").exists()


def test_split_from_a_kg_without_a_split_is_a_clear_error(released, unsplit, tmp_path):
    result = _train(released, tmp_path / "emb", "--split-from", str(unsplit))
    assert result.exit_code == 2
    message = " ".join(result.output.split("error: ", 1)[1].split())
    expected = f"{unsplit}: the KG has no split of its own to take; nothing written to"
    assert message == f"{expected} {tmp_path / 'emb'}"
    result = _train(released, tmp_path / "emb", "--split-from", str(released), "--resplit")
    assert result.exit_code == 2 and "give --resplit or --split-from, not both" in result.output
