"""Each view against a naive per-example (PLL: per-token) loop over the full masked LM."""

from __future__ import annotations

import pytest
import torch

from chronoprobe.metrics.text import exact_match, rouge_l, token_f1
from chronoprobe.models.requests import Candidate, Cloze
from chronoprobe.probes import VIEWS, ProbeRow, read_rows

ATOL = 1e-4


def logprobs_at(model, ids: list[int], position: int) -> torch.Tensor:
    with torch.no_grad():
        logits = model.model(input_ids=torch.tensor([ids])).logits[0, position]
    return torch.log_softmax(logits.float(), -1)


def label_positions(model, row, label) -> tuple[list[int], list[int]]:
    filled = row.cloze.filled(label)
    enc = model.tokenizer(filled, return_offsets_mapping=True)
    start, end = len(row.cloze.left), len(row.cloze.left) + len(label)
    spans = [p for p, (a, b) in enumerate(enc["offset_mapping"]) if b > a and a < end and b > start]
    return enc["input_ids"], spans


def masked(model, row, m=1) -> list[int]:
    tok = model.tokenizer
    return tok(row.cloze.left + tok.mask_token * m + row.cloze.right)["input_ids"]


def test_single_token_view_matches_naive_loop(tiny, examples):
    model, rows = tiny(), read_rows(examples)
    got = VIEWS["single-token"].predict(model, rows, VIEWS["single-token"].params(top_k=5), None)
    expected = []
    for row in rows:
        gold = set()
        for label in row.labels:
            ids, spans = label_positions(model, row, label)
            if len(spans) == 1:
                gold.add(ids[spans[0]])
        if not gold:
            continue
        ids = masked(model, row)
        order = torch.argsort(logprobs_at(model, ids, ids.index(model.mask_id)), descending=True)
        order = order.tolist()
        expected.append(
            {
                "id": row.id,
                "period": row.period,
                "split": row.split,
                "form": "cloze",
                "predictions": [model.tokenizer.decode([t]).strip() for t in order[:5]],
                "gold_rank": min(order.index(g) + 1 for g in gold),
            }
        )
    # q3, q6 and q7 have only multi-token labels; q2 keeps its one single-token label
    assert [e["id"] for e in expected] == ["q1", "q2", "q4", "q5"]
    assert [p for p in got if "skipped" not in p] == expected
    skipped = [p for p in got if "skipped" in p]
    assert [(p["id"], p["skipped"]) for p in skipped] == [
        (i, "no single-token gold label") for i in ("q3", "q6", "q7")
    ]


def test_multi_token_view_matches_naive_loop(tiny, examples):
    """Fillings of 1..M masks, the best per token chosen, scored against the labels of at most
    M tokens; rows with none are skipped."""
    model, rows = tiny(), read_rows(examples)
    got = VIEWS["multi-token"].predict(model, rows, VIEWS["multi-token"].params(max_tokens=2), None)
    special = set(model.tokenizer.all_special_ids)
    kept = []
    for row, prediction in zip(rows, got, strict=True):
        assert prediction["id"] == row.id
        gold = [label for label in row.labels if len(label_positions(model, row, label)[1]) <= 2]
        if not gold:
            assert prediction["skipped"] == "every gold label is longer than M = 2 tokens"
            continue
        kept.append(row.id)
        candidates = []
        for m in (1, 2):
            ids, tokens, total = masked(model, row, m), [], 0.0
            while model.mask_id in ids:
                p = ids.index(model.mask_id)
                lp = logprobs_at(model, ids, p)
                best = max((t for t in range(len(lp)) if t not in special), key=lambda t: lp[t])
                ids[p], total = best, total + lp[best].item()
                tokens.append(best)
            candidates.append((model.tokenizer.decode(tokens).strip(), total, total / m))
        text = max(candidates, key=lambda c: c[2])[0]
        assert [c["text"] for c in prediction["candidates"]] == [t for t, _, _ in candidates]
        assert [c["logprob"] for c in prediction["candidates"]] == pytest.approx(
            [lp for _, lp, _ in candidates], abs=ATOL
        )
        assert [c["mean_logprob"] for c in prediction["candidates"]] == pytest.approx(
            [mean for _, _, mean in candidates], abs=ATOL
        )
        assert prediction["prediction"] == text
        assert prediction["gold_labels"] == gold and prediction["form"] == "cloze"
        assert prediction["exact_match"] == exact_match(text, gold)
        assert prediction["f1"] == token_f1(text, gold)
        assert prediction["rouge_l"] == rouge_l(text, gold)
    # in the fixture's byte-level BPE "Bob Jones" is two tokens, "New York Times" three and
    # "Carla Diaz" four: q6 and q3 have no label of at most M = 2 tokens
    assert kept == ["q1", "q2", "q4", "q5", "q7"]


