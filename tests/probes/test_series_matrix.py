"""The models x periods matrix and the t-1/t/t+1 window, on hand-computed prediction rows."""

from __future__ import annotations

import pytest

from chronoprobe.metrics.uncertainty import wilson_interval
from chronoprobe.probes.series_matrix import (
    period_order,
    series_matrix,
    series_tables,
    with_temporal_ranks,
)
from chronoprobe.probes.view import VIEWS

SINGLE, PLL = VIEWS.get("single-token"), VIEWS.get("pll")


def ranked(model: str, period: str, split: str | None, rank: int | None, n: int = 0) -> dict:
    return {
        "model": model,
        "id": f"r{n}_{period}",
        "period": period,
        "split": split,
        "gold_rank": rank,
        "predictions": [],
    }


# three models of a series (named by period) x three periods; gold ranks chosen by hand
RANKS = {
    # model: {period: [(split, rank), ...]}
    "2019": {"2019": [(None, 1), (None, 2)], "2020": [("updated", 4), ("unchanged", 1)],
             "2021": [("updated", None), ("new", 5)]},
    "2020": {"2019": [(None, 2), (None, 2)], "2020": [("updated", 1), ("unchanged", 1)],
             "2021": [("updated", 10), ("new", 1)]},
    "2021": {"2019": [(None, 4), (None, None)], "2020": [("updated", 2), ("unchanged", 1)],
             "2021": [("updated", 1), ("new", 1)]},
}  # fmt: skip


@pytest.fixture
def single_token_rows() -> list[dict]:
    return [
        ranked(model, period, split, rank, n)
        for model, periods in RANKS.items()
        for period, cells in periods.items()
        for n, (split, rank) in enumerate(cells)
    ]


def test_p_at_1_and_mrr_matrices_match_hand_computed_values(single_token_rows):
    p1 = series_matrix(single_token_rows, SINGLE, "P@1")
    assert p1.models == ["2019", "2020", "2021"] and p1.periods == ["2019", "2020", "2021"]
    assert p1.values == [[0.5, 0.5, 0.0], [0.0, 1.0, 0.5], [0.0, 0.5, 1.0]]
    assert p1.counts == [[2, 2, 2]] * 3
    mrr = series_matrix(single_token_rows, SINGLE, "MRR")
    assert mrr.values[0] == pytest.approx([(1 + 1 / 2) / 2, (1 / 4 + 1) / 2, (0 + 1 / 5) / 2])
    assert mrr.values[2] == pytest.approx([(1 / 4 + 0) / 2, (1 / 2 + 1) / 2, 1.0])


def test_each_cell_carries_its_own_interval_and_an_empty_cell_none(single_token_rows):
    """P@1 of a cell is a share of its rows: Wilson's interval of that cell's hits alone; MRR's
    is a bootstrap over the cell's rows, around the cell's value."""
    p1 = series_matrix(single_token_rows, SINGLE, "P@1", split="updated")
    assert p1.intervals[0][0] is None  # no updated row in the first period
    assert p1.intervals[1][1] == list(wilson_interval(1, 1))  # 2020 model, 2020: rank 1
    assert p1.intervals[0][1] == list(wilson_interval(0, 1))  # 2019 model, 2020: rank 4
    mrr = series_matrix(single_token_rows, SINGLE, "MRR")
    for values, intervals in zip(mrr.values, mrr.intervals, strict=True):
        for value, interval in zip(values, intervals, strict=True):
            assert interval is None or interval[0] <= value <= interval[1]
    # 2021 on 2021: both ranks are 1, so every resample gives 1: no spread, no interval; so
    # too the 2020 model's 2019 (ranks 2, 2) and 2020 (1, 1) cells
    assert mrr.intervals[2][2] is None
    assert [
        (i, j) for i, row in enumerate(mrr.intervals) for j, c in enumerate(row) if c is None
    ] == [
        (1, 0),
        (1, 1),
        (2, 2),
    ]
    assert series_matrix(single_token_rows, SINGLE, "MRR", resamples=0).intervals[2][2] is None
    tables = series_tables(single_token_rows, SINGLE)["metrics"]["P@1"]["updated"]
    assert tables["intervals"] == p1.intervals


