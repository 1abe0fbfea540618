"""Each drift view, whole command, against naive loops and transformers' fill-mask pipeline.

One run, one random RoBERTa, one set of temporal queries ("In 2019, Alice Smith was employed by
[MASK]." with one gold label each). chronoprobe's figures are the whole `chronoprobe.probe` call
(read the JSONL, tokenize, score, decode, write predictions and metrics) and the whole command
(`chronoprobe probe VIEW` in a fresh process on the model saved to disk: start-up, model load,
the probe, its Parquet and metrics; all --queries rows, 4,096 by default); the references are:
- single-token: a batch-1 loop (full forward, full LM head) and `pipeline("fill-mask")`, top-10;
- pll: a batch-1 loop with one forward per label token, and the same masked copies padded into
  plain torch batches with the full LM head;
- multi-token: a batch-1 loop filling m = 1..M masks left to right.
Slow references run on a subsample and are reported in examples/s.

    python benchmarks/bench_views.py [--queries 4096] [--device cpu|cuda] [--shape small|base]
"""

from __future__ import annotations

import argparse
import functools
import json
import random
import tempfile
import time
from pathlib import Path

import torch

SHAPES = {
    "small": {"hidden_size": 256, "num_hidden_layers": 4, "num_attention_heads": 4},
    "base": {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12},
}
FIRST = ["Alice", "Bob", "Carla", "Dmitri", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jon"]
LAST = ["Smith", "Jones", "Diaz", "Ivanov", "Rossi", "Khan", "Lee", "Sato", "Silva", "Berg"]
ORGS = [
    "Google",
    "Microsoft",
    "Apple",
    "Toyota",
    "Siemens",
    "Nestle",
    "Boeing",
    "Intel",
    "New York Times",
    "Deutsche Bank",
    "Real Madrid",
    "Chelsea",
    "Oxford University",
]
VERBS = ["was employed by", "played for", "worked at", "was a member of"]


def make_queries(n: int, seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        year = rng.randint(2000, 2022)
        person = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
        query = f"In {year}, {person} {rng.choice(VERBS)} [MASK]."
        period = str(year)
        rows.append(
            {
                "id": f"q{i}",
                "period": period,
                "split": None,
                "query": query,
                "answer_labels": [rng.choice(ORGS)],
            }
        )
    return rows


def make_tokenizer(kind: str):
    """SmolLM2's 49k byte-level BPE plus <mask>, or a small BPE trained on the queries."""
    from tokenizers import AddedToken

    if kind == "smollm2":
        from transformers import AutoTokenizer

        from chronoprobe.models.spec import resolve_spec

        source = resolve_spec("package:smollm2")
        tok = AutoTokenizer.from_pretrained(source.location, gguf_file=source.gguf_file)
        tok.add_special_tokens({"mask_token": AddedToken("<mask>", lstrip=True, special=True)})
        return tok
    from chronoprobe.models.tokenizer import train_tokenizer

    sentences = [r["query"].replace("[MASK]", r["answer_labels"][0]) for r in make_queries(2000)]
    return train_tokenizer(sentences, "roberta", vocab_size=2000)


def make_model(tok, shape: str, device: str):
    from transformers import RobertaConfig, RobertaForMaskedLM

    dims = SHAPES[shape]
    pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
    config = RobertaConfig(
        vocab_size=len(tok),
        intermediate_size=4 * dims["hidden_size"],
        max_position_embeddings=130,
        pad_token_id=pad,
        type_vocab_size=1,
        **dims,
    )
    torch.manual_seed(0)
    dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
    return RobertaForMaskedLM(config).to(device=device, dtype=dtype).eval()


def timed(fn, n: int) -> float:
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    began = time.perf_counter()
    fn()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return n / (time.perf_counter() - began)


def naive_single(model, tok, rows):
    for row in rows:
        ids = tok(row["query"].replace("[MASK]", tok.mask_token), return_tensors="pt")
        ids = ids["input_ids"].to(model.device)
        with torch.inference_mode():
            logits = model(input_ids=ids).logits[0]
        position = (ids[0] == tok.mask_token_id).nonzero()[0, 0]
        tok.convert_ids_to_tokens(torch.topk(logits[position], 10).indices.tolist())


def pipeline_single(model, tok, rows):
    from transformers import pipeline

    fill = pipeline("fill-mask", model=model, tokenizer=tok, top_k=10, device=model.device)
    texts = [r["query"].replace("[MASK]", tok.mask_token) for r in rows]
    list(fill(texts, batch_size=32))


def _copies(tok, rows):
    """(ids with one label token masked, position, original token) for every label token."""
    out = []
    for row in rows:
        left, right = row["query"].split("[MASK]")
        label = row["answer_labels"][0]
        enc = tok(left + label + right, return_offsets_mapping=True)
        start, end = len(left), len(left) + len(label)
        for p, (a, b) in enumerate(enc["offset_mapping"]):
            if b > a and a < end and b > start:
                ids = list(enc["input_ids"])
                target, ids[p] = ids[p], tok.mask_token_id
                out.append((ids, p, target))
    return out


def naive_pll(model, tok, rows):
    for ids, p, target in _copies(tok, rows):
        with torch.inference_mode():
            logits = model(input_ids=torch.tensor([ids], device=model.device)).logits[0, p]
        torch.log_softmax(logits.float(), -1)[target].item()


def batched_pll(model, tok, rows, batch=1024):
    """Plain torch: every masked copy padded into big batches, full LM head everywhere."""
    copies = _copies(tok, rows)
    pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
    for start in range(0, len(copies), batch):
        chunk = copies[start : start + batch]
        width = max(len(c[0]) for c in chunk)
        ids = torch.full((len(chunk), width), pad)
        mask = torch.zeros_like(ids)
        for i, (row, _, _) in enumerate(chunk):
            ids[i, : len(row)] = torch.tensor(row)
            mask[i, : len(row)] = 1
        with torch.inference_mode():
            logits = model(input_ids=ids.to(model.device), attention_mask=mask.to(model.device))
        logprobs = torch.log_softmax(logits.logits.float(), -1)
        rows_i = torch.arange(len(chunk))
        logprobs[rows_i, [c[1] for c in chunk], [c[2] for c in chunk]].tolist()


def naive_multi(model, tok, rows, max_tokens=5):
    special = torch.tensor(tok.all_special_ids, device=model.device)
    for row in rows:
        left, right = row["query"].split("[MASK]")
        for m in range(1, max_tokens + 1):
            ids = tok(left + tok.mask_token * m + right, return_tensors="pt")["input_ids"]
            ids = ids.to(model.device)
            for _ in range(m):
                p = (ids[0] == tok.mask_token_id).nonzero()[0, 0]
                with torch.inference_mode():
                    logprobs = torch.log_softmax(model(input_ids=ids).logits[0, p].float(), -1)
                    logprobs[special] = float("-inf")
                    ids[0, p] = logprobs.argmax()


def ours(adapter, rows, view, tmp: Path) -> float:
    import chronoprobe
    from chronoprobe.jsonl import write_jsonl

    data = tmp / "queries.jsonl"
    write_jsonl(data, rows)
    return timed(lambda: chronoprobe.probe(view, data, model=adapter, cache=False), len(rows))


def whole_command(model, tok, rows, view, tmp: Path, device: str, batch_size: int) -> float:
    """Examples/s of ``chronoprobe probe VIEW`` in a fresh process, from start-up to its files."""
    import os
    import subprocess
    import sys

    from chronoprobe.jsonl import write_jsonl

    saved = tmp / "model"
    if not saved.is_dir():
        model.save_pretrained(saved)
        tok.save_pretrained(saved)
    data = tmp / "command" / view / "examples.jsonl"
    write_jsonl(data, rows)
    command = [sys.executable, "-c", "from chronoprobe.cli.main import app; app()", "probe"]
    command += [view, str(data), "-m", str(saved), "-o", str(tmp / "command" / view / "out")]
    command += ["--device", device, "--batch-size", str(batch_size)]
    env = {**os.environ, "CHRONOPROBE_CACHE": str(tmp / "cache")}  # no cached step to find
    began = time.perf_counter()
    subprocess.run(command, check=True, env=env, capture_output=True)
    return len(rows) / (time.perf_counter() - began)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=4096)
    parser.add_argument("--naive", type=int, default=128, help="subsample for batch-1 loops")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--shape", choices=SHAPES, default="small")
    parser.add_argument("--tokenizer", choices=["smollm2", "tiny"], default="smollm2")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()

    from chronoprobe.models.masked import MaskedLM

    tok = make_tokenizer(args.tokenizer)
    model = make_model(tok, args.shape, args.device)
    adapter = MaskedLM(model, tok, batch_size=args.batch_size, name=f"random-{args.shape}")
    rows = make_queries(args.queries)
    few = rows[: args.naive]
    params = sum(p.numel() for p in model.parameters()) / 1e6
    print(
        f"model: RoBERTa {args.shape} ({params:.0f}M params, vocab {len(tok)}), "
        f"{args.device}, {model.dtype}; {len(rows)} queries, threads {torch.get_num_threads()}"
    )
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        naive_single(model, tok, few[:8])  # warm-up
        command = functools.partial(
            whole_command, model, tok, tmp=Path(tmp), device=args.device, batch_size=args.batch_size
        )
        results["single-token"] = {
            "chronoprobe": ours(adapter, rows, "single-token", Path(tmp)),
            "chronoprobe, whole command": command(rows, "single-token"),
            "naive batch-1 loop": timed(lambda: naive_single(model, tok, few), len(few)),
            "fill-mask pipeline, batch 32": timed(
                lambda: pipeline_single(model, tok, rows[:1024]), 1024
            ),
        }
        results["pll"] = {
            "chronoprobe": ours(adapter, rows, "pll", Path(tmp)),
            "chronoprobe, whole command": command(rows, "pll"),
            "naive per-token loop": timed(lambda: naive_pll(model, tok, few), len(few)),
            "plain torch, batches of 1024": timed(lambda: batched_pll(model, tok, rows), len(rows)),
        }
        multi_rows = rows[: max(args.queries // 4, 1)]
        results["multi-token"] = {
            "chronoprobe": ours(adapter, multi_rows, "multi-token", Path(tmp)),
            "chronoprobe, whole command": command(multi_rows, "multi-token"),
            "naive batch-1 loop": timed(lambda: naive_multi(model, tok, few[:32]), len(few[:32])),
        }
    for view, figures in results.items():
        print(f"\n{view} (examples/s)")
        mine, whole = figures["chronoprobe"], figures["chronoprobe, whole command"]
        for name, rate in figures.items():
            ratio = (
                ""
                if name.startswith("chronoprobe")
                else f"   chronoprobe is {mine / rate:.1f}x ({whole / rate:.1f}x whole command)"
            )
            print(f"  {name:32s} {rate:10.1f}{ratio}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
