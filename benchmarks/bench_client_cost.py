"""What chronoprobe itself costs per row when a served model answers instantly.

    python benchmarks/bench_client_cost.py TEMPLAMA.jsonl [--prompts 10000] [--concurrency 8]
        [--profile OUT.prof]

TEMPLAMA.jsonl is a released TempLAMA file (imported here with ``chronoprobe import templama``
into a temporary folder; the data is never copied anywhere else). A stub OpenAI-compatible
server, in a process of its own, answers every ``/completions`` request at once with a real
entity name of the file (picked by a hash of the prompt, so some answers are right, most
wrong), followed by more words, as a model rambles on.

Three ways ask it the same greedy prompts (those of the first ``--prompts`` rows; a row whose
gap comes first is skipped), one after the other, in one run; figures are per prompt asked:

- a plain client loop: the request bodies built beforehand, ``--concurrency`` httpx requests
  in flight in a thread pool; the transport's and the stub's own cost, nothing of chronoprobe;
- ``chronoprobe probe generate -m openai:stub`` as a user runs it, in this process, the request
  cache on (a fresh cache folder), every answer judged by every rule, predictions written to
  Parquet, metrics with intervals; its fixed start (imports, the first row) measured apart on a
  run of one row;
- the same command again over the same cache: every answer reused, nothing sent.

chronoprobe's own cost per prompt is the command's time per prompt less the plain loop's, in
wall-clock time and in CPU time (the CPU time holds on a machine other work keeps busy, where
wall-clock time measures the queue for a core); the breakdown times the stages inside the
command (each wrapped with a timer of the thread that runs it, wall-clock and CPU: prompt
building, the cache's keys, reads and writes, judging, writing and reading Parquet).

Then the judging of ``--responses``: 10,693 answers (one per row of the file, each a name of
the file: right, another period's, or another entity's), judged by the default rule with
every row's answers and aliases (each answer given two aliases, a shortened and a lower-cased
form, so that aliases are judged too), whole command.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import hashlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

# the stub's answer after the name: a model seldom stops at the name
RAMBLE = ". It was founded in 1901 and"


def stub_server(labels_file: str) -> None:
    """Serve /v1/completions on a free port of 127.0.0.1 (printed on stdout) until killed."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    labels = json.loads(Path(labels_file).read_text())

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: one connection per client thread

        def setup(self) -> None:
            super().setup()
            # headers and body go out as two writes: without this, the body waits for the
            # client's delayed ACK (40 ms) and the stub is anything but instant
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            pick = int(hashlib.blake2b(body["prompt"].encode(), digest_size=4).hexdigest(), 16)
            text = " " + labels[pick % len(labels)] + RAMBLE
            reply = {
                "model": "stub",
                "choices": [{"index": 0, "text": text, "finish_reason": "length"}],
                "usage": {"prompt_tokens": 8, "completion_tokens": 12},
            }
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
    print(server.server_port, flush=True)
    server.serve_forever()


@contextlib.contextmanager
def running_stub(labels: list[str], folder: Path):
    path = folder / "labels.json"
    path.write_text(json.dumps(labels))
    command = [sys.executable, __file__, "--stub", str(path)]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline())
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.kill()
        server.wait()


def plain_loop(url: str, prompts: list[str], concurrency: int, max_tokens: int) -> tuple:
    """The transport's own time: prebuilt bodies, ``concurrency`` threads each posting the
    next body with one shared httpx client until none is left; wall and CPU seconds."""
    import httpx

    bodies = [
        {"model": "stub", "prompt": p, "max_tokens": max_tokens, "temperature": 0.0,
         "seed": 0, "stop": ["\n"]}
        for p in prompts
    ]  # fmt: skip
    answers: list[str] = []
    limits = httpx.Limits(max_connections=concurrency)
    with httpx.Client(timeout=60, limits=limits) as client:
        client.post(url + "/completions", json=bodies[0])  # warm: connection, imports
        queue = iter(bodies)
        lock = threading.Lock()

        def worker() -> None:
            while True:
                with lock:
                    body = next(queue, None)
                if body is None:
                    return
                reply = client.post(url + "/completions", json=body).json()
                answers.append(reply["choices"][0]["text"])

        threads = [threading.Thread(target=worker) for _ in range(concurrency)]
        began, cpu = time.perf_counter(), time.process_time()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        took = (time.perf_counter() - began, time.process_time() - cpu)
    assert len(answers) == len(bodies)
    return took


