"""Gap-first rows for a causal model: asked as a question whose prompt ends where the answer
starts, checked against a naive loop over the tiny causal model; or skipped on request."""

from __future__ import annotations

import pytest
import torch

from chronoprobe.models.requests import Cloze, ScoreRequest
from chronoprobe.probes import VIEWS, ProbeRow
from chronoprobe.probes.cloze_views import as_question, in_gap

ATOL = 1e-4
# two gap-first rows that differ only in the named person, and one with the gap last
ROWS = [
    ProbeRow(
        "g1", Cloze.from_query("[MASK] employed Alice Smith in 2019."), ["Globex"], "2019", None
    ),
    ProbeRow(
        "g2", Cloze.from_query("[MASK] employed Bob Jones in 2019."), ["Globex"], "2019", None
    ),
    ProbeRow(
        "last", Cloze.from_query("Alice Smith was employed by [MASK]."), ["Globex"], "2019", None
    ),
]


def test_a_question_keeps_the_statement_and_ends_where_the_answer_starts():
    asked = as_question(Cloze.from_query("[MASK] is the head coach of Manchester United F.C."))
    assert asked == Cloze(
        "Fill in the blank: ___ is the head coach of Manchester United F.C.\nAnswer: ", "\n"
    )
    # any gap position, spaces collapsed; the prompt ends with the space before the answer
    asked = as_question(Cloze("  In 2020,  ", " was employed by\tInitech. "))
    assert asked.left == "Fill in the blank: In 2020, ___ was employed by Initech.\nAnswer: "
    assert asked.filled("Bob Jones") == (
        "Fill in the blank: In 2020, ___ was employed by Initech.\nAnswer: Bob Jones\n"
    )


def test_a_label_with_its_own_stop_takes_the_full_stop_after_the_gap():
    cloze = Cloze("Messi plays for ", ".")
    assert in_gap(cloze, "Manchester United F.C.").filled("Manchester United F.C.") == (
        "Messi plays for Manchester United F.C."
    )
    assert in_gap(cloze, "Yahoo!").right == "" and in_gap(cloze, "Jeopardy?").right == ""
    assert in_gap(cloze, "Globex") == cloze  # no stop of its own: the sentence keeps its stop
    assert in_gap(Cloze("X joined ", " in 2010."), "Apple Inc.").right == " in 2010."


def test_the_pll_view_scores_a_label_with_its_own_stop_with_no_second_stop(tiny):
    model = tiny("llama")
    query = Cloze.from_query("Alice Smith was employed by [MASK].")
    row = ProbeRow("s", query, ["Acme Corp."], "2019", None)
    (got,) = VIEWS["pll"].predict(model, [row], VIEWS["pll"].params(), None)
    one_stop = Cloze("Alice Smith was employed by ", "")
    (want,) = model.score([ScoreRequest(one_stop, "Acme Corp.", right_context=True)])
    assert got["label_scores"] == {"Acme Corp.": pytest.approx(want.logprob, abs=ATOL)}
    assert got["label_tokens"] == {"Acme Corp.": want.n_tokens}


def _logprobs(model, ids: list[int]) -> torch.Tensor:
    with torch.no_grad():
        logits = model.model(input_ids=torch.tensor([ids])).logits[0]
    return torch.log_softmax(logits.float(), -1)


def _prompt_ids(model, cloze: Cloze) -> list[int]:
    """What a causal model reads before the gap: the left context as its tokenizer frames it."""
    return model.tokenizer(cloze.left.rstrip())["input_ids"]


