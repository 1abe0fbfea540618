"""Every figure says what it covers: the coverage record of a model's metrics.json entry (rows
given, rows in the figure, left out per reason, per relation, every relation listed), and the
same in the terminal, the report, `results` (its CSV with `ci_low` and `ci_high`) and the
report's headline."""

from __future__ import annotations

import csv
import io
import json

import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.jsonl import write_jsonl
from chronoprobe.probes.coverage import DELETED_LEFT_OUT, answered_part, completed, splits_left_out
from chronoprobe.probes.generate import GAP_FIRST
from chronoprobe.probes.ops import show
from chronoprobe.report.blocks import Table, Text
from chronoprobe.report.document import headline
from chronoprobe.report.generative_section import generate_section
from chronoprobe.report.rundir import StepInfo

runner = CliRunner()


def test_the_record_counts_rows_given_counted_and_left_out_per_reason_and_relation():
    predictions = [
        {"id": "a", "relation": "P54", "split": None, "form": "template"},
        {"id": "b", "relation": "P54", "split": "deleted", "form": "template"},
        {"id": "c", "relation": "P6", "split": None, "form": "question"},
        # a row answered under two conditions counts once
        {"id": "c", "relation": "P6", "split": None, "form": "question"},
    ]
    skipped = [
        {"id": "d", "relation": "P286", "skipped": "the gap comes first"},
        {"id": "e", "relation": "P286", "skipped": "the gap comes first"},
        {"id": "c", "relation": "P6", "skipped": "one condition not scored"},  # answered too
    ]
    part = answered_part(
        ["accuracy"], predictions, splits_left_out(["deleted"]), lambda p: p["form"]
    )
    record = completed({"coverage": part}, 5, predictions, skipped)
    assert record == {
        "figures": ["accuracy"],
        "rows": 5,
        "counted": 2,
        "share": 0.4,
        "left_out": {"skipped: the gap comes first": 2, DELETED_LEFT_OUT: 1},
        "forms": {"template": 1, "question": 1},
        "by_relation": {
            # the relation skipped entirely is listed, with its reason
            "P286": {"rows": 2, "counted": 0, "left_out": {"skipped: the gap comes first": 2}},
            "P54": {
                "rows": 2,
                "counted": 1,
                "left_out": {DELETED_LEFT_OUT: 1},
                "forms": {"template": 1},
            },
            "P6": {"rows": 1, "counted": 1, "left_out": {}, "forms": {"question": 1}},
        },
    }
    # a view with no coverage of its own: every answered row counts in every figure, but for
    # the splits it leaves out of its overall figures
    plain = completed({"overall_excludes": ["deleted"]}, 5, predictions, skipped)
    assert (plain["figures"], plain["counted"]) == (["every figure"], 2)
    assert plain["left_out"] == record["left_out"]


def row(id, query, relation, period, labels, split=None):
    return {
        "id": id,
        "period": period,
        "relation": relation,
        "subject": f"S{id}",
        "query": query,
        "answers": [],
        "answer_labels": labels,
        "split": split,
    }


ROWS = [
    row("a", "Alice Smith works for [MASK].", "P108", "2019", ["Globex"]),
    row("b", "Bob Jones works for [MASK].", "P108", "2019", ["Initech"]),
    row("c", "Carla Diaz works for [MASK].", "P108", "2020", ["Umbrella"], "updated"),
    row("d", "Alice Smith works for [MASK].", "P108", "2020", ["Globex"], "deleted"),
    row("e", "[MASK] is the head coach of Globex.", "P286", "2019", ["Dan Wu"]),
    row("f", "[MASK] is the head coach of Initech.", "P286", "2020", ["Eve Li"], "new"),
]


@pytest.fixture
def probed(tiny, tmp_path):
    """`probe generate --gap-first skip` on a tiny causal model: P286's rows, all gap-first,
    are skipped; the deleted row is left out of the figures."""
    write_jsonl(tmp_path / "ask" / "examples.jsonl", ROWS)
    model = tiny("llama")
    model.model.save_pretrained(tmp_path / "llama")
    model.tokenizer.save_pretrained(tmp_path / "llama")
    out = tmp_path / "out"
    args = ["probe", "generate", str(tmp_path / "ask"), "-m", str(tmp_path / "llama"),
            "--gap-first", "skip", "--max-tokens", "2", "--device", "cpu",
            "-o", str(out)]  # fmt: skip
    result = runner.invoke(app, args, terminal_width=200)
    assert result.exit_code == 0, result.output
    return out, " ".join(result.output.split())


