"""The served adapter against a malicious server (tests/models/served_stub.py): every reply
shape ends in one line naming the server and the model, within the request timeout plus one
second, and keeps the answers that arrived before it; cosmetic fields never cost an answer; a
base URL that holds a key or a control character is refused without repeating the key."""

from __future__ import annotations

import time

import pytest

from chronoprobe.models import served as served_module
from chronoprobe.models.requests import Cloze, PromptRequest, ScoreRequest
from chronoprobe.models.served import ServedError, ServedLM, checked_base_url

from .served_stub import (
    BROKEN,
    COSMETIC,
    LARGE,
    MALFORMED,
    MALFORMED_CHAT,
    MALFORMED_ECHO,
    RETRY_AFTER,
    SLOW,
    Raw,
    StubServer,
    completion,
    raw_reply,
    redirect,
    retry_then_answer,
)

TIMEOUT = 1.0  # the request timeout of the cases that must time out
# the request timeout of the others: far past any reply of theirs, on a loaded machine too
ANSWERED = 10.0
CAP = 1 << 20  # the reply cap they run under
ASK = [PromptRequest(Cloze("In 2019, Alice Smith works for ", ""), max_tokens=4)]
CHAT = [PromptRequest(Cloze("In 2019, Alice Smith works for ", ""), max_tokens=4, chat=True)]
SCORE = [ScoreRequest(Cloze("a", "c"), "b")]
KEY = "sk-hostile-0123456789abcdef"


def hostile(url: str, **options) -> ServedLM:
    settings = {"backoff": 0.01, "retries": 0, "request_timeout": ANSWERED}
    return ServedLM("openai:tiny", base_url=url, max_reply_bytes=CAP, **{**settings, **options})


def failure(reply, requests=ASK, **options) -> tuple[str, float]:
    """The reason of the one-line failure ``reply`` gives, and the seconds it took, which
    are never more than the request timeout and a second."""
    with StubServer(reply) as stub:
        model = hostile(stub.url, **options)
        started = time.monotonic()
        with pytest.raises(ServedError) as error:
            if isinstance(requests[0], ScoreRequest):
                model.score(requests)
            else:
                model.complete(requests)
        took = time.monotonic() - started
    assert took < options.get("request_timeout", ANSWERED) + 1.0
    message = str(error.value)
    assert "\n" not in message and message.startswith(f"openai:tiny at {stub.url}: "), message
    assert len(message) < 600, message
    return message.split(": ", 1)[1], took


def served_reply(entry):
    return raw_reply(entry) if isinstance(entry, Raw) else entry


def respond(entry, path, body, headers):
    """What a case of served_stub answers: its raw bytes, or its reply."""
    return entry if isinstance(entry, Raw) else entry(path, body, headers)


@pytest.mark.parametrize("case", sorted(SLOW))
def test_a_slow_or_silent_server_ends_within_the_request_timeout(case):
    """One byte a second never tripped a timeout that was counted per read."""
    reason, _ = failure(served_reply(SLOW[case]), request_timeout=TIMEOUT)
    assert reason.startswith(f"no whole reply within {TIMEOUT:g} s, 1 tries"), reason


def test_a_tls_handshake_dripped_ends_within_the_request_timeout():
    """The handshake is under the deadline too: a server that answers the ClientHello with a
    record of 16 KiB sent a byte at a time (no certificate needed to keep a client waiting)."""
    import socket
    import threading

    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def drip() -> None:
        connection, _ = listener.accept()
        with connection:
            connection.recv(65536)  # the ClientHello
            connection.sendall(b"\x16\x03\x03\x40\x00")  # a handshake record's header
            while not stop.wait(0.05):
                try:
                    connection.sendall(b"\x02")
                except OSError:
                    return

    threading.Thread(target=drip, daemon=True).start()
    url = f"https://127.0.0.1:{listener.getsockname()[1]}/v1"
    model = hostile(url, request_timeout=TIMEOUT)
    started = time.monotonic()
    try:
        with pytest.raises(ServedError, match=rf"no whole reply within {TIMEOUT:g} s, 1 tries"):
            model.complete(ASK)
        assert time.monotonic() - started < TIMEOUT + 1.0
    finally:
        stop.set()
        listener.close()


