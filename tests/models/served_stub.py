"""A small OpenAI-compatible stub server on 127.0.0.1, for the faults a real server rarely
shows on demand (429, 500, timeouts, malformed JSON, 401, 404) and for prompt log-probabilities
computed by a tiny local model, as vLLM echoes them.

``StubServer(reply)`` calls ``reply(path, body, headers)`` for each POST and sends back the
``(status, body, headers)`` it returns (a body that is not a str is sent as JSON); every
request is recorded in ``requests``. Used as a context manager, it serves from a thread and
stops on exit.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = Callable[[str, dict, dict], tuple[int, Any, dict]]


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


class StubServer:
    def __init__(self, reply: Reply) -> None:
        self.reply = reply
        self.requests: list[tuple[str, dict, dict]] = []
        self.lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                size = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(size) or b"{}")
                headers = {k.lower(): v for k, v in self.headers.items()}
                with stub.lock:
                    stub.requests.append((self.path, body, headers))
                status, payload, extra = stub.reply(self.path, body, headers)
                data = payload if isinstance(payload, str) else json.dumps(payload)
                try:
                    self.send_response(status)
                    for key, value in {"content-type": "application/json", **extra}.items():
                        self.send_header(key, value)
                    self.send_header("content-length", str(len(data.encode())))
                    self.end_headers()
                    self.wfile.write(data.encode())
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}/v1"

    def __enter__(self) -> StubServer:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


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
