"""What a reader of the report saw wrong, each fixed: the generate timeline's colours and its
hidden Correct line, a cut heatmap title, dashes under the wrong header, no example answers,
relations named by id alone, headings without their step, the series' empty headline, and the
TKG bars that repeated the tiles (tests/tkg/test_step.py)."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib.text
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_hex

from chronoprobe.probes.judging import RULES
from chronoprobe.report import generative_section
from chronoprobe.report.blocks import DASH, Image, Stats, Table
from chronoprobe.report.document import headline
from chronoprobe.report.html import render_block
from chronoprobe.report.plots import grouped_bars, heatmap
from chronoprobe.report.rundir import StepInfo
from chronoprobe.report.sections import section_kind

from .conftest import save_world


def group(accuracy: float, correct: float, partial: float, n: int = 10) -> dict:
    return {
        "n": n,
        "accuracy": accuracy,
        **{f"accuracy_{rule}": accuracy for rule in RULES},
        "other_period": 0.0,
        "Correct": correct,
        "Partial": partial,
        "Incorrect": round(1 - correct - partial, 6),
    }


METRICS = {
    "view": "generate",
    "models": {
        "m": {
            "predicted": 4,
            "skipped": {},
            "match": "names",
            "overall": group(0.5, 0.5, 0.25),
            "by_period": {"2019": group(0.5, 0.5, 0.0), "2020": group(0.25, 0.25, 0.5)},
            "by_relation": {"P39": group(0.5, 0.5, 0.0), "Q-made-up": group(0.0, 0.0, 0.0)},
        }
    },
}


def judged(*hits: str) -> dict[str, bool]:
    return {rule: rule in hits for rule in RULES}


ANN, BO = "Ann holds the position of [MASK].", "Bo holds the position of [MASK]."
PREDICTIONS = [  # two rows every rule agrees on, then one they split over
    ("m", ANN, "2019", ["Mayor"], "Mayor", judged(*RULES), "Correct"),
    ("m", ANN, "2020", ["Senator"], "a baker", judged(), "Incorrect"),
    ("m", BO, "2020", ["Mayor of X"], "the mayor", judged("fuzzy"), "Partial"),
    ("other", BO, "2020", ["Mayor of X"], "no", judged(), "Incorrect"),
]


def generate_step(folder: Path) -> tuple[Path, dict]:
    folder.mkdir()
    (folder / "metrics.json").write_text(json.dumps(METRICS))
    columns = ["model", "query", "period", "answer_labels", "prediction", "judged", "category"]
    pq.write_table(
        pa.Table.from_pylist([dict(zip(columns, row, strict=True)) for row in PREDICTIONS]),
        folder / "predictions.parquet",
    )
    return folder, {"id": "asked", "kind": "probe", "params": {"view": "generate"}}


def test_the_timeline_draws_correct_green_and_the_accuracy_line_over_it(monkeypatch):
    figures = []
    monkeypatch.setattr(generative_section, "embed", lambda fig, **_: figures.append(fig))
    generative_section.category_timeline("m", METRICS["models"]["m"]["by_period"])
    drawn = figures[0].axes[0].lines
    lines = {line.get_label(): line for line in drawn if not line.get_label().startswith("_")}
    colours = {label: to_hex(line.get_color()) for label, line in lines.items()}
    assert colours == {  # Incorrect was green, and Correct hid under the accuracy line
        "Correct": "#009e73",
        "Partial": "#e69f00",
        "Incorrect": "#d55e00",
        "accuracy (first greedy answer)": "#000000",
    }
    accuracy, correct = lines["accuracy (first greedy answer)"], lines["Correct"]
    assert list(accuracy.get_ydata()) == list(correct.get_ydata()) == [0.5, 0.25]
    assert accuracy.get_linestyle() == "--" and accuracy.get_zorder() > correct.get_zorder()
    assert accuracy.get_linewidth() < correct.get_linewidth() and correct.get_marker() == "o"


def test_the_timeline_draws_each_share_with_its_interval(monkeypatch):
    figures = []
    monkeypatch.setattr(generative_section, "embed", lambda fig, **_: figures.append(fig))
    by_period = {p: dict(v) for p, v in METRICS["models"]["m"]["by_period"].items()}
    by_period["2019"]["Correct_ci95"] = [0.3, 0.7]
    generative_section.category_timeline("m", by_period)
    caps = [line for line in figures[0].axes[0].lines if line.get_label() == "_nolegend_"]
    green = [c for c in caps if to_hex(c.get_markeredgecolor()) == "#009e73"]
    ends = sorted(float(y) for c in green for x, y in zip(*c.get_data(), strict=True) if x == 2019)
    assert ends == pytest.approx([0.3, 0.7])  # the cap below and above Correct in 2019


def test_a_long_heatmap_title_is_wrapped_inside_the_figure():
    title = "temporal_acc per model and period (all rows but deleted)"
    fig = heatmap(
        [[0.5, 0.6, 0.7]],
        ["a"],
        ["2017", "2018", "2019"],
        title=title,
        xlabel="x",
        ylabel="y",
        value_label="v",
    )
    canvas = FigureCanvasAgg(fig)
    canvas.draw()  # lays the figure out as the page shows it
    (shown,) = [t for t in fig.findobj(matplotlib.text.Text) if "per model" in t.get_text()]
    assert shown.get_text().replace("\n", " ") == title  # whole, on two lines
    assert "\n" in shown.get_text()
    box = shown.get_window_extent(canvas.get_renderer())
    assert box.x0 >= 0 and box.x1 <= fig.bbox.x1  # was cut at "... (all rows but de"


def test_a_missing_value_is_aligned_under_its_own_numeric_header():
    table = Table(
        ["model (period t)", "t-1", "t", "t+1", "note"],
        [["a", None, 0.68, 0.556, None], ["b", 0.64, 0.611, None, "x"]],
    )
    html = render_block(table)
    dash = DASH
    assert f'<tr><td>a</td><td class="num">{dash}</td><td class="num">0.68</td>' in html
    assert f'<td class="num">0.556</td><td>{dash}</td></tr>' in html  # "note" holds no numbers
    assert f'<td class="num">{dash}</td><td>x</td></tr>' in html


def test_the_generate_section_shows_example_answers_and_relation_labels(tmp_path):
    step_dir, record = generate_step(tmp_path / "asked")
    section = section_kind("probe", record).build(step_dir, record)
    assert section.title == "Generated answers: asked"
    tables = {t.columns[0]: t for t in section.blocks if isinstance(t, Table)}
    relations = tables["relation"]
    assert [row[0] for row in relations.rows] == ["P39 position held", "Q-made-up"]
    examples = tables["question"]
    assert examples.columns == ["question", "period", "gold", "answer", *RULES, "category"]
    assert examples.caption.startswith("Example answers of m (3 of 3 rows;")
    assert examples.rows[2] == [
        BO,
        "2020",
        "Mayor of X",
        "the mayor",
        *("✓" if rule == "fuzzy" else "✗" for rule in RULES),
        "Partial",
    ]
    assert [row[0][:3] for row in examples.rows] == ["Ann", "Ann", "Bo "]  # the file's order


def test_example_answers_put_rows_the_rules_split_over_first(tmp_path):
    rows = [{"judged": judged(), "category": "Incorrect", "i": i} for i in range(20)]
    rows[15] = {"judged": judged("alias"), "category": "Partial", "i": 15}
    rows[17] = {"judged": judged(*RULES), "category": "Correct", "i": 17}
    shown = generative_section._examples(rows)
    assert [r["i"] for r in shown] == [0, 1, 2, 3, 4, 5, 15, 17]


def test_a_kg_heading_names_its_step(tmp_path):
    save_world(tmp_path / "world2")
    record = {"id": "world2", "kind": "kg"}
    section = section_kind("kg").build(tmp_path / "world2", record)
    assert section.title == "Knowledge graph: world2 (world)"


def test_the_series_step_has_a_headline_and_a_section(tmp_path):
    step_dir = tmp_path / "series"
    step_dir.mkdir()
    metrics = {
        "final_loss": {"2017": 4.5289, "2018": 4.0241, "2019": 3.4872},
        "sentences": {"2017": 1723, "2018": 229, "2019": 252},
    }
    (step_dir / "metrics.json").write_text(json.dumps(metrics))
    periods = [{"period": "2017", "parent": None}, {"period": "2018", "parent": "2017"}]
    periods.append({"period": "2019", "parent": "2018"})
    (step_dir / "series.json").write_text(json.dumps({"periods": periods}))
    record = {"id": "series", "kind": "series"}
    step = StepInfo("series", "series", step_dir, record)
    assert headline(step) == (
        f"models 3 · periods 2017{DASH}2019 · sentences 2,204 · final loss (2019) 3.49"
    )
    section = section_kind("series").build(step_dir, record)
    assert section.title == "Model series: series"
    stats, image = section.blocks
    assert isinstance(stats, Stats) and isinstance(image, Image)
    assert image.data.rows == [
        ["2017", DASH, 1723, 4.5289],
        ["2018", "2017", 229, 4.0241],
        ["2019", "2018", 252, 3.4872],
    ]


def test_a_tiles_interval_sits_small_under_its_figure():
    tiles = {"MRR": "0.0111 [0.0050, 0.0202]", "P@1": "0.41 ± 0.02", "rank": 16, "m": "a [b]"}
    html = render_block(Stats(tiles))
    assert '<div class="v">0.0111<span class="ci">[0.0050, 0.0202]</span></div>' in html
    assert '<div class="v">0.41<span class="ci">± 0.02</span></div>' in html
    assert '<div class="v">16</div>' in html and '<div class="v">a [b]</div>' in html


@pytest.mark.parametrize("horizontal", [False, True])
def test_bars_of_shares_keep_the_value_axis_they_are_given(horizontal):
    """Shares are drawn on 0 to 1 whatever the bars' heights; left alone the axis fits them."""
    series = {"a": [0.2, 0.3], "b": [0.25, 0.1]}
    fixed = grouped_bars(
        ["x", "y"],
        series,
        title="t",
        xlabel="x",
        ylabel="y",
        horizontal=horizontal,
        value_limits=(0, 1),
    )
    fitted = grouped_bars(
        ["x", "y"], series, title="t", xlabel="x", ylabel="y", horizontal=horizontal
    )
    limits = (lambda ax: ax.get_xlim()) if horizontal else (lambda ax: ax.get_ylim())
    assert limits(fixed.axes[0]) == (0, 1)
    assert limits(fitted.axes[0])[1] < 0.5
