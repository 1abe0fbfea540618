"""Probe sections of the generative views: a model that answered nothing gets a note, not a
broken section."""

from __future__ import annotations

import json

import pytest

from chronoprobe.report.blocks import Text
from chronoprobe.report.sections import section_kind


@pytest.mark.parametrize(
    ("view", "title"),
    [("generate", "Generated answers"), ("date-context", "Date-context consistency")],
)
def test_a_model_that_answered_nothing_is_said_so(tmp_path, view, title):
    skipped = {"longer than the model's 16 positions": 3}
    metrics = {"view": view, "models": {"tiny": {"predicted": 0, "skipped": skipped}}}
    (tmp_path / "metrics.json").write_text(json.dumps(metrics))
    record = {"id": "asked", "kind": "probe", "params": {"view": view}}
    section = section_kind("probe", record).build(tmp_path, record)
    assert section.title == f"{title}: asked"
    assert section.blocks == [
        Text(
            "tiny answered none of the rows (skipped: 3 longer than the model's 16 positions).",
            style="error",
        )
    ]


def test_the_generate_section_shows_every_rule_side_by_side():
    from chronoprobe.probes.judging import RULES
    from chronoprobe.report.blocks import Stats, Table
    from chronoprobe.report.generative_section import generate_blocks

    group = {
        "n": 4,
        "accuracy": 0.5,
        **{f"accuracy_{rule}": i / 4 for i, rule in enumerate(RULES)},
        "other_period": 0.25,
        "Correct": 0.5,
        "Partial": 0.0,
        "Incorrect": 0.5,
    }
    metrics = {
        "match": "names",
        "overall": group,
        "by_split": {"updated": group},
        "exemplars": {"shots": 3, "rows_short": 2, "fewest": 1},
    }
    blocks = generate_blocks("m", metrics)
    stats = next(b for b in blocks if isinstance(b, Stats))
    assert list(stats.items) == [
        "accuracy (names)",
        "other period",
        "empty answers",
        "Correct",
        "Partial",
        "Incorrect",
    ]
    tables = [b for b in blocks if isinstance(b, Table)]
    assert [t.columns[0] for t in tables] == ["group", "split"]
    assert tables[0].columns[2:7] == list(RULES)
    assert [float(v) for v in tables[0].rows[0][2:8]] == [0, 0.25, 0.5, 0.75, 1.0, 0.25]
    notes = [b.text for b in blocks if isinstance(b, Text) and b.style == "note"]
    assert notes == [
        "2 rows had fewer than 3 exemplars to draw (fewest: 1); their prompts hold fewer shots."
    ]
    # judged without aliases, and by a model judge too: the section says so
    judged_with = {"rows": 4, "rows_with_aliases": 0, "note": "no gold answer has aliases"}
    judged_with["judge"] = {"model": "openai:judge", "unclear_replies": 1}
    group["accuracy_judge"] = 0.5
    metrics |= {"judged_with": judged_with, "rules": [*RULES, "judge"]}
    blocks = generate_blocks("m", metrics)
    notes = [b.text for b in blocks if isinstance(b, Text) and b.style == "note"]
    assert notes[:2] == [
        "Judged by labels alone: no gold answer has aliases.",
        "judge: every answer also judged by openai:judge (the rule 'judge'; replies neither "
        "yes nor no, counted incorrect: 1).",
    ]
    table = next(b for b in blocks if isinstance(b, Table))
    assert table.columns[2:8] == [*RULES, "judge"]


@pytest.mark.parametrize(
    ("kind", "view", "title"),
    [
        ("tkg", None, "Temporal KG embeddings: trained"),
        ("probe", "span-ppl", "ECBD span perplexity: trained"),
        ("probe", "single-token", "Probe single-token: trained"),
    ],
)
def test_a_step_without_metrics_is_said_so_under_its_title(tmp_path, kind, view, title):
    record = {"id": "trained", "kind": kind, "params": {"view": view} if view else {}}
    section = section_kind(kind, record).build(tmp_path, record)
    assert section.title == title
    assert section.blocks == [Text("The step wrote no metrics.json.", style="error")]
