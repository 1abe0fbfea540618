"""What the pll view tells of a causal model's gap-first rows is a whole sentence: it scores the
label with the right context after it, so the question is read wherever the gap stands."""

from __future__ import annotations

from types import SimpleNamespace

from chronoprobe.jsonl import write_jsonl
from chronoprobe.probes.rows import read_rows
from chronoprobe.probes.view import VIEWS


def row(id: str, query: str) -> dict:
    return {"id": id, "period": "2019", "query": query, "answer_labels": ["Paris"]}


def test_the_pll_warning_says_how_gap_first_rows_are_scored(tmp_path):
    path = tmp_path / "examples.jsonl"
    write_jsonl(path, [row("a", "[MASK] is the capital of France."), row("b", "X is [MASK].")])
    rows = read_rows(path)
    causal = SimpleNamespace(name="tiny", reads_left_only=True)
    assert VIEWS.get("pll").warnings(causal, rows) == [
        "1 of 2 rows put the gap first (tiny is causal and sees no left context there); the pll "
        "view scores the label together with the right context after it, log p(label + right "
        "| start), so the question is read wherever the gap stands"
    ]
    masked = SimpleNamespace(name="bert", reads_left_only=False)
    assert VIEWS.get("pll").warnings(masked, rows) == []