def test_metrics_json_gives_each_model_its_coverage(probed):
    out, _ = probed
    metrics = json.loads((out / "metrics.json").read_text())
    (entry,) = metrics["models"].values()
    coverage = entry["coverage"]
    gap_first = f"skipped: {GAP_FIRST}"
    assert coverage == {
        "figures": ["accuracy"],
        "rows": 6,
        "counted": 3,
        "share": 0.5,
        "left_out": {gap_first: 2, DELETED_LEFT_OUT: 1},
        "forms": {"template": 3},
        "by_relation": {
            "P108": {
                "rows": 4,
                "counted": 3,
                "left_out": {DELETED_LEFT_OUT: 1},
                "forms": {"template": 3},
            },
            "P286": {"rows": 2, "counted": 0, "left_out": {gap_first: 2}},
        },
    }
    assert entry["accuracy_n"] == 3
    # the figure over the one model: its own, with its interval and coverage
    assert metrics["accuracy_n"] == 3 and metrics["coverage"] == coverage
    assert metrics["accuracy_ci95"] == entry["accuracy_ci95"]


def test_the_terminal_says_what_the_figures_cover_in_the_users_words(probed):
    out, printed = probed
    assert "generate: 6 rows given" in printed
    assert "accuracy over 3 of 6 rows (50.0%); left out: 2 skipped: the gap comes first" in printed
    # the option as the command line spells it, not as a config writes it
    assert "(--gap-first question asks it as its relation's question)" in printed
    assert "--include-deleted counts them" in printed and "`include_deleted" not in printed
    table = show(out)
    assert table.columns[-1] == "n" and table.rows[0][-1] == 3


def test_the_report_lists_every_relation_and_says_what_the_headline_covers(probed):
    out, _ = probed
    section = generate_section(out, {"id": "ask"})
    relations = next(
        b for b in section.blocks if isinstance(b, Table) and b.columns[0] == "relation"
    )
    rows = {r[0]: r for r in relations.rows}
    assert set(rows) == {"P108 employer", "P286 head coach"}
    skipped = rows["P286 head coach"]
    assert skipped[1] == 0 and skipped[-1].startswith("2 skipped: the gap comes first")
    assert rows["P108 employer"][-1].startswith("1 deleted split")
    notes = [b.text for b in section.blocks if isinstance(b, Text)]
    assert any(
        n.startswith("Coverage: accuracy over 3 of 6 rows (50.0%); left out: 2") for n in notes
    )
    record = {"id": "ask", "kind": "probe", "params": {"view": "generate"}}
    step = StepInfo(id="ask", kind="probe", dir=out, record=record)
    assert " over 3 of 6 rows (50.0%)" in headline(step)
    assert headline(step).startswith("accuracy 0.")


def test_results_give_n_of_rows_with_the_reasons_and_csv_its_interval_in_two_columns(probed):
    out, _ = probed
    shown = runner.invoke(app, ["results", str(out), "--metric", "accuracy"], terminal_width=200)
    assert shown.exit_code == 0, shown.output
    printed = " ".join(shown.output.split())
    assert "3 of 6 (50.0%)" in printed
    assert "accuracy: left out: 2 skipped: the gap comes first" in printed
    as_csv = runner.invoke(app, ["results", str(out), "--metric", "accuracy", "--format", "csv"])
    (line,) = list(csv.DictReader(io.StringIO(as_csv.stdout)))
    assert list(line)[:9] == [
        "step", "kind", "metric", "value", "ci_low", "ci_high", "n", "rows", "left_out",
    ]  # fmt: skip
    metrics = json.loads((out / "metrics.json").read_text())
    low, high = metrics["accuracy_ci95"]
    assert (float(line["ci_low"]), float(line["ci_high"])) == (low, high)
    assert (line["n"], line["rows"]) == ("3", "6")
    assert json.loads(line["left_out"])[f"skipped: {GAP_FIRST}"] == 2
    assert "[" not in line["ci_low"]  # a number, not the interval as one quoted string