@pytest.mark.parametrize("case", sorted(LARGE))
def test_a_reply_past_the_cap_is_refused_without_reading_it_all(case):
    reason, _ = failure(served_reply(LARGE[case]))
    assert reason.startswith(f"the reply from /completions is larger than {CAP:,} bytes"), reason
    assert "--max-record-bytes" in reason


BROKEN_SAYS = {
    "a negative length": "malformed reply from /completions: no choices in it",
    "a status code of 99999": "the connection broke: no HTTP reply",
    "a status line that is none": "the connection broke: no HTTP reply",
    "a header line of 100 KB": "the connection broke: no HTTP reply",
    "1,000 headers": "the connection broke: no HTTP reply",
    "a body cut short": "the connection broke: the reply ended early",
    "the connection closed at once": "the connection broke: the server closed the connection",
    "bad chunk sizes": "the connection broke: the reply ended early",
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_reply_that_is_no_http_is_one_line(case):
    reason, _ = failure(served_reply(BROKEN[case]))
    assert reason.startswith(BROKEN_SAYS[case]), reason


@pytest.mark.parametrize(
    ("group", "requests", "path"),
    [
        (MALFORMED, ASK, "/completions"),
        (MALFORMED_CHAT, CHAT, "/chat/completions"),
        (MALFORMED_ECHO, SCORE, "/completions"),
    ],
    ids=["completions", "chat", "echo"],
)
def test_an_answer_of_the_wrong_shape_is_one_line_naming_what_is_wrong(group, requests, path):
    for case, reply in group.items():
        reason, _ = failure(reply, requests)
        assert reason.startswith(f"malformed reply from {path}: "), (case, reason)


def test_the_wrong_shapes_name_the_value_at_fault():
    said = {case: failure(reply, SCORE)[0] for case, reply in MALFORMED_ECHO.items()}
    prefix = "malformed reply from /completions: $.choices[0].logprobs"
    assert said["text_offset nulls"] == f"{prefix}.text_offset[1]: Expected `int`, got `null`"
    assert said["token_logprobs strings"] == (
        f"{prefix}.token_logprobs[1]: Expected `float | null`, got `str`"
    )
    assert said["token_logprobs NaN"] == f"{prefix}.token_logprobs[1]: nan is no log-probability"
    assert said["token_logprobs null past the first token"] == (
        f"{prefix}.token_logprobs[1]: null past the first token"
    )
    assert said["text_offset descending"] == f"{prefix}.text_offset[2]: 1 before 2"
    nested = failure(MALFORMED["JSON nested 100,000 deep"])[0]
    assert nested == "malformed reply from /completions: its JSON is nested too deeply"
    no_text = failure(MALFORMED["text null"])[0]
    assert no_text.endswith("$.choices[0].text: Expected `str`, got `null`")
    half = failure(MALFORMED["text holding a lone surrogate"])[0]
    assert half.endswith("$.choices[0].text: a lone surrogate (U+D800) at character 5")
    half = failure(MALFORMED_CHAT["content holding a lone surrogate"], CHAT)[0]
    assert half.endswith("$.choices[0].message.content: a lone surrogate (U+DC00) at character 6")


@pytest.mark.parametrize("case", sorted(COSMETIC))
def test_a_cosmetic_field_never_costs_an_answer(case):
    body = COSMETIC[case]
    with StubServer(lambda path, sent, headers: (200, body, {})) as stub:
        model = hostile(stub.url, price_prompt=1.0)
        answers = model.complete(ASK)
    assert answers[0].text == "Globex"
    assert answers[0].served["model"] in (None, "stub-model")
    record = model.record()
    assert record["prompt_tokens"] is None and record["cost"] is None  # unknown, not 0
    assert all(len(name) < 100 and name.isprintable() for name in record["models_reported"])
    assert not record["system_fingerprints"]


@pytest.mark.parametrize("header", sorted(RETRY_AFTER))
def test_every_retry_after_waits_what_it_says_or_the_backoff(header, monkeypatch):
    waited: list[float] = []
    monkeypatch.setattr(served_module.time, "sleep", waited.append)
    with StubServer(retry_then_answer(header)) as stub:
        answers = hostile(stub.url, retries=2).complete(ASK)
    assert answers[0].text == "Globex"
    expected = RETRY_AFTER[header]
    assert waited == [pytest.approx(0.01 if expected is None else expected, abs=1.0)]


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_says_redirect_and_where_to_never_a_key_in_it(status):
    to = f"http://elsewhere.example/v1/completions?api_key={KEY}"
    reason, _ = failure(redirect(status, to))
    assert reason == (
        f"the server answered /completions with a redirect ({status}) to "
        "'http://elsewhere.example/v1/completions?...', which is not followed; if that is the "
        "server, give it as --base-url"
    )
    assert KEY not in reason
    assert "(with no Location)" in failure(redirect(302, None))[0]
    assert (
        "to 'http://x.example/\\x1b[2J'," in failure(redirect(302, "http://x.example/\x1b[2J"))[0]
    )


def test_a_servers_words_are_printed_as_text_never_as_escapes():
    said = "\x1b[2J\x1b]0;owned\x07[bold red]boom[/] :m: \u202eevil"
    reason, _ = failure(lambda path, body, headers: (400, {"error": {"message": said}}, {}))
    assert "\x1b" not in reason and "\u202e" not in reason and "\x07" not in reason
    assert "\\x1b[2J\\x1b]0;owned\\x07[bold red]boom[/] :m: \\u202eevil" in reason


@pytest.mark.parametrize(
    "case",
    [
        ("slow", SLOW["silence after the request"]),
        ("large", LARGE["a body without end, no length given"]),
        ("broken", BROKEN["a status line that is none"]),
        ("malformed", MALFORMED["JSON nested 100,000 deep"]),
        ("malformed", MALFORMED["text a list"]),
    ],
    ids=lambda case: case[0],
)
def test_the_answers_before_a_bad_reply_are_kept(case):
    """The third request gets the bad reply: the first two were handed to keep, and the
    fourth was never sent."""
    _, bad = case
    asked: list[str] = []

    def reply(path, body, headers):
        asked.append(body["prompt"])
        if len(asked) == 3:
            return respond(bad, path, body, headers)
        return 200, completion(" Globex"), {}

    requests = [PromptRequest(Cloze(f"Person {i} works for ", "")) for i in range(5)]
    kept: dict[int, str] = {}
    with StubServer(reply) as stub, pytest.raises(ServedError):
        model = hostile(stub.url, concurrency=1, request_timeout=3.0)  # the silent one's wait
        model.complete(requests, keep=lambda i, a: kept.update({i: a.text}))
    assert kept == {0: "Globex", 1: "Globex"} and len(asked) == 3


@pytest.mark.parametrize("concurrency", [1, 3])
def test_no_request_is_sent_after_one_failed(concurrency):
    """Requests queued behind a failure (twice --concurrency are queued ahead) are never sent:
    the server sees the failing one and those already in flight beside it, whose answers are
    kept. One thread picking up the next queued request before the failure was seen sent it."""
    asked: list[str] = []

    def reply(path, body, headers):
        asked.append(body["prompt"])
        if len(asked) == 3 - (concurrency > 1) * 2:  # the third, or the first of three
            return 500, {"error": {"message": "boom"}}, {}
        time.sleep(0.2 if concurrency > 1 else 0)  # those beside it are in flight meanwhile
        return 200, completion(" Globex"), {}

    requests = [PromptRequest(Cloze(f"Person {i} works for ", "")) for i in range(20)]
    kept: dict[int, str] = {}
    with StubServer(reply) as stub, pytest.raises(ServedError, match="boom"):
        model = hostile(stub.url, concurrency=concurrency)
        model.complete(requests, keep=lambda i, a: kept.update({i: a.text}))
    if concurrency == 1:
        assert len(stub.requests) == 3 and sorted(kept) == [0, 1]
    else:
        assert 1 <= len(stub.requests) <= concurrency
        assert len(kept) == len(stub.requests) - 1 and set(kept.values()) <= {"Globex"}


def test_a_connection_is_kept_alive_and_one_the_server_closed_is_opened_again():
    with StubServer(lambda path, body, headers: (200, completion(" x"), {}), True) as stub:
        requests = [PromptRequest(Cloze(f"q{i} ", "")) for i in range(6)]
        hostile(stub.url, concurrency=2).complete(requests)
    assert len(stub.requests) == 6 and stub.connections <= 2
    whole = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(b'{"choices":[{"text":"x"}]}')
    closes = Raw(lambda out, stop: out.write(whole + b'{"choices":[{"text":"x"}]}'))
    with StubServer(raw_reply(closes), True) as stub:  # says keep-alive, then closes
        answers = hostile(stub.url, concurrency=1).complete(requests)
    assert [a.text for a in answers] == ["x"] * 6
    assert len(stub.requests) == 6  # none sent twice to the server


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/v1\r\nX-Injected: 1",
        "http://127.0.0.1:8000/v1\n",
        "http://127.0.0.1:8000/\tv1",
        "http://127.0.0.1:8000/v1\x00",
        "http://127.0.0.1:8000/v1\u202e",
        "http://127.0.0.1:8000/v1\u2028",
        "http://127.0.0.1:8000/my v1",
    ],
)
def test_a_base_url_with_a_control_character_or_space_is_refused(url):
    with pytest.raises(ValueError) as refused:
        checked_base_url(url)
    message = str(refused.value)
    assert message.isprintable() and "holds" in message and "a URL holds none" in message


