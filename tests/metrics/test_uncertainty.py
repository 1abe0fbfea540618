"""Intervals: Wilson against hand-computed values, the bootstrap's determinism, coverage and
clustering."""

from __future__ import annotations

import numpy as np
import pytest

from chronoprobe.metrics import uncertainty as u


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [
        # p = 0.8: centre (0.8 + z²/20) / (1 + z²/10) = 0.71674, half-width 0.22658
        (8, 10, 0.49016, 0.94332),
        (5, 10, 0.23659, 0.76341),
        (50, 100, 0.40383, 0.59617),
        (0, 10, 0.0, 0.27753),  # z² / (n + z²)
        (10, 10, 0.72247, 1.0),
        (1, 1, 0.20654, 1.0),
    ],
)
def test_wilson_by_hand(k, n, low, high):
    got = u.wilson_interval(k, n)
    assert got == pytest.approx((low, high), abs=5e-5)


def test_wilson_edges():
    assert u.wilson_interval(0, 0) is None
    lo, hi = u.wilson_interval(0, 7)
    assert lo == 0.0 and 0 < hi < 1
    with pytest.raises(ValueError, match="11 successes out of 10"):
        u.wilson_interval(11, 10)


def test_proportion_estimate_and_fields():
    e = u.proportion([True, False, True, True])
    assert e.value == 0.75 and e.n == 4
    assert (e.low, e.high) == pytest.approx(u.wilson_interval(3, 4))
    assert e.fields("acc", group_n=4) == {"acc": 0.75, "acc_ci95": [e.low, e.high]}
    assert e.fields("acc", group_n=9)["acc_n"] == 4
    empty = u.proportion([])
    assert empty.fields("acc", 0) == {"acc": None, "acc_ci95": None}


def test_summary_writes_n_and_each_metric_once():
    out = u.summary(3, {"P@1": u.proportion([1, 0, 1]), "MRR": u.mean([1.0, 0.5, 1.0])}, labels=5)
    assert list(out) == ["n", "labels", "P@1", "P@1_ci95", "MRR", "MRR_ci95"]
    assert out["MRR"] == pytest.approx(2.5 / 3)


def test_bootstrap_is_seeded():
    x = np.random.default_rng(1).normal(size=50).tolist()
    assert u.mean(x) == u.mean(x)
    assert u.mean(x, seed=1) != u.mean(x)
    a = u.mean(x)
    assert a.low < a.value < a.high


def test_counts_do_not_depend_on_blocks(monkeypatch):
    whole = np.concatenate(u.resample_counts(37, 100, seed=3))
    monkeypatch.setattr(u, "_BLOCK_CELLS", 37 * 7)  # blocks of 7 resamples
    blocks = u.resample_counts(37, 100, seed=3)
    assert len(blocks) == 15
    assert np.array_equal(np.concatenate(blocks), whole)
    assert (whole.sum(axis=1) == 37).all()


def test_bootstrap_width_matches_the_normal_theory():
    # mean of 400 draws of N(0, 1): the 95% interval is about 2 * 1.96 / 20 = 0.196 wide
    x = np.random.default_rng(2).normal(size=400)
    e = u.mean(x.tolist())
    assert e.high - e.low == pytest.approx(0.196, rel=0.15)


def test_bootstrap_coverage_on_a_known_distribution():
    # 200 samples of 60 exponential draws (skewed, true mean 1): the interval holds the true
    # mean in about 95% of them (the percentile bootstrap runs a little short at small n)
    rng = np.random.default_rng(3)
    held = 0
    for i in range(200):
        e = u.mean(rng.exponential(size=60).tolist(), resamples=400, seed=i)
        held += e.low <= 1.0 <= e.high
    assert 0.86 <= held / 200 <= 0.99


def test_wilson_coverage_on_a_known_rate():
    rng = np.random.default_rng(4)
    held = sum((e := u.proportion(rng.random(80) < 0.1)).low <= 0.1 <= e.high for _ in range(400))
    assert 0.92 <= held / 400 <= 0.98


def test_clusters_resample_whole_entities():
    # 10 entities, 20 identical rows each: the rows are 10 observations, not 200
    values = np.repeat(np.arange(10, dtype=float), 20).tolist()
    entities = np.repeat(np.arange(10), 20).tolist()
    rows = u.mean(values)
    clustered = u.mean(values, entities)
    assert rows.value == clustered.value == 4.5
    assert (clustered.high - clustered.low) > 3 * (rows.high - rows.low)
    # a cluster per row is the row bootstrap, resample for resample
    singletons = u.mean(values, list(range(200)))
    assert (singletons.low, singletons.high) == pytest.approx((rows.low, rows.high))
    with pytest.raises(ValueError, match="3 cluster labels for 200 values"):
        u.mean(values, [1, 2, 3])


def test_clustered_proportion_is_bootstrapped():
    outcomes = [True] * 6 + [False] * 4
    e = u.proportion(outcomes, clusters=["a"] * 6 + ["b"] * 4)
    assert e.value == 0.6 and e.n == 10
    # two clusters: every resample is all a (1.0), all b (0.0) or half (0.6)
    assert e.low == 0.0 and e.high == 1.0


