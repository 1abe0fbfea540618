"""The served-model adapter against a stub OpenAI-compatible server on 127.0.0.1: what it sends,
retries and backoff, one-line errors for every fault, the rate limit, answers kept as they
arrive, and prompt log-probabilities scored as a local causal model scores them."""

from __future__ import annotations

import json
import threading
import time

import pytest

from chronoprobe.models.requests import Cloze, PromptRequest, ScoreRequest
from chronoprobe.models.served import RateLimit, ServedError, ServedLM, span_logprob

from .conftest import CLOZES, SPANS
from .served_stub import StubServer, completion, echo_server

KEY = "sk-stub-abcdef0123456789"
ASK = [PromptRequest(Cloze("In 2019, Alice Smith works for ", ""), max_tokens=4)]


def served(url: str, **options) -> ServedLM:
    return ServedLM("openai:tiny", base_url=url, backoff=0.01, **options)


def scripted(*replies):
    """A reply function answering the POSTs in turn with ``replies`` (the last one repeats)."""
    queue = list(replies)

    def reply(path, body, headers):
        item = queue.pop(0) if len(queue) > 1 else queue[0]
        return item if isinstance(item, tuple) else (200, item, {})

    return reply


def test_a_prompt_is_sent_as_a_local_model_reads_it_and_the_answer_cut_as_its_is(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    reply = completion(" Acme Corp. Before that", system_fingerprint="fp_1")
    chatted = {
        "model": "m-2024",
        "choices": [{"message": {"role": "assistant", "content": "Globex"}}],
        "usage": {"prompt_tokens": 6, "completion_tokens": 1},
    }

    def by_path(path, body, headers):
        return 200, chatted if path.endswith("/chat/completions") else reply, {}

    with StubServer(by_path) as stub:
        model = served(stub.url)
        sampled = PromptRequest(Cloze("Q: who? ", ""), 5, temperature=0.7, top_p=0.9, seed=42)
        chat = PromptRequest(Cloze("In 2019, Bob works for ", ""), 3, chat=True)
        answers = model.complete([*ASK, sampled, chat])
    bodies = sorted(stub.requests, key=lambda r: r[1].get("prompt", "~"))
    assert [path for path, _, _ in bodies] == ["/v1/completions"] * 2 + ["/v1/chat/completions"]
    greedy, sample, chatted = (body for _, body, _ in bodies)
    assert greedy == {
        "model": "tiny",
        "prompt": "In 2019, Alice Smith works for",  # the trailing space left out, as locally
        "max_tokens": 4,
        "temperature": 0.0,
        "seed": 0,
        "stop": ["\n"],
    }
    assert (sample["temperature"], sample["top_p"], sample["seed"]) == (0.7, 0.9, 42)
    assert chatted["messages"] == [{"role": "user", "content": "In 2019, Bob works for"}]
    assert {h["authorization"] for _, _, h in stub.requests} == {f"Bearer {KEY}"}
    texts = sorted(a.text for a in answers)
    assert texts == ["Acme Corp", "Acme Corp", "Globex"]
    first = next(a for a in answers if a.raw == " Acme Corp. Before that")
    assert first.served == {"model": "stub-model", "system_fingerprint": "fp_1"}
    record = model.record()
    assert record["requests"] == 3 and record["prompt_tokens"] == 7 + 7 + 6
    assert record["models_reported"] == {"stub-model": 2, "m-2024": 1}
    assert record["system_fingerprints"] == {"fp_1": 2} and "cost" not in record


def test_a_sentence_end_before_the_newline_the_server_stopped_at_ends_the_answer():
    """The server cuts the newline it stops at out of the text: "Paris." was kept with its
    dot, where a local model's "Paris.\\n" is "Paris", so that the same tokens read as
    different answers."""
    stopped = completion(" Acme Corp.")  # finish_reason stop: the newline, or the model's end
    cut_short = {
        **completion(" Acme Corp."),
        "choices": [{"text": " Acme Corp.", "finish_reason": "length"}],
    }
    with StubServer(scripted(stopped, cut_short)) as stub:
        first = served(stub.url, concurrency=1).complete(ASK)
        second = served(stub.url, concurrency=1).complete(ASK)
    assert (first[0].text, first[0].raw) == ("Acme Corp", " Acme Corp.")
    assert second[0].text == "Acme Corp."  # at the token limit: no sentence end seen


def test_429_and_5xx_are_retried_with_the_servers_retry_after_then_answered():
    busy = (429, {"error": {"message": "Rate limit reached"}}, {"retry-after": "0"})
    with StubServer(scripted(busy, (503, "overloaded", {}), completion(" Globex"))) as stub:
        model = served(stub.url, price_prompt=2.0, price_completion=10.0)
        assert model.complete(ASK)[0].text == "Globex"
    assert len(stub.requests) == 3
    record = model.record()
    assert record["retries"] == 2 and record["requests"] == 1
    assert record["cost"] == pytest.approx((7 * 2.0 + 2 * 10.0) / 1e6)


def fails(reply, **options) -> str:
    with StubServer(reply) as stub, pytest.raises(ServedError) as error:
        served(stub.url, **options).complete(ASK)
    message = str(error.value)
    assert "\n" not in message and message.startswith(f"openai:tiny at {stub.url}: ")
    return message.split(": ", 1)[1]


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ((500, {"error": {"message": "boom"}}, {}), "still 500 after 3 tries: boom"),
        ((429, {"error": {"message": "slow down"}}, {}), "lower --concurrency"),
        ((200, "<html>not json", {}), "malformed reply from /completions: not JSON"),
        ((200, {"object": "list"}, {}), "malformed reply from /completions: no choices in it"),
        (
            (200, {"choices": [{"message": {"content": "x"}}]}, {}),
            "$.choices[0]: Object missing required field `text`",
        ),
        ((200, {"error": "quota"}, {}), "no choices in it: quota"),
        (
            (404, {"error": {"message": "The model `tiny` does not exist"}}, {}),
            "the server knows no model 'tiny'",
        ),
        ((404, {"detail": "Not Found"}, {}), "no endpoint /completions (404: Not Found)"),
        (
            (400, {"error": {"message": "This model's maximum context length is 2048 tokens"}}, {}),
            "the prompt is longer than the model's context",
        ),
        (
            (404, {"error": {"message": "This is a chat model and not supported"}}, {}),
            "a chat model is asked with --chat",
        ),
        ((422, {"detail": "prompt must be a string"}, {}), "refused the request (422: prompt"),
    ],
)
def test_every_fault_is_one_line_naming_the_server_and_the_model(reply, expected):
    assert expected in fails(scripted(reply), retries=2)