def test_pll_view_matches_per_token_loop(tiny, examples):
    model, rows = tiny(), read_rows(examples)
    got = VIEWS["pll"].predict(model, rows, VIEWS["pll"].params(), None)
    for row, prediction in zip(rows, got, strict=True):
        assert list(prediction["label_scores"]) == row.labels
        for label in row.labels:
            ids, spans = label_positions(model, row, label)
            total = 0.0
            for p in spans:
                copy = list(ids)
                copy[p] = model.mask_id
                total += logprobs_at(model, copy, p)[ids[p]].item()
            assert prediction["label_tokens"][label] == len(spans)
            assert prediction["label_scores"][label] == pytest.approx(total, abs=ATOL)


@pytest.mark.parametrize("architecture", ["llama", "t5"])
def test_every_view_runs_for_decoder_families(tiny, examples, architecture):
    model, rows = tiny(architecture), read_rows(examples)
    single = VIEWS["single-token"].predict(model, rows, VIEWS["single-token"].params(top_k=3), None)
    answered = [p for p in single if "skipped" not in p]
    assert all(len(p["predictions"]) == 3 and p["gold_rank"] >= 1 for p in answered)
    multi = VIEWS["multi-token"].predict(
        model, rows, VIEWS["multi-token"].params(max_tokens=5), None
    )
    assert [p["id"] for p in multi] == [r.id for r in rows]
    # q3 puts the gap first: a causal model is asked it as a question, or skips it on request
    gap_first = ["q3"] if architecture == "llama" else []
    assert [p["id"] for p in multi if "skipped" in p] == []
    assert [p["id"] for p in multi if p["form"] == "question"] == gap_first
    skip = {"max_tokens": 5, "gap_first": "skip"}
    multi_skip = VIEWS["multi-token"].predict(
        model, rows, VIEWS["multi-token"].params(**skip), None
    )
    assert [p["id"] for p in multi_skip if "skipped" in p] == gap_first
    single_skip = VIEWS["single-token"].predict(
        model, rows, VIEWS["single-token"].params(gap_first="skip"), None
    )
    first = [p["id"] for p in single_skip if p.get("skipped", "").startswith("the gap comes first")]
    assert first == gap_first
    assert all(len(p["candidates"]) == 5 for p in multi if "skipped" not in p)
    scores = VIEWS["pll"].predict(model, rows, VIEWS["pll"].params(), None)
    assert [p["id"] for p in scores] == [r.id for r in rows]
    assert all(v < 0 for p in scores for v in p["label_scores"].values())


class FixedCandidates:
    """A stand-in adapter whose fillings are given: labels one token per word, no gap first."""

    reads_left_only = False

    def __init__(self, candidates):
        self.candidates = candidates

    def label_token_ids(self, requests):
        return [list(range(len(r.span.split()))) for r in requests]

    def generate(self, requests, progress=None):
        return [self.candidates for _ in requests]


