"""Models behind an OpenAI-compatible server: the OpenAI API, vLLM, SGLang, llama.cpp's server,
Ollama, ``transformers serve``.

``openai:MODEL`` names MODEL at the server of ``base_url`` (``--base-url``, else
``OPENAI_BASE_URL``, else OpenAI's API). The key is read from an environment variable
(``OPENAI_API_KEY`` unless ``--api-key-env`` names another) and goes into the Authorization
header only: never into a run directory, a log, a cache key or an error message.

:class:`ServedLM` answers two of the adapter requests:

- ``complete`` (the generate view): ``/completions`` with the prompt, or with ``chat``
  ``/chat/completions`` with the prompt as one user turn; greedy at temperature 0, sampled with
  the request's temperature, top-p and seed. Like a local model's, the answer stops at the
  first newline (sent as the stop) or sentence end;
- ``score`` (pll, date-context, span-ppl): ``/completions`` with ``echo`` and ``logprobs``, which
  gives each prompt token's log-probability and character offset (vLLM and SGLang serve them);
  the span's tokens are those whose characters overlap it, as a local causal model locates them.

Ranking the whole vocabulary and decoding fillings token by token need the model's tokenizer and
every token's probability, which no such server gives: those views are refused in one line.

Requests run concurrently (``concurrency`` in flight), each bounded as a whole by its timeout
(connecting, the headers and the body: :mod:`chronoprobe.models.http_exchange`) and its reply
by the record limit (16 MiB unless ``--max-record-bytes`` says otherwise), retried with
exponential backoff (or the server's Retry-After) on 429, 5xx, a timeout or a broken connection,
within optional limits on requests and tokens per minute. A reply is read through the checks of
:mod:`chronoprobe.models.served_reply`: its answer must have its types, its cosmetic fields
(token counts, model names) count as unknown when they do not. No redirect is followed. Each
answer is handed to ``keep`` as it arrives, so the request cache holds it before the next one
lands: a killed run pays for nothing twice. Any other failure is one line naming the server and
the model; answers that arrived before it are kept all the same.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from chronoprobe.errors import UserError
from chronoprobe.models.requests import (
    MAX_ANSWER_CHARS,
    Completion,
    PromptRequest,
    ScoreRequest,
    SpanScore,
)
from chronoprobe.models.spec import LoadOptions, ModelSource, ModelSpec
from chronoprobe.params import option_flag

PREFIX = "openai:"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
BASE_URL_ENV = "OPENAI_BASE_URL"
KEY_ENV = "OPENAI_API_KEY"
RETRIED = {408, 409, 429, 500, 502, 503, 504}
LONGEST_WAIT = 60.0  # seconds: the most one backoff (or a Retry-After) makes a request wait
# what, in a URL's query, path parameters or fragment, names a secret
_SECRET_NAMES = re.compile(
    r"(?:^|[?&;#/])[^=&;#/]*(?:key|token|secret|password|passwd|auth|sig|signature|"
    r"credential)[^=&;#/]*=",
    re.IGNORECASE,
)
# a path segment that is a key: one of the prefixes keys are issued with (OpenAI's and
# Anthropic's sk-, Hugging Face's hf_, Groq's gsk_, xAI's xai-, Google's AIza), or a run of 20
# letters and digits or more that mixes upper and lower case and digits at random, as keys are
# made; hex alone (an account's id, a UUID) and names (gpt-4o-mini-2024-07-18, deployments) are
# none
_KEY_PREFIXES = re.compile(r"(?:sk|hf|gsk|xai)[-_][A-Za-z0-9]|AIza[A-Za-z0-9_-]{20}")
_TOKEN_RUN = re.compile(r"[A-Za-z0-9]{20,}")
_TOKEN_ENTROPY = 3.8  # bits a character; a random run of 20 has about 4.1
NO_LOGPROBS = (
    "the server returned no log-probabilities of the prompt (completions with echo and "
    "logprobs); scoring needs them: vLLM and SGLang serve them, OpenAI's current models, "
    "transformers serve, llama.cpp's server and Ollama do not. The generate view needs no "
    "log-probabilities"
)

Keep = Callable[[int, Any], None] | None  # keep(index, answer), as each answer arrives
Progress = Callable[[int, int], None] | None  # progress(done, total), in requests


class ServedError(UserError):
    """A request the server did not answer: one line, naming the server and the model."""


class _NotSent(Exception):
    """A queued request left unsent, as one before it failed."""


@dataclass
class Usage:
    """What this process asked of the server, and what the server said it was."""

    requests: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # replies that gave no count of their prompt / completion tokens (no `usage`)
    uncounted_prompt: int = 0
    uncounted_completion: int = 0
    models: Counter = field(default_factory=Counter)
    fingerprints: Counter = field(default_factory=Counter)
    reused: int = 0
    reused_models: Counter = field(default_factory=Counter)

    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, reply: dict) -> None:
        """Count one reply (from any of the threads asking); a count, model name or
        fingerprint that is no such thing counts as not given (see
        :mod:`~chronoprobe.models.served_reply`)."""
        from chronoprobe.models.served_reply import label, usage_counts

        prompt, completion = usage_counts(reply)
        model, fingerprint = label(reply.get("model")), label(reply.get("system_fingerprint"))
        with self.lock:
            self.requests += 1
            if prompt is None:
                self.uncounted_prompt += 1
            else:
                self.prompt_tokens += prompt
            if completion is None:
                self.uncounted_completion += 1
            else:
                self.completion_tokens += completion
            if model:
                self.models[model] += 1
            if fingerprint:
                self.fingerprints[fingerprint] += 1

    def retried(self) -> None:
        with self.lock:
            self.retries += 1

    def tokens(self) -> tuple[int | None, int | None]:
        """The prompt and completion tokens of every reply, each None (unknown) when a reply
        did not count them: a sum over the others would understate the run."""
        prompt = None if self.uncounted_prompt else self.prompt_tokens
        completion = None if self.uncounted_completion else self.completion_tokens
        return prompt, completion


class RateLimit:
    """At most ``requests`` requests and ``tokens`` tokens in any 60 seconds, shared by every
    thread. A request's tokens are estimated before it is sent (its characters / 4 plus the
    tokens it may generate), so the limit holds with room to spare."""

    WINDOW = 60.0

    def __init__(
        self,
        requests: int | None,
        tokens: int | None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.requests, self.tokens = requests, tokens
        self.clock, self.sleep = clock, sleep
        self.sent: deque[tuple[float, int]] = deque()
        self.lock = threading.Lock()

    def wait(self, tokens: int) -> None:
        if self.requests is None and self.tokens is None:
            return
        with self.lock:
            while True:
                now = self.clock()
                while self.sent and self.sent[0][0] <= now - self.WINDOW:
                    self.sent.popleft()
                used = sum(t for _, t in self.sent)
                count_ok = self.requests is None or len(self.sent) < self.requests
                tokens_ok = self.tokens is None or not self.sent or used + tokens <= self.tokens
                if count_ok and tokens_ok:
                    self.sent.append((now, tokens))
                    return
                self.sleep(self.sent[0][0] + self.WINDOW - now)


def _first_line(text: str, limit: int = 300) -> str:
    from chronoprobe.models.served_reply import printable

    return printable(str(text), limit)


def _server_message(reply) -> str:
    """The error the server gave (OpenAI's {"error": {"message"}}, FastAPI's {"detail"}), or
    the start of its body, as one printable line."""
    from chronoprobe.models.served_reply import BadReply, decoded, error_text

    text = reply.body[:4096].decode("utf-8", "replace")
    try:
        body = decoded(reply.body)
    except BadReply:
        return _first_line(text or reply.reason)
    if isinstance(body, dict):
        for key in ("error", "detail", "message"):
            said = error_text(body.get(key))
            if said:
                return said
    return _first_line(text or reply.reason)


def _is_key(segment: str) -> bool:
    """Whether a segment of a URL's path looks like a key (see ``_KEY_PREFIXES``)."""
    return bool(_KEY_PREFIXES.match(segment)) or any(
        _random(run) for run in _TOKEN_RUN.findall(segment)
    )