def test_a_split_keeps_its_rows_only_and_the_first_period_is_empty(single_token_rows):
    updated = series_matrix(single_token_rows, SINGLE, "P@1", split="updated")
    assert updated.values == [[None, 0.0, 0.0], [None, 1.0, 0.0], [None, 0.0, 1.0]]
    assert updated.counts == [[0, 1, 1]] * 3


def test_window_takes_t_minus_1_t_and_t_plus_1_and_averages_full_windows(single_token_rows):
    window = series_matrix(single_token_rows, SINGLE, "P@1").window()
    assert window["models"]["2019"] == {"t-1": None, "t": 0.5, "t+1": 0.5, "mean": 0.5}
    assert window["models"]["2020"] == {"t-1": 0.0, "t": 1.0, "t+1": 0.5, "mean": 0.5}
    assert window["models"]["2021"] == {"t-1": 0.5, "t": 1.0, "t+1": None, "mean": 0.75}
    # only the 2020 model has all three neighbours, so the offsets average it alone
    assert window["full_windows"] == 1
    assert window["mean"] == {"t-1": 0.0, "t": 1.0, "t+1": 0.5}
    updated = series_matrix(single_token_rows, SINGLE, "P@1", split="updated").window()
    # the first period has no split, so no model has a full window of updated rows
    assert updated["models"]["2020"] == {"t-1": None, "t": 1.0, "t+1": 0.0, "mean": 0.5}
    assert updated["full_windows"] == 0
    assert updated["mean"] == {"t-1": None, "t": None, "t+1": None}


def test_window_skips_gaps_and_models_not_named_by_a_period(single_token_rows):
    rows = [r for r in single_token_rows if r["period"] != "2020" and r["model"] != "2020"]
    rows += [{**r, "model": "roberta-base"} for r in rows if r["model"] == "2019"]
    matrix = series_matrix(rows, SINGLE, "P@1")
    assert matrix.periods == ["2019", "2021"]
    window = matrix.window()
    assert set(window["models"]) == {"2019", "2021"}  # roberta-base has no period t
    # 2019 and 2021 are neighbouring columns, not neighbouring years
    assert window["models"]["2019"]["t+1"] is None and window["models"]["2021"]["t-1"] is None


def test_periods_sort_by_calendar_not_by_text():
    assert period_order(["2019-Q4", "2020-Q1", "2019-Q10"[:7], "2019-Q2"]) == [
        "2019-Q1",
        "2019-Q2",
        "2019-Q4",
        "2020-Q1",
    ]
    assert period_order(["2010", "999", "2009", "x"]) == ["999", "2009", "2010", "x"]


def pll(model: str, period: str, split: str | None, scores: dict[str, float]) -> dict:
    return {
        "model": model,
        "id": f"Q1_P54_{period}",
        "period": period,
        "split": split,
        "query": "Ann plays for [MASK].",
        "label_scores": scores,
        "label_tokens": {label: 2 for label in scores},
    }


def test_temporal_ranks_put_each_periods_answer_against_the_other_periods_answers():
    rows = [
        pll("m", "2019", None, {"Ajax": -1.0}),
        pll("m", "2020", "updated", {"Benfica": -3.0}),
        pll("m", "2021", "updated", {"Benfica": -3.0, "Celtic": -0.5}),
        pll("m", "2022", "unchanged", {"Benfica": -3.0, "Celtic": -0.5}),
        pll("n", "2019", None, {"Ajax": -2.0}),  # another model: its own candidates only
        pll("n", "2020", "updated", {"Benfica": -2.0}),
    ]
    rows.append({**pll("m", "2019", None, {"Dynamo": -9.0}), "query": "Bo plays for [MASK]."})
    ranks = [r["temporal_rank"] for r in with_temporal_ranks(rows)]
    # m: Ajax -1 beats Benfica -3 but not Celtic -0.5; Benfica loses to both; a row holding
    # Celtic has only Ajax against it; n: a tie ranks optimistically; Bo's query never changes
    assert ranks == [2, 3, 1, 1, 1, 1, None]
    matrix = series_matrix(rows, PLL, "temporal_acc", models=["m"])
    assert matrix.values == [[0.0, 0.0, 1.0, 1.0]]  # Bo's rankless row counts in no cell
    assert matrix.counts == [[2, 1, 1, 1]]
    mrr = series_matrix(rows, PLL, "temporal_mrr", models=["m"])
    assert mrr.values == [[0.5, pytest.approx(1 / 3), 1.0, 1.0]]