def test_a_one_token_filling_no_longer_wins_by_length_alone():
    """Summed log-probabilities favour the shortest filling: every token adds a negative term.
    "Acme" (-3.0 in one token) beats "Acme Corp" (-4.0 in two) by the sum; per token the
    two-token filling is better (-2.0 against -3.0), and it is the gold label."""
    candidates = [
        Candidate("Acme", [1], -3.0, 1),
        Candidate("Acme Corp", [1, 2], -4.0, 2),
        Candidate("Acme Corp Ltd", [1, 2, 3], -7.5, 3),
    ]
    row = ProbeRow("q", Cloze("Alice works for ", "."), ["Acme Corp"], "2020", "new")
    (got,) = VIEWS["multi-token"].predict(
        FixedCandidates(candidates), [row], VIEWS["multi-token"].params(), None
    )
    assert got["prediction"] == "Acme Corp" and got["exact_match"] == 1.0
    assert [c["mean_logprob"] for c in got["candidates"]] == [-3.0, -2.0, -2.5]


def test_labels_longer_than_m_are_left_out_and_rows_without_any_skipped():
    model = FixedCandidates([Candidate("Acme", [1], -1.0, 1)])
    rows = [
        ProbeRow("short", Cloze("A works for ", "."), ["Acme"], "2020", None),
        ProbeRow("mixed", Cloze("B works for ", "."), ["a b c d", "Acme"], "2020", None),
        ProbeRow("long", Cloze("C works for ", "."), ["a b c d", "a b c d e"], "2020", None),
    ]
    got = VIEWS["multi-token"].predict(model, rows, VIEWS["multi-token"].params(max_tokens=3), None)
    assert [p.get("skipped") for p in got] == [
        None,
        None,
        "every gold label is longer than M = 3 tokens",
    ]
    # "mixed" is scored against "Acme" only: "a b c d" (4 tokens) could never be filled in
    assert [p["exact_match"] for p in got[:2]] == [1.0, 1.0]


def test_selection_sum_takes_the_best_summed_filling_and_metrics_give_both_rules():
    """The paper does not say which of the 1..M fillings is the prediction. By the sum "Acme"
    (-3.0) wins and scores against "Acme Corp" EM 0, F1 = ROUGE-L = 2 * 1 * 0.5 / 1.5 = 2/3;
    per token "Acme Corp" (-2.0) wins, EM 1. metrics.json gives both rules either way."""
    candidates = [
        Candidate("Acme", [1], -3.0, 1),
        Candidate("Acme Corp", [1, 2], -4.0, 2),
        Candidate("Acme Corp Ltd", [1, 2, 3], -7.5, 3),
    ]
    row = ProbeRow("q", Cloze("Alice works for ", "."), ["Acme Corp", "a b c d e f"], "2020", "new")
    view, model = VIEWS["multi-token"], FixedCandidates(candidates)
    both = {
        "mean": {"n": 1, "exact_match": 1.0, "f1": 1.0, "rouge_l": 1.0},
        "sum": {
            "n": 1,
            "exact_match": 0.0,
            "f1": pytest.approx(2 / 3),
            "rouge_l": pytest.approx(2 / 3),
        },
    }
    for rule, text in (("sum", "Acme"), ("mean", "Acme Corp")):
        params = view.params(selection=rule)
        (got,) = view.predict(model, [row], params, None)
        assert got["prediction"] == text and got["gold_labels"] == ["Acme Corp"]
        assert got["f1"] == both[rule]["f1"] and got["exact_match"] == both[rule]["exact_match"]
        metrics = view.metrics([got], params)
        figures = {
            r: {k: v for k, v in m.items() if not k.endswith(("_ci95", "_no_interval"))}
            for r, m in metrics["selections"].items()
        }
        assert metrics["selection"] == rule and figures == both
        assert metrics["f1"] == both[rule]["f1"]  # the headline follows the chosen rule
        # one row: EM's Wilson interval of 0 or 1 out of 1; F1's bootstrap would be the row
        # itself, [x, x]: it has none, and says n is too small
        assert metrics["selections"]["sum"]["exact_match_ci95"] == pytest.approx([0.0, 0.79345])
        assert metrics["selections"]["sum"]["f1_ci95"] is None
        assert metrics["selections"]["sum"]["f1_no_interval"].startswith("n too small: 1 row;")
    with pytest.raises(ValueError, match="selection"):
        view.params(selection="max")
