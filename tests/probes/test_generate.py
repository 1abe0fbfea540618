"""The generate view: prompts and exemplars, judged answers, categories, responses produced
elsewhere, the ChroKnowledge protocol, and the probe step."""

from __future__ import annotations

import json
import logging

import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.jsonl import write_jsonl
from chronoprobe.models.requests import Completion
from chronoprobe.models.tiny import random_model
from chronoprobe.models.tokenizer import train_tokenizer
from chronoprobe.probes.categories import category, timeline
from chronoprobe.probes.generate import (
    GENERATE,
    GenerateParams,
    generate_metrics,
    predict_generate,
    prompt_for,
    read_asked_rows,
)
from chronoprobe.probes.judging import RULES
from chronoprobe.probes.series_matrix import read_predictions
from chronoprobe.step_context import StepContext
from chronoprobe.steps import get_kind

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


def test_rows_without_a_period_have_no_fact_timeline():
    """Timeline questions carry no period: they were counted as facts "across the periods"."""
    from chronoprobe.probes.categories import fact_timelines

    asked = [{"id": f"q{i}", "subject": "Q1", "relation": "P39", "category": "Correct"}
             for i in range(3)]  # fmt: skip
    dated = [{**row, "period": "2019", "split": None} for row in asked[:1]]
    assert fact_timelines(asked)["facts"] == 0
    assert fact_timelines(dated + asked)["facts"] == 1


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
        ("In 2020, Bob Jones was employed by", False): ["Acme Corp", "Acme"],
        ("In 2020, Bob Jones was employed by", True): ["Acme", "NYT", "Initech"],
    }
    params = GenerateParams(shots=1, exemplar_sets=2, samples=3, match="alias", gap_first="skip")
    model = ScriptedModel(script)
    got = {p["id"]: p for p in predict_generate(model, rows, params, None)}
    assert got["e19"]["skipped"].startswith("the gap comes first")
    assert got["e19"]["skipped"].endswith(
        "(`gap_first: question` asks it as its relation's question)"
    )
    assert [j["exact"] for j in got["a19"]["greedy_judged"]] == [True, False]
    assert [j["names"] for j in got["a19"]["greedy_judged"]] == [True, True]  # Globex Inc
    assert got["a19"]["category"] == "Partial"  # 'Globex Inc' is no alias of Globex
    assert got["b19"]["category"] == "Partial" and got["b19"]["prediction"] == "Globex"
    assert [j["alias"] for j in got["b20"]["sample_judged"]] == [False, True, False]
    assert got["b20"]["category"] == "Partial" and got["b20"]["greedy_raw"][0] == "Acme Corp. More"
    # Acme Corp is what Bob Jones had in 2019: another period's answer, named instead
    assert got["b20"]["other_period"] and not got["b19"]["other_period"]
    assert got["b20"]["judged"] == dict.fromkeys(RULES, False) and not got["b20"]["correct"]
    assert len(model.seen) == 3 * (2 + 3)
    # the sampled requests are seeded per row and sample, and sampled
    sampled = [r for r in model.seen if r.temperature > 0]
    assert len({r.seed for r in sampled}) == 9 and all(r.top_p == 0.95 for r in sampled)
    all_hit = {("In 2019, Alice Smith was employed by", False): ["globex", "The Globex"]}
    again = predict_generate(ScriptedModel(all_hit), rows[:1], params, None)
    assert again[0]["category"] == "Correct"


def test_without_shots_the_exemplar_pool_is_never_searched(rows_file, monkeypatch):
    """Each row searched its whole (relation, period) group for exemplars it would not draw:
    most of a served run's own time on 10,000 TempLAMA rows."""
    from chronoprobe.probes.generate import ExemplarPool

    rows = [r for r in read_asked_rows(rows_file) if r.id in {"a19", "b19"}]
    script = {("In 2019, Alice Smith was employed by", False): ["Globex"]}

    def searched(*args):
        raise AssertionError("the pool was searched")

    monkeypatch.setattr(ExemplarPool, "available", searched)
    got = predict_generate(ScriptedModel(script), rows, GenerateParams(), None)
    assert [p["exemplars"] for p in got] == [0, 0] and got[0]["correct"]