def test_a_timeout_is_retried_then_named():
    def slow(path, body, headers):
        time.sleep(1.0)
        return 200, completion("late"), {}

    message = fails(slow, retries=1, request_timeout=0.2)
    assert message.startswith("no whole reply within 0.2 s, 2 tries")


def test_a_refused_key_is_never_quoted(monkeypatch):
    monkeypatch.setenv("MY_KEY", KEY)
    said = f"Incorrect API key provided: {KEY[:7]}***{KEY[-4:]} ({KEY})"
    message = fails(scripted((401, {"error": {"message": said}}, {})), api_key_env="MY_KEY")
    assert message == "the server refused the key in $MY_KEY (401); check the key"
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert "no key ($OPENAI_API_KEY unset)" in fails(scripted((401, {}, {})))


def test_an_unreachable_server_and_bad_settings_are_one_line(monkeypatch):
    with StubServer(scripted(completion("x"))) as stub:
        url = stub.url
    with pytest.raises(ServedError, match=rf"^openai:tiny at {url}: cannot reach the server"):
        served(url).complete(ASK)
    monkeypatch.delenv("NO_SUCH_KEY", raising=False)
    with pytest.raises(ValueError, match=r"names \$NO_SUCH_KEY, which is not set"):
        served(url, api_key_env="NO_SUCH_KEY")
    with pytest.raises(ValueError, match="holds a user name or password"):
        served("https://me:secret@example.org/v1")
    with pytest.raises(ValueError, match="not an http"):
        served("127.0.0.1:8000")
    monkeypatch.setenv("OPENAI_BASE_URL", url + "/")
    assert ServedLM("openai:tiny").base_url == url


