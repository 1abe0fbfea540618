"""The cutoff view on hand-made histories with a known cutoff: a model that knows the world up
to a year, asked by scores and (a served model) by its answers, and a model that knows nothing
of time, which must give no cutoff."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from typer.testing import CliRunner

import chronoprobe
from chronoprobe.cli.main import app
from chronoprobe.jsonl import write_jsonl
from chronoprobe.models.requests import SpanScore
from chronoprobe.probes.cutoff import read_changes

from ..models.served_stub import StubServer, completion

YEARS = list(range(2010, 2021))
CLUBS = [f"Club {chr(65 + i)}" for i in range(12)]


def history(subjects: int = 80, seed: int = 0) -> dict[str, dict[int, str]]:
    """Each player's club per year: a new club every two to four years."""
    rng = np.random.default_rng(seed)
    out = {}
    for s in range(subjects):
        clubs, year, club = {}, YEARS[0], int(rng.integers(len(CLUBS)))
        while year <= YEARS[-1]:
            for y in range(year, min(year + int(rng.integers(2, 5)), YEARS[-1] + 1)):
                clubs[y] = CLUBS[club]
            year = max(clubs) + 1
            club = (club + 1 + int(rng.integers(len(CLUBS) - 1))) % len(CLUBS)
        out[f"Player {s}"] = clubs
    return out


@pytest.fixture
def drift(tmp_path):
    """A drift set of the histories: one row per player and year, its split against the
    year before."""
    clubs = history()
    rows = []
    for player, years in clubs.items():
        for year, club in years.items():
            before = years.get(year - 1)
            split = None if before is None else "unchanged" if before == club else "updated"
            rows.append(
                {
                    "id": f"{player}_{year}",
                    "period": str(year),
                    "relation": "P54",
                    "subject": player,
                    "query": f"{player} plays for [MASK].",
                    "answers": [club.replace(" ", "")],
                    "answer_labels": [club],
                    "split": split,
                }
            )
    write_jsonl(tmp_path / "drift" / "examples.jsonl", rows)
    return tmp_path / "drift", clubs


class KnowsUpTo:
    """Scores a player's club as he played for it in ``year`` above every other (a model that
    read the world up to that year and no further); ``year`` None: random scores."""

    family = "causal"
    reads_left_only = False
    unfit_reason = "never"

    def __init__(self, clubs: dict, year: int | None, seed: int = 0) -> None:
        self.clubs, self.year, self.name = clubs, year, f"knows-{year}"
        self.rng = np.random.default_rng(seed)

    def score(self, requests, progress=None):
        out = []
        for request in requests:
            player = re.match(r"(Player \d+)", request.cloze.left or request.cloze.right)
            if self.year is None:
                value = float(self.rng.normal())
            else:
                known = self.clubs[player.group(1)][self.year]
                value = 0.0 if request.span == known else -5.0
            out.append(SpanScore(value, 2))
        return out


def test_the_changes_of_a_set_are_its_new_answers_against_the_earlier_ones(drift):
    data, clubs = drift
    changes = read_changes(data / "examples.jsonl")
    updated = [
        r for r in map(json.loads, (data / "examples.jsonl").open()) if r["split"] == "updated"
    ]
    first = changes[0]
    player, year = first.row.subject, int(first.row.period)
    assert [n[0] for n in first.new] == [clubs[player][year]]
    assert [n[0] for n in first.old] == [clubs[player][year - 1]]  # the period before only
    assert len(changes) == len(updated)  # every updated row, a return to an old club too


@pytest.mark.parametrize("year", [2013, 2016, 2018])
def test_a_model_that_knows_the_world_up_to_a_year_has_its_cutoff_there(drift, year):
    data, clubs = drift
    result = chronoprobe.probe("cutoff", data, model=KnowsUpTo(clubs, year))
    entry = result.model()
    assert entry["evidence"] == "scores"
    overall = entry["overall"]
    assert (overall["kind"], overall["cutoff"]) == ("step", str(year))
    low, high = overall["cutoff_interval"]
    assert low <= str(year) <= high
    # before the cutoff the model prefers the new club unless the player moved again by then
    # (a tie: it knows a third club); after it, the club it knows is the earlier one, or,
    # after a second move, neither (a tie)
    assert overall["level_before"] > 0.6 > 0.4 > overall["level_after"]
    assert entry["by_relation"]["P54"]["cutoff"] == str(year)
    assert entry["n"] == overall["changes"]
    curve = {int(p["period"]): p["preference"] for p in overall["curve"]}
    assert curve[year] == 1.0 and curve[year + 1] == 0.0


def test_a_model_with_no_dated_knowledge_has_no_cutoff(drift):
    data, clubs = drift
    entry = chronoprobe.probe("cutoff", data, model=KnowsUpTo(clubs, None)).model()
    assert entry["overall"]["kind"] == "none" and entry["overall"]["cutoff"] is None
    low, high = entry["preference_ci95"]
    assert low < 0.5 < high


def test_a_served_model_is_judged_by_its_answers(drift, tmp_path):
    """The stub server answers each prompt ("In 2017, Player 3 plays for") with the club the
    player had in that year, or in 2015 for a later year: a model whose world ends in 2015."""
    data, clubs = drift
    asked = re.compile(r"In (\d{4}), (Player \d+) plays for")

    def reply(path: str, body: dict, headers: dict):
        year, player = asked.search(body["prompt"]).groups()
        return 200, completion(f" {clubs[player][min(int(year), 2015)]}."), {}

    out = tmp_path / "served"
    with StubServer(reply) as stub:
        args = ["probe", "cutoff", str(data), "-m", "openai:stub", "--base-url", stub.url]
        printed = CliRunner().invoke(app, [*args, "-o", str(out), "--max-tokens", "6"])
    assert printed.exit_code == 0, printed.output
    entry = json.loads((out / "metrics.json").read_text())["models"]["openai:stub"]
    assert entry["evidence"] == "answers"
    assert (entry["overall"]["kind"], entry["overall"]["cutoff"]) == ("step", "2015")
    assert "2015 [" in " ".join(printed.output.split())  # the printed cutoff and its interval


def test_a_set_without_changes_is_refused_in_one_line(tmp_path):
    rows = [
        {"id": f"r{y}", "period": str(y), "relation": "P54", "subject": "Q1",
         "query": "Q1 plays for [MASK].", "answers": ["QA"], "answer_labels": ["Club A"]}
        for y in (2010, 2011)
    ]  # fmt: skip
    write_jsonl(tmp_path / "same" / "examples.jsonl", rows)
    with pytest.raises(ValueError, match=r"examples.jsonl: no changed fact"):
        read_changes(tmp_path / "same" / "examples.jsonl")