@pytest.mark.parametrize(
    "url",
    [
        f"http://127.0.0.1:8000/v1?api_key={KEY}",
        f"http://127.0.0.1:8000/v1?key={KEY}",
        f"http://127.0.0.1:8000/v1?x=1&token={KEY}",
        f"http://127.0.0.1:8000/v1?access_token={KEY}",
        f"http://127.0.0.1:8000/v1?API-KEY={KEY}",
        f"http://127.0.0.1:8000/v1;apikey={KEY}",
        f"http://127.0.0.1:8000/v1#access_token={KEY}",
        f"http://127.0.0.1:8000/v1?sig={KEY}",
        f"http://127.0.0.1:8000/v1?password={KEY}",
    ],
)
def test_a_key_in_the_base_urls_query_is_refused_without_repeating_it(url):
    with pytest.raises(ValueError) as refused:
        checked_base_url(url, "MY_KEY")
    message = str(refused.value)
    assert KEY not in message
    assert "holds what looks like a key" in message and "$MY_KEY" in message


TOKEN = "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8"  # a key of no known prefix: random letters and digits


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (f"http://127.0.0.1:8000/{KEY}/v1", "'http://127.0.0.1:8000/***/v1'"),
        (f"http://127.0.0.1:8000/v1/{KEY}", "'http://127.0.0.1:8000/v1/***'"),
        ("http://127.0.0.1:8000/hf_AbCdEfGhIjKlMnOp/v1", "'http://127.0.0.1:8000/***/v1'"),
        (f"https://example.org/keys/{TOKEN}/v1", "'https://example.org/keys/***/v1'"),
        (f"https://example.org/{TOKEN}-proxy/v1", "'https://example.org/***/v1'"),
    ],
)
def test_a_key_in_the_base_urls_path_is_refused_and_masked(url, shown):
    with pytest.raises(ValueError) as refused:
        checked_base_url(url, "MY_KEY")
    message = str(refused.value)
    assert message.startswith(f"{shown} holds what looks like a key in its path; ")
    assert "$MY_KEY" in message and KEY not in message and TOKEN not in message