def test_estimate_of_a_ratio_statistic():
    # token perplexity exp(-sum logprob / sum tokens) over rows
    logprob = np.array([-2.0, -6.0, -1.0])
    tokens = np.array([1.0, 3.0, 1.0])
    value = float(np.exp(-logprob.sum() / tokens.sum()))
    e = u.estimate(value, lambda c: np.exp(-(c @ logprob) / (c @ tokens)), 3, 3)
    assert e.value == pytest.approx(np.exp(9 / 5))
    assert np.exp(1.0) <= e.low <= e.value <= e.high <= np.exp(2.0)
    assert u.estimate(None, lambda c: c[:, 0], 0, 0) == u.Estimate(None, None, None, 0)


def test_a_bootstrap_over_one_unit_gives_no_interval_and_says_n_is_too_small():
    # one value, or one entity's several sentences: every resample is the same unit again,
    # so the interval would be the point [x, x]
    e = u.mean([0.25])
    assert (e.value, e.low, e.high, e.n) == (0.25, None, None, 1)
    assert e.no_interval.startswith("n too small: 1 row;")
    one_entity = u.mean([1.0, 2.0, 4.0], ["e1", "e1", "e1"], unit="entity")
    assert one_entity.value == pytest.approx(7 / 3) and one_entity.low is None
    assert one_entity.no_interval.startswith("n too small: 1 entity;")
    assert u.median([3.0, 5.0], ["e1", "e1"], unit="entity").no_interval.startswith(
        "n too small: 1 entity"
    )
    assert u.estimate(2.0, lambda c: c[:, 0], 1, 4, unit="entity").no_interval.startswith(
        "n too small: 1 entity"
    )
    # in metrics.json: the figure, a null interval and the reason beside it
    assert e.fields("mrr", 1) == {"mrr": 0.25, "mrr_ci95": None, "mrr_no_interval": e.no_interval}
    assert u.with_interval(e.fields("mrr"), "mrr") == "0.250 (n too small)"
    # two units have a spread; Wilson's interval is sound at one row, so a share keeps it
    assert u.mean([0.25, 0.75]).low is not None
    share = u.proportion([True])
    assert share.low == pytest.approx(0.2065, abs=1e-4) and share.high == 1.0
    assert share.no_interval is None
    # resamples 0: the figure alone was asked for, which is no defect of the rows
    assert u.mean([0.25], resamples=0).no_interval is None


def test_units_that_all_agree_give_no_spread_rather_than_a_point_interval():
    e = u.mean([1.0, 1.0, 1.0, 1.0])
    assert (e.value, e.low, e.high) == (1.0, None, None)
    assert e.no_interval.startswith("no spread:")
    assert u.with_interval(e.fields("mrr"), "mrr") == "1.000 (no spread)"


def test_mean_over_seeds_merges_metrics_files():
    runs = [
        {
            "model": "tcomplex",
            "n": 10,
            "hits@1": 0.4,
            "hits@1_ci95": [0.1, 0.7],
            "types": {"a": {"n": 5, "mrr": 0.2, "mrr_ci95": [0.1, 0.3]}},
            "history": [1, 2],
        },
        {
            "model": "tcomplex",
            "n": 10,
            "hits@1": 0.6,
            "hits@1_ci95": [0.3, 0.9],
            "types": {"a": {"n": 5, "mrr": 0.4, "mrr_ci95": [0.3, 0.5]}},
            "history": [3],
        },
    ]
    merged = u.mean_over_seeds(runs)
    assert merged == {
        "model": "tcomplex",
        "n": 10,
        "hits@1": pytest.approx(0.5),
        "hits@1_sd": pytest.approx(0.02**0.5),
        "types": {"a": {"n": 5, "mrr": pytest.approx(0.3), "mrr_sd": pytest.approx(0.02**0.5)}},
        "history": [1, 2],
        "seeds": 2,
    }
    one = u.mean_over_seeds(runs[:1])
    assert one["hits@1"] == 0.4 and one["hits@1_sd"] is None and one["seeds"] == 1
    with pytest.raises(ValueError, match="no runs"):
        u.mean_over_seeds([])


def _naive_medians(values, clusters, resamples, seed):
    """The median of each resample, drawn as the bootstrap draws them, one resample at a time."""
    labels = sorted(set(clusters), key=clusters.index)
    counts = np.concatenate(u.resample_counts(len(labels), resamples, seed))
    out = []
    for drawn in counts:
        times = {label: int(k) for label, k in zip(labels, drawn, strict=True)}
        sample = [v for v, c in zip(values, clusters, strict=True) for _ in range(times[c])]
        out.append(float(np.median(sample)))
    return np.array(out)


@pytest.mark.parametrize("clustered", [False, True])
def test_median_interval_is_the_naive_bootstrap(clustered):
    rng = np.random.default_rng(4)
    values = rng.normal(size=31).round(3).tolist()  # ties included
    values[5] = values[6]
    clusters = [i // 3 for i in range(31)] if clustered else list(range(31))
    e = u.median(values, clusters if clustered else None, resamples=300, seed=2)
    naive = _naive_medians(values, clusters, 300, 2)
    assert e.value == float(np.median(values)) and e.n == 31
    assert (e.low, e.high) == pytest.approx(tuple(np.percentile(naive, [2.5, 97.5])))


def test_median_by_hand():
    assert u.median([]) == u.EMPTY
    assert u.median([3.0]) == u.Estimate(3.0, None, None, 1, u.too_few(1))
    two = u.median([1.0, 2.0, 10.0, 4.0])
    assert two.value == 3.0 and 1.0 <= two.low <= 3.0 <= two.high <= 10.0
    with pytest.raises(ValueError, match="2 cluster labels for 3 values"):
        u.median([1.0, 2.0, 3.0], ["a", "b"])
