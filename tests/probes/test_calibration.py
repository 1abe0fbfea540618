"""The hand-judged calibration set, Cohen's kappa, and the default rule's agreement with it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chronoprobe.probes.calibration import (
    DISTRACTOR,
    NAMED,
    agreement,
    cohen_kappa,
    old_rule,
    read_records,
    verdicts,
)
from chronoprobe.probes.judging import DEFAULT_RULE, RULES, Gold

SET = Path(__file__).parents[1] / "fixtures" / "judging" / "calibration.jsonl"


@pytest.fixture(scope="module")
def records():
    return read_records(SET)


@pytest.fixture(scope="module")
def table(records):
    return {a.rule: a for a in agreement(records)}


def test_the_set_holds_real_answers_of_both_sources_judged_by_hand(records):
    assert len(records) >= 200
    assert {r.source for r in records} == {"templama", "sample-kg"}
    assert {r.named for r in records} == set(NAMED)
    names = [r.name for r in records]
    assert len(set(names)) == len(names)  # one verdict per answer
    correct = [r for r in records if r.human]
    assert 30 <= len(correct) <= len(records) - 30  # both verdicts well represented
    assert all(r.named == "gold" for r in correct)


def test_every_hard_case_says_why(records):
    said = verdicts(records)
    for i, r in enumerate(records):
        split = {said[rule][i] for rule in RULES}
        hard = (
            len(split) > 1
            or r.named in DISTRACTOR
            or not r.labels
            or (r.human and r.answer.strip() not in r.labels)
        )
        if hard:
            assert len(r.reason.split()) >= 3, r.name


def test_deleted_rows_have_no_gold_and_are_never_correct(records):
    deleted = [r for r in records if not r.labels]
    assert len(deleted) >= 10
    assert not any(r.human for r in deleted)
    assert all(r.distractors for r in deleted)  # the answers that ended are known
    assert any(r.named == "stale" for r in deleted)


def test_kappa_on_a_hand_checked_two_by_two_table():
    # rule yes & person yes 20, rule yes & person no 5, rule no & person yes 10, both no 15:
    # observed 35/50 = 0.7; chance 0.5 * 0.6 + 0.5 * 0.4 = 0.5; kappa (0.7 - 0.5) / 0.5 = 0.4
    rule = [True] * 25 + [False] * 25
    person = [True] * 20 + [False] * 5 + [True] * 10 + [False] * 15
    assert cohen_kappa(rule, person) == pytest.approx(0.4)
    assert cohen_kappa(person, rule) == pytest.approx(0.4)  # symmetric


def test_kappa_at_its_bounds_and_where_undefined():
    assert cohen_kappa([True, False, True, False], [True, False, True, False]) == pytest.approx(1)
    assert cohen_kappa([True, False], [False, True]) == pytest.approx(-1)
    # the same share of "correct" agreeing by chance only: observed 0.5 = chance 0.5
    assert cohen_kappa([True, True, False, False], [True, False, True, False]) == pytest.approx(0)
    # a rule that calls everything incorrect agrees on 9 of 10 and still has kappa 0
    assert cohen_kappa([False] * 10, [True] + [False] * 9) == pytest.approx(0)
    assert cohen_kappa([True] * 3, [True] * 3) is None  # no variation: chance agreement is 1
    assert cohen_kappa([], []) is None
    with pytest.raises(ValueError, match="3 verdicts against 2"):
        cohen_kappa([True] * 3, [True] * 2)


def test_agreement_counts_errors_by_what_the_answer_names(tmp_path):
    lines = [
        {"id": "a", "answer": "Inter Miami", "labels": ["Inter Milan"], "aliases": [["Inter"]],
         "distractors": [["Inter Miami CF", "Inter Miami"]], "human": False, "named": "similar"},
        {"id": "b", "answer": "Inter", "labels": ["Inter Milan"], "aliases": [["Inter"]],
         "human": True, "named": "gold"},
        {"id": "c", "answer": "AC Milan", "labels": ["Inter Milan"], "human": False,
         "named": "other"},
    ]  # fmt: skip
    path = tmp_path / "set.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    table = {a.rule: a for a in agreement(read_records(path))}
    leads = table["leads"]  # the old rule knows no other entity: Inter Miami leads with Inter
    assert (leads.false_positives, leads.distractor_positives, leads.false_negatives) == (1, 1, 0)
    assert leads.disagreements == ("a",)
    assert leads.accuracy.value == pytest.approx(2 / 3)
    assert table["names"].disagreements == ()
    assert table["names"].kappa.value == pytest.approx(1)
    assert table["exact"].false_negatives == 1  # "Inter" is an alias, not the label


def test_old_rules_as_they_were():
    gold = Gold(["President of the United States"], [["POTUS"]])
    assert old_rule("leads", "POTUS, since 2009", gold)
    assert not old_rule("leads", "the Vice President of the United States", gold)
    assert old_rule("contains", "the Vice President of the United States", gold)
    assert not old_rule("contains", "", gold)
    with pytest.raises(ValueError, match="unknown old rule 'exact'"):
        old_rule("exact", "POTUS", gold)


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ('{"id": "x", "answer": "a", "labels": ["a"], "human": true, "named": "right"}',
         "named is 'right', not one of gold, stale, similar, other, none"),
        ('{"id": "x", "answer": "a", "labels": [], "human": true, "named": "gold"}',
         "judged correct, but the row has no gold answer"),
        ('{"id": "x", "answer": "a", "labels": ["a"], "named": "gold"}',
         "not a calibration record"),
        ('{"id": "x", "answer": "a", "labels": ["a"],', ""),
    ],
)  # fmt: skip
def test_a_bad_line_is_named_by_file_and_line(tmp_path, line, reason):
    good = '{"id": "y", "answer": "b", "labels": ["b"], "human": true, "named": "gold"}'
    path = tmp_path / "set.jsonl"
    path.write_text(good + "\n" + line + "\n")
    with pytest.raises(ValueError, match=f"^{path}:2: ") as err:
        read_records(path)
    assert reason in str(err.value)


def test_the_default_rule_agrees_best(table):
    best = max(a.kappa.value for a in table.values())
    assert table[DEFAULT_RULE].kappa.value == pytest.approx(best)
    assert table[DEFAULT_RULE].accuracy.value == max(a.accuracy.value for a in table.values())


def test_the_default_rule_never_counts_a_wrong_entity_as_correct(records, table):
    assert table[DEFAULT_RULE].distractor_positives == 0
    assert table[DEFAULT_RULE].other_entity_positives == 0
    assert any(r.named in DISTRACTOR for r in records)
    # the old rule that reads answers loosely does count some: the set can tell them apart
    assert table["contains"].distractor_positives > 0