@pytest.mark.parametrize(
    "url",
    [
        "https://api.cloudflare.com/client/v4/accounts/023e105f4ecef8ad9ca31a8372d0c353/ai/v1",
        "https://x.openai.azure.com/openai/deployments/gpt-4o-mini-2024-07-18",
        "https://api-inference.huggingface.co/models/meta-llama/Meta-Llama-3-8B-Instruct/v1",
        "http://skeleton.local:8000/v1/550e8400-e29b-41d4-a716-446655440000",
    ],
)
def test_a_path_of_names_and_hex_ids_is_no_key(url):
    assert checked_base_url(url) == url


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("http://127.0.0.1:8000/v1?x=1", "holds a query"),
        ("http://127.0.0.1:8000/v1#part", "holds a query"),
        (f"https://me:{KEY}@example.org/v1", "holds a user name or password"),
        ("http://127.0.0.1:99999/v1", "its port is no port number"),
        ("http://127.0.0.1:port/v1", "its port is no port number"),
        ("ftp://127.0.0.1/v1", "not an http(s) URL"),
        ("http:///v1", "not an http(s) URL"),
        ("127.0.0.1:8000", "not an http(s) URL"),
    ],
)
def test_other_base_urls_that_cannot_be_one_are_refused(url, says):
    with pytest.raises(ValueError) as refused:
        checked_base_url(url)
    assert says in str(refused.value) and KEY not in str(refused.value)


