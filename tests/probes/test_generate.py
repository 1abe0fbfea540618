"""The generate view: prompts and exemplars, answer matching, categories, and the probe step."""

from __future__ import annotations

import json
import logging

import pytest

from chronoprobe.jsonl import write_jsonl
from chronoprobe.models.requests import Completion
from chronoprobe.models.tiny import random_model
from chronoprobe.models.tokenizer import train_tokenizer
from chronoprobe.probes.answers import accepted, match_kind, normalize
from chronoprobe.probes.categories import category, timeline
from chronoprobe.probes.generate import GenerateParams, predict_generate, read_asked_rows
from chronoprobe.probes.series_matrix import read_predictions
from chronoprobe.runs.steps import StepContext, get_kind

from .conftest import CORPUS


def row(id, period, subject, query, labels, split=None, aliases=None, relation="P108"):
    return {
        "id": id,
        "period": period,
        "relation": relation,
        "subject": subject,
        "query": query,
        "answers": [],
        "answer_labels": labels,
        "answer_aliases": aliases or [[] for _ in labels],
        "split": split,
    }


ROWS = [
    row("a19", "2019", "A", "Alice Smith was employed by [MASK].", ["Globex"]),
    row("b19", "2019", "B", "Bob Jones was employed by [MASK].", ["Acme Corp"]),
    row("c19", "2019", "C", "Carla Diaz was employed by [MASK].", ["Initech"]),
    row("d19", "2019", "D", "Dan Wu was employed by [MASK].", ["Umbrella"]),
    row("e19", "2019", "E", "[MASK] was employed by Umbrella.", ["Eve Li"]),
    row("p19", "2019", "A", "Alice Smith plays for [MASK].", ["Umbrella"], relation="P54"),
    row("a20", "2020", "A", "Alice Smith was employed by [MASK].", ["Globex"], "unchanged"),
    row(
        "b20",
        "2020",
        "B",
        "Bob Jones was employed by [MASK].",
        ["New York Times"],
        "updated",
        [["NYT", "The Times"]],
    ),
    row("c20", "2020", "C", "Carla Diaz was employed by [MASK].", ["Initech"], "deleted"),
    row("d20", "2020", "D", "Dan Wu was employed by [MASK].", ["Umbrella"], "unchanged"),
]


@pytest.fixture
def rows_file(tmp_path):
    path = tmp_path / "data" / "examples.jsonl"
    write_jsonl(path, ROWS)
    return path


def test_exemplars_are_seeded_other_subjects_of_the_same_relation_and_period(rows_file):
    rows = {r.id: r for r in read_asked_rows(rows_file)}
    asked = rows["a19"]
    pool = asked.pool
    query = "Q: In {period}, {query} A:"  # renders the gap-first e19 too
    draws = [[r.id for r in pool.draw(asked, e, 2, 7, query)] for e in range(6)]
    assert draws == [[r.id for r in pool.draw(asked, e, 2, 7, query)] for e in range(6)]
    assert len({tuple(d) for d in draws}) > 1  # each exemplar set draws its own
    # the asked subject (here also its other relation's row) never; 2019 and P108 only
    assert {i for d in draws for i in d} <= {"b19", "c19", "d19", "e19"}
    assert all(len(d) == 2 for d in draws)
    # 2020: c20 is deleted (it holds the previous answers), a20 is the asked fact itself
    later = [r.id for r in pool.draw(rows["d20"], 0, 5, 0, query)]
    assert sorted(later) == ["a20", "b20"]
    assert pool.draw(asked, 0, 0, 0, query) == []
    # a template that cannot render a row (gap first) never draws it
    statement = "In {period}, {statement}"
    assert "e19" not in {r.id for e in range(20) for r in pool.draw(asked, e, 3, 0, statement)}


def test_prompts_render_the_template_with_exemplars_on_lines_before(rows_file):
    from chronoprobe.probes.generate import prompt_for, render

    rows = {r.id: r for r in read_asked_rows(rows_file)}
    params = GenerateParams(shots=0)
    assert prompt_for(rows["a19"], params, 0, 0) == "In 2019, Alice Smith was employed by"
    assert render("Q: In {period}, {query} A:", rows["e19"]) == (
        "Q: In 2019, ___ was employed by Umbrella. A:"
    )
    assert render("In {period}, {statement}", rows["e19"]) is None  # gap first
    shots = rows["a19"].pool.draw(rows["a19"], 0, 2, 3, "In {period}, {statement}")
    assert len(shots) == 2
    prompt = prompt_for(rows["a19"], GenerateParams(shots=2), 0, 3)
    assert prompt.split("\n") == [
        *(f"In 2019, {s.cloze.left.strip()} {s.labels[0]}" for s in shots),
        "In 2019, Alice Smith was employed by",
    ]


def test_templates_name_known_placeholders_only():
    with pytest.raises(ValueError, match=r"unknown placeholder \{year\}"):
        GenerateParams(template="In {year}, {statement}")
    with pytest.raises(ValueError, match="must hold"):
        GenerateParams(template="In {period}:")