def test_the_probe_step_generates_with_a_tiny_causal_model(rows_file, tmp_path):
    tokenizer = train_tokenizer(CORPUS, "llama")
    spec = tmp_path / "llama"
    random_model("llama", tokenizer, seed=1).save_pretrained(spec)
    tokenizer.save_pretrained(spec)
    out = tmp_path / "out"
    out.mkdir()
    ctx = StepContext("probe", out, tmp_path, 0, logging.getLogger("test-generate"))
    kind = get_kind("probe")
    values = {"view": "generate", "model": [str(spec)], "device": "cpu", "batch_size": 3}
    values.update(shots=1, exemplar_sets=2, samples=2, max_tokens=4)
    kind.run(ctx, kind.params.model_validate(values), {"data": rows_file.parent})
    metrics = json.loads((out / "metrics.json").read_text())
    mine = metrics["models"][str(spec)]
    predictions = read_predictions(out / "predictions.parquet")
    # the gap-first e19 is asked as a question (a base model: "Question: ...", "Answer:")
    assert len(predictions) == 10 and mine["skipped"] == {}
    asked = {p["id"]: p["form"] for p in predictions}
    assert asked["e19"] == "question" and set(asked.values()) == {"template", "question"}
    question = next(p for p in predictions if p["id"] == "e19")["prompt"]
    assert question.endswith(
        "Question: Fill in the blank: In 2019, ___ was employed by Umbrella.\nAnswer:"
    )
    assert mine["coverage"]["forms"] == {"template": 8, "question": 1}  # c20 (deleted) left out
    assert mine["forms"]["question"] == {"rows": 1, "share": pytest.approx(1 / 9)}
    assert mine["options"]["question_prompt"] == "plain"  # its tokenizer has no chat template
    assert {p["category"] for p in predictions} <= {"Correct", "Partial", "Incorrect"}
    assert all(len(p["greedy"]) == 2 and len(p["samples"]) == 2 for p in predictions)
    assert set(mine["by_period"]) == {"2019", "2020"}
    assert set(mine["by_split"]) == {"unchanged", "updated", "deleted"}
    # A/P108, A/P54, B, C, D, E (asked as a question); the deleted c20 left out
    assert mine["timelines"]["facts"] == 6
    assert sum(mine["overall"][c] for c in ("Correct", "Partial", "Incorrect")) == pytest.approx(1)


OFFICES = [
    row(
        "s1",
        "2019",
        "S1",
        "Ann Lee holds the position of [MASK].",
        ["US Senator"],
        None,
        None,
        "P39",
    ),
    row(
        "s2",
        "2019",
        "S2",
        "Ben Ray holds the position of [MASK].",
        ["US Senator"],
        None,
        None,
        "P39",
    ),
    row(
        "s3", "2019", "S3", "Cy Dunn holds the position of [MASK].", ["Governor"], None, None, "P39"
    ),
    row("s4", "2019", "S4", "Di Ames holds the position of [MASK].", ["Mayor"], None, None, "P39"),
    row(
        "s5",
        "2019",
        "S5",
        "Ed Fox holds the position of [MASK].",
        ["Governor", "Mayor"],
        None,
        None,
        "P39",
    ),
]


def test_exemplars_never_hold_an_answer_of_the_asked_row(tmp_path):
    path = tmp_path / "examples.jsonl"
    write_jsonl(path, OFFICES)
    rows = {r.id: r for r in read_asked_rows(path)}
    template = "In {period}, {statement}"
    # s2 holds the same office as s1, s5 an office of s3 and of s4
    assert [r.id for r in rows["s1"].pool.available(rows["s1"], template)] == ["s3", "s4", "s5"]
    assert [r.id for r in rows["s5"].pool.available(rows["s5"], template)] == ["s1", "s2"]
    params = GenerateParams(shots=3, exemplar_sets=4)
    for e in range(4):
        prompt = prompt_for(rows["s1"], params, e, 0)
        assert "US Senator" not in prompt and prompt.count("\n") == 3
        assert "Governor" not in prompt_for(rows["s3"], params, e, 0)


