"""The generate view's question form: every relation of TempLAMA, DynamicTempLAMA and the sample
KG has a question; a gap-first row is asked it by default, as a chat turn to an instruct model
and as "Question: ... Answer:" to a base model (an option overrides); metrics give the share
asked each way and the figures per form; empty answers are counted and warned of."""

from __future__ import annotations

import json

import pytest

from chronoprobe.jsonl import write_jsonl
from chronoprobe.kg.samples import sample_path
from chronoprobe.models.requests import Completion
from chronoprobe.probes.generate import (
    EMPTY_WARNING,
    GenerateParams,
    generate_metrics,
    predict_generate,
    question_of,
    read_asked_rows,
    subject_of,
    when_words,
)
from chronoprobe.templates import load_cloze_templates, load_question_templates

# the nine relations of TempLAMA's templates.csv (Dhingra et al., 2022)
TEMPLAMA = ("P54", "P39", "P108", "P102", "P286", "P69", "P488", "P6", "P127")


def sample_relations() -> set[str]:
    with open(sample_path(), encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines]
    return {r["id"] for r in rows if r.get("kind") == "relation"}


@pytest.mark.parametrize(
    "source, relations",
    [
        ("TempLAMA", set(TEMPLAMA)),
        ("DynamicTempLAMA", set(load_cloze_templates("drift"))),
        ("the sample KG", sample_relations()),
    ],
)
def test_every_relation_of_each_source_has_a_question(source, relations):
    questions = load_question_templates()
    assert len(relations) >= 9
    missing = sorted(relations - set(questions))
    assert not missing, f"{source}: no question for {missing}"
    for relation in relations:
        asked = questions[relation].ask("Acme", "in 2019")
        assert asked.endswith(" in 2019?") and "Acme" in asked and "<" not in asked
        assert questions[relation].ask("Acme", None).endswith("Acme?") or "Acme " in asked


def test_a_question_template_is_checked_as_it_is_read(tmp_path):
    bad = tmp_path / "questions.yaml"
    bad.write_text('P6: {label: head, question: "Who led <subject>?"}\n')
    with pytest.raises(ValueError, match=r"P6: the question must hold <when> exactly once"):
        load_question_templates(bad)
    bad.write_text('P6: {label: head, question: "Who led <subject> <when>."}\n')
    with pytest.raises(ValueError, match=r"a question ends with '\?'"):
        load_question_templates(bad)


def row(id, query, relation, period="2019", labels=("X",), split=None):
    return {
        "id": id,
        "period": period,
        "relation": relation,
        "subject": f"S-{id}",
        "query": query,
        "answers": [],
        "answer_labels": list(labels),
        "split": split,
    }


# gap-first rows as the TempLAMA importer writes them (the release's "_X_" made the gap),
# subjects ending in a stop among them
ROWS = [
    row("p6", "[MASK] is the head of the government of France.", "P6", "2015", ["Manuel Valls"]),
    row("p286", "[MASK] is the head coach of Blackpool F.C..", "P286", "2018", ["Gary Bowyer"]),
    row("p488", "[MASK] is the chair of bp.", "P488", "2012-Q3", ["Carl-Henric Svanberg"]),
    row("drift", "[MASK] is the head coach of Manchester United F.C.", "P286", "2021-07"),
    row("own", "[MASK] was employed by Umbrella.", "P108", "2019", ["Eve Li"]),
    row("p54", "Lionel Messi plays for [MASK].", "P54", "2019", ["FC Barcelona"]),
    row("gone", "[MASK] is the head of the government of Italy.", "P6", "2016", ["A"], "deleted"),
]


@pytest.fixture
def rows(tmp_path):
    write_jsonl(tmp_path / "ask" / "examples.jsonl", ROWS)
    return {r.id: r for r in read_asked_rows(tmp_path / "ask" / "examples.jsonl")}


def test_a_gap_first_row_reads_as_its_relations_question(rows):
    assert subject_of(rows["p6"]) == "France"
    assert subject_of(rows["p286"]) == "Blackpool F.C."  # TempLAMA doubles the stop
    assert subject_of(rows["drift"]) == "Manchester United F.C."  # the label's stop ends it
    assert subject_of(rows["p488"]) == "bp"
    assert question_of(rows["p6"]) == "Who was the head of government of France in 2015?"
    assert question_of(rows["p286"]) == "Who was the head coach of Blackpool F.C. in 2018?"
    assert question_of(rows["p488"]) == "Who was the chair of bp in the third quarter of 2012?"
    assert question_of(rows["drift"]) == (
        "Who was the head coach of Manchester United F.C. in July 2021?"
    )
    # a statement its relation's template does not word: the statement with a blank
    assert subject_of(rows["own"]) is None
    assert question_of(rows["own"]) == "Fill in the blank: In 2019, ___ was employed by Umbrella."
    assert when_words("2019-07-24") == "on 24 July 2019" and when_words(None) is None