def test_answers_that_arrived_are_kept_when_another_request_fails():
    def reply(path, body, headers):
        if "Bob" in body["prompt"]:
            return 400, {"error": {"message": "bad prompt"}}, {}
        time.sleep(0.2)  # in flight when the failure comes back
        return 200, completion(" Globex"), {}

    requests = [PromptRequest(Cloze(f"{who} works for ", "")) for who in ("Alice", "Bob", "Carl")]
    kept: dict[int, str] = {}
    with StubServer(reply) as stub, pytest.raises(ServedError, match="bad prompt"):
        served(stub.url, concurrency=3).complete(
            requests, keep=lambda i, a: kept.update({i: a.text})
        )
    assert kept == {0: "Globex", 2: "Globex"}


def test_answers_in_flight_at_an_interrupt_are_kept_not_asked_again():
    """Ctrl-C waited for the requests in flight (they are paid for) and then dropped their
    answers, so the next run asked them again."""
    arrived = threading.Semaphore(0)

    def reply(path, body, headers):
        if "Alice" in body["prompt"]:  # answered once the other two are in flight
            assert arrived.acquire(timeout=10) and arrived.acquire(timeout=10)
        else:
            arrived.release()
            time.sleep(0.3)  # in flight when the interrupt comes
        return 200, completion(" Globex"), {}

    def interrupt(done, total):
        raise KeyboardInterrupt

    requests = [PromptRequest(Cloze(f"{who} works for ", "")) for who in ("Alice", "Bob", "Carl")]
    kept: dict[int, str] = {}
    with StubServer(reply) as stub, pytest.raises(KeyboardInterrupt):
        served(stub.url, concurrency=3).complete(
            requests, keep=lambda i, a: kept.update({i: a.text}), progress=interrupt
        )
    assert kept == {0: "Globex", 1: "Globex", 2: "Globex"}


def test_requests_run_concurrently_up_to_the_limit():
    in_flight, most = [0], [0]
    lock = threading.Lock()

    def reply(path, body, headers):
        with lock:
            in_flight[0] += 1
            most[0] = max(most[0], in_flight[0])
        time.sleep(0.1)
        with lock:
            in_flight[0] -= 1
        return 200, completion(" x"), {}

    requests = [PromptRequest(Cloze(f"q{i} ", "")) for i in range(9)]
    with StubServer(reply) as stub:
        done = []
        served(stub.url, concurrency=3).complete(requests, progress=lambda d, t: done.append(d))
    assert most[0] == 3 and done == list(range(1, 10))


def test_requests_are_handed_to_the_pool_a_window_at_a_time(monkeypatch):
    """Every request was handed to the pool at once, and each answer then waited on all of
    them: quadratic in the requests. At most twice the concurrency now wait together."""
    from chronoprobe.models import served as module

    sizes = []
    real_wait = module.wait

    def wait(futures, **options):
        sizes.append(len(futures))
        return real_wait(futures, **options)

    monkeypatch.setattr(module, "wait", wait)
    requests = [PromptRequest(Cloze(f"q{i} ", "")) for i in range(40)]
    with StubServer(lambda path, body, headers: (200, completion(" x"), {})) as stub:
        answers = served(stub.url, concurrency=3).complete(requests)
    assert [a.text for a in answers] == ["x"] * 40
    assert max(sizes) == 6 and len(sizes) >= 40 / 6


def test_the_rate_limit_waits_for_the_window():
    now, slept = [0.0], []

    def sleep(seconds):
        slept.append(seconds)
        now[0] += seconds

    limit = RateLimit(2, 100, clock=lambda: now[0], sleep=sleep)
    for tokens in (10, 10, 10):
        limit.wait(tokens)
    assert slept == [60.0]  # the third request waits for the first to leave the window
    now[0] += 1
    limit.wait(95)  # 10 + 95 > 100 tokens: waits for the second too
    assert slept == [60.0, 59.0]
    RateLimit(None, 5, clock=lambda: 0.0, sleep=sleep).wait(50)  # alone it may exceed


