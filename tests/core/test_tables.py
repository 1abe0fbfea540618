"""Result tables: the layout that fits the terminal, and the text formats for a paper."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from chronoprobe.core.tables import (
    Figure,
    ResultTable,
    abbreviate,
    figures_line,
    figures_of,
    latex_escape,
)

MODEL = "package:smollm2"
LONG_MODEL = "runs/demo/steps/memorize/model"
COLUMNS = ["model", "accuracy", "exact", "token_f1", "predicted", "skipped"]
ROWS = [
    [MODEL, Figure(0.412, 0.38, 0.44), 0.3, 0.5, 1200, 3],
    [LONG_MODEL, Figure(0.1, 0.05, 0.2), None, 0.25, 1200, 0],
]


def printed(table: ResultTable, width: int) -> list[str]:
    console = Console(width=width, record=True, file=io.StringIO())
    console.print(table)
    return console.export_text().splitlines()


def test_a_table_that_fits_is_printed_whole_at_200_columns():
    lines = printed(ResultTable(COLUMNS, ROWS, title="generate: 1,203 rows"), 200)
    header = next(line for line in lines if "model" in line)
    assert [c.strip() for c in header.strip("┃ ").split("┃")] == COLUMNS
    row = next(line for line in lines if MODEL in line)
    cells = [c.strip() for c in row.strip("│ ").split("│")]
    assert cells == [MODEL, "0.412 [0.380, 0.440]", "0.300", "0.500", "1,200", "3"]
    assert lines[-1] == "In brackets: 95% intervals."


def test_at_80_columns_no_cell_or_header_is_cut_nor_a_model_name_broken():
    # before: headers "accura…" and "package / :smollm / 2" over three lines
    lines = printed(ResultTable(COLUMNS, ROWS), 80)
    assert all(len(line) <= 80 for line in lines)
    text = "\n".join(lines)
    assert "…" not in text
    assert MODEL in text and LONG_MODEL in text  # each on one line
    assert "0.412 [0.380, 0.440]" in text and "0.100 [0.050, 0.200]" in text
    # too wide even with short headers: turned on its side, a row per figure
    figure_rows = [line for line in lines if line.startswith("│ accuracy")]
    assert len(figure_rows) == 1 and figure_rows[0].count("[") == 2


def test_headers_longer_than_their_cells_are_abbreviated_with_a_legend():
    columns = ["model", "temporal_accuracy", "temporal_mrr", "median_nll", "asked_as_question"]
    rows = [["tiny-2019", 0.41, 0.52, 3.2, 0], ["tiny-2020", 0.2, 0.3, 4.0, 12]]
    table = ResultTable(columns, rows)
    assert printed(table, 200)[1].count("temporal_accuracy") == 1  # fits: whole headers
    lines = printed(table, 50)
    assert all(len(line) <= 50 for line in lines)
    header = [c.strip() for c in lines[1].strip("┃ ").split("┃")]
    assert header[0] == "model" and len(header) == len(columns)
    legend = " ".join(lines[lines.index(next(x for x in lines if x.startswith("└"))) + 1 :])
    for short, full in zip(header[1:], columns[1:], strict=True):
        assert short == full or f"{short} = {full}" in legend


def test_a_row_too_wide_for_any_table_becomes_a_block_of_lines():
    table = ResultTable(COLUMNS, ROWS, title="generate")
    lines = printed(table, 40)
    assert lines[:3] == ["generate", f"model: {MODEL}", "accuracy   0.412 [0.380, 0.440]"]
    assert f"model: {LONG_MODEL}" in lines
    assert "exact      -" in [line.rstrip() for line in lines]  # a missing figure


@pytest.mark.parametrize(
    ("name", "size", "short"),
    [
        ("temporal_accuracy", 9, "temp_accu"),
        ("temporal_accuracy", 7, "tem_acc"),
        ("predicted", 5, "pred."),
        ("skipped", 7, "skipped"),
    ],
)
def test_abbreviations_cut_each_word_alike(name, size, short):
    assert abbreviate(name, size) == short and len(short) <= size


def test_markdown_aligns_numbers_right_and_escapes_pipes():
    table = ResultTable(["step", "value", "note"], [["a|b", Figure(0.5, 0.25, 0.75), "x"]])
    assert table.render("markdown") == (
        "| step | value | note |\n"
        "| --- | ---: | --- |\n"
        "| a\\|b | 0.500 [0.250, 0.750] | x |\n"
        "\n"
        "In brackets: 95% intervals.\n"
    )


def test_latex_escapes_special_characters_and_uses_booktabs():
    table = ResultTable(
        ["model", "P@1_share", "count"],
        [["a_b & c", Figure(0.4125, 0.38, 0.44), 1234], ["50% #1 {x} ~y^ $z \\w", None, 5]],
        title="drift_probe",
    )
    assert table.render("latex") == (
        "% drift_probe\n"
        "% In brackets: 95% intervals.\n"
        "\\begin{tabular}{lrr}\n"
        "\\toprule\n"
        "model & P@1\\_share & count \\\\\n"
        "\\midrule\n"
        "a\\_b \\& c & 0.412 [0.380, 0.440] & 1,234 \\\\\n"
        "50\\% \\#1 \\{x\\} \\textasciitilde{}y\\textasciicircum{} \\$z "
        "\\textbackslash{}w & - & 5 \\\\\n"
        "\\bottomrule\n"
        "\\end{tabular}\n"
    )
    assert latex_escape("100%") == "100\\%"


def test_csv_and_json_give_figures_and_their_intervals_as_plain_numbers():
    table = ResultTable(COLUMNS, ROWS)
    assert table.render("csv").splitlines() == [
        "model,accuracy,accuracy_ci_low,accuracy_ci_high,exact,token_f1,predicted,skipped",
        f"{MODEL},0.412,0.38,0.44,0.3,0.5,1200,3",
        f"{LONG_MODEL},0.1,0.05,0.2,,0.25,1200,0",
    ]
    records = json.loads(table.render("json"))
    assert records[0] == {
        "model": MODEL,
        "accuracy": 0.412,
        "accuracy_ci95": [0.38, 0.44],
        "exact": 0.3,
        "token_f1": 0.5,
        "predicted": 1200,
        "skipped": 3,
    }
    assert records[1]["exact"] is None


def test_a_column_of_whole_numbers_kept_as_floats_reads_as_counts():
    table = ResultTable(["metric", "value"], [["facts", 244.0], ["share", 0.115], ["big", 1234.7]])
    assert table.render("markdown").splitlines()[2:5] == [
        "| facts | 244 |",
        "| share | 0.115 |",
        "| big | 1235 |",
    ]
    counts = ResultTable(["step", "rows"], [["a", 3.0], ["b", 12.0]])
    assert counts.render("markdown").splitlines()[2:] == ["| a | 3 |", "| b | 12 |"]


def test_counts_print_as_integers_and_shares_rounded_wherever_they_stand():
    """The figures of `results --sql` share one column: a count there reads as a count
    ("11", not "11.000"), a share rounded ("0.193", not 0.19333333333333333), in lists too;
    a figure with no interval that is whole is a count too (model_count 1, not 1.000)."""
    table = ResultTable(
        ["metric", "value", "list"],
        [
            ["relations", 11.0, [0.19333333333333333, 2.0]],
            ["multi_answer_share", 0.19333333333333333, {"a": 0.5}],
            ["model_count", Figure(1.0), ["x"]],
        ],
    )
    assert table.render("markdown").splitlines()[2:] == [
        "| relations | 11 | [0.193, 2] |",
        '| multi_answer_share | 0.193 | {"a": 0.500} |',
        '| model_count | 1 | ["x"] |',
    ]
    assert str(Figure(0.5)) == "0.500" and str(Figure(1.0, 0.8, 1.0)) == "1.000 [0.800, 1.000]"
    # a figure whose interval was left out says why in short
    group = {"ppl": 12.5, "ppl_ci95": None, "ppl_no_interval": "n too small: 1 entity; ..."}
    assert str(Figure.of(group, "ppl")) == "12.500 (n too small)"
    assert figures_of(group) == {"ppl": Figure(12.5, note="n too small")}
    assert ResultTable(["m", "ppl"], [["x", Figure.of(group, "ppl")]]).records() == [
        {"m": "x", "ppl": 12.5, "ppl_no_interval": "n too small"}
    ]


def test_figures_of_a_metrics_group_fold_in_their_intervals():
    group = {"n": 40, "P@1": 0.25, "P@1_ci95": [0.14, 0.4], "MRR": 0.31, "MRR_n": 38, "rows": 40}
    assert figures_of(group) == {
        "n": 40,
        "P@1": Figure(0.25, 0.14, 0.4),
        "MRR": Figure(0.31),
        "rows": 40,
    }
    assert Figure.of({"x": True}, "x") is None and Figure.of({}, "x") is None


def test_an_unknown_format_and_ragged_rows_are_refused():
    with pytest.raises(ValueError, match="format 'html': choose one of table, markdown"):
        ResultTable(["a"], [["x"]]).render("html")
    with pytest.raises(ValueError, match="a row of 1 cells under 2 columns"):
        ResultTable(["a", "b"], [["x"]])


def test_a_log_line_of_figures_rounds_them_and_folds_in_their_intervals():
    group = {
        "family": "timeline-oracle",
        "facts": 338,
        "n": 25,
        "accuracy": 1.0,
        "accuracy_ci95": [0.8668077490609515, 1.0],
        "multi_answer_share": 0.19333333333333333,
        "perplexity": 12.5,
        "perplexity_ci95": None,
        "perplexity_no_interval": "n too small: 1 entity; ...",
        "by_complexity": {"simple": {"n": 10}},
    }
    assert figures_line(group) == (
        "family timeline-oracle, facts 338, n 25, accuracy 1.000 [0.867, 1.000], "
        "multi_answer_share 0.193, perplexity 12.500 (n too small)"
    )