def test_fewer_exemplars_than_shots_are_warned_of_once_and_counted(tmp_path):
    path = tmp_path / "examples.jsonl"
    write_jsonl(path, OFFICES)
    rows = read_asked_rows(path)
    params = GenerateParams(shots=3)
    model = ScriptedModel({})
    judging = GENERATE.warnings(model, rows, GenerateParams(shots=2))
    assert GENERATE.warnings(model, rows, params) == [
        *judging,
        "1 of 5 rows have fewer than 3 exemplars to draw (same relation and period, another "
        "subject, no answer in common; fewest: 2); their prompts hold fewer shots "
        "(exemplars in metrics.json)",
    ]
    # what the rows are judged without: a KG of other entities, aliases
    assert [w.split(":")[0] for w in judging] == [
        "no answer_names.jsonl beside examples.jsonl",
        "no gold answer has aliases",
    ]
    assert GENERATE.warnings(model, rows, GenerateParams()) == judging
    predictions = predict_generate(model, rows, params, None)
    # s5 (Governor and Mayor) may show only the senators s1 and s2
    assert [p["exemplars"] for p in predictions] == [3, 3, 3, 3, 2]
    assert [p["prompt"].count("\n") for p in predictions] == [3, 3, 3, 3, 2]
    metrics = generate_metrics(predictions, params)
    assert metrics["exemplars"] == {"shots": 3, "rows_short": 1, "fewest": 2}
    assert "exemplars" not in generate_metrics(predictions, GenerateParams())


def test_the_chroknowledge_protocol_sets_shots_sets_samples_and_temperature(rows_file):
    params = GenerateParams(protocol="chroknowledge")
    assert (params.shots, params.exemplar_sets, params.samples) == (4, 5, 5)
    assert (params.temperature, params.top_p, params.max_tokens) == (0.7, 1.0, 50)
    assert GenerateParams(protocol="chroknowledge", samples=5).samples == 5  # same value: fine
    with pytest.raises(ValueError, match="`protocol: chroknowledge` sets `samples` to 5, not 3"):
        GenerateParams(protocol="chroknowledge", samples=3)
    # a round trip through metrics.json's options gives the same params
    assert GenerateParams.model_validate(params.model_dump(mode="json")) == params
    rows = [r for r in read_asked_rows(rows_file) if r.id == "b20"]
    script = {
        ("In 2020, Bob Jones was employed by", False): ["Acme Corp"] * 5,
        ("In 2020, Bob Jones was employed by", True): ["Acme", "Acme", "NYT", "x", "x"],
    }
    model = ScriptedModel(script)
    (got,) = predict_generate(model, rows, params, None)
    assert len(model.seen) == 10 and got["category"] == "Partial"  # one sample names it
    sampled = [r for r in model.seen if r.temperature > 0]
    assert {(r.temperature, r.top_p, r.max_tokens) for r in sampled} == {(0.7, 1.0, 50)}
    assert got["exemplars"] == 2  # 2020 has only a20 and d20 to show


def test_a_deleted_row_is_never_correct(rows_file):
    rows = [r for r in read_asked_rows(rows_file) if r.id == "c20"]  # carries 2019's Initech
    model = ScriptedModel({("In 2020, Carla Diaz was employed by", False): ["Initech"]})
    for match in RULES:
        (got,) = predict_generate(model, rows, GenerateParams(match=match), None)
        assert got["category"] == "Incorrect" and not got["correct"]
        assert got["judged"] == dict.fromkeys(RULES, False)
        assert got["other_period"]  # it names 2019's answer
        model = ScriptedModel({("In 2020, Carla Diaz was employed by", False): ["Initech"]})


