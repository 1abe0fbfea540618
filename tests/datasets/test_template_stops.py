"""A label that ends with its own stop ("F.C.", "Inc.", "Yahoo!") takes the place of the full
stop a template puts after it: statements never read "Manchester United F.C..", wherever they
are rendered (drift queries, series training text, dated statements)."""

from __future__ import annotations

import pytest

from chronoprobe.datasets.dates import build_dated_statements
from chronoprobe.datasets.drift import build_drift
from chronoprobe.kg import Entity, Fact, TemporalKG
from chronoprobe.templates import ClozeTemplate, fill_slots, followed_by, load_cloze_templates
from chronoprobe.time import Granularity, TimePoint, periods_between
from chronoprobe.train.series import fact_sentences

TEMPLATES = load_cloze_templates("drift")


@pytest.mark.parametrize(
    ("label", "statement"),
    [
        ("Manchester United F.C.", "Messi plays for Manchester United F.C."),
        ("Apple Inc.", "Messi plays for Apple Inc."),
        ("Washington, D.C.", "Messi plays for Washington, D.C."),
        ("Yahoo!", "Messi plays for Yahoo!"),
        ("Who Framed Roger Rabbit?", "Messi plays for Who Framed Roger Rabbit?"),
        ("Oh Hellos...", "Messi plays for Oh Hellos..."),
        ("FC Barcelona", "Messi plays for FC Barcelona."),  # no stop of its own
        ("St. Pauli", "Messi plays for St. Pauli."),  # a stop inside the label stays
    ],
)
def test_a_label_ending_a_statement_keeps_one_stop(label, statement):
    assert TEMPLATES["P54"].fill("Messi", label) == statement


def test_a_given_label_ending_a_query_keeps_one_stop_and_mid_sentence_labels_are_untouched():
    # P286 names the club at the end: "[MASK] is the head coach of <subject>."
    assert TEMPLATES["P286"].query("Manchester United F.C.") == (
        "[MASK] is the head coach of Manchester United F.C."
    )
    assert TEMPLATES["P286"].query("Yahoo!") == "[MASK] is the head coach of Yahoo!"
    # the gap ends the sentence: its full stop stays, whatever fills it later
    assert TEMPLATES["P54"].query("Apple Inc.") == "Apple Inc. plays for [MASK]."
    assert TEMPLATES["P54"].fill("Apple Inc.", "Yahoo!") == "Apple Inc. plays for Yahoo!"


def test_fill_slots_only_drops_a_full_stop_right_after_the_slot():
    assert followed_by("F.C.", ".") == ""
    assert followed_by("F.C.", ". Then") == " Then"
    assert followed_by("F.C.", " in 2010.") == " in 2010."
    assert followed_by("F.C.", "...") == "..."  # an ellipsis is not a full stop
    assert followed_by("F.C.", "?") == "?"  # "Was it Manchester United F.C.?" is English
    template = ClozeTemplate("P1", "x", "<subject>. <object>.")
    assert template.fill("A.", "B!") == "A. B!"
    assert fill_slots("<a> and <b>.", {"a": "U.S.", "b": "Inc."}) == "U.S. and Inc."


@pytest.fixture(scope="module")
def kg() -> TemporalKG:
    def tp(text: str) -> TimePoint:
        return TimePoint.parse(text)

    facts = [
        Fact("Q1", "P54", "Q2", tp("2019"), tp("2021")),  # Messi at Manchester United F.C.
        Fact("Q2", "P286", "Q3", tp("2019"), tp("2021")),  # its coach, named first in P286
        Fact("Q4", "P108", "Q5", tp("2019-03-05"), tp("2021")),  # works for Yahoo!
    ]
    labels = {
        "Q1": "Lionel Messi",
        "Q2": "Manchester United F.C.",
        "Q3": "Erik ten Hag",
        "Q4": "Marissa Mayer",
        "Q5": "Yahoo!",
    }
    return TemporalKG.from_records(facts, entities=[Entity(i, n) for i, n in labels.items()])


def test_drift_queries_and_series_text_have_one_stop(kg):
    periods = periods_between("2020", "2020", Granularity.YEAR)
    queries = {(r.relation, r.subject): r.query for r in build_drift(kg, periods)}
    assert queries == {
        ("P54", "Q1"): "Lionel Messi plays for [MASK].",
        ("P286", "Q2"): "[MASK] is the head coach of Manchester United F.C.",
        ("P108", "Q4"): "Marissa Mayer works for [MASK].",
    }
    assert sorted(fact_sentences(kg, periods[0], TEMPLATES)) == [
        "Erik ten Hag is the head coach of Manchester United F.C.",
        "Lionel Messi plays for Manchester United F.C.",
        "Marissa Mayer works for Yahoo!",
    ]


def test_dated_statements_have_one_stop(kg):
    statements, _ = build_dated_statements(kg, precisions=("year",), distances=(1,))
    assert {(s["span"], s["right"]) for s in statements} == {
        ("Manchester United F.C.", ""),
        ("Erik ten Hag", " is the head coach of Manchester United F.C."),
        ("Yahoo!", ""),
    }