class Asked:
    """A model that says what it was asked: it answers ``answer`` to every prompt."""

    family, name = "causal", "asked"

    def __init__(self, speaks_chat: bool, answer: str = "Manuel Valls"):
        self.speaks_chat, self.answer, self.seen = speaks_chat, answer, []

    def complete(self, requests, progress=None):
        self.seen += requests
        return [Completion(self.answer, self.answer, [1], -1.0) for _ in requests]


def _asked(model, rows, **options):
    predictions = predict_generate(model, list(rows.values()), GenerateParams(**options), None)
    return {p["id"]: p for p in predictions}, {r.cloze.left.strip(): r for r in model.seen}


def test_a_base_model_is_asked_a_question_that_ends_where_the_answer_starts(rows):
    got, requests = _asked(Asked(speaks_chat=False), rows)
    assert got["p6"]["form"] == "question" and got["p54"]["form"] == "template"
    assert got["p6"]["prompt"] == (
        "Question: Who was the head of government of France in 2015?\nAnswer:"
    )
    asked = requests[got["p6"]["prompt"]]
    assert not asked.chat and asked.max_tokens == 32  # a question is answered in a sentence
    template = requests["In 2019, Lionel Messi plays for"]
    assert not template.chat and template.max_tokens == 12
    assert got["p6"]["correct"] and got["p6"]["category"] == "Correct"


def test_an_instruct_model_is_asked_the_question_as_a_chat_turn(rows):
    got, requests = _asked(Asked(speaks_chat=True), rows)
    prompt = got["p6"]["prompt"]
    assert prompt == "Who was the head of government of France in 2015?"
    assert requests[prompt].chat
    # the template's continuations stay as they are (--chat wraps them)
    assert not requests["In 2019, Lionel Messi plays for"].chat


def test_an_option_overrides_how_the_model_is_told(rows):
    got, requests = _asked(Asked(speaks_chat=True), rows, question_prompt="plain")
    assert got["p6"]["prompt"].startswith("Question: ") and not requests[got["p6"]["prompt"]].chat
    got, requests = _asked(Asked(speaks_chat=False), rows, question_prompt="chat")
    assert requests[got["p6"]["prompt"]].chat
    # every row as a question; or the gap-first rows skipped, saying how to ask them
    got, _ = _asked(Asked(speaks_chat=False), rows, form="question")
    assert got["p54"]["form"] == "question"
    assert (
        got["p54"]["prompt"] == "Question: Which team did Lionel Messi play for in 2019?\nAnswer:"
    )
    got, _ = _asked(Asked(speaks_chat=False), rows, gap_first="skip")
    assert got["p6"]["skipped"].startswith("the gap comes first")
    with pytest.raises(ValueError, match="`gap_first` applies to rows asked by the template"):
        GenerateParams(form="question", gap_first="skip")


def test_question_exemplars_are_other_rows_questions_with_their_answers(tmp_path):
    rows = [
        row(f"q{i}", f"[MASK] is the head of the government of {country}.", "P6", "2015", [pm])
        for i, (country, pm) in enumerate(
            [("France", "Manuel Valls"), ("Spain", "Mariano Rajoy"), ("Italy", "Matteo Renzi")]
        )
    ]
    write_jsonl(tmp_path / "examples.jsonl", rows)
    asked = read_asked_rows(tmp_path / "examples.jsonl")
    model = Asked(speaks_chat=False)
    got = predict_generate(model, asked[:1], GenerateParams(shots=2), None)[0]
    lines = got["prompt"].split("\n")
    assert lines[-2:] == ["Question: Who was the head of government of France in 2015?", "Answer:"]
    shots = [line for line in lines if line.startswith("Answer: ")]
    assert sorted(shots) == ["Answer: Mariano Rajoy", "Answer: Matteo Renzi"]
    assert got["exemplars"] == 2