def test_answers_are_judged_against_the_names_file_and_not_the_files_other_rows(tmp_path):
    rows = [
        row(
            "x19", "2019", "X", "Xi Wu plays for [MASK].", ["Inter Milan"], None, [["Inter"]], "P54"
        ),
        row(
            "x20", "2020", "X", "Xi Wu plays for [MASK].", ["Juventus F.C."], "updated", None, "P54"
        ),
        row("y20", "2020", "Y", "Yo Ko plays for [MASK].", ["Inter Miami CF"], None, None, "P54"),
    ]
    data = tmp_path / "data"
    write_jsonl(data / "examples.jsonl", rows)
    asked = {r.id: r for r in read_asked_rows(data / "examples.jsonl")}
    from chronoprobe.probes.generate import _gold

    # without a names file the file's other rows are no KG: nothing to refuse
    gold = _gold(asked["x19"], "Inter Miami")
    assert list(gold.labels) == ["Inter Milan"] and gold.distractors == []
    assert (gold.question, gold.period, gold.relation) == ("Xi Wu plays for ___.", "2019", "P54")
    # the names file (the KG) gives the other entities, and entities named as a gold answer
    names = [
        {"id": "Q1", "relation": "P54", "names": ["Inter Miami CF", "Inter Miami"]},
        {"id": "Q2", "relation": "P54", "names": ["Inter Milan", "Inter"]},
        {"id": "Q3", "relation": "P54", "names": ["Juventus F.C.", "Juventus"]},
        {"id": "Q4", "relation": "P102", "names": ["Inter Miami Party"]},
    ]
    write_jsonl(data / "answer_names.jsonl", names)
    asked = {r.id: r for r in read_asked_rows(data / "examples.jsonl")}
    assert _gold(asked["x19"], "Inter Miami").distractors == [("Inter Miami CF", "Inter Miami")]
    # the row's answers have no ids: the KG's entity of the gold label is the gold answer
    assert ("Inter Milan", "Inter") not in _gold(asked["x19"], "Inter").distractors
    assert ("Inter Milan", "Inter") in _gold(asked["x20"], "Inter").distractors
    model = ScriptedModel({("In 2019, Xi Wu plays for", False): ["Inter Miami"]})
    (got,) = predict_generate(model, [asked["x19"]], GenerateParams(), None)
    assert got["judged"] == dict.fromkeys(RULES, False)
    # the stale answer is told by the file's other periods, not by the verdict
    model = ScriptedModel({("In 2020, Xi Wu plays for", False): ["Inter"]})
    (got,) = predict_generate(model, [asked["x20"]], GenerateParams(), None)
    assert got["other_period"] and not got["correct"]
    write_jsonl(data / "answer_names.jsonl", [{"id": "Q1", "relation": "P54"}])
    with pytest.raises(ValueError, match=r"answer_names.jsonl:1: not an answer name"):
        read_asked_rows(data / "examples.jsonl")


