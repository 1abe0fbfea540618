from __future__ import annotations

import numpy as np
import pytest

from chronoprobe.kg.graph import TemporalKG
from chronoprobe.kg.records import Fact
from chronoprobe.time import TimePoint
from chronoprobe.tkg.data import TimeMode, Vocab, every_year, intervals_of, split_kg


def _named(vocab: Vocab, rows: np.ndarray) -> set[tuple]:
    return {
        (
            vocab.entities[s],
            vocab.relations[r],
            vocab.entities[o],
            vocab.first_year + a,
            vocab.first_year + b,
        )
        for s, r, o, a, b in rows.tolist()
    }


def test_intervals_follow_the_time_semantics(tiny_kg):
    vocab, rows, skipped = intervals_of(tiny_kg)
    assert (vocab.first_year, vocab.last_year) == (2003, 2021)
    assert vocab.relations == ("held", "occurred", "spouse")
    # every entity is a candidate, even one no fact with a time names
    assert vocab.entities == (
        "biden", "event", "michelle", "nobody", "nothing", "obama", "president", "trump",
        "vice_president", "war",
    )  # fmt: skip
    assert _named(vocab, rows) == {
        ("obama", "held", "president", 2009, 2017),
        ("trump", "held", "president", 2017, 2021),  # month precision counts as its year
        ("biden", "held", "president", 2021, 2021),  # open end: up to the KG's last year
        ("biden", "held", "vice_president", 2009, 2017),
        ("obama", "spouse", "michelle", 2010, 2010),  # unknown start: only its end year
        ("war", "occurred", "event", 2003, 2011),
    }
    assert skipped == {"facts without a start or end year": 1, "duplicate facts": 1}


def test_every_year_gives_one_quadruple_per_year():
    rows = np.array([[0, 0, 1, 2, 4], [1, 1, 0, 0, 0]])
    assert every_year(rows).tolist() == [[0, 0, 1, 2], [0, 0, 1, 3], [0, 0, 1, 4], [1, 1, 0, 0]]


def test_split_is_seeded_disjoint_and_complete(synth_kg):
    a = split_kg(synth_kg, valid_fraction=0.1, test_fraction=0.2, seed=3)
    b = split_kg(synth_kg, valid_fraction=0.1, test_fraction=0.2, seed=3)
    c = split_kg(synth_kg, valid_fraction=0.1, test_fraction=0.2, seed=4)
    for name in ("train", "valid", "test"):
        assert np.array_equal(a.split(name), b.split(name))
    assert not np.array_equal(a.test, c.test)
    _, facts, _ = intervals_of(synth_kg)
    n = len(facts)
    assert (len(a.test), len(a.valid)) == (round(0.2 * n), round(0.1 * n))
    together = np.concatenate([a.train, a.valid, a.test])
    assert len(together) == n
    assert len(np.unique(together, axis=0)) == n  # no fact in two splits


def test_known_filter_and_queries(tiny_kg):
    data = split_kg(tiny_kg, valid_fraction=0.0, test_fraction=0.3, seed=0)
    years = every_year(np.concatenate([data.train, data.test]))
    assert len(data.known) == len(years) == 9 + 5 + 1 + 9 + 1 + 9
    queries = data.queries("test")
    assert queries.tolist() == sorted(row[:4] for row in data.test.tolist())
    start = split_kg(tiny_kg, valid_fraction=0.0, test_fraction=0.3, seed=0, mode=TimeMode.start)
    assert len(start.known) == 6


def test_sampled_years_stay_inside_the_interval_and_vary_by_epoch(synth_kg):
    data = split_kg(synth_kg, mode=TimeMode.sampled)
    first, second = data.training_quadruples(1, 0), data.training_quadruples(2, 0)
    assert np.array_equal(first, data.training_quadruples(1, 0))
    assert not np.array_equal(first[:, 3], second[:, 3])
    assert ((first[:, 3] >= data.train[:, 3]) & (first[:, 3] <= data.train[:, 4])).all()


def test_bad_fractions_and_timeless_kgs_are_refused(tiny_kg):
    with pytest.raises(ValueError, match="test fraction"):
        split_kg(tiny_kg, test_fraction=0.0)
    with pytest.raises(ValueError, match="valid fraction"):
        split_kg(tiny_kg, valid_fraction=0.6, test_fraction=0.5)
    timeless = TemporalKG.from_records([Fact("a", "r", "b")], name="flat")
    with pytest.raises(ValueError, match="'flat' has no fact with a start or end year"):
        intervals_of(timeless)


def test_a_year_before_the_common_era_is_a_time():
    kg = TemporalKG.from_records(
        [
            Fact("caesar", "held", "consul", TimePoint(-59), TimePoint(-59)),
            Fact("cicero", "held", "consul", TimePoint(-63), None),
        ]
    )
    vocab, rows, skipped = intervals_of(kg)
    assert (vocab.first_year, vocab.last_year) == (-63, -59)
    assert _named(vocab, rows) == {
        ("caesar", "held", "consul", -59, -59),
        ("cicero", "held", "consul", -63, -59),  # open end: up to the KG's last year
    }
    assert skipped == {"facts without a start or end year": 0, "duplicate facts": 0}