def test_span_log_probabilities_are_those_of_the_tokens_overlapping_it():
    # "In 2019, X works for Acme Corp." as tokens, then one generated token
    offsets = [0, 2, 8, 10, 16, 20, 25, 30, 31]
    logprobs = [None, -1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0, -8.0]
    assert span_logprob(offsets, logprobs, 21, 30, 31) == span_logprob(
        offsets, logprobs, 20, 29, 31
    )
    score = span_logprob(offsets, logprobs, 21, 30, 31)
    assert (score.logprob, score.n_tokens) == (-11.0, 2)
    assert span_logprob(offsets, logprobs, 21, 31, 31).logprob == -18.0  # with the "."
    assert span_logprob(offsets, logprobs, 0, 2, 31) is None  # the first token: no context


def test_scores_from_echoed_log_probabilities_equal_the_local_models(adapters):
    local = adapters("llama")
    requests = [
        ScoreRequest(cloze, span, right_context=right)
        for cloze, span in zip(CLOZES, SPANS, strict=True)
        for right in (False, True)
    ]
    with StubServer(echo_server(local)) as stub:
        got = served(stub.url, concurrency=4).score(requests)
    expected = local.score(requests)
    for request, mine, theirs in zip(requests, got, expected, strict=True):
        if not request.cloze.left:  # gap first: the server gives its first token no context
            assert mine is None
            continue
        assert mine.n_tokens == theirs.n_tokens
        assert mine.logprob == pytest.approx(theirs.logprob, abs=1e-4)
    sent = stub.requests[0][1]
    assert (sent["echo"], sent["logprobs"], sent["max_tokens"]) == (True, 0, 1)


def test_a_server_without_prompt_log_probabilities_is_refused_in_one_line():
    with StubServer(scripted(completion(" x"))) as stub, pytest.raises(ServedError) as error:
        served(stub.url).score([ScoreRequest(CLOZES[0], SPANS[0])])
    assert "returned no log-probabilities of the prompt" in str(error.value)
    no_echo = (400, {"error": {"message": "echo is not supported"}}, {})
    with StubServer(scripted(no_echo)) as stub, pytest.raises(ServedError) as error:
        served(stub.url).score([ScoreRequest(CLOZES[0], SPANS[0])])
    assert "refused echo and logprobs (400: echo is not supported)" in str(error.value)


@pytest.mark.parametrize("method", ["rank", "generate", "label_token_ids"])
def test_requests_no_server_can_answer_are_refused_naming_what_is_missing(method):
    model = served("http://127.0.0.1:9/v1")
    with pytest.raises(ServedError, match="every token's log-probability") as error:
        getattr(model, method)([])
    assert str(error.value).startswith("openai:tiny at http://127.0.0.1:9/v1: ")


def test_the_key_is_not_part_of_the_answer_cache_key(tmp_path, monkeypatch):
    from chronoprobe.models.request_cache import answer_cache
    from chronoprobe.models.spec import LoadOptions, parse_spec

    spec = parse_spec("openai:tiny")
    at = {url: LoadOptions(served={"base_url": url}) for url in ("http://127.0.0.1:9/v1", "x")}
    fingerprints = set()
    for key in ("sk-one", "sk-two"):
        monkeypatch.setenv("OPENAI_API_KEY", key)
        model = served("http://127.0.0.1:9/v1")
        cached = answer_cache(spec, model, tmp_path, at["http://127.0.0.1:9/v1"])
        fingerprints.add(cached.fingerprint)
        cached.store.close()
        assert "sk-" not in json.dumps(spec.identity(at["http://127.0.0.1:9/v1"]))
    assert len(fingerprints) == 1
    elsewhere = LoadOptions(served={"base_url": "http://127.0.0.1:8/v1"})
    other = answer_cache(spec, served("http://127.0.0.1:8/v1"), tmp_path, elsewhere)
    assert other.fingerprint not in fingerprints  # another server is another model
    other.store.close()
