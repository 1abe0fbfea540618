"""A small OpenAI-compatible stub server on 127.0.0.1, for the faults a real server rarely
shows on demand (429, 500, timeouts, malformed JSON, 401, 404), for prompt log-probabilities
computed by a tiny local model, as vLLM echoes them, and for hostile servers.

``StubServer(reply)`` calls ``reply(path, body, headers)`` for each POST and sends back the
``(status, body, headers)`` it returns (a body that is not a str or bytes is sent as JSON), or,
for faults below HTTP (a reply sent one byte a second, a status line that is none, a body cut
short), a :class:`Raw` whose ``write(out, stop)`` writes the bytes itself. Every request is
recorded in ``requests``. Used as a context manager, it serves from threads and stops on exit,
ending every reply still being written. ``keep_alive`` answers in HTTP/1.1, keeping each
connection open between requests.

A malicious server's replies, one per case, grouped by how the served adapter must end on
them: :data:`SLOW` (dripped or silent: a timeout, within the request timeout plus a second),
:data:`LARGE` (past the reply cap), :data:`BROKEN` (no HTTP), :data:`MALFORMED`,
:data:`MALFORMED_CHAT` and :data:`MALFORMED_ECHO` (an answer of the wrong shape: one line),
:data:`COSMETIC` (wrong token counts or model names: the answer kept, the counts unknown),
:data:`RETRY_AFTER` (headers, with the wait each must give) and :func:`redirect`.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, BinaryIO

Reply = Callable[[str, dict, dict], Any]


def completion(text: str, model: str = "stub-model", **extra: Any) -> dict:
    """A /completions reply holding ``text``."""
    return {
        "id": "cmpl-1",
        "object": "text_completion",
        "model": model,
        "choices": [{"index": 0, "text": text, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9},
        **extra,
    }


@dataclass(frozen=True)
class Raw:
    """A reply written by ``write(out, stop)``: the bytes on the wire, status line and all;
    ``stop`` is set when the server stops (a reply without end must then end)."""

    write: Callable[[BinaryIO, threading.Event], None]


class StubServer:
    def __init__(self, reply: Reply, keep_alive: bool = False) -> None:
        self.reply = reply
        self.requests: list[tuple[str, dict, dict]] = []
        self.connections = 0
        self.lock = threading.Lock()
        self.stop = threading.Event()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"

            def setup(self) -> None:
                super().setup()
                with stub.lock:
                    stub.connections += 1

            def do_POST(self) -> None:
                size = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(size) or b"{}")
                headers = {k.lower(): v for k, v in self.headers.items()}
                with stub.lock:
                    stub.requests.append((self.path, body, headers))
                answer = stub.reply(self.path, body, headers)
                try:
                    if isinstance(answer, Raw):
                        self.close_connection = True
                        answer.write(self.wfile, stub.stop)
                        self.wfile.flush()
                        return
                    status, payload, extra = answer
                    data = _bytes(payload)
                    self.send_response(status)
                    for key, value in {"content-type": "application/json", **extra}.items():
                        self.send_header(key, value)
                    if "content-length" not in {k.lower() for k in extra}:
                        self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True  # the client gave up (a timeout test)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}/v1"

    def __enter__(self) -> StubServer:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()


def _bytes(payload: Any) -> bytes:
    if isinstance(payload, bytes):
        return payload
    return (payload if isinstance(payload, str) else json.dumps(payload)).encode()


def echo_server(adapter):
    """A stub that echoes prompt log-probabilities computed by ``adapter``'s model, as vLLM
    does for completions with echo and logprobs (no BOS added: the first token has none)."""
    import torch

    tokenizer, model = adapter.tokenizer, adapter.model

    def reply(path, body, headers):
        text = body["prompt"]
        encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        ids = encoded["input_ids"]
        with torch.inference_mode():
            logits = model(input_ids=torch.tensor([ids])).logits[0].float()
        logprobs = torch.log_softmax(logits, -1)
        values = [None] + [logprobs[i - 1, ids[i]].item() for i in range(1, len(ids))]
        offsets = [a for a, _ in encoded["offset_mapping"]]
        logs = {
            "tokens": [*tokenizer.convert_ids_to_tokens(ids), "x"],
            "token_logprobs": [*values, -0.5],  # the generated token is not the prompt's
            "text_offset": [*offsets, len(text)],
        }
        choice = {"index": 0, "text": text + "x", "logprobs": logs}
        return 200, {"model": "tiny", "choices": [choice]}, {}

    return reply


# ----- a malicious server: one reply per case ------------------------------------------------

DRIP_S = 0.05  # seconds between two bytes of a dripped reply
HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"


def _drip(data: bytes, endless: bool = False) -> Raw:
    """``data`` one byte at a time (again and again when ``endless``), until the client goes."""

    def write(out: BinaryIO, stop: threading.Event) -> None:
        while not stop.is_set():
            for byte in data:
                if stop.is_set():
                    return
                out.write(bytes([byte]))
                out.flush()
                time.sleep(DRIP_S)
            if not endless:
                return

    return Raw(write)


def _then_drip(head: bytes, data: bytes) -> Raw:
    """``head`` at once, then ``data`` one byte at a time."""
    dripped = _drip(data)

    def write(out: BinaryIO, stop: threading.Event) -> None:
        out.write(head)
        out.flush()
        dripped.write(out, stop)

    return Raw(write)


def _wire(data: bytes, then_wait: bool = False) -> Raw:
    """``data`` at once; with ``then_wait``, the connection then stays open, silent."""

    def write(out: BinaryIO, stop: threading.Event) -> None:
        out.write(data)
        out.flush()
        if then_wait:
            stop.wait(60)

    return Raw(write)


def _endless(head: bytes, block: bytes) -> Raw:
    """``head``, then ``block`` again and again, as fast as the client reads."""

    def write(out: BinaryIO, stop: threading.Event) -> None:
        out.write(head)
        while not stop.is_set():
            out.write(block)

    return Raw(write)


def _nested(depth: int) -> bytes:
    return b'{"choices": ' + b"[" * depth + b"]" * depth + b"}"


def _choices(**choice: Any) -> dict:
    return {"model": "stub-model", "choices": [choice]}


def _echo(token_logprobs: Any, text_offset: Any) -> dict:
    logprobs = {"tokens": ["a", "b", "c"], "token_logprobs": token_logprobs}
    logprobs["text_offset"] = text_offset
    return _choices(text="abc", logprobs=logprobs)


def _echo_literal(token_logprobs: str) -> str:
    """An echo reply whose log-probabilities are JSON text (NaN, Infinity: not JSON proper)."""
    logprobs = f'{{"token_logprobs": {token_logprobs}, "text_offset": [0, 1, 2]}}'
    return f'{{"choices": [{{"text": "abc", "logprobs": {logprobs}}}]}}'


def _announced(length: bytes) -> Raw:
    """Headers announcing a body of ``length`` bytes, then silence."""
    return _wire(HEAD + b"Content-Length: " + length + b"\r\n\r\n", then_wait=True)


def _answer(body: Any, status: int = 200, **headers: str) -> Reply:
    return lambda path, sent, seen: (status, body, headers)


_MIB = 1 << 20
# Replies that must end the request, in one line, within the request timeout plus one second.
SLOW = {
    "status line dripped without end": _drip(b"HTTP/1.1 200 OK", endless=True),
    "headers dripped without end": _drip(HEAD + b"X-Pad: " + b"a" * 100_000),
    "a whole reply dripped": _drip(HEAD + b"Content-Length: 60\r\n\r\n" + b" " * 60),
    "a body dripped after its headers": _then_drip(
        HEAD + b"Content-Length: 10000\r\n\r\n", b" " * 10_000
    ),
    "chunks of one byte, dripped": _then_drip(
        HEAD + b"Transfer-Encoding: chunked\r\n\r\n", b"1\r\n \r\n" * 10_000
    ),
    "silence after the request": _wire(b"", then_wait=True),
    "headers, then silence": _wire(HEAD + b"Content-Length: 100\r\n\r\n", then_wait=True),
    "half a body, then silence": _wire(HEAD + b"Content-Length: 100\r\n\r\n{", then_wait=True),
}
# Replies larger than the cap (tests give the adapter a cap of 1 MiB).
LARGE = {
    "a body of 2 MiB": _answer(" " * (2 * _MIB) + json.dumps(completion("x"))),
    "a body without end, no length given": _endless(HEAD + b"\r\n", b" " * 65536),
    "chunks without end": _endless(
        HEAD + b"Transfer-Encoding: chunked\r\n\r\n", b"10000\r\n" + b" " * 65536 + b"\r\n"
    ),
    "a length of 10**30 announced": _announced(b"1" + b"0" * 30),
    "a length of 5,000 digits announced": _announced(b"9" * 5000),
}
# Replies that are no HTTP, or broken.
BROKEN = {
    "a status line that is none": _wire(b"HELLO THERE\r\n\r\n"),
    "a status code of 99999": _wire(b"HTTP/1.1 99999 Huh\r\n\r\n"),
    "a header line of 100 KB": _wire(HEAD + b"X-Long: " + b"a" * 100_000 + b"\r\n\r\n"),
    "1,000 headers": _wire(HEAD + b"".join(b"X-%d: a\r\n" % i for i in range(1000)) + b"\r\n"),
    "a body cut short": _wire(HEAD + b'Content-Length: 1000\r\n\r\n{"choices":'),
    "the connection closed at once": _wire(b""),
    "bad chunk sizes": _wire(HEAD + b"Transfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n"),
    "a negative length": _wire(HEAD + b"Content-Length: -5\r\n\r\n{}"),
}
# Bodies whose shape is wrong where the answer is read: refused as malformed.
MALFORMED = {
    "JSON nested 100,000 deep": _answer(_nested(100_000)),
    "JSON nested 100,000 deep in usage": _answer(
        b'{"choices": [{"text": "x"}], "usage": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    ),
    "a body that is no JSON": _answer("<html>502 Bad Gateway</html>"),
    "invalid UTF-8": _answer(b'{"choices": [{"text": "caf\xe9"}]}'),
    "a JSON array": _answer([completion("x")]),
    "JSON null": _answer("null"),
    "choices an object": _answer({"choices": {"text": "x"}}),
    "choices empty": _answer({"choices": []}),
    "choices holding null": _answer({"choices": [None]}),
    "text null": _answer(_choices(text=None)),
    "text a number": _answer(_choices(text=5)),
    "text a list": _answer(_choices(text=["x"])),
    "text an object": _answer(_choices(text={"value": "x"})),
    "text of 100,000 characters": _answer(_choices(text="x" * 100_000)),
    "text holding a lone surrogate": _answer('{"choices": [{"text": " Glob\\ud800ex"}]}'),
    "an error of 500 KB and no choices": _answer({"error": "x" * (_MIB // 2)}),
}
# /chat/completions bodies that are wrong where the answer is read.
MALFORMED_CHAT = {
    "message a string": _answer(_choices(message="Globex")),
    "content a number": _answer(_choices(message={"content": 7})),
    "content a list": _answer(_choices(message={"content": [{"type": "text"}]})),
    "no message": _answer(_choices(text="x")),
    "content holding a lone surrogate": _answer(
        '{"choices": [{"message": {"content": "Globex\\udc00"}}]}'
    ),
}
# Echoed log-probabilities that are wrong (the scoring requests).
MALFORMED_ECHO = {
    "token_logprobs strings": _answer(_echo([None, "-1.0", "-2.0"], [0, 1, 2])),
    "token_logprobs null past the first token": _answer(_echo([None, None, -1.0], [0, 1, 2])),
    "token_logprobs objects": _answer(_echo([None, {"a": -1}, -1.0], [0, 1, 2])),
    "token_logprobs a string": _answer(_echo("-1,-2", [0, 1, 2])),
    "token_logprobs NaN": _answer(_echo_literal("[null, NaN, -1.0]")),
    "token_logprobs Infinity": _answer(_echo_literal("[null, -Infinity, -1]")),
    "token_logprobs 1e400": _answer(_echo_literal("[null, -1e400, -1]")),
    "token_logprobs above 0": _answer(_echo([None, 3.5, -1.0], [0, 1, 2])),
    "token_logprobs booleans": _answer(_echo([None, True, -1.0], [0, 1, 2])),
    "text_offset nulls": _answer(_echo([None, -1.0, -2.0], [0, None, 2])),
    "text_offset strings": _answer(_echo([None, -1.0, -2.0], ["0", "1", "2"])),
    "text_offset floats": _answer(_echo([None, -1.0, -2.0], [0, 1.5, 2])),
    "text_offset negative": _answer(_echo([None, -1.0, -2.0], [0, -1, 2])),
    "text_offset descending": _answer(_echo([None, -1.0, -2.0], [0, 2, 1])),
    "text_offset past 2**40": _answer(_echo([None, -1.0, -2.0], [0, 2**41, 2**42])),
    "text_offset not from 0": _answer(_echo([None, -1.0, -2.0], [3, 4, 5])),
    "lengths that differ": _answer(_echo([None, -1.0], [0, 1, 2])),
    "logprobs a list": _answer(_choices(text="abc", logprobs=[-1.0])),
}
# Replies whose cosmetic fields are wrong: the answer is kept, the counts are unknown.
_ANSWER = {"choices": [{"text": " Globex"}]}
COSMETIC = {
    "usage a list": {**_ANSWER, "usage": [7, 2]},
    "usage a string": {**_ANSWER, "usage": "7 tokens"},
    "usage null": {**_ANSWER, "usage": None},
    "token counts lists": {**_ANSWER, "usage": {"prompt_tokens": [7], "completion_tokens": [2]}},
    "token counts strings": {**_ANSWER, "usage": {"prompt_tokens": "7", "completion_tokens": "2"}},
    "token counts negative": {**_ANSWER, "usage": {"prompt_tokens": -7, "completion_tokens": -1}},
    "token counts booleans": {**_ANSWER, "usage": {"prompt_tokens": True, "completion_tokens": 0}},
    "token counts 2**70": {**_ANSWER, "usage": {"prompt_tokens": 2**70, "completion_tokens": 1}},
    "token counts fractions": {**_ANSWER, "usage": {"prompt_tokens": 7.5, "completion_tokens": 1}},
    "token counts objects": {**_ANSWER, "usage": {"prompt_tokens": {}, "completion_tokens": {}}},
    "token counts NaN": '{"choices": [{"text": " Globex"}], "usage": {"prompt_tokens": NaN, '
    '"completion_tokens": NaN}}',
    "token counts 1e400": '{"choices": [{"text": " Globex"}], "usage": {"prompt_tokens": 1e400, '
    '"completion_tokens": -1e400}}',
    "token counts Infinity": '{"choices": [{"text": " Globex"}], "usage": {"prompt_tokens": '
    'Infinity, "completion_tokens": 3}}',
    "token counts of 5,000 digits": '{"choices": [{"text": " Globex"}], "usage": {"prompt_tokens": '
    + "9" * 5000
    + ', "completion_tokens": 3}}',
    "model a list": {**_ANSWER, "model": ["a", "b"]},
    "model of 100,000 characters": {**_ANSWER, "model": "m" * 100_000},
    "model with an escape sequence": {**_ANSWER, "model": "m\x1b[2J"},
    "model a number": {**_ANSWER, "model": 5},
    "system_fingerprint an object": {**_ANSWER, "system_fingerprint": {"a": 1}},
    "an unknown field nested deep": {**_ANSWER, "extra": [[[[[[[[[[[[["deep"]]]]]]]]]]]]]},
}
# Retry-After headers a 429 may carry: none may fail the request or stall it past the cap.
RETRY_AFTER = {
    "nan": None,
    "NaN": None,
    "-5": None,
    "1e400": None,
    "inf": None,
    "": None,
    "soon": None,
    "0x10": None,
    "3": 3.0,
    "0.5": 0.5,
    "99999999999": 60.0,
    "Wed, 21 Oct 2015 07:28:00 GMT": 0.0,  # a date past: at once
    "Fri, 31 Dec 9999 23:59:59 GMT": 60.0,  # a date far ahead: the longest wait
    "Mon, 99 Foo 2015 99:99:99 GMT": None,
    "Wed, 21 Oct 2015 07:28:00": None,  # a date without its zone is no HTTP date
}


def retry_then_answer(retry_after: str) -> Reply:
    """A 429 with ``Retry-After: retry_after``, then an answer."""
    asked = []

    def reply(path, body, headers):
        asked.append(path)
        if len(asked) == 1:
            return 429, {"error": {"message": "slow down"}}, {"retry-after": retry_after}
        return 200, completion(" Globex"), {}

    return reply


def redirect(status: int, location: str | None) -> Reply:
    headers = {} if location is None else {"location": location}
    return _answer({"error": "moved"}, status, **headers)


def raw_reply(raw: Raw) -> Reply:
    return lambda path, body, headers: raw