class Stages:
    """Wall-clock time spent in chosen functions, by stage, in whatever thread runs them; a
    call inside another timed call of the same stage is not counted twice."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.cpu: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self._depth = threading.local()
        self._undo: list[tuple[object, str, object]] = []

    def wrap(self, owner: object, name: str, stage: str) -> None:
        original = getattr(owner, name)
        stages = self

        @functools.wraps(original)
        def timed(*args, **kwargs):
            depth = getattr(stages._depth, stage, 0)
            setattr(stages._depth, stage, depth + 1)
            began, cpu = time.perf_counter(), time.thread_time()
            try:
                return original(*args, **kwargs)
            finally:
                setattr(stages._depth, stage, depth)
                if depth == 0:
                    stages.seconds[stage] += time.perf_counter() - began
                    stages.cpu[stage] += time.thread_time() - cpu
                    stages.calls[stage] += 1

        self._undo.append((owner, name, original))
        setattr(owner, name, timed)

    def undo(self) -> None:
        for owner, name, original in reversed(self._undo):
            setattr(owner, name, original)
        self._undo.clear()


def instrumented() -> Stages:
    """The stages of a served generate run (see the module's docstring)."""
    import pyarrow.parquet as pq

    from chronoprobe.models import request_cache, served
    from chronoprobe.probes import generate

    stages = Stages()
    stages.wrap(generate, "read_asked_rows", "read rows")
    stages.wrap(generate, "prompt_for", "build prompts")
    stages.wrap(request_cache.CachedModel, "_key", "cache: keys")
    stages.wrap(request_cache.RequestStore, "get", "cache: read")
    stages.wrap(request_cache.RequestStore, "put", "cache: write")
    stages.wrap(served.ServedLM, "_complete_one", "requests (threads)")
    stages.wrap(generate, "_judged", "judging")
    stages.wrap(pq, "write_table", "Parquet: write")
    stages.wrap(pq, "read_table", "Parquet: read")
    return stages


def probe_command(data: Path, out: Path, url: str, limit: int, concurrency: int) -> list[str]:
    return [
        "probe", "generate", str(data.parent), "-m", "openai:stub", "--base-url", url,
        "--concurrency", str(concurrency), "--sample", str(limit), "-o", str(out), "--no-cache",
    ]  # fmt: skip


def run_command(args: list[str], profile: str | None = None) -> tuple[float, float]:
    """One ``chronoprobe`` command in this process; its wall and CPU seconds (this process's
    threads: the stub server is a process of its own)."""
    from chronoprobe.cli.main import app

    began, cpu = time.perf_counter(), time.process_time()
    with open(os.devnull, "w") as quiet, contextlib.redirect_stdout(quiet):
        if profile:
            import cProfile

            with cProfile.Profile() as prof:
                app(args, standalone_mode=False)
            prof.dump_stats(profile)
        else:
            app(args, standalone_mode=False)
    return time.perf_counter() - began, time.process_time() - cpu


def with_aliases(data: Path, target: Path) -> Path:
    """``data`` with two aliases per answer (a shortened and a lower-cased form)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with data.open() as lines, target.open("w") as out:
        for line in lines:
            row = json.loads(line)
            row["answer_aliases"] = [
                [" ".join(label.split()[:2]) + " Ltd", label.lower()]
                for label in row["answer_labels"]
            ]
            out.write(json.dumps(row) + "\n")
    return target


def responses_file(rows: list[dict], target: Path) -> Path:
    """One answer per row: its own answer, the subject's answer of another period, or another
    row's answer, in turn; each in a sentence, as a model says it."""
    by_subject: dict[str, list[str]] = defaultdict(list)
    for row in rows:
        by_subject[row["subject"]].extend(row["answer_labels"])
    with target.open("w") as out:
        for i, row in enumerate(rows):
            own = row["answer_labels"] or ["nobody"]
            choices = [own[0], by_subject[row["subject"]][-1], rows[(i * 7919) % len(rows)]]
            said = choices[i % 3]
            said = said if isinstance(said, str) else (said["answer_labels"] or ["nobody"])[0]
            out.write(json.dumps({"id": row["id"], "answer": f"{said}{RAMBLE}"}) + "\n")
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("templama", nargs="?", help="a released TempLAMA file (train.jsonl)")
    parser.add_argument("--prompts", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=12)
    parser.add_argument("--profile", help="write a cProfile of the command run here")
    parser.add_argument("--stub", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.stub:
        stub_server(args.stub)
        return
    if not args.templama:
        parser.error("give a released TempLAMA file, e.g. train.jsonl")

    os.environ.setdefault("CHRONOPROBE_THREADS", "1")
    from chronoprobe.probes.generate import (
        GenerateParams,
        prompt_for,
        read_asked_rows,
        skip_reason,
    )

    tmp = Path(tempfile.mkdtemp(prefix="bench-client-cost-"))
    os.environ["CHRONOPROBE_CACHE"] = str(tmp / "cache")  # a fresh request cache
    data = tmp / "templama" / "examples.jsonl"
    run_command(["import", "templama", args.templama, "-o", str(data.parent)])
    rows = [json.loads(line) for line in data.open()]
    labels = sorted({label for row in rows for label in row["answer_labels"]})
    params = GenerateParams()
    # rows the template cannot ask (the gap first) are skipped by the command, not sent
    asked = [
        r for r in read_asked_rows(data)[: args.prompts] if not skip_reason(params.template, r)
    ]
    prompts = [prompt_for(row, params, 0, 0) for row in asked]
    load_before = os.getloadavg()[0]
    with running_stub(labels, tmp) as url:
        plain_s = plain_loop(url, prompts, args.concurrency, args.max_tokens)
        # the first command imports what every later one finds imported: left out
        run_command(probe_command(data, tmp / "warm", url, 1, args.concurrency))
        start_s = run_command(probe_command(data, tmp / "one", url, 1, args.concurrency))
        stages = instrumented()
        try:
            fresh_s = run_command(
                probe_command(data, tmp / "fresh", url, args.prompts, args.concurrency),
                args.profile,
            )
        finally:
            stages.undo()
        reused_s = run_command(
            probe_command(data, tmp / "reused", url, args.prompts, args.concurrency)
        )
    n = len(prompts)

    def per_prompt(total: tuple, start: tuple) -> dict:
        return {
            "wall": round((total[0] - start[0]) / (n - 1) * 1000, 3),
            "cpu": round((total[1] - start[1]) / (n - 1) * 1000, 3),
        }

    command = per_prompt(fresh_s, start_s)
    plain = {"wall": round(plain_s[0] / n * 1000, 3), "cpu": round(plain_s[1] / n * 1000, 3)}
    breakdown = {
        stage: {
            "cpu_ms": round(stages.cpu[stage] / n * 1000, 4),
            "wall_ms": round(seconds / n * 1000, 4),
            "calls": stages.calls[stage],
        }
        for stage, seconds in sorted(stages.seconds.items(), key=lambda item: -item[1])
    }

    # judging --responses, aliases included: the whole command
    aliased = with_aliases(data, tmp / "aliased" / "examples.jsonl")
    answers = responses_file(rows, tmp / "answers.jsonl")
    judge_s = run_command(
        ["probe", "generate", str(aliased.parent), "--responses", str(answers),
         "-o", str(tmp / "judged"), "--no-cache"]
    )  # fmt: skip
    judged = json.loads((tmp / "judged" / "metrics.json").read_text())
    report = {
        "rows": args.prompts,
        "prompts": n,
        "concurrency": args.concurrency,
        "load_average_before": round(load_before, 2),
        "load_average_after": round(os.getloadavg()[0], 2),
        "ms_per_prompt": {
            "plain_client": plain,
            "command": command,
            "chronoprobe_own": {k: round(command[k] - plain[k], 3) for k in plain},
            "command_all_reused": per_prompt(reused_s, start_s),
        },
        "command_start_s": round(start_s[0], 2),
        "breakdown": breakdown,
        "responses_judged": len(rows),
        "responses_command_s": {"wall": round(judge_s[0], 2), "cpu": round(judge_s[1], 2)},
        "responses_accuracy": judged["models"][next(iter(judged["models"]))].get("accuracy")
        if "models" in judged
        else judged.get("accuracy"),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
