"""Heatmap cells show the rows behind them and fade below a few; one model draws a line."""

from __future__ import annotations

import numpy as np
import pytest

from chronoprobe.report.drift_section import _heatmap
from chronoprobe.report.plots import FADED, heatmap, line_plot


def test_cells_show_their_rows_and_fade_below_the_threshold():
    figure = heatmap(
        [[0.5, 0.25], [np.nan, 1.0]],
        ["a", "b"],
        ["2019", "2020"],
        title="t",
        xlabel="x",
        ylabel="y",
        value_label="P@1",
        vmin=0,
        vmax=1,
        counts=[[3, 40], [0, 30]],
        few=30,
    )
    ax = figure.axes[0]
    texts = {t.get_text(): t.get_color() for t in ax.texts}
    assert set(texts) == {"0.50\nn=3", "0.25\nn=40", "1.00\nn=30"}  # the empty cell stays blank
    assert texts["0.50\nn=3"] == "#555555"
    assert texts["0.25\nn=40"] == "white" and texts["1.00\nn=30"] == "black"
    (image,) = ax.images
    assert np.array_equal(image.get_alpha(), [[FADED, 1.0], [FADED, 1.0]])


def test_a_heatmap_without_counts_draws_every_cell_solid():
    figure = heatmap([[0.5]], ["a"], ["2019"], title="t", xlabel="x", ylabel="y", value_label="v")
    ax = figure.axes[0]
    assert [t.get_text() for t in ax.texts] == ["0.50"]
    assert ax.images[0].get_alpha() is None


def test_faded_points_of_a_line_are_drawn_hollow():
    figure = line_plot(
        {"m": ([0, 1, 2], [0.2, 0.4, 0.6])},
        title="t",
        xlabel="period",
        ylabel="P@1",
        markers=True,
        categories=["2019-H1", "2019-H2", "2020-H1"],
        faded={"m": [True, False, True]},
    )
    ax = figure.axes[0]
    line, hollow = ax.lines
    assert list(line.get_ydata()) == [0.2, 0.4, 0.6]
    assert list(hollow.get_xdata()) == [0, 2] and hollow.get_markerfacecolor() == "white"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["2019-H1", "2019-H2", "2020-H1"]


MATRIX = {
    "models": ["runs/model-2019"],
    "periods": ["2019", "2020"],
    "values": [[0.5, None]],
    "counts": [[4, 0]],
    "excludes": ["deleted"],
}


def test_one_model_is_a_line_chart_with_rows_per_cell():
    image = _heatmap(MATRIX, "P@1", "all")
    assert image.alt == "Line chart of P@1 for model-2019 over 2 periods (all rows but deleted)"
    assert image.data.columns == [
        "model",
        "2019 (value [95% CI])",
        "2019 (rows)",
        "2020 (value [95% CI])",
        "2020 (rows)",
    ]
    # a matrix written before cells had intervals shows the value alone
    assert image.data.rows == [["runs/model-2019", "0.5000", 4, "-", 0]]
    assert "1 of 1 cells come from fewer than 30 rows" in image.caption


def test_a_cell_shows_its_interval_and_the_line_its_error_bar(monkeypatch):
    from chronoprobe.report import drift_section

    drawn = {}

    def line_plot(series, **options):
        drawn.update(options)
        return real(series, **options)

    real = drift_section.line_plot
    monkeypatch.setattr(drift_section, "line_plot", line_plot)
    image = _heatmap({**MATRIX, "intervals": [[[0.2, 0.8], None]]}, "P@1", "all")
    assert image.data.rows == [["runs/model-2019", "0.5000 [0.2000, 0.8000]", 4, "-", 0]]
    # rows below, above: 0.3 either way at 2019, none at 2020 (no rows)
    assert drawn["errors"] == {"model-2019": [[pytest.approx(0.3), 0.0], [pytest.approx(0.3), 0.0]]}


def test_several_models_are_a_heatmap():
    matrix = {
        **MATRIX,
        "models": ["a", "b"],
        "values": [[0.5, 0.7], [0.1, 0.2]],
        "counts": [[40, 40], [40, 40]],
    }
    image = _heatmap(matrix, "P@1", "updated")
    assert image.alt == "Heatmap of P@1 for 2 models over 2 periods (updated rows)"
    assert image.caption == "P@1 (share of rows with a gold label ranked first)"
