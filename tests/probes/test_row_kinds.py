"""A rows file of another kind given to a view stops at once, naming what reads it."""

from __future__ import annotations

import logging

import pytest

from chronoprobe.jsonl import write_jsonl
from chronoprobe.probes import VIEWS
from chronoprobe.probes.answering import ProbeRows
from chronoprobe.step_context import StepContext
from chronoprobe.steps import get_kind

from .conftest import as_dicts
from .test_span_ppl import ROWS as ECBD_ROWS

STATEMENT = {
    "id": "s1",
    "text": "Alice Smith works for [MASK].",
    "slot": "object",
    "target": "Globex",
    "answers": ["Globex"],
    "subject": "Q1",
    "relation": "P108",
    "object": "Q2",
    "start": "2019",
    "end": "2020",
}
QUESTION = {
    "id": "c1",
    "question": "Who employed Alice Smith in 2019?",
    "type": "simple_entity",
    "answer_type": "entity",
    "answers": ["Q2"],
    "entities": ["Q1"],
    "times": [2019],
}


def rows_file(tmp_path, rows):
    path = tmp_path / "data" / "examples.jsonl"
    write_jsonl(path, rows)
    return path


def read_rows_for(view: str, path):
    """The rows a probe step of ``view`` reads: a file of another kind is refused there."""
    return ProbeRows.read(VIEWS.get(view), path.parent, path.name, None)


def test_ecbd_examples_given_to_pll_name_the_span_ppl_view(tmp_path):
    path = rows_file(tmp_path, ECBD_ROWS)
    with pytest.raises(ValueError) as err:
        read_rows_for("pll", path)
    assert str(err.value) == (
        f"{path}:1: these are rows for the span-ppl view (fields definition, entity, id, "
        "mention_end, mention_start, sentence, span, span_end), not the pll view's (it needs "
        "query, answer_labels); probe them with `chronoprobe probe span-ppl`"
    )


def test_cloze_rows_given_to_span_ppl_name_every_cloze_view(tmp_path):
    path = rows_file(tmp_path, as_dicts())
    with pytest.raises(
        ValueError,
        match=r"examples.jsonl:1: these are rows for the cutoff, generate, multi-token, pll or "
        r"single-token view \(fields answer_labels, answers, id, period, query, relation, split, "
        r"subject\)",
    ) as err:
        read_rows_for("span-ppl", path)
    assert str(err.value).endswith(
        "not the span-ppl view's (it needs sentence, span_start, span_end, span); "
        "probe them with `chronoprobe probe VIEW`, VIEW one of those"
    )


def test_statements_given_to_a_cloze_view_name_the_recite_view(tmp_path):
    path = rows_file(tmp_path, [STATEMENT])
    with pytest.raises(ValueError, match=r"these are rows for the recite view") as err:
        read_rows_for("pll", path)
    assert str(err.value).endswith("probe them with `chronoprobe probe recite`")


@pytest.mark.parametrize(
    ("row", "kind", "reader"), [(QUESTION, "CronQuestions questions", "`chronoprobe kgqa`")]
)
def test_rows_no_view_reads_name_their_command(tmp_path, row, kind, reader):
    """Through the probe step, before any model is loaded."""
    path = rows_file(tmp_path, [row])
    out = tmp_path / "out"
    out.mkdir()
    ctx = StepContext("probe", out, tmp_path, 0, logging.getLogger("test-kinds"))
    params = get_kind("probe").params.model_validate(
        {"view": "single-token", "model": ["no-such-model"]}
    )
    with pytest.raises(ValueError) as err:
        get_kind("probe").run(ctx, params, {"data": path.parent})
    message = str(err.value)
    assert message.startswith(f"{path}:1: these are {kind} (fields ")
    assert message.endswith(
        f"not the single-token view's (it needs query, answer_labels); they are read by {reader}"
    )