def test_metrics_give_the_share_asked_each_way_and_each_forms_figure(rows):
    params = GenerateParams()
    got, _ = _asked(Asked(speaks_chat=True), rows)
    metrics = generate_metrics(
        list(got.values()), params.model_copy(update={"question_prompt": "chat"})
    )
    # 6 rows count (the deleted one is left out): 5 asked as questions, 1 by the template
    assert metrics["forms"] == {
        "question": {"rows": 5, "share": pytest.approx(5 / 6)},
        "template": {"rows": 1, "share": pytest.approx(1 / 6)},
    }
    assert metrics["coverage"]["forms"] == {"question": 5, "template": 1}
    assert metrics["coverage"]["question_prompt"] == "chat"
    assert metrics["by_form"]["question"]["n"] == 5 and metrics["by_form"]["template"]["n"] == 1
    # "Manuel Valls" is right for p6 only: 1 of 5 questions, 0 of 1 template rows
    assert metrics["by_form"]["question"]["accuracy"] == pytest.approx(0.2)
    assert metrics["by_form"]["question"]["accuracy_ci95"] is not None
    assert metrics["accuracy"] == pytest.approx(1 / 6) and metrics["accuracy_n"] == 6


def test_a_model_whose_answers_are_empty_is_warned_of_and_its_share_shown(rows):
    params = GenerateParams()
    got, _ = _asked(Asked(speaks_chat=False, answer=""), rows)
    metrics = generate_metrics(list(got.values()), params)
    assert metrics["empty"] == 1.0 and metrics["empty_ci95"][1] == 1.0
    assert metrics["overall"]["empty"] == 1.0
    (warning,) = metrics["warnings"]
    assert warning.startswith("6 of 6 first answers (100%) are empty: the model stopped at once")
    fine, _ = _asked(Asked(speaks_chat=False), rows)
    assert generate_metrics(list(fine.values()), params)["warnings"] == []
    # the threshold: more than 5% of the answers
    answers = [dict(p, prediction="") for p in fine.values()][:1] + [
        dict(p, id=f"{p['id']}-{i}") for i in range(20) for p in list(fine.values())[1:2]
    ]
    share = generate_metrics(answers, params)["empty"]
    assert share == pytest.approx(1 / 21) and share <= EMPTY_WARNING
    assert generate_metrics(answers, params)["warnings"] == []


def test_the_probe_step_warns_of_empty_answers_and_prints_their_share(tmp_path, capsys):
    """Through the probe step: the warning is logged and kept in metrics.json, and the printed
    table gives the empty share with its interval beside the accuracy."""
    import chronoprobe
    from chronoprobe.probes.ops import show

    write_jsonl(tmp_path / "ask" / "examples.jsonl", ROWS)
    out = tmp_path / "out"
    model = Asked(speaks_chat=False, answer="")
    result = chronoprobe.probe("generate", tmp_path / "ask", model=model, out=out)
    assert any("first answers (100%) are empty" in w for w in result.model()["warnings"])
    logged = " ".join(capsys.readouterr().err.split())
    assert "asked: 6 of 6 first answers (100%) are empty" in logged
    table = show(out)
    empty = table.rows[0][table.columns.index("empty")]
    assert str(empty) == "1.000 [0.610, 1.000]"
    assert any(note.startswith("asked: accuracy over 6 of 7 rows (85.7%)") for note in table.notes)


def test_a_tokenizers_chat_template_tells_an_instruct_model_from_a_base_one():
    from chronoprobe.models.causal import CausalLM
    from chronoprobe.models.served import ServedLM
    from chronoprobe.models.tiny import random_model
    from chronoprobe.models.tokenizer import train_tokenizer
    from chronoprobe.probes.generate import with_question_prompt

    from .conftest import CORPUS

    tokenizer = train_tokenizer(CORPUS, "llama")
    model = CausalLM(random_model("llama", tokenizer, seed=1), tokenizer, name="tiny")
    assert not model.speaks_chat
    assert with_question_prompt(GenerateParams(), model).question_prompt == "plain"
    tokenizer.chat_template = "{% for m in messages %}<u>{{ m['content'] }}{% endfor %}<a>"
    assert model.speaks_chat
    assert with_question_prompt(GenerateParams(), model).question_prompt == "chat"
    # said explicitly, the option wins; a served model is asked through chat completions
    forced = GenerateParams(question_prompt="plain")
    assert with_question_prompt(forced, model).question_prompt == "plain"
    assert ServedLM.speaks_chat
    # the chat turn is the question, framed by the template
    from chronoprobe.models.requests import Cloze, PromptRequest

    asked = model.prompt_row(PromptRequest(Cloze("Who led France in 2015? ", ""), chat=True))
    assert tokenizer.decode(asked.ids).replace(" ", "").startswith("<u>WholedFrance")
