"""The synthetic world has the structure of real-world temporal KGs, deterministically."""

from __future__ import annotations

import itertools
from collections import defaultdict

import pyarrow.compute as pc
import pytest

from chronoprobe.kg.synth import SynthConfig, SynthWorld, synthesize
from chronoprobe.kg.synth.world import LAMATK_SHARES

CONFIG = SynthConfig(seed=3, facts=20_000)


@pytest.fixture(scope="module")
def world() -> SynthWorld:
    return synthesize(CONFIG)


def rows(world, relation):
    table = world.kg.facts.filter(pc.equal(world.kg.facts.column("relation"), relation))
    return table.to_pylist()


def test_same_seed_same_world_and_another_seed_another(world):
    again = synthesize(CONFIG)
    assert again.kg.facts.equals(world.kg.facts)
    assert again.kg.entities.equals(world.kg.entities)
    assert again.snippets.equals(world.snippets) and again.articles.equals(world.articles)
    other = synthesize(SynthConfig(seed=4, facts=20_000, text=False))
    assert not other.kg.facts.equals(world.kg.facts)


def test_size_and_relation_shares_follow_lamatk(world):
    assert abs(len(world.kg) - 20_000) / 20_000 < 0.05
    counts = world.kg.facts_per_relation()
    total = sum(counts[r] for r in LAMATK_SHARES)
    for relation, share in LAMATK_SHARES.items():
        assert abs(counts[relation] / total - share) < 0.03, relation
    assert {"P6", "P286", "P488", "P102"} <= set(counts)
    assert 0.10 <= world.kg.multi_answer_share() <= 0.22


def test_all_facts_lie_inside_the_world(world):
    first, last = world.kg.year_range()
    assert (first, last) == (CONFIG.start_year, CONFIG.end_year)
    assert world.kg.facts.column("end_precision").null_count > 0  # still-true facts


def spans_by(rows_, key):
    out = defaultdict(list)
    for r in rows_:
        out[key(r)].append(r)
    return out


def test_heads_of_government_hold_office_one_at_a_time_with_exact_days(world):
    for _country, terms in spans_by(rows(world, "P6"), lambda r: r["subject"]).items():
        terms.sort(key=lambda r: (r["start_year"], r["start_month"], r["start_day"]))
        assert all(t["start_precision"] == 11 for t in terms)
        for before, after in itertools.pairwise(terms):
            handover = (before["end_year"], before["end_month"], before["end_day"])
            assert handover == (after["start_year"], after["start_month"], after["start_day"])


def test_careers_move_in_the_same_year_and_return_to_old_clubs(world):
    careers = spans_by(rows(world, "P54"), lambda r: r["subject"])
    same_year = returns = 0
    for spells in careers.values():
        spells.sort(key=lambda r: r["start_year"])
        same_year += sum(a["end_year"] == b["start_year"] for a, b in itertools.pairwise(spells))
        clubs = [s["object"] for s in spells]
        returns += any(clubs[i] == clubs[i - 2] for i in range(2, len(clubs)))
    assert same_year > len(careers) and returns > 10


def test_repeated_terms_and_concurrent_positions(world):
    terms = spans_by(rows(world, "P39"), lambda r: (r["subject"], r["object"]))
    assert sum(len(t) > 1 for t in terms.values()) > 10  # same office, separate terms
    held = spans_by(rows(world, "P39"), lambda r: r["subject"])
    concurrent = 0
    for positions in held.values():
        for a in positions:
            concurrent += any(
                b is not a
                and b["object"] != a["object"]
                and b["start_year"] == a["start_year"]
                and b["end_year"] == a["end_year"]
                for b in positions
            )
    assert concurrent > 50


def test_awards_are_points_in_time_with_one_or_several_winners(world):
    awards = rows(world, "P166")
    assert all(a["start_year"] == a["end_year"] for a in awards)
    per_year = spans_by(awards, lambda r: (r["object"], r["start_year"]))
    sizes = [len(v) for v in per_year.values()]
    assert 1 in sizes and max(sizes) >= 3


def test_spouse_is_symmetric(world):
    pairs = {(r["subject"], r["object"], r["start_year"]) for r in rows(world, "P26")}
    assert pairs and all((o, s, y) in pairs for s, o, y in pairs)


def test_popularity_is_skewed_and_names_are_unique(world):
    entities = world.kg.entities.to_pylist()
    people = [e for e in entities if e["type"] == "person"]
    labels = [p["label"] for p in people]
    assert len(set(labels)) == len(labels)
    assert all(p["aliases"] for p in people)
    facts = world.kg.popularity().column("facts").to_pylist()
    top = sum(facts[: len(facts) // 100])
    assert top / sum(facts) > 0.15  # the top 1% of entities are in over 15% of fact slots
    events = [e for e in entities if e["type"] == "event"]
    assert events and all(e["start_year"] and e["end_year"] for e in events)


def test_precision_mix(world):
    counts = pc.value_counts(world.kg.facts.column("start_precision")).to_pylist()
    seen = {c["values"] for c in counts}
    assert {9, 10, 11} <= seen


def test_snippets_cover_every_year_and_say_what_holds(world):
    years = set(world.snippets.column("year").to_pylist())
    assert years == set(range(CONFIG.start_year, CONFIG.end_year + 1))
    texts = world.snippets.column("text").to_pylist()
    assert any(" plays for " in t for t in texts) and any(t.startswith("In ") for t in texts)
    article = world.articles.to_pylist()[0]
    assert article["text"].split("\n")[0].startswith(article["title"])


def test_save_and_load_round_trip(world, tmp_path):
    world.save(tmp_path / "w")
    back = SynthWorld.load(tmp_path / "w")
    assert back.kg.facts.equals(world.kg.facts)
    assert back.snippets.equals(world.snippets) and back.articles.equals(world.articles)


@pytest.mark.parametrize("facts", [200, 5_000])
def test_small_worlds_build_with_texts(facts):
    small = synthesize(SynthConfig(seed=1, facts=facts))
    assert abs(len(small.kg) - facts) / facts < 0.25
    assert small.snippets.num_rows > len(small.kg) and small.articles.num_rows > 0


def test_bad_configs_are_refused():
    with pytest.raises(ValueError, match="at least 20 years"):
        SynthConfig(start_year=2000, end_year=2010)
    with pytest.raises(ValueError, match="at least 200 facts"):
        SynthConfig(facts=10)
