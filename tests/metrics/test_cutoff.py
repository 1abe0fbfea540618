"""The effective-cutoff estimator on hand-made preference curves with known changepoints."""

from __future__ import annotations

import numpy as np
import pytest

from chronoprobe.metrics.cutoff import effective_cutoff, within

YEARS = [str(y) for y in range(2010, 2021)]


def changes(levels: dict[str, float], per_period: int = 30, seed: int = 0):
    """``per_period`` changes at each year, each preferred with the year's probability, one
    subject per change."""
    rng = np.random.default_rng(seed)
    periods, wins, subjects = [], [], []
    for year, level in levels.items():
        for i in range(per_period):
            periods.append(year)
            wins.append(float(rng.random() < level))
            subjects.append(f"{year}-{i}")
    return periods, wins, subjects


@pytest.mark.parametrize("cut", ["2012", "2015", "2018"])
def test_a_step_down_is_found_at_its_period(cut):
    levels = {y: 0.9 if y <= cut else 0.1 for y in YEARS}
    estimate = effective_cutoff(*changes(levels), YEARS)
    assert (estimate.kind, estimate.cutoff) == ("step", cut)
    assert estimate.p_value < 0.01
    low, high = estimate.interval
    assert low <= cut <= high and YEARS.index(high) - YEARS.index(low) <= 2
    assert estimate.levels[0] > 0.8 > 0.2 > estimate.levels[1]
    assert estimate.changes == 30 * len(YEARS) and estimate.subjects == 30 * len(YEARS)
    assert [point["period"] for point in estimate.curve] == YEARS
    assert within(estimate, cut, YEARS) and not within(
        estimate, "2019" if cut < "2016" else "2010", YEARS
    )


def test_the_exact_least_squares_split_on_a_tiny_curve():
    # preferences by period: 2010 [1, 1], 2011 [1, 0], 2012 [0, 0]. By hand: after 2010,
    # levels 1 and 1/4, squared error 0 + 3/4; after 2011, levels 3/4 and 0, error 3/4 + 0;
    # one level (1/2): error 6/4. A tie of the two splits: the earlier is taken
    periods = ["2010", "2010", "2011", "2011", "2012", "2012"]
    wins = [1, 1, 1, 0, 0, 0]
    estimate = effective_cutoff(periods, wins, list("abcdef"), YEARS, resamples=0)
    assert estimate.split == "2010" and estimate.levels == (1.0, 0.25)
    assert estimate.interval is None  # no resamples asked
    # six changes cannot make a significant step: many shuffles of the periods fit as well
    assert estimate.p_value > 0.05 and (estimate.kind, estimate.cutoff) == ("none", None)


def test_one_level_says_after_the_last_before_the_first_or_none():
    knows_all = effective_cutoff(*changes(dict.fromkeys(YEARS, 0.9)), YEARS)
    assert (knows_all.kind, knows_all.cutoff) == ("after", "2020")
    knows_none = effective_cutoff(*changes(dict.fromkeys(YEARS, 0.1)), YEARS)
    assert (knows_none.kind, knows_none.cutoff) == ("before", "before 2010")
    assert within(knows_none, "2009", YEARS) and not within(knows_none, "2013", YEARS)
    chance = effective_cutoff(*changes(dict.fromkeys(YEARS, 0.5), seed=3), YEARS)
    assert (chance.kind, chance.cutoff) == ("none", None)
    assert chance.preference_ci95[0] < 0.5 < chance.preference_ci95[1]
    assert not within(chance, "2015", YEARS)


def test_a_rise_is_no_cutoff():
    """Preferring new answers more as time goes on is no knowledge that stops in the set."""
    levels = {y: 0.1 if y <= "2015" else 0.9 for y in YEARS}
    estimate = effective_cutoff(*changes(levels), YEARS)
    assert (estimate.kind, estimate.cutoff, estimate.split) == ("none", None, None)


def test_subjects_are_resampled_together_and_the_interval_is_seeded():
    levels = {y: 0.9 if y <= "2014" else 0.1 for y in YEARS}
    periods, wins, _ = changes(levels)
    few = [str(i % 5) for i in range(len(wins))]  # five subjects hold every change
    one = effective_cutoff(periods, wins, few, YEARS)
    again = effective_cutoff(periods, wins, few, YEARS)
    assert one == again and one.subjects == 5


def test_nothing_to_estimate():
    assert effective_cutoff([], [], [], YEARS) is None
    single = effective_cutoff(["2012"] * 40, [1.0] * 40, [str(i) for i in range(40)], YEARS)
    assert (single.kind, single.cutoff, single.p_value) == ("after", "2012", None)


def test_knowledge_of_the_present_only_peaks_at_its_period():
    """A model that knows only its year's state prefers the new answers of that year's changes,
    the earlier answers of the next year's (the answer it knows), and either by chance
    elsewhere: a peak and a dip, whose best falling split is right after the peak."""
    levels = {y: 0.5 for y in YEARS} | {"2016": 0.95, "2017": 0.05}
    estimate = effective_cutoff(*changes(levels, per_period=40), YEARS)
    assert (estimate.kind, estimate.cutoff) == ("step", "2016")