def test_a_key_in_the_base_url_from_the_environment_is_refused_naming_the_variable(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:9/v1?api_key={KEY}")
    with pytest.raises(ValueError) as refused:
        ServedLM("openai:tiny")
    assert str(refused.value).startswith(
        "openai:tiny: $OPENAI_BASE_URL 'http://127.0.0.1:9/v1?...'"
    )
    assert KEY not in str(refused.value)
    assert checked_base_url("http://127.0.0.1:8000/v1/") == "http://127.0.0.1:8000/v1"


class _Proxy:
    """An HTTP proxy on 127.0.0.1 that answers plain requests itself and refuses tunnels."""

    def __init__(self) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        seen = self.seen = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["content-length"]))
                seen.append((self.command, self.path, self.headers.get("proxy-authorization")))
                body = b'{"choices": [{"text": " via the proxy"}]}'
                self.send_response(200)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_CONNECT(self) -> None:
                seen.append((self.command, self.path, self.headers.get("proxy-authorization")))
                self.send_response(407, "Proxy Authentication Required")
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_proxy_of_the_environment_is_used_and_its_refusal_is_one_line(monkeypatch):
    proxy = _Proxy()
    try:
        for name in ("no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("http_proxy", proxy.url)
        monkeypatch.setenv("https_proxy", proxy.url.replace("://", "://me:pw@"))
        answers = hostile("http://served.invalid:8000/v1").complete(ASK)
        assert answers[0].text == "via the proxy"
        assert proxy.seen == [("POST", "http://served.invalid:8000/v1/completions", None)]
        with pytest.raises(ServedError) as refused:
            hostile("https://served.invalid/v1").complete(ASK)
        assert str(refused.value) == (
            "openai:tiny at https://served.invalid/v1: cannot reach the server (the proxy "
            "127.0.0.1 refused the tunnel (407 Proxy Authentication Required))"
        )
        assert proxy.seen[1] == ("CONNECT", "served.invalid:443", "Basic bWU6cHc=")
        monkeypatch.setenv("no_proxy", "served.invalid")
        with pytest.raises(ServedError, match="cannot reach the server"):
            hostile("http://served.invalid:8000/v1").complete(ASK)  # asked directly: no such host
        assert len(proxy.seen) == 2
    finally:
        proxy.close()