def test_answers_match_by_label_alias_lead_or_containment():
    labels, aliases = ["The New York Times"], [["NYT", "N.Y. Times"]]
    assert normalize("  The  New-York Times! ") == "new york times"
    assert match_kind("new york times", labels, aliases) == "exact"
    assert match_kind("NYT", labels, aliases) == "alias"
    assert match_kind("n.y. times", labels, aliases) == "alias"
    assert match_kind("a reporter at the New York Times", labels, aliases) == "contains"
    assert match_kind("the NYT newsroom", labels, aliases) == "leads"
    assert match_kind("New York Times, and since 2010 the", labels, aliases) == "leads"
    vice = ["Vice President of the United States"]
    assert match_kind("President of the United States", vice) is None
    assert match_kind("the President of the United States", ["President of the United States"])
    assert (
        match_kind("Vice President of the United States", ["President of the United States"])
        == "contains"
    )
    assert match_kind("New York", labels, aliases) is None  # part of a label is not it
    assert match_kind("NYTimes", labels, aliases) is None  # whole words only
    assert match_kind("", labels, aliases) is None
    assert accepted("alias", "alias") and not accepted("contains", "alias")
    assert not accepted(None, "contains")


def test_categories_follow_greedy_and_sampled_hits():
    assert category([True, True, True]) == "Correct"
    assert category([True, False], [False]) == "Partial"
    assert category([False, False], [False, True]) == "Partial"
    assert category([False], [False, False]) == "Incorrect"
    assert category([True], []) == "Correct"


def test_fact_timelines_tell_before_and_after_a_change():
    def rows(*cats, updated_at=2):
        return [(f"200{i}", "updated" if i == updated_at else None, c) for i, c in enumerate(cats)]

    assert timeline(rows("Correct", "Partial", "Correct")) == "known throughout"
    assert timeline(rows("Incorrect", "Incorrect", "Incorrect")) == "never known"
    assert timeline(rows("Correct", "Partial", "Incorrect", "Incorrect")) == (
        "only before the change"
    )
    assert timeline(rows("Incorrect", "Incorrect", "Partial")) == "only after the change"
    assert timeline(rows("Correct", "Incorrect", "Correct", updated_at=9)) == "mixed"


class ScriptedModel:
    """Answers each prompt from a script: the hand-made generations of a test."""

    family, name = "causal", "scripted"

    def __init__(self, script):
        self.script, self.seen = script, []

    def complete(self, requests, progress=None):
        self.seen += requests
        out = []
        for r in requests:
            key = (r.cloze.left.strip().split("\n")[-1], r.temperature > 0)
            text = self.script.get(key, ["nothing"]).pop(0)
            out.append(Completion(text, text + ". More", [1], -1.0))
        return out


def test_the_view_sorts_hand_made_generations_into_categories(rows_file):
    rows = [r for r in read_asked_rows(rows_file) if r.id in {"a19", "b19", "b20", "e19"}]
    script = {
        ("In 2019, Alice Smith was employed by", False): ["Globex", "Globex Inc"],
        ("In 2019, Bob Jones was employed by", False): ["Globex", "Acme Corp"],
        ("In 2020, Bob Jones was employed by", False): ["Acme", "Acme"],
        ("In 2020, Bob Jones was employed by", True): ["Acme", "NYT", "Initech"],
    }
    params = GenerateParams(shots=1, exemplar_sets=2, samples=3, match="alias")
    model = ScriptedModel(script)
    got = {p["id"]: p for p in predict_generate(model, rows, params, None)}
    assert got["e19"]["skipped"].startswith("the gap comes first")
    assert got["a19"]["greedy_match"] == ["exact", "leads"]
    assert got["a19"]["category"] == "Partial"  # a lead does not count under alias
    assert got["b19"]["category"] == "Partial" and got["b19"]["prediction"] == "Globex"
    assert got["b20"]["sample_match"] == [None, "alias", None]
    assert got["b20"]["category"] == "Partial" and got["b20"]["greedy_raw"][0] == "Acme. More"
    assert len(model.seen) == 3 * (2 + 3)
    # the sampled requests are seeded per row and sample, and sampled
    sampled = [r for r in model.seen if r.temperature > 0]
    assert len({r.seed for r in sampled}) == 9 and all(r.top_p == 0.95 for r in sampled)
    all_hit = {("In 2019, Alice Smith was employed by", False): ["globex", "The Globex"]}
    again = predict_generate(ScriptedModel(all_hit), rows[:1], params, None)
    assert again[0]["category"] == "Correct"


def test_the_probe_step_generates_with_a_tiny_causal_model(rows_file, tmp_path):
    tokenizer = train_tokenizer(CORPUS, "llama")
    spec = tmp_path / "llama"
    random_model("llama", tokenizer, seed=1).save_pretrained(spec)
    tokenizer.save_pretrained(spec)
    out = tmp_path / "out"
    out.mkdir()
    ctx = StepContext("probe", out, tmp_path, 0, logging.getLogger("test-generate"))
    kind = get_kind("probe")
    values = {"view": "generate", "models": [str(spec)], "device": "cpu", "batch_size": 3}
    values.update(shots=1, exemplar_sets=2, samples=2, max_tokens=4)
    kind.run(ctx, kind.params.model_validate(values), {"data": rows_file.parent})
    metrics = json.loads((out / "metrics.json").read_text())
    mine = metrics["models"][str(spec)]
    predictions = read_predictions(out / "predictions.parquet")
    assert len(predictions) == 9 and mine["skipped"] == {
        "the gap comes first: {statement} would leave nothing of the question to ask": 1
    }
    assert {p["category"] for p in predictions} <= {"Correct", "Partial", "Incorrect"}
    assert all(len(p["greedy"]) == 2 and len(p["samples"]) == 2 for p in predictions)
    assert set(mine["by_period"]) == {"2019", "2020"}
    assert set(mine["by_split"]) == {"unchanged", "updated", "deleted"}
    assert mine["timelines"]["facts"] == 5  # A/P108, A/P54, B, C, D (deleted c20 left out)
    assert sum(mine["overall"][c] for c in ("Correct", "Partial", "Incorrect")) == pytest.approx(1)