def test_median_nll_is_the_papers_table_2_number():
    rows = [
        pll("m", "2019", None, {"a": -1.0, "b": -4.0}),
        pll("m", "2019", None, {"c": -2.0}),
        pll("m", "2020", "new", {"a": -6.0}),
    ]
    matrix = series_matrix(rows, PLL, "median_nll")
    assert matrix.values == [[2.0, 6.0]]


def test_series_tables_hold_every_metric_split_window_and_overall(single_token_rows):
    tables = series_tables(single_token_rows, SINGLE)
    assert tables["default_metric"] == "P@1"
    assert set(tables["metrics"]) == {"P@1", "MRR", "P@10", "P@50", "P@100"}
    p1 = tables["metrics"]["P@1"]
    assert list(p1) == ["all", "unchanged", "updated", "new"]  # the builder's split order
    assert p1["updated"]["overall"] == [0.0, 0.5, 0.5]
    assert p1["all"]["overall"] == pytest.approx([2 / 6, 3 / 6, 3 / 6])
    assert p1["all"]["window"]["mean"]["t"] == 1.0


def test_an_unknown_metric_is_named():
    rows = [ranked("m", "2019", None, 1)]
    with pytest.raises(ValueError, match="no metric 'f1'; choose one of P@1, MRR"):
        series_matrix(rows, SINGLE, "f1")


def test_deleted_rows_stay_out_of_all_matrix_window_and_overall(single_token_rows):
    """Deleted rows carry the previous period's answers: they would count a model's memory of
    period t-1 as knowledge of t. Here every model ranks them first, which would lift each
    "all" cell they join."""
    deleted = [
        ranked(model, period, "deleted", 1, n=9) for model in RANKS for period in ("2020", "2021")
    ]
    rows = single_token_rows + deleted
    p1 = series_matrix(rows, SINGLE, "P@1")
    assert p1.excludes == ["deleted"]
    assert p1.values == [[0.5, 0.5, 0.0], [0.0, 1.0, 0.5], [0.0, 0.5, 1.0]]  # as without them
    assert p1.counts == [[2, 2, 2]] * 3
    assert p1.window()["mean"] == {"t-1": 0.0, "t": 1.0, "t+1": 0.5}
    own = series_matrix(rows, SINGLE, "P@1", split="deleted")
    assert own.values == [[None, 1.0, 1.0]] * 3 and own.excludes == []
    every = series_matrix(rows, SINGLE, "P@1", include_deleted=True)
    assert every.excludes == [] and every.values[0] == [0.5, 2 / 3, 1 / 3]
    tables = series_tables(rows, SINGLE)
    assert tables["all_excludes"] == ["deleted"]
    p1_tables = tables["metrics"]["P@1"]
    assert list(p1_tables) == ["all", "unchanged", "updated", "new", "deleted"]
    assert p1_tables["all"]["overall"] == pytest.approx([2 / 6, 3 / 6, 3 / 6])
    assert p1_tables["deleted"]["overall"] == [1.0, 1.0, 1.0]
    included = series_tables(rows, SINGLE, include_deleted=True)["metrics"]["P@1"]
    assert included["all"]["overall"] == pytest.approx([4 / 8, 5 / 8, 5 / 8])
