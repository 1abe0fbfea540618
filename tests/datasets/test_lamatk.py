"""LAMA-TK statements on hand-made real facts: award years, repeated spells and terms, conflicts;
and samples of a synthetic world that keep whole queries."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from chronoprobe.datasets.lamatk import (
    boundary_set,
    build_statements,
    implicit_set,
    statistics,
    subsample,
    without_conflicts,
)
from chronoprobe.datasets.writers import write_lamatk
from chronoprobe.jsonl import read_jsonl
from chronoprobe.kg import Entity, Fact, TemporalKG
from chronoprobe.kg.synth import SynthConfig, synthesize
from chronoprobe.time import TimePoint

LABELS = {
    "Q949": "John Bardeen",
    "Q163415": "William Shockley",
    "Q38104": "Nobel Prize in Physics",
    "Q11571": "Cristiano Ronaldo",
    "Q18656": "Manchester United F.C.",
    "Q9616": "Juventus F.C.",
    "Q35171": "Grover Cleveland",
    "Q11696": "President of the United States",
    "Q1": "Governor of New York",
    "Q2": "Murray Hill",
    "Q3": "Minister for Transport",
    "Q4": "Minister of Roads",
    "Q22686": "Donald Trump",
    "Q76": "Barack Obama",
    "Q5": "United States senator",
}


def fact(s, r, o, start, end):
    return Fact(
        s, r, o, TimePoint.parse(start) if start else None, TimePoint.parse(end) if end else None
    )


@pytest.fixture(scope="module")
def kg() -> TemporalKG:
    facts = [
        fact("Q949", "P166", "Q38104", "1956", "1956"),
        fact("Q949", "P166", "Q38104", "1972", "1972"),
        fact("Q163415", "P166", "Q38104", "1956", "1956"),
        fact("Q11571", "P54", "Q18656", "2003-08-12", "2009-07-01"),
        fact("Q11571", "P54", "Q18656", "2021-08-31", "2022-11-22"),
        fact("Q11571", "P54", "Q9616", "2018-07-10", "2021-08-31"),
        fact("Q35171", "P39", "Q11696", "1885-03-04", "1889-03-04"),
        fact("Q35171", "P39", "Q11696", "1893-03-04", "1897-03-04"),
        fact("Q35171", "P39", "Q1", "1883-01-01", "1885-01-06"),
        fact("Q2", "P39", "Q3", "1968", "1970"),
        fact("Q2", "P39", "Q4", "1968", "1970"),
        fact("Q22686", "P39", "Q11696", "2025-01-20", None),  # open-ended: skipped
        fact("Q76", "P39", "Q5", None, "2008-11-16"),  # no start: skipped
        fact("Q76", "P39", "Q11696", "2009-01-20", "2017-01-20"),
    ]
    return TemporalKG.from_records(facts, entities=[Entity(i, n) for i, n in LABELS.items()])


@pytest.fixture(scope="module")
def built(kg):
    return build_statements(kg)


def by_text(rows):
    return {(r["text"], r["target"]): r for r in rows}


def test_award_years_share_one_answer_list(built):
    rows = by_text(built[0])
    a = rows[("John Bardeen received Nobel Prize in Physics in [MASK].", "1956")]
    b = rows[("John Bardeen received Nobel Prize in Physics in [MASK].", "1972")]
    assert a["answers"] == b["answers"] == ["1956", "1972"]
    assert a["multi_answer"] and a["slot"] == "time" and a["id"] != b["id"]
    winners = rows[("[MASK] received Nobel Prize in Physics in 1956.", "Q949")]
    assert winners["answers"] == ["Q163415", "Q949"]
    assert (a["start"], a["end"]) == ("1956", "1956")


def test_repeated_spells_at_one_club_are_distinct_statements(built):
    rows = by_text(built[0])
    first = rows[("Cristiano Ronaldo played for [MASK] from 2003 to 2009.", "Q18656")]
    second = rows[("Cristiano Ronaldo played for [MASK] from 2021 to 2022.", "Q18656")]
    assert first["answers"] == second["answers"] == ["Q18656"]
    assert not first["multi_answer"]
    start = rows[
        ("Cristiano Ronaldo played for Manchester United F.C. from [MASK] to 2022.", "2021")
    ]
    assert start["answers"] == ["2021"] and start["slot"] == "start"
    assert start["text_alone"] == "Cristiano Ronaldo played for Manchester United F.C. from [MASK]."


def test_repeated_terms_and_concurrent_positions(built):
    rows = by_text(built[0])
    end = rows[
        (
            "Grover Cleveland held the position of President of the United States"
            " from 1893 to [MASK].",
            "1897",
        )
    ]
    assert end["answers"] == ["1897"]
    both = rows[("Murray Hill held the position of [MASK] from 1968 to 1970.", "Q3")]
    assert both["answers"] == ["Q3", "Q4"] and both["multi_answer"]
    assert by_text(built[0])[("Murray Hill held the position of [MASK] from 1968 to 1970.", "Q4")]


def test_open_ended_and_start_less_facts_are_skipped_and_counted(built):
    rows, skipped = built
    assert skipped == {"no end time": 1, "no start time": 1, "no time": 0}
    assert not [r for r in rows if r["subject"] == "Q22686"]
    # 9 interval facts (3 Ronaldo, 3 Cleveland, 2 Hill, 1 Obama) x 4 slots + 3 awards x 3 slots
    assert len(rows) == 9 * 4 + 3 * 3


def test_variants_and_statistics(built):
    rows = built[0]
    clean = without_conflicts(rows)
    assert all(not r["multi_answer"] for r in clean)
    assert len(rows) - len(clean) == sum(r["multi_answer"] for r in rows)
    assert subsample(rows, 5, seed=1) == subsample(rows, 5, seed=1)
    assert len(subsample(rows, 5)) >= 5
    assert subsample(rows, len(rows)) == rows
    stats = statistics(rows)
    assert stats["statements"] == len(rows)
    assert stats["slots"] == {"subject": 12, "object": 12, "start": 9, "end": 9, "time": 3}
    assert stats["relations"]["P166"] == {"statements": 9, "multi_answer": 4}


def test_boundary_queries_keep_both_elections(kg):
    train, queries = boundary_set(kg)
    assert {r["slot"] for r in train} == {"start", "end"}
    elected = [
        q
        for q in queries
        if q["text"] == "Grover Cleveland was elected President of the United States in [MASK]."
    ]
    assert sorted(q["target"] for q in elected) == ["1885", "1893"]
    assert all(q["answers"] == ["1885", "1893"] for q in elected)
    resigned = [q for q in queries if q["text"].startswith("Barack Obama resigned from")]
    assert [(q["target"], q["answers"]) for q in resigned] == [("2017", ["2017"])]


def test_implicit_queries_use_a_year_inside_and_both_templates(kg):
    train, queries = implicit_set(kg, seed=0)
    facts_in_training = {(r["subject"], r["object"]) for r in train}
    assert ("Q35171", "Q1") in facts_in_training  # the distractor is trained on
    assert ("Q76", "Q11696") not in facts_in_training  # Obama's senate term has no start
    obama = [q for q in queries if q["subject"] == "Q76"]
    assert obama == []
    cleveland = [q for q in queries if q["subject"] == "Q35171"]
    assert {q["template"] for q in cleveland} == {"original", "new"}
    for q in cleveland:
        assert int(q["start"]) < int(q["year"]) < int(q["end"])
        assert q["answers"] == [q["object"]]
        assert q["text"] in (
            f"Grover Cleveland held the position of [MASK] in {q['year']}.",
            f"Grover Cleveland served as [MASK] in {q['year']}.",
        )
    hill = [q for q in queries if q["subject"] == "Q2"]
    assert hill and all(q["answers"] == ["Q3", "Q4"] for q in hill)


def test_a_sample_of_one_is_one_whole_query(built):
    """Asked for one statement, the sample is the rows of one masked text: both winners of the
    1956 physics prize, both of Bardeen's award years, both of Murray Hill's offices."""
    rows = built[0]
    texts = defaultdict(list)
    for row in rows:
        texts[row["text"]].append(row)
    sizes = set()
    for seed in range(200):
        (text, *others) = {r["text"] for r in subsample(rows, 1, seed)}
        assert not others
        assert subsample(rows, 1, seed) == texts[text]
        sizes.add(len(texts[text]))
    assert sizes == {1, 2}
    hill = "Murray Hill held the position of [MASK] from 1968 to 1970."
    drawn = next(d for s in range(200) if (d := subsample(rows, 1, s))[0]["text"] == hill)
    assert [r["target"] for r in drawn] == ["Q3", "Q4"]


@pytest.fixture(scope="module")
def world_kg() -> TemporalKG:
    return synthesize(SynthConfig(seed=0, facts=600, text=False)).kg


def in_sample_conflicts(rows: list[dict]) -> int:
    """Rows whose masked text has two or more targets among ``rows`` themselves."""
    targets = defaultdict(set)
    for row in rows:
        targets[row["text"]].add(row["target"])
    return sum(len(targets[row["text"]]) > 1 for row in rows)


@pytest.mark.parametrize("n", [50, 300, 1000])
def test_sampled_conflict_groups_are_whole(world_kg, n):
    rows, _ = build_statements(world_kg)
    largest = max(len(g) for g in _groups(rows).values())
    assert largest > 2  # the world has queries with several answers
    for seed in range(3):
        sample = subsample(rows, n, seed)
        ids = {r["id"] for r in sample}
        drawn_texts = {r["text"] for r in sample}
        # every row sharing a masked text with a sampled row is sampled
        assert ids == {r["id"] for r in rows if r["text"] in drawn_texts}
        # every answer of a sampled multi-answer row is a target of the sample
        targets = _groups(sample)
        for row in sample:
            assert set(row["answers"]) == targets[row["text"]]
        assert sum(r["multi_answer"] for r in sample) == in_sample_conflicts(sample)
        # queries are added until there are n rows: at most the last one's rows - 1 more
        assert n <= len(sample) < n + largest
        assert [r["id"] for r in sample] == sorted(ids)  # original order
    assert subsample(rows, n, 0) != subsample(rows, n, 1)


def _groups(rows: list[dict]) -> dict[str, set[str]]:
    targets = defaultdict(set)
    for row in rows:
        targets[row["text"]].add(row["target"])
    return targets


def test_sampled_stats_are_the_sample_own_and_the_clean_arm_is_paired(world_kg, tmp_path):
    """stats.json counts the multi-answer rows measured within the sample, and the sampled
    non-conflict set is the conflict set of the same draw less its multi-answer statements (the
    paper's non-conflict variant), so both hold the same single-answer statements."""
    stats = write_lamatk(world_kg, tmp_path / "with", sample=400, seed=2)
    clean_stats = write_lamatk(world_kg, tmp_path / "without", conflicts=False, sample=400, seed=2)
    rows = list(read_jsonl(tmp_path / "with" / "statements.jsonl"))
    clean = list(read_jsonl(tmp_path / "without" / "statements.jsonl"))
    multi = in_sample_conflicts(rows)
    assert stats["statements"]["multi_answer"] == multi
    assert multi > 20
    assert stats["statements"]["statements"] == len(rows) >= 400
    assert stats["statements"]["multi_answer_share"] == pytest.approx(multi / len(rows))
    assert stats["sample"] == {
        "requested": 400,
        "seed": 2,
        "from_statements": len(build_statements(world_kg)[0]),
        "queries": len({r["text"] for r in rows}),
        "statements": len(rows),
        "multi_answer": multi,
        "multi_answer_share": pytest.approx(multi / len(rows)),
    }
    assert json.loads((tmp_path / "with" / "stats.json").read_text()) == stats
    assert clean == [r for r in rows if not r["multi_answer"]]
    assert clean_stats["sample"] == stats["sample"]
    assert clean_stats["statements"]["statements"] == len(rows) - multi
    assert clean_stats["statements"]["multi_answer"] == 0
