"""`probe` against a malicious server, end to end: a run stopped by a bad reply says so in one
line naming the server and the model, and the next run asks only the rows not yet answered;
a base URL holding a key or a control character is refused before anything is written, and
the key is in no file; what a server or a spec says is printed as text, never as markup."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app

from ..models.served_stub import LARGE, MALFORMED, SLOW, Raw, completion
from ..models.served_stub import StubServer as Stub
from .test_served import ROWS, failing_probe, probe

KEY = "sk-red-team-0123456789abcdef"
TOKEN = "Xq7redTeam0123456789abcdef"  # a key of no known prefix


@pytest.fixture
def data(tmp_path):
    from chronoprobe.jsonl import write_jsonl

    write_jsonl(tmp_path / "data" / "examples.jsonl", ROWS)
    return tmp_path / "data"


def every_file_under(*folders: Path) -> list[Path]:
    return [p for folder in folders for p in folder.rglob("*") if p.is_file()]


@pytest.mark.parametrize(
    "bad",
    [
        MALFORMED["JSON nested 100,000 deep"],
        MALFORMED["text a list"],
        LARGE["a body without end, no length given"],
        SLOW["headers, then silence"],
    ],
    ids=["nested", "wrong type", "endless", "silent"],
)
def test_a_run_stopped_by_a_bad_reply_resumes_asking_only_the_rows_not_answered(
    bad, data, tmp_path
):
    asked: list[str] = []
    good = True

    def reply(path, body, headers):
        asked.append(body["prompt"])
        if len(asked) == 3 and not good:
            return bad if isinstance(bad, Raw) else bad(path, body, headers)
        return 200, completion(" Paris."), {}

    # a timeout the sound replies never reach, on a loaded machine too; the silent one waits it
    served = ["--concurrency", "1", "--request-timeout", "3", "--retries", "0"]
    out = tmp_path / "stopped"
    with Stub(reply) as stub:
        good = False
        args = ["probe", "generate", str(data), "-m", "openai:stub", "--base-url", stub.url]
        message = failing_probe(*args, *served, "--max-tokens", "6", "-o", str(out))
        assert message.startswith(f"error: openai:stub at {stub.url}: "), message
        assert not (out / "metrics.json").exists()
        first = list(asked)
        asked.clear()
        good = True
        metrics = probe(data, tmp_path / "resumed", "-m", "openai:stub", "--base-url", stub.url)
    # the third got the bad reply, and no request was sent after it
    answered = first[:2]
    assert len(first) == 3 and sorted(asked) == sorted({*asked, first[2]} - set(answered))
    assert len(asked) == len(ROWS) - len(answered)  # nothing answered before is asked again
    record = metrics["models"]["openai:stub"]["served"]
    assert record["answers_reused"] == len(answered)
    assert metrics["models"]["openai:stub"]["predicted"] == len(ROWS)


def test_a_lone_surrogate_in_an_answer_is_a_malformed_reply_not_a_crash(data, tmp_path):
    """ "\\ud800" in a reply's text was kept as an answer: writing it raised
    UnicodeEncodeError."""
    body = '{"choices": [{"text": " Par\\ud800is."}]}'
    with Stub(lambda path, sent, headers: (200, body, {})) as stub:
        args = ["probe", "generate", str(data), "-m", "openai:stub", "--base-url", stub.url]
        message = failing_probe(*args, "--retries", "0", "-o", str(tmp_path / "out"))
    assert message == (
        f"error: openai:stub at {stub.url}: malformed reply from /completions: "
        "$.choices[0].text: a lone surrogate (U+D800) at character 4; nothing written to "
        f"{tmp_path / 'out'}"
    )


@pytest.mark.parametrize(
    "url",
    [
        f"http://127.0.0.1:9/v1?api_key={KEY}",
        f"http://127.0.0.1:9/v1?x=1&token={KEY}",
        f"http://127.0.0.1:9/v1#key={KEY}",
        f"http://me:{KEY}@127.0.0.1:9/v1",
        f"http://127.0.0.1:9/{KEY}/v1",
        f"http://127.0.0.1:9/v1/{TOKEN}",
        f"http://127.0.0.1:9/v1\r\nAuthorization: Bearer {KEY}",
        f"http://127.0.0.1:9/v1\n{KEY}",
    ],
)
def test_a_base_url_holding_a_key_or_a_line_break_is_refused_and_never_written(url, data, tmp_path):
    out = tmp_path / "out"
    args = ["probe", "generate", str(data), "-m", "openai:gpt-x", "--base-url", url]
    message = failing_probe(*args, "-o", str(out))
    assert message.startswith("error: --base-url: ")
    assert KEY not in message and TOKEN not in message
    assert not out.exists()
    for path in every_file_under(tmp_path, Path(os.environ["CHRONOPROBE_CACHE"])):
        assert KEY.encode() not in path.read_bytes(), path
        assert TOKEN.encode() not in path.read_bytes(), path


@pytest.mark.parametrize(
    "url",
    [
        f"http://127.0.0.1:9/v1?api_key={KEY}",
        f"http://127.0.0.1:9/{KEY}/v1",
        f"http://127.0.0.1:9/v1\r\nAuthorization: Bearer {KEY}",
        "ftp://127.0.0.1/v1",
    ],
)
def test_the_judges_base_url_is_checked_before_anything_runs(url, data, tmp_path):
    """--judge-base-url went unchecked until the judge loaded, after every probed row was
    asked, and the key in it was written with the params; the refusal named --base-url."""
    out = tmp_path / "out"
    with Stub(lambda path, body, headers: (200, completion(" Paris."), {})) as stub:
        args = ["probe", "generate", str(data), "-m", "openai:stub", "--base-url", stub.url]
        judged = ["--judge", "openai:judge", "--judge-base-url", url]
        message = failing_probe(*args, *judged, "-o", str(out))
    assert message.startswith("error: --judge-base-url: "), message
    assert KEY not in message and not stub.requests and not out.exists()
    for path in every_file_under(tmp_path, Path(os.environ["CHRONOPROBE_CACHE"])):
        assert KEY.encode() not in path.read_bytes(), path


def test_a_key_in_the_base_url_of_the_environment_is_refused_and_never_written(
    data, tmp_path, monkeypatch
):
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:9/v1?api_key={KEY}")
    out = tmp_path / "out"
    message = failing_probe("probe", "generate", str(data), "-m", "openai:gpt-x", "-o", str(out))
    assert "$OPENAI_BASE_URL 'http://127.0.0.1:9/v1?...' holds what looks like a key" in message
    assert KEY not in message and not (out / "metrics.json").exists()
    for path in every_file_under(tmp_path, Path(os.environ["CHRONOPROBE_CACHE"])):
        assert KEY.encode() not in path.read_bytes(), path


def test_the_refusal_names_the_variable_the_key_goes_in(data, tmp_path, monkeypatch):
    """With --api-key-env, the advice named $OPENAI_API_KEY all the same."""
    monkeypatch.setenv("MY_KEY", "sk-mine")
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:9/v1?api_key={KEY}")
    args = ["probe", "generate", str(data), "-m", "openai:gpt-x", "--api-key-env", "MY_KEY"]
    message = failing_probe(*args, "-o", str(tmp_path / "out"))
    assert "give the key through $MY_KEY instead" in message and KEY not in message
    monkeypatch.delenv("OPENAI_BASE_URL")
    url = f"http://127.0.0.1:9/v1?token={KEY}"
    message = failing_probe(*args, "--base-url", url, "-o", str(tmp_path / "out"))
    assert message.startswith("error: --base-url: ") and KEY not in message
    assert "give the key through the variable --api-key-env names ($OPENAI_API_KEY)" in message


def test_a_spec_and_a_servers_words_are_printed_as_they_are_never_as_markup(data, tmp_path):
    """``openai:m:`` was printed as an emoji, and a closing tag in a message crashed rich."""
    said = "no [bold]such[/bold] model :smile: [/oops]"
    with Stub(lambda path, body, headers: (422, {"error": {"message": said}}, {})) as stub:
        for spec in ("openai:m:", "openai:[/x]", "openai:a[red]b"):
            args = ["probe", "generate", str(data), "-m", spec, "--base-url", stub.url]
            message = failing_probe(*args, "--retries", "0", "-o", str(tmp_path / "o"))
            assert message.startswith(f"error: {spec} at {stub.url}: "), message
            assert f"(422: {said})" in message


def test_a_results_table_prints_values_with_brackets_as_text(tmp_path):
    """A model name or label holding "[/x]" in a table crashed rich with a MarkupError."""
    from rich.console import Console

    from chronoprobe.core.tables import ResultTable

    table = ResultTable(["model", "accuracy"], [["openai:m:[/x] [bold]", 0.5]], title="t [/y]")
    console = Console(record=True, width=200, emoji=False)
    console.print(table)
    text = console.export_text()
    assert "openai:m:[/x] [bold]" in text and "t [/y]" in text


def test_every_console_chronoprobe_makes_prints_emoji_codes_as_they_are():
    """``Console()`` replaces ``:m:`` with an emoji in every string it prints, markup or not."""
    import ast

    root = Path(__file__).parents[2] / "src" / "chronoprobe"
    made = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Console":
                emoji = {k.arg: k.value for k in node.keywords}.get("emoji")
                made.append((path.name, node.lineno, getattr(emoji, "value", None)))
    assert made and all(emoji is False for *_, emoji in made), made


def test_a_reply_nested_deep_is_one_line_without_a_traceback(data, tmp_path):
    with Stub(lambda path, body, headers: (200, "[" * 100_000, {})) as stub:
        args = ["probe", "generate", str(data), "-m", "openai:stub", "--base-url", stub.url]
        result = CliRunner().invoke(app, [*args, "-o", str(tmp_path / "o")])
    assert result.exit_code == 2, result.output
    assert "malformed reply from /completions: its JSON is nested too deeply" in result.output
    assert "Traceback" not in result.output
