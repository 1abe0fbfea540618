"""Every GPU measurement in one call, one JSON of figures (see run_all.sh, which runs this).

Parts, each a process of its own with its own time limit, so that one that fails or runs out
of time leaves the others' figures (a part's status says which: measured, skipped with its
reason, failed with the end of its output, or out of time):

- ``vllm``: ``vllm serve`` of an 8B-parameter Llama-shaped model with dummy weights
  (``--load-format dummy``: no weight files) and SmolLM2's tokenizer; ``vllm bench serve`` on
  the TempLAMA prompts (``--templama``, train and val), then ``chronoprobe probe generate
  -m openai:...`` over the same rows against the same server; requests/s of each, their
  ratio, and the command's wall time;
- ``mlm``: ``bench_views.py`` on a roberta-base-shaped model (bf16 on CUDA): the PLL and
  single-token views against their plain-torch baselines;
- ``span_ppl``: ``bench_span_ppl.py`` on a GPT-2-small shape, against one example per forward;
- ``tkg``: ``bench_tkg.py`` at CronQuestions' size (300k facts, rank 256): training and
  filtered ranking against tkbc's loop.

``--dry-run`` runs every part at tiny sizes on the CPU: vLLM is not started (it needs a GPU);
the ``vllm`` part then asks a stub server that answers at once, with a plain client loop in
the place of ``vllm bench serve``, so that everything around vLLM runs; its figures say so.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCH = HERE.parent
# Llama 3.1 8B's shape with SmolLM2's 49,152-token vocabulary (7.4B parameters: the 8B count
# includes a 128k-token vocabulary's embeddings)
LLAMA_8B = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "max_position_embeddings": 8192,
    "rms_norm_eps": 1e-5,
    "rope_theta": 500000.0,
    "vocab_size": 49152,
    "bos_token_id": 1,
    "eos_token_id": 2,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
}
# the command, from whatever Python runs this (no installed script needed)
CHRONOPROBE = [sys.executable, "-m", "chronoprobe"]
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")


def sizes(dry: bool) -> dict[str, list[str]]:
    """Each benchmark's arguments, full or tiny."""
    if dry:
        return {
            "mlm": ["--queries", "32", "--naive", "4", "--shape", "small", "--tokenizer",
                    "tiny", "--device", "cpu"],
            "span_ppl": ["--examples", "32", "--naive", "4", "--shape", "small",
                         "--tokenizer", "small", "--device", "cpu"],
            "tkg": ["--facts", "3000", "--rank", "8", "--batches", "2", "--test-queries",
                    "40", "--naive-queries", "20", "--device", "cpu"],
        }  # fmt: skip
    return {
        "mlm": ["--queries", "4096", "--shape", "base", "--device", "cuda", "--batch-size", "1024"],
        "span_ppl": ["--examples", "8192", "--shape", "gpt2", "--device", "cuda",
                     "--batch-size", "256"],
        "tkg": ["--facts", "300000", "--rank", "256", "--device", "cuda"],
    }  # fmt: skip


def last_json(text: str) -> dict:
    """The last JSON object a benchmark printed (alone on its lines, possibly indented)."""
    end = text.rstrip().rfind("}")
    start = text.rfind("\n{", 0, end)
    return json.loads(text[start + 1 if start >= 0 else 0 : end + 1])


def run_part(command: list[str], limit: float, env: dict) -> dict:
    began = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=limit, env=env)
    except subprocess.TimeoutExpired:
        return {"status": "out of time", "limit_s": limit}
    took = round(time.perf_counter() - began, 1)
    if done.returncode != 0:
        return {"status": "failed", "seconds": took, "output": (done.stdout + done.stderr)[-2000:]}
    try:
        figures = last_json(done.stdout)
    except ValueError:
        return {"status": "failed", "seconds": took, "output": done.stdout[-2000:]}
    return {"status": "measured", "seconds": took, "figures": figures}


