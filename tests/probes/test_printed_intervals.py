"""Every rate a view prints carries its 95% interval (or says in short why it has none), and the
table says what its figures cover: each view run through `chronoprobe probe` on a tiny model,
its printed table read cell by cell."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.core.tables import Figure, figures_of
from chronoprobe.jsonl import write_jsonl
from chronoprobe.probes.ops import show
from chronoprobe.probes.view import VIEWS

from .conftest import as_dicts
from .test_date_context import statement
from .test_span_ppl import ROWS as ECBD_ROWS


def dated_statements() -> list[dict]:
    """Two facts, each at its right date and at wrong ones, a year precision and a month one."""
    rows = []
    for fact, person in (("f1", "Alice Smith"), ("f2", "Bob Jones")):
        for precision, dates in (("year", ("2018", "2016", "2021")), ("month", ("May 2018",))):
            for (kind, distance), date in zip(
                (("right", 0), ("before", 1), ("after", 2)), dates, strict=False
            ):
                rows.append(
                    {
                        **statement(fact, precision, kind, distance, date),
                        "left": f"In {date}, {person} was employed by ",
                        "span": "Globex",
                        "right": ".",
                    }
                )
    return rows


def _cells_with_intervals(table) -> list[Figure]:
    """The table's figures, each checked: a rate is never printed bare."""
    figures = []
    for row in table.rows:
        for column, cell in zip(table.columns[1:], row[1:], strict=True):
            assert not isinstance(cell, float), f"{column}: {cell} printed without an interval"
            if isinstance(cell, Figure):
                assert cell.low is not None or cell.note, f"{column}: {cell} has no interval"
                figures.append(cell)
    return figures


def _saved(tiny, architecture: str, folder):
    model = tiny(architecture)
    model.model.save_pretrained(folder)
    model.tokenizer.save_pretrained(folder)
    return folder


@pytest.mark.parametrize(
    ("view", "architecture", "rows", "headline"),
    [
        ("single-token", "roberta", "drift", "P@1"),
        ("multi-token", "llama", "drift", "f1"),
        ("pll", "llama", "drift", "temporal_acc"),
        ("generate", "llama", "drift", "names"),
        ("span-ppl", "llama", "ecbd", "ppl original"),
        ("date-context", "llama", "dates", "win_rate"),
    ],
)
def test_every_printed_rate_of_a_view_has_its_interval(
    tiny, examples, tmp_path, view, architecture, rows, headline
):
    data = {"drift": examples, "ecbd": tmp_path / "ecbd.jsonl", "dates": tmp_path / "dates.jsonl"}
    # q2's query again in 2020 with another answer: the PLL's temporal ranks compare the two
    again = {**as_dicts()[1], "id": "q9", "period": "2020", "split": "updated"}
    write_jsonl(examples, [*as_dicts(), {**again, "answer_labels": ["Umbrella"]}])
    write_jsonl(data["ecbd"], ECBD_ROWS)
    write_jsonl(data["dates"], dated_statements())
    model = _saved(tiny, architecture, tmp_path / architecture)
    out = tmp_path / "out"
    args = ["probe", view, str(data[rows]), "-m", str(model), "-o", str(out), "--device", "cpu"]
    if view in ("multi-token", "generate"):
        args += ["--max-tokens", "2"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    table = show(out)
    figures = _cells_with_intervals(table)
    assert headline in table.columns
    assert any(f.low is not None for f in figures)  # not all of them left out
    # the figures say what they cover, and the top of metrics.json carries the headline's
    # interval (of one model: its own)
    metrics = json.loads((out / "metrics.json").read_text())
    (entry,) = metrics["models"].values()
    coverage = entry["coverage"]
    assert coverage["rows"] == metrics["rows"] and 0 < coverage["counted"] <= coverage["rows"]
    assert any(note.endswith(f"rows ({coverage['share']:.1%})") or "rows (" in note
               for note in table.notes)  # fmt: skip
    named = coverage["figures"][0]
    if named != "every figure":
        assert f"{named}_ci95" in metrics and metrics[named] == entry[named]


def test_the_recite_view_prints_each_metric_with_its_interval():
    """Reciting needs a memorised LAMA-TK model (tests/train/lamatk); its printed figures are
    drawn from its metrics the same way."""
    from chronoprobe.probes.recite import recite_metrics

    predictions = [
        {"id": f"r{i}", "text": f"t{i % 3}", "acc@1": i % 2 == 0, "acc@5": True,
         "hit@5": i % 3 == 0, "hit@10": True, "multi_answer": False}
        for i in range(6)
    ]  # fmt: skip
    predictions = [
        {**p, **{f"hit_at_{k}": p[f"hit@{k}"] for k in (5, 10)},
         **{f"acc_at_{k}": p[f"acc@{k}"] for k in (1, 5)}}
        for p in predictions
    ]  # fmt: skip
    entry = recite_metrics(predictions)
    shown = figures_of(VIEWS.get("recite").shown(entry))
    assert shown["statements"] == 6
    for metric in ("acc@1", "acc@5", "hit@5", "hit@10"):
        assert isinstance(shown[metric], Figure) and shown[metric].low is not None, metric