def _random(run: str) -> bool:
    """Whether letters and digits mix upper and lower case and digits as at random."""
    if not all(any(test(c) for c in run) for test in (str.isupper, str.islower, str.isdigit)):
        return False
    shares = [n / len(run) for n in Counter(run).values()]
    return -sum(p * math.log2(p) for p in shares) >= _TOKEN_ENTROPY


def _url_shown(url: str) -> str:
    """``url`` quoted as a message may show it: without its query, path parameters or
    fragment (where keys go), a segment of its path that looks like a key as ``***``, every
    character that is no visible one written as an escape (``\\r``, ``\\x1b``,
    ``\\u202e``), at most 200 characters."""
    cut = min((i for i in (url.find("?"), url.find("#"), url.find(";")) if i >= 0), default=-1)
    shown = url if cut < 0 else url[:cut] + "?..."
    shown = "/".join("***" if _is_key(segment) else segment for segment in shown.split("/"))
    shown = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in shown[:200])
    return f"'{shown}'"


def checked_base_url(url: str, key_env: str | None = KEY_ENV) -> str:
    """``url`` (without a trailing slash) if it can be the base URL of an OpenAI-compatible
    server; a ValueError saying why not (the reason alone: the caller names the option or the
    variable), which never repeats a key the URL holds. ``key_env`` is the variable the key is
    read from, named in the advice (None where it is not known yet: the one
    ``--api-key-env`` names).

    Refused: control and format characters (CR and LF would split a request's headers), white
    space, another scheme than http(s), no host, a bad port, a user name or password, a path
    segment that looks like a key (``sk-...``, or a long random token), and a query, path
    parameters or a fragment: a key goes in the environment variable, never in the
    URL (it would be written into metrics.json and the answer cache), and requests to
    BASE_URL/completions could not carry the rest."""
    variable = f"${key_env}" if key_env else f"the variable --api-key-env names (${KEY_ENV})"
    at = next((i for i, c in enumerate(url) if c.isspace() or not c.isprintable()), None)
    if at is not None:  # shown up to that character only: what follows may be a header
        what = "a space" if url[at] == " " else f"the character U+{ord(url[at]):04X}"
        shown = _url_shown(url[: at + 1] + ("..." if at + 1 < len(url) else ""))
        raise UserError(
            f"{shown} holds {what}; a URL holds none (CR and LF would split the request's headers)"
        )
    url = url.rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc or not parts.hostname:
        raise UserError(f"{_url_shown(url)} is not an http(s) URL, e.g. http://127.0.0.1:8000/v1")
    if parts.username is not None or parts.password is not None:
        raise UserError(
            f"holds a user name or password; give the key through {variable} instead, so "
            "that it is never written down"
        )
    try:
        parts.port  # noqa: B018 (it raises for a port that is none)
    except ValueError:
        raise UserError(f"{_url_shown(url)}: its port is no port number") from None
    rest = url[len(f"{parts.scheme}://{parts.netloc}") :]
    if any(_is_key(segment) for segment in parts.path.split("/")):
        raise UserError(
            f"{_url_shown(url)} holds what looks like a key in its path; give the key "
            f"through {variable} instead: it is sent in the Authorization header and never "
            "written down"
        )
    if _SECRET_NAMES.search(rest):
        raise UserError(
            f"{_url_shown(url)} holds what looks like a key in its query; give the key "
            f"through {variable} instead: it is sent in the Authorization header and never "
            "written down"
        )
    if "?" in rest or "#" in rest or ";" in rest:
        raise UserError(
            f"{_url_shown(url)} holds a query, path parameters or a fragment, which requests "
            "to BASE_URL/completions cannot carry; give the server's base URL alone, e.g. "
            "http://127.0.0.1:8000/v1"
        )
    return url