def test_single_token_ranks_after_the_question_as_a_naive_loop(tiny):
    model = tiny("llama")
    got = VIEWS["single-token"].predict(model, ROWS, VIEWS["single-token"].params(top_k=3), None)
    assert [p["form"] for p in got] == ["question", "question", "cloze"]
    globex = model.tokenizer(" Globex", add_special_tokens=False)["input_ids"]
    assert len(globex) == 1  # " Globex" is one token after "Answer:" and after "by"
    lasts = []
    for row, prediction in zip(ROWS, got, strict=True):
        cloze = as_question(row.cloze) if row.id != "last" else row.cloze
        last = _logprobs(model, _prompt_ids(model, cloze))[-1]
        order = torch.argsort(last, descending=True).tolist()
        assert prediction["gold_rank"] == int((last > last[globex[0]]).sum()) + 1
        assert prediction["predictions"] == [model.token_text(t) for t in order[:3]]
        lasts.append(last)
    # the question is read: the two gap-first rows, which differ in the person only, differ
    assert not torch.allclose(lasts[0], lasts[1])


def test_multi_token_fills_after_the_question_as_a_naive_loop(tiny):
    model = tiny("llama")
    params = VIEWS["multi-token"].params(max_tokens=3)
    got = VIEWS["multi-token"].predict(model, ROWS[:2], params, None)
    closing = model.tokenizer("\n", add_special_tokens=False)["input_ids"]
    special = set(model.tokenizer.all_special_ids)
    for row, prediction in zip(ROWS[:2], got, strict=True):
        prompt = _prompt_ids(model, as_question(row.cloze))
        made, total, expected = [], 0.0, []
        for m in range(1, 4):
            lp = _logprobs(model, prompt + made)[-1]
            token = max((t for t in range(len(lp)) if t not in special), key=lambda t: lp[t])
            made, total = [*made, token], total + lp[token].item()
            after = _logprobs(model, prompt + made + closing)
            end = sum(after[len(prompt) + m - 1 + j, c].item() for j, c in enumerate(closing))
            expected.append((model.decode(made), total + end, m + len(closing)))
        assert prediction["form"] == "question" and prediction["gold_labels"] == ["Globex"]
        assert [c["text"] for c in prediction["candidates"]] == [t for t, _, _ in expected]
        assert [c["logprob"] for c in prediction["candidates"]] == pytest.approx(
            [lp for _, lp, _ in expected], abs=ATOL
        )
        assert [c["mean_logprob"] for c in prediction["candidates"]] == pytest.approx(
            [lp / n for _, lp, n in expected], abs=ATOL
        )


@pytest.mark.parametrize("architecture", ["roberta", "t5"])
def test_models_that_read_the_whole_statement_are_asked_the_statement(tiny, architecture):
    view = VIEWS["multi-token"]
    got = view.predict(tiny(architecture), ROWS, view.params(), None)
    assert [p.get("form") for p in got] == ["cloze", "cloze", "cloze"]


def test_the_report_counts_rows_asked_as_questions_beside_the_skipped_ones():
    from chronoprobe.report.drift_section import _skipped_note

    too_long = "every gold label is longer than M = 5 tokens"
    coverage = {
        "figures": ["f1"],
        "rows": 1000,
        "counted": 919,
        "left_out": {f"skipped: {too_long}": 81},
        "forms": {"cloze": 627, "question": 292},
    }
    by_form = {"cloze": {"n": 627, "f1": 0.2, "f1_ci95": [0.17, 0.23]},
               "question": {"n": 292, "f1": 0.1, "f1_ci95": [0.07, 0.14]}}  # fmt: skip
    metrics = {
        "models": {
            "smollm2": {"skipped": {too_long: 81}, "coverage": coverage, "by_form": by_form},
            "roberta": {"skipped": {}},  # a step written before coverage records
        }
    }
    assert _skipped_note(metrics).text == (
        f"smollm2: f1 over 919 of 1,000 rows (91.9%); left out: 81 skipped: {too_long}; "
        "asked 627 as cloze statements, 292 as questions. smollm2: per form, as cloze "
        "statements: f1 0.200 [0.170, 0.230] (n 627); as questions: f1 0.100 [0.070, 0.140] "
        "(n 292)."
    )
    old = {"models": {"smollm2": {"skipped": {too_long: 81}}}}
    assert _skipped_note(old).text == f"smollm2: rows skipped by the view: 81 ({too_long})."
    assert _skipped_note({"models": {"roberta": {"skipped": {}}}}) is None
