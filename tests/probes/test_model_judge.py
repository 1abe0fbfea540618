"""A model as judge: its prompt and verdicts, the `judge` rule of the generate view behind a
stub OpenAI-compatible server (cached like any model's answers), and its calibration against
the hand-judged sets: a judge scripted to be right agrees fully, one that says yes to all
counts every wrong answer correct."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.jsonl import write_jsonl
from chronoprobe.models.requests import Completion
from chronoprobe.probes.calibration import read_records
from chronoprobe.probes.judge_agreement import _asked
from chronoprobe.probes.model_judge import PROMPT, Asked, ask, prompt, verdict

from ..models.served_stub import StubServer

SETS = Path(__file__).parents[1] / "fixtures" / "judging"
runner = CliRunner()


def chat(text: str) -> dict:
    return {
        "id": "chat-1",
        "object": "chat.completion",
        "model": "stub-judge",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 1, "total_tokens": 101},
    }


def asked_of(body: dict) -> str:
    return body["messages"][-1]["content"]


def test_the_prompt_gives_question_period_gold_with_aliases_and_the_first_line():
    item = Asked(
        "Eden Hazard plays for ___.",
        "2013",
        [["Chelsea F.C.", "Chelsea", "The Blues"], ["Belgium national football team"]],
        "\n Chelsea, I think\nor Arsenal",
    )
    text = prompt(item)
    assert text == PROMPT.format(
        question="Eden Hazard plays for ___.",
        period="2013",
        gold="Chelsea F.C. (also: Chelsea, The Blues); Belgium national football team",
        answer="Chelsea, I think",
    )
    assert "Reply with one word: yes or no." in text


@pytest.mark.parametrize(
    ("reply", "said"),
    [
        ("Yes", True),
        ("yes.", True),
        ("**Yes**", True),
        ("No, it names another club.", False),
        ("NO", False),
        ("Maybe", None),
        ("", None),
        (None, None),
        ("The answer is yes", None),  # the first word is the verdict
    ],
)
def test_the_first_word_is_the_verdict(reply, said):
    assert verdict(reply) == said


class Scripted:
    family = "causal"

    def __init__(self, replies):
        self.replies, self.seen = replies, []

    def complete(self, requests, progress=None):
        self.seen += requests
        return [Completion(r, r, [], 0.0) for r in self.replies[: len(requests)]]


def test_a_row_with_no_gold_answer_is_not_asked_and_is_incorrect():
    model = Scripted(["yes", "nonsense"])
    items = [
        Asked("q", "2020", [], "A"),
        Asked("q", "2020", [["B"]], "B"),
        Asked("q", None, [["C"]], "C"),
    ]
    assert ask(model, items) == [False, True, None]
    assert len(model.seen) == 2 and all(r.chat and r.temperature == 0 for r in model.seen)
    assert "Time asked: not given" in model.seen[1].cloze.left


ROWS = [
    {"id": "h13", "period": "2013", "relation": "P54", "subject": "Q1",
     "query": "Eden Hazard plays for [MASK].", "answers": ["Q9616"],
     "answer_labels": ["Chelsea F.C."], "answer_aliases": [["Chelsea"]], "split": None},
    {"id": "h20", "period": "2020", "relation": "P54", "subject": "Q1",
     "query": "Eden Hazard plays for [MASK].", "answers": ["Q8682"],
     "answer_labels": ["Real Madrid CF"], "answer_aliases": [[]], "split": "updated"},
]  # fmt: skip


def test_the_generate_view_judges_with_a_served_model_and_caches_its_answers(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-stub")
    data = tmp_path / "data"
    write_jsonl(data / "examples.jsonl", ROWS)
    responses = tmp_path / "answers.jsonl"
    write_jsonl(
        responses, [{"id": "h13", "answer": "The Blues"}, {"id": "h20", "answer": "Los Blancos"}]
    )

    def reply(path, body, headers):  # right about the nickname it knows, no about the other
        return 200, chat("Yes" if "The Blues" in asked_of(body) else "No."), {}

    with StubServer(reply) as server:
        args = ["probe", "generate", str(data), "--responses", str(responses),
                "--judge", "openai:stub-judge", "--judge-base-url", server.url,
                "--match", "judge"]  # fmt: skip
        first = runner.invoke(app, [*args, "-o", str(tmp_path / "one")])
        assert first.exit_code == 0, first.output
        assert len(server.requests) == 2
        assert all(path.endswith("/chat/completions") for path, _, _ in server.requests)
        again = runner.invoke(app, [*args, "-o", str(tmp_path / "two")])
        assert again.exit_code == 0, again.output
        assert len(server.requests) == 2  # every verdict came from the answer cache
    metrics = json.loads((tmp_path / "one" / "metrics.json").read_text())
    (entry,) = metrics["models"].values() if "models" in metrics else [metrics]
    text = json.dumps(entry)
    assert '"match": "judge"' in text and '"accuracy_judge"' in text
    assert '"unclear_replies": 0' in text


def _set(tmp_path: Path) -> Path:
    """A small calibration set: the first records of each shipped set."""
    folder = tmp_path / "set"
    lines = [
        json.loads(line)
        for name in ("calibration.jsonl", "strong.jsonl")
        for line in (SETS / name).read_text().splitlines()[:30]
    ]
    write_jsonl(folder / "calibration.jsonl", lines)
    return folder


@pytest.mark.parametrize("scripted", ["right", "yes to all"])
def test_calibration_reports_a_judges_agreement_with_the_person(tmp_path, monkeypatch, scripted):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-stub")
    folder = _set(tmp_path)
    records = read_records(folder / "calibration.jsonl")
    truth = {prompt(_asked(r)): r.human for r in records}

    def reply(path, body, headers):
        right = truth[asked_of(body)] if scripted == "right" else True
        return 200, chat("yes" if right else "no"), {}

    with StubServer(reply) as server:
        args = ["probe", "judge-agreement", str(folder), "-m", "openai:stub-judge",
                "--base-url", server.url, "-o", str(tmp_path / "out")]  # fmt: skip
        result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    import pyarrow.parquet as pq

    predictions = pq.read_table(tmp_path / "out" / "predictions.parquet").to_pylist()
    assert len(predictions) == len(records) and all(p["rules"] for p in predictions)
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    overall = _find(metrics, "overall")
    wrong = sum(not r.human for r in records)
    assert overall["n"] == len(records) and overall["correct_by_hand"] == len(records) - wrong
    if scripted == "right":
        assert overall["accuracy"] == 1 and overall["kappa"] == pytest.approx(1)
        assert overall["false_correct"] == 0 and overall["recall"] == 1
    else:
        assert overall["false_correct"] == 1 and overall["accuracy"] == pytest.approx(
            1 - wrong / len(records)
        )
    assert overall["false_correct_ci95"] is not None
    assert set(_find(metrics, "rules")) >= {"names", "fuzzy"}


def _find(tree, key):
    """The first value of ``key`` anywhere in a nested dict."""
    if isinstance(tree, dict):
        if key in tree:
            return tree[key]
        for value in tree.values():
            found = _find(value, key)
            if found is not None:
                return found
    return None