def responses_file(path, lines):
    path.write_text(
        "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    )
    return path


def test_responses_are_judged_as_a_model_run_through_the_command(rows_file, tmp_path):
    answers = responses_file(
        tmp_path / "api-run.jsonl",
        [
            {"id": "a19", "answer": "Globex"},
            {"id": "b20", "answer": "Acme Corp"},  # 2019's employer
            {"id": "b20", "answer": "the NYT"},  # a sample naming 2020's
            {"id": "c20", "answer": "Initech"},  # deleted: never Correct
            {"id": "e19", "answer": "Eve Li, a chemist\nand more"},
        ],
    )
    out = tmp_path / "out"
    args = ["probe", "generate", str(rows_file.parent), "--responses", str(answers)]
    result = CliRunner().invoke(app, [*args, "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "6 of 10 rows have no answer" in result.output
    top = json.loads((out / "metrics.json").read_text())
    mine = top["models"]["api-run"]  # named by the file's stem
    # of one model, the figure over the models is its own, with its interval and n
    assert (top["accuracy"], top["accuracy_ci95"]) == (mine["accuracy"], mine["accuracy_ci95"])
    assert top["accuracy_n"] == mine["accuracy_n"] == 3
    assert mine["family"] == "responses" and mine["match"] == "names"
    assert mine["predicted"] == 4 and mine["skipped"] == {"no answer in api-run.jsonl": 6}
    predictions = {p["id"]: p for p in read_predictions(out / "predictions.parquet")}
    assert predictions["a19"]["category"] == "Correct" and predictions["a19"]["prompt"] is None
    assert predictions["b20"]["category"] == "Partial" and predictions["b20"]["other_period"]
    assert predictions["b20"]["samples"] == ["the NYT"]
    assert predictions["c20"]["category"] == "Incorrect"
    assert predictions["e19"]["judged"]["names"] and not predictions["e19"]["judged"]["exact"]
    # overall leaves the deleted row out: a19, b20 (wrong) and e19 (right, by names)
    overall = mine["overall"]
    assert overall["n"] == 3 and overall["accuracy"] == pytest.approx(2 / 3)
    assert overall["accuracy_exact"] == pytest.approx(1 / 3)
    assert overall["other_period"] == pytest.approx(1 / 3)
    # every share carries its Wilson 95% interval: 2 of 3, 1 of 3
    assert overall["accuracy_ci95"] == pytest.approx([0.20765, 0.93851], abs=5e-5)
    assert mine["accuracy_ci95"] == overall["accuracy_ci95"] and mine["accuracy_n"] == 3
    assert overall["Partial_ci95"] == pytest.approx([0.06149, 0.79230], abs=5e-5)
    assert mine["by_split"]["deleted"]["accuracy_alias"] == 0
    # per relation as overall: the deleted row (never Correct) is left out, not counted wrong
    assert mine["by_relation"]["P108"]["n"] == 3
    assert mine["by_relation"]["P108"]["accuracy"] == pytest.approx(2 / 3)
    named = tmp_path / "named"
    result = CliRunner().invoke(app, [*args, "--name", "gpt", "--match", "exact", "-o", str(named)])
    assert result.exit_code == 0, result.output
    again = json.loads((named / "metrics.json").read_text())["models"]["gpt"]
    assert again["accuracy"] == pytest.approx(1 / 3) and again["match"] == "exact"
    # the file rewritten in place is judged again, not served from the step cache
    responses_file(answers, [{"id": "a19", "answer": "Initech"}])
    result = CliRunner().invoke(app, [*args, "-o", str(tmp_path / "rewritten")])
    assert result.exit_code == 0, result.output
    rewritten = json.loads((tmp_path / "rewritten" / "metrics.json").read_text())
    assert rewritten["models"]["api-run"]["predicted"] == 1
    assert rewritten["models"]["api-run"]["accuracy"] == 0


@pytest.mark.parametrize(
    ("lines", "error"),
    [
        (['{"id": "a19", "answer": "Globex"}', "{not json"], "api.jsonl:2: invalid JSON"),
        (['{"id": "a19"}'], "api.jsonl:1: missing field 'answer'"),
        (['{"answer": "x"}'], "api.jsonl:1: missing field 'id'"),
        (['{"id": "a19", "answer": 3}'], "api.jsonl:1: 'answer' must be a string, not int"),
        (['["a19", "x"]'], "api.jsonl:1: expected a JSON object"),
        (
            ['{"id": "a19", "answer": "x"}', '{"id": "zz", "answer": "x"}'],
            "api.jsonl:2: unknown id 'zz'",
        ),
        ([""], "api.jsonl: no answers"),
        (  # it failed naming the cache's shard, which holds an answer twice
            ['{"id": "a19", "answer": "x"}', json.dumps({"id": "a19", "answer": "x" * (10 << 20)})],
            "api.jsonl:2: an answer of 10,485,760 characters; an answer is judged as a model's",
        ),
        (
            ['{"id": "a19", "answer": "x"}', json.dumps({"id": "z" * (1 << 20), "answer": "x"})],
            f"api.jsonl:2: unknown id '{'z' * 77}'...: no row of",
        ),
    ],
    ids=lambda value: value if isinstance(value, str) and len(value) < 40 else None,
)
def test_bad_responses_lines_are_named_by_file_and_line(rows_file, tmp_path, lines, error):
    answers = responses_file(tmp_path / "api.jsonl", lines)
    out = tmp_path / "out"
    args = ["probe", "generate", str(rows_file.parent), "--responses", str(answers), "-o", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code != 0 and error in result.output, result.output
    assert "Traceback" not in result.output and not (out / "metrics.json").exists()


def test_responses_take_no_generation_options(tmp_path):
    answers = responses_file(tmp_path / "r.jsonl", [{"id": "a", "answer": "x"}])
    with pytest.raises(ValueError, match="`shots` applies to asking a model"):
        GenerateParams(responses=answers, shots=2)
    with pytest.raises(ValueError, match="`protocol` applies to asking a model"):
        GenerateParams(responses=answers, protocol="chroknowledge")
    with pytest.raises(ValueError, match="`name` applies to `responses` only"):
        GenerateParams(name="x")
    problems = get_kind("probe").problems(
        get_kind("probe").params.model_validate(
            {"view": "generate", "responses": str(answers), "model": ["m"]}
        ),
        {"data"},
    )
    assert problems and problems[0].startswith("model: give the models to probe in one way")