def _is_context_refusal(message: str) -> bool:
    """Whether a refusal says the prompt is too long (OpenAI: context_length_exceeded; vLLM:
    "This model's maximum context length is ..."; llama.cpp: "exceeds the available context
    size")."""
    lowered = message.lower()
    return any(words in lowered for words in ("context length", "context_length", "context size"))


def span_logprob(
    offsets: Sequence[int], logprobs: Sequence[float | None], start: int, end: int, stop: int
) -> SpanScore | None:
    """The summed log-probability of the prompt tokens whose characters overlap ``[start,
    end)``; token i covers ``[offsets[i], offsets[i + 1])`` and the prompt ends at ``stop``
    (tokens from there on were generated). None when a token to score has no log-probability
    (the prompt's first token, which nothing comes before)."""
    ends = [*offsets[1:], stop]
    picked = [
        i
        for i, (a, b) in enumerate(zip(offsets, ends, strict=True))
        if a < stop and a < end and min(b, stop) > start and b > a
    ]
    if not picked:
        raise UserError(f"no prompt token overlaps characters {start}..{end}")
    values = [logprobs[i] for i in range(picked[0], picked[-1] + 1)]
    if any(v is None for v in values):
        return None
    return SpanScore(float(sum(values)), len(values))


def _cost(
    prices: tuple[float | None, float | None], tokens: tuple[int | None, ...]
) -> float | None:
    """The price of ``tokens`` (prompt, completion) at ``prices`` per million; None (unknown)
    when a priced kind of token was not counted."""
    cost = 0.0
    for price, count in zip(prices, tokens, strict=True):
        if price is None:
            continue
        if count is None:
            return None
        cost += count * price
    return round(cost / 1e6, 6)