def templama_prompts(files: list[str], folder: Path, env: dict, limit: int | None) -> Path:
    """The released TempLAMA files imported into one probe set; its examples.jsonl."""
    out = folder / "templama"
    subprocess.run(
        [*CHRONOPROBE, "import", "templama", *files, "-o", str(out)],
        check=True, env=env, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    data = out / "examples.jsonl"
    if limit is not None:
        lines = data.read_text().splitlines(keepends=True)[:limit]
        data.write_text("".join(lines))
    return data


def synthetic_prompts(folder: Path, count: int) -> Path:
    """TempLAMA-shaped rows, for a dry run without the released files."""
    data = folder / "synthetic" / "examples.jsonl"
    data.parent.mkdir(parents=True)
    with data.open("w") as out:
        for i in range(count):
            row = {"id": f"r{i}", "period": str(2010 + i % 10), "relation": "P54",
                   "subject": f"Q{i}", "query": f"Player {i} plays for [MASK].",
                   "answers": ["Q1"], "answer_labels": ["Globex"], "split": None}  # fmt: skip
            out.write(json.dumps(row) + "\n")
    return data


def vllm_model(folder: Path, tokenizer: Path) -> Path:
    """A model folder vLLM serves with dummy weights: the 8B config and SmolLM2's tokenizer."""
    model = folder / "llama-8b-dummy"
    model.mkdir()
    (model / "config.json").write_text(json.dumps(LLAMA_8B, indent=2))
    for name in TOKENIZER_FILES:
        if (tokenizer / name).is_file():
            shutil.copy(tokenizer / name, model / name)
    return model


def wait_for(url: str, server: subprocess.Popen, limit: float) -> None:
    import httpx

    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the server stopped (exit {server.returncode})")
        try:
            if httpx.get(url + "/models", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(1)
    raise RuntimeError(f"the server did not answer in {limit:g} s")


def probe_served(data: Path, url: str, model: str, concurrency: int, out: Path, env) -> dict:
    """The command's wall time over every row, and its answers/s over the rows after the
    first (a run of one row times the start-up, left out)."""
    took = {}
    for limit, folder in ((1, out.with_name(out.name + "-1")), (None, out)):
        command = [
            *CHRONOPROBE, "probe", "generate", str(data.parent), "-m", f"openai:{model}",
            "--base-url", url, "--concurrency", str(concurrency), "--max-tokens", "12",
            "--no-cache", "--no-reuse-answers", "-o", str(folder),
            *(["--sample", str(limit)] if limit else []),
        ]  # fmt: skip
        began = time.perf_counter()
        subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)
        took[limit] = time.perf_counter() - began
    rate = (answered(out) - 1) / max(took[None] - took[1], 1e-9)
    return {
        "chronoprobe_requests_per_s": round(rate, 1),
        "chronoprobe_command_s": round(took[None], 1),
    }


def answered(out: Path) -> int:
    import pyarrow.parquet as pq

    return pq.read_metadata(out / "predictions.parquet").num_rows


def vllm_part(args, folder: Path, env: dict) -> dict:
    """The vLLM comparison (or, in a dry run, the same plumbing against a stub server)."""
    if args.templama:
        data = templama_prompts(args.templama, folder, env, 200 if args.dry_run else None)
    elif args.dry_run:
        data = synthetic_prompts(folder, 200)
    else:
        return {"status": "skipped", "reason": "no --templama files given"}
    from chronoprobe.probes.generate import GenerateParams, prompt_for, read_asked_rows

    rows = [r for r in read_asked_rows(data) if r.cloze.left.strip()]
    prompts = [prompt_for(r, GenerateParams(), 0, 0).rstrip() for r in rows]
    if args.dry_run:
        sys.path.insert(0, str(BENCH))
        from bench_client_cost import plain_loop, running_stub

        with running_stub(["Globex", "Acme Corp"], folder) as url:
            plain_s, _ = plain_loop(url, prompts, args.concurrency, 12)  # wall, CPU
            ours = probe_served(data, url, "stub", args.concurrency, folder / "ours", env)
        return {
            "status": "stubbed",
            "reason": "dry run: no vLLM; a stub server that answers at once, a plain client "
            "loop in the place of vllm bench serve",
            "figures": {
                "prompts": len(prompts),
                "reference_requests_per_s": round(len(prompts) / plain_s, 1),
                **ours,
            },
        }
    if shutil.which("vllm") is None:
        return {"status": "skipped", "reason": "vllm is not installed (pip install vllm)"}
    if args.tokenizer is None or not (Path(args.tokenizer) / "tokenizer.json").is_file():
        return {"status": "skipped", "reason": "--tokenizer names no folder with tokenizer.json"}
    model = vllm_model(folder, Path(args.tokenizer))
    port = 8123
    url = f"http://127.0.0.1:{port}/v1"
    dataset = folder / "prompts.jsonl"
    dataset.write_text("".join(json.dumps({"prompt": p}) + "\n" for p in prompts))
    log = (folder / "vllm-serve.log").open("wb")
    server = subprocess.Popen(
        ["vllm", "serve", str(model), "--load-format", "dummy", "--port", str(port),
         "--served-model-name", "llama-8b-dummy", "--max-model-len", "2048"],
        stdout=log, stderr=subprocess.STDOUT, env=env,
    )  # fmt: skip
    try:
        wait_for(url, server, 240)
        bench = subprocess.run(
            ["vllm", "bench", "serve", "--base-url", f"http://127.0.0.1:{port}",
             "--model", "llama-8b-dummy", "--tokenizer", str(model), "--dataset-name", "custom",
             "--dataset-path", str(dataset), "--num-prompts", str(len(prompts)),
             "--custom-output-len", "12", "--save-result", "--result-dir", str(folder),
             "--result-filename", "vllm-bench.json"],
            capture_output=True, text=True, env=env, timeout=240,
        )  # fmt: skip
        if bench.returncode != 0:
            return {"status": "failed", "output": (bench.stdout + bench.stderr)[-2000:]}
        theirs = json.loads((folder / "vllm-bench.json").read_text())
        ours = probe_served(data, url, "llama-8b-dummy", args.concurrency, folder / "ours", env)
    finally:
        server.terminate()
        server.wait(30)
    reference = theirs["request_throughput"]
    return {
        "status": "measured",
        "figures": {
            "prompts": len(prompts),
            "vllm_bench_serve_requests_per_s": round(reference, 1),
            **ours,
            "of_vllm_bench_serve": round(ours["chronoprobe_requests_per_s"] / reference, 3),
        },
    }


def card() -> str:
    import torch

    if torch.cuda.is_available():
        return torch.cuda.get_device_name(0)
    return "CPU (no GPU)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dry-run", action="store_true", help="tiny sizes, CPU, no vLLM")
    parser.add_argument("--out", type=Path, required=True, help="the JSON of figures")
    parser.add_argument("--templama", nargs="*", default=[], help="TempLAMA train and val")
    parser.add_argument("--tokenizer", help="a folder with SmolLM2's tokenizer.json")
    parser.add_argument("--concurrency", type=int, default=256, help="chronoprobe's requests")
    parser.add_argument("--only", nargs="*", help="run these parts only")
    args = parser.parse_args()
    if args.dry_run:
        args.concurrency = min(args.concurrency, 8)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    folder = Path(tempfile.mkdtemp(prefix="gpu-run-all-"))
    env.setdefault("CHRONOPROBE_CACHE", str(folder / "cache"))
    # seconds per part on the GPU (9.5 minutes in all); a dry run on a shared CPU gets room
    limits = {"vllm": 330, "mlm": 90, "span_ppl": 60, "tkg": 90}
    if args.dry_run:
        limits = dict.fromkeys(limits, 900)
    report: dict = {"card": card(), "dry_run": args.dry_run, "parts": {}}
    for name, arguments in [("vllm", None), *sizes(args.dry_run).items()]:
        if args.only and name not in args.only:
            continue
        print(f"{name} ...", file=sys.stderr, flush=True)
        if name == "vllm":
            try:
                part = vllm_part(args, folder, env)
            except (RuntimeError, subprocess.SubprocessError, OSError) as err:
                part = {"status": "failed", "output": str(err)[-2000:]}
        else:
            script = BENCH / f"bench_{'views' if name == 'mlm' else name}.py"
            part = run_part([sys.executable, str(script), *arguments], limits[name], env)
        report["parts"][name] = part
        print(f"{name}: {part['status']}", file=sys.stderr, flush=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n")  # what is done so far
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
