"""The date-context view: every family scores dated statements; pairs and win rates by hand."""

from __future__ import annotations

import pytest

from chronoprobe.jsonl import write_jsonl
from chronoprobe.models.requests import Cloze, ScoreRequest
from chronoprobe.probes.date_consistency import (
    DateContextParams,
    date_context_metrics,
    pairs,
    predict_date_context,
    read_statements,
)


def statement(fact, precision, kind, distance, date, logprob=None):
    row = {
        "id": f"{fact}_{precision}_{kind}{distance}",
        "fact": fact,
        "relation": "P108",
        "precision": precision,
        "kind": kind,
        "distance": distance,
        "date": date,
    }
    return row if logprob is None else {**row, "logprob": logprob, "n_tokens": 2}


def test_pairs_compare_the_right_date_with_each_wrong_one():
    predictions = [
        statement("f1", "year", "right", 0, "2018", -5.0),
        statement("f1", "year", "before", 1, "2016", -4.0),  # preferred to the right date
        statement("f1", "year", "after", 10, "2030", -9.0),
        statement("f1", "month", "right", 0, "2018-05", -6.0),
        statement("f1", "month", "before", 1, "2017-02", -7.0),
        statement("f2", "year", "right", 0, "2001", -3.0),
        statement("f2", "year", "before", 1, "2000", -3.5),
        statement("f2", "year", "after", 1, "2003", -2.5),
    ]
    found = {
        (p["fact"], p["precision"], p["side"], p["distance"]): p["won"] for p in pairs(predictions)
    }
    assert found == {
        ("f1", "year", "before", 1): False,
        ("f1", "year", "after", 10): True,
        ("f1", "month", "before", 1): True,
        ("f2", "year", "before", 1): True,
        ("f2", "year", "after", 1): False,
    }
    metrics = date_context_metrics(predictions, DateContextParams())
    assert metrics["win_rate"] == pytest.approx(3 / 5)
    assert metrics["overall"]["robust"] == pytest.approx(1 / 3)  # only f1 at month precision
    assert metrics["by_precision"]["year"]["win_rate"] == pytest.approx(2 / 4)

    def figures(group: dict) -> dict:
        return {k: v for k, v in group.items() if k in ("pairs", "win_rate")}

    assert {d: figures(g) for d, g in metrics["by_distance"].items()} == {
        "1": {"pairs": 4, "win_rate": 0.5},
        "10": {"pairs": 1, "win_rate": 1.0},
    }
    assert figures(metrics["by_side"]["after"]) == {"pairs": 2, "win_rate": 0.5}
    # intervals resample whole (fact, precision) groups: one pair can only give itself, so
    # its interval is left out, saying why
    assert metrics["by_distance"]["10"]["win_rate_ci95"] is None
    assert metrics["by_distance"]["10"]["win_rate_no_interval"].startswith(
        "n too small: 1 fact and precision;"
    )
    assert metrics["by_distance"]["1"]["win_rate_n"] == 4
    low, high = metrics["overall"]["win_rate_ci95"]
    assert 0.0 <= low < 3 / 5 < high <= 1.0
    assert metrics["overall"]["robust_n"] == 3  # (fact, precision) groups, not statements
    assert list(metrics["by_precision_distance"]) == ["year/1", "year/10", "month/1"]


@pytest.mark.parametrize("architecture", ["roberta", "llama", "t5"])
def test_every_family_scores_the_answer_in_its_dated_sentence(tiny, tmp_path, architecture):
    model = tiny(architecture)
    rows = [
        {
            **statement("f1", "year", kind, d, date),
            "left": f"In {date}, Alice Smith was employed by ",
            "span": "Globex",
            "right": ".",
        }
        for kind, d, date in (("right", 0, "2018"), ("before", 1, "2016"), ("after", 2, "2021"))
    ]
    write_jsonl(tmp_path / "statements.jsonl", rows)
    statements = read_statements(tmp_path / "statements.jsonl")
    got = predict_date_context(model, statements, DateContextParams(), None)
    direct = [
        model.score([ScoreRequest(Cloze(r["left"], "."), "Globex", right_context=True)])[0]
        for r in rows
    ]
    assert [g["logprob"] for g in got] == pytest.approx([d.logprob for d in direct], abs=1e-4)
    assert [g["distance"] for g in got] == [0, 1, 2]
    assert len({round(g["logprob"], 4) for g in got}) >= 2  # the date changes the score