def _unset_key_env(name: str) -> str:
    """Why ``--api-key-env`` gives no key: its variable is not set. The name is quoted only
    when it reads as one (upper case, as variables are named); a key given in its place, such
    as a lower-case hf_... token, is never repeated."""
    if name.isupper() and name.replace("_", "").isalnum():
        return f"--api-key-env names ${name}, which is not set"
    return (
        "--api-key-env names no environment variable that is set; it takes the variable's "
        "name (e.g. OPENAI_API_KEY), not the key itself"
    )


class ServedLM:
    """A model behind an OpenAI-compatible server (see the module's docstring)."""

    family = "causal"  # a served model continues text left to right, as a causal one does
    speaks_chat = True  # asked with chat, through /chat/completions: the server frames turns
    reads_left_only = True
    fills_spans = False
    # ``complete`` and ``score`` hand each answer to ``keep`` as it arrives
    answers_as_they_come = True

    def __init__(
        self,
        spec: str,
        *,
        base_url: str | None = None,
        api_key_env: str = KEY_ENV,
        concurrency: int = 8,
        request_timeout: float = 60.0,
        retries: int = 5,
        requests_per_minute: int | None = None,
        tokens_per_minute: int | None = None,
        price_prompt: float | None = None,
        price_completion: float | None = None,
        backoff: float = 1.0,
        max_reply_bytes: int | None = None,
    ) -> None:
        self.name = spec
        self.model_name = spec.removeprefix(PREFIX)
        if not self.model_name:
            raise UserError(f"{spec!r}: name the model after openai:, e.g. openai:gpt-4o-mini")
        try:
            url = server_url(base_url, api_key_env)
        except ValueError as err:
            raise UserError(f"{spec}: {err}") from None
        self.base_url = url
        self.key_env = api_key_env
        self._key = os.environ.get(api_key_env) or None
        if self._key is None and api_key_env != KEY_ENV:
            raise UserError(f"{spec} at {url}: {_unset_key_env(api_key_env)}")
        self.concurrency, self.timeout, self.retries = concurrency, request_timeout, retries
        self.backoff = backoff
        self.max_reply_bytes = max_reply_bytes
        self.prices = (price_prompt, price_completion)
        self.limit = RateLimit(requests_per_minute, tokens_per_minute)
        self.usage = Usage()
        self._unfit = "the server gave no log-probability for the prompt's first token"

    # --- what every adapter tells -----------------------------------------------------------
    @property
    def unfit_reason(self) -> str:
        return self._unfit

    def _fail(self, reason: str) -> ServedError:
        message = f"{self.name} at {self.base_url}: {reason}"
        if self._key:
            message = message.replace(self._key, "***")
        return ServedError(message)

    def _refuse(self, what: str) -> ServedError:
        return self._fail(
            f"{what} needs the model's tokenizer and every token's log-probability, which an "
            "OpenAI-compatible server does not give; served models answer the generate view, "
            "and where the server returns the prompt's log-probabilities pll, date-context and "
            "span-ppl"
        )

    def rank(self, requests, top_k: int = 10, vocabulary=None, progress: Progress = None):
        raise self._refuse("ranking the vocabulary at the gap (single-token, recite)")

    def generate(self, requests, progress: Progress = None):
        raise self._refuse("decoding fillings of the gap token by token (multi-token)")

    def label_token_ids(self, requests):
        raise self._refuse("locating a label's tokens (single-token, multi-token)")

    def beam_spans(self, *args, **kwargs):
        raise self._refuse("span predictions by beam search")

    # --- requests ---------------------------------------------------------------------------
    def complete(
        self, requests: Sequence[PromptRequest], progress: Progress = None, keep: Keep = None
    ) -> list[Completion]:
        """Each prompt's continuation, cut at the first stop as a local model's is."""
        return self._run(requests, self._complete_one, progress, keep)

    def score(
        self, requests: Sequence[ScoreRequest], progress: Progress = None, keep: Keep = None
    ) -> list[SpanScore | None]:
        """log p(span | left), or with ``right_context`` log p(span + right | left), from the
        log-probabilities the server echoes for the filled sentence."""
        return self._run(requests, self._score_one, progress, keep)

    def reused(self, answers: Sequence[Any]) -> None:
        """Answers the request cache gave in this model's place: counted, with the model the
        server had reported for them."""
        from chronoprobe.models.served_reply import label

        self.usage.reused += len(answers)
        for answer in answers:
            served = getattr(answer, "served", None)
            model = label(served.get("model")) if isinstance(served, dict) else None
            if model:  # as a reply gave it: a short line of text, or not counted
                self.usage.reused_models[model] += 1

    def record(self) -> dict:
        """This run's requests, tokens and cost, and what the server said it was; for
        metrics.json."""
        usage = self.usage
        prompt_tokens, completion_tokens = usage.tokens()
        out: dict[str, Any] = {
            "base_url": self.base_url,
            "model": self.model_name,
            "models_reported": dict(usage.models + usage.reused_models),
            "system_fingerprints": dict(usage.fingerprints),
            "requests": usage.requests,
            "retries": usage.retries,
            "answers_reused": usage.reused,
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
        }
        if any(price is not None for price in self.prices):
            out["cost"] = _cost(self.prices, (prompt_tokens, completion_tokens))
        return out

    # --- one request ------------------------------------------------------------------------
    def _complete_one(self, client, request: PromptRequest) -> Completion:
        from chronoprobe.models.completion import cut_answer
        from chronoprobe.models.served_reply import chat_text, choice, completion_text, label

        options: dict[str, Any] = {
            "model": self.model_name,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "seed": request.seed,
            "stop": ["\n"],
        }
        if request.temperature > 0 and request.top_p < 1:
            options["top_p"] = request.top_p
        if request.chat:
            prompt = request.cloze.left.strip()
            messages = [{"role": "user", "content": prompt}]
            path = "/chat/completions"
            reply = self._post(client, path, {**options, "messages": messages})
            raw = self._read(chat_text, reply, path)
        else:
            prompt = request.cloze.left.rstrip()
            path = "/completions"
            reply = self._post(client, path, {**options, "prompt": prompt})
            raw = self._read(completion_text, reply, path)
        if len(raw) > MAX_ANSWER_CHARS:
            raise self._fail(
                f"malformed reply from {path}: a text of {len(raw):,} characters, longer than "
                f"any answer of {request.max_tokens} tokens (at most {MAX_ANSWER_CHARS:,})"
            )
        served = {
            "model": label(reply.get("model")),
            "system_fingerprint": label(reply.get("system_fingerprint")),
        }
        # the server leaves out the newline it stopped at, which ends a sentence as a local
        # model's answer sees it: "Paris." before it is "Paris", as here
        ended = choice(reply).get("finish_reason") == "stop"  # a dict: its text was read
        return Completion(
            cut_answer(raw + "\n" if ended else raw)[0], raw, [], math.nan, served=served
        )

    def _score_one(self, client, request: ScoreRequest) -> SpanScore | None:
        from chronoprobe.models.served_reply import echoed

        text = request.cloze.filled(request.span)
        start = len(request.cloze.left)
        end = len(text) if request.right_context else start + len(request.span)
        payload = {
            "model": self.model_name,
            "prompt": text,
            "max_tokens": 1,
            "temperature": 0,
            "echo": True,
            "logprobs": 0,
        }
        reply = self._post(client, "/completions", payload, scoring=True)
        found = self._read(echoed, reply, "/completions")
        if found is None:
            raise self._fail(NO_LOGPROBS)
        offsets, values = found
        try:
            return span_logprob(offsets, values, start, end, len(text))
        except ValueError as err:  # no echoed token overlaps the span
            raise self._fail(f"malformed reply from /completions: {err}") from None

    def _read(self, read: Callable[[Any], Any], reply: Any, path: str) -> Any:
        """``read(reply)``: a reply's answer; a ServedError naming what is wrong with it."""
        from chronoprobe.models.served_reply import BadReply

        try:
            return read(reply)
        except BadReply as err:
            raise self._fail(f"malformed reply from {path}: {err}") from None

    def _post(self, client, path: str, payload: dict, scoring: bool = False) -> dict:
        """The JSON reply to one request, after retries; a ServedError otherwise."""
        from chronoprobe.models.http_exchange import Broken, TimedOut, TooLarge, Unreachable
        from chronoprobe.models.served_reply import BadReply, decoded

        text = payload.get("prompt") or payload.get("messages", [{}])[0].get("content", "")
        self.limit.wait(len(str(text)) // 4 + int(payload.get("max_tokens", 0)))
        body = json.dumps(payload).encode("utf-8")
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            try:
                reply = client.post(path, body)
            except Unreachable as err:
                raise self._fail(f"cannot reach the server ({_first_line(str(err))})") from None
            except TooLarge as err:
                raise self._fail(
                    f"the reply from {path} is larger than {client.max_bytes:,} bytes ({err}); "
                    "if it is sound, raise the limit with --max-record-bytes"
                ) from None
            except TimedOut:
                if last:
                    raise self._fail(
                        f"no whole reply within {self.timeout:g} s, {attempt + 1} tries; raise "
                        "--request-timeout or lower --concurrency"
                    ) from None
                self._pause(attempt, None)
                continue
            except Broken as err:
                if last:
                    raise self._fail(f"the connection broke: {_first_line(str(err))}") from None
                self._pause(attempt, None)
                continue
            if reply.status in RETRIED and not last:
                self._pause(attempt, reply.headers.get("retry-after"))
                continue
            if 300 <= reply.status < 400:
                raise self._redirected(reply, path)
            if not 200 <= reply.status < 300:
                raise self._http_error(reply, path, scoring, attempt + 1)
            try:
                value = decoded(reply.body)
            except BadReply as err:
                raise self._fail(f"malformed reply from {path}: {err}") from None
            if not isinstance(value, dict):
                raise self._fail(f"malformed reply from {path}: not a JSON object")
            self.usage.add(value)
            return value
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _pause(self, attempt: int, retry_after: str | None) -> None:
        from chronoprobe.models.served_reply import retry_after as asked_wait

        self.usage.retried()
        wait_for = asked_wait(retry_after, time.time())
        if wait_for is None:
            wait_for = self.backoff * 2.0 ** min(attempt, 16)
        time.sleep(min(max(wait_for, 0.0), LONGEST_WAIT))

    def _redirected(self, reply, path: str) -> ServedError:
        where = reply.headers.get("location")
        to = f" to {_url_shown(where)}" if where else " (with no Location)"
        return self._fail(
            f"the server answered {path} with a redirect ({reply.status}){to}, which is not "
            "followed; if that is the server, give it as --base-url"
        )

    def _http_error(self, reply, path: str, scoring: bool, tries: int) -> ServedError:
        status = reply.status
        if status in (401, 403):  # the server's words may quote the key: left out
            given = (
                f"the key in ${self.key_env}" if self._key else f"no key (${self.key_env} unset)"
            )
            return self._fail(f"the server refused {given} ({status}); check the key")
        message = _server_message(reply)
        if path == "/completions" and not scoring and "chat" in message.lower():
            return self._fail(
                f"the server refused the request ({status}: {message}); a chat model is asked "
                "with --chat"
            )
        if status in RETRIED:
            hint = "; lower --concurrency or set --requests-per-minute" if status == 429 else ""
            return self._fail(f"still {status} after {tries} tries: {message}{hint}")
        if status == 404:
            if "model" in message.lower():
                return self._fail(
                    f"the server knows no model {self.model_name!r} (404: {message}); "
                    f"GET {self.base_url}/models lists those it serves"
                )
            return self._fail(
                f"no endpoint {path} (404: {message}); is --base-url right? It usually ends in /v1"
            )
        if _is_context_refusal(message):
            return self._fail(
                f"the prompt is longer than the model's context ({status}: {message}); use "
                "fewer --shots or a shorter --template"
            )
        if scoring:
            return self._fail(
                f"the server refused echo and logprobs ({status}: {message}); {NO_LOGPROBS}"
            )
        return self._fail(f"the server refused the request ({status}: {message})")

    # --- many requests ----------------------------------------------------------------------
    def _client(self):
        from chronoprobe.inputs import max_record_bytes
        from chronoprobe.models.http_exchange import Client

        headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
        limit = self.max_reply_bytes or max_record_bytes()
        return Client(self.base_url, headers, self.timeout, limit)

    def _run(
        self,
        requests: Sequence[Any],
        ask: Callable[[Any, Any], Any],
        progress: Progress,
        keep: Keep,
    ) -> list[Any]:
        """Every request's answer, ``concurrency`` in flight; each handed to ``keep`` (by its
        index) as it arrives. On a failure, or an interrupt, no new request is sent (the thread
        that failed says so before any other picks up a queued request, and the queued ones are
        cancelled), those in flight finish (and are kept), and the failure is raised.

        Requests are handed to the pool a few at a time, at most twice ``concurrency`` ahead
        of the answers: waiting on every request at once would cost each answer a pass over
        all of them (quadratic in the requests, a millisecond an answer at 10,000)."""
        answers: list[Any] = [None] * len(requests)
        if not requests:
            return answers
        done = 0
        failure: BaseException | None = None
        queued = iter(enumerate(requests))
        failed = threading.Event()
        with self._client() as client, ThreadPoolExecutor(self.concurrency) as pool:
            pending: dict[Future, int] = {}

            def send(request: Any) -> Any:
                if failed.is_set():
                    raise _NotSent
                try:
                    return ask(client, request)
                except BaseException:
                    failed.set()
                    raise

            def submit(count: int) -> None:
                for index, request in itertools.islice(queued, count):
                    pending[pool.submit(send, request)] = index

            submit(2 * self.concurrency)
            try:
                while pending:
                    finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                    for future in finished:
                        index = pending.pop(future)
                        if future.cancelled() or isinstance(future.exception(), _NotSent):
                            continue
                        if future.exception() is not None:
                            failure = failure or future.exception()
                            continue
                        answers[index] = future.result()
                        if keep is not None:
                            keep(index, answers[index])
                        done += 1
                        if progress:
                            progress(done, len(requests))
                    if failure is None:
                        submit(len(finished))
                    else:  # those queued are not sent; those in flight are awaited and kept
                        for future in [f for f in pending if f.cancel()]:
                            del pending[future]
            except BaseException:  # an interrupt: no request waiting in the pool is sent
                failed.set()
                for future in pending:
                    future.cancel()
                # those in flight are answered (and paid for) while the pool closes: keep them
                running = [f for f in pending if not f.cancelled()]
                wait(running)
                for future in running:
                    if keep is not None and future.exception() is None:
                        keep(pending[future], future.result())
                raise
        if failure is not None:
            raise failure
        return answers


def server_url(base_url: str | None, key_env: str = KEY_ENV) -> str:
    """The server a spec is asked at: ``base_url``, else ``OPENAI_BASE_URL``, else OpenAI's,
    checked (:func:`checked_base_url`); a ValueError names the option or the variable."""
    given = base_url or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL
    try:
        return checked_base_url(given, key_env)
    except ValueError as err:
        raise UserError(f"{'--base-url' if base_url else '$' + BASE_URL_ENV} {err}") from None


class ServedSpec(ModelSpec):
    """``openai:MODEL``: MODEL at an OpenAI-compatible server; its answers are decided by the
    server and the model name (never the key)."""

    scheme = "openai"
    served = True

    def check(self) -> None:
        if not self.body.strip():
            raise UserError(f"{self.text!r}: name the model after openai:, e.g. openai:gpt-4o-mini")

    def locate(self) -> ModelSource:
        return ModelSource(self.text)

    def weight_files(self) -> list:
        return []

    def identity(self, options: LoadOptions | None) -> list:
        served = options.served if options is not None else {}
        key_env = served.get("api_key_env") or KEY_ENV
        return ["served", server_url(served.get("base_url"), key_env), self.body]

    def load(self, options: LoadOptions) -> ServedLM:
        """The client; a loading option set to anything but its default is refused, as it
        would not apply to a model a server answers."""
        defaults = LoadOptions()
        for name in ("family", "device", "dtype", "device_map", "revision", "trust_remote_code"):
            value = getattr(options, name)
            if value not in (None, False, getattr(defaults, name)) and not (
                name == "family" and value == ServedLM.family
            ):
                raise UserError(
                    f"{self.text}: {option_flag(name)} applies to a model loaded here, not to "
                    "one a server answers"
                )
        served = {k: v for k, v in options.served.items() if v is not None}
        return ServedLM(self.text, **served)
