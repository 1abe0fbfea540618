"""ECBD span perplexity, whole command, against one example per forward and plain torch batches.

One run, one random causal LM (GPT-2 architecture), one set of ECBD-like examples: a definition
of about 50 words prepended (the DEFINITION condition, the longest input), a probe sentence of
about 30 words naming the entity, a masked span of 1 to 5 words after the mention. chronoprobe's
figure is the whole ``chronoprobe.probe`` call of the span-ppl view (read the JSONL, build the
condition texts, tokenize, score, aggregate per entity, write predictions and metrics).
The references:
- one example per forward (the ECBD scripts' way): tokenize, full forward, log-softmax over the
  vocabulary at every position, sum the span tokens' log-probabilities;
- plain torch: the same inputs padded into batches of 256, log-softmax at every position.
Both run on a subsample; the span NLLs of the three ways are compared at the end.

    python benchmarks/bench_span_ppl.py [--examples 2048] [--device cpu|cuda] [--shape small|gpt2]
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

import torch

SHAPES = {
    "small": {"n_embd": 256, "n_layer": 4, "n_head": 4},
    "gpt2": {"n_embd": 768, "n_layer": 12, "n_head": 12},  # GPT-2 small
}
WORDS = (
    "the a of in and company river festival album season series was released founded by "
    "city state league team record band film award company's first second new national "
    "during after before which its their one two three million people built opened won "
    "played announced located north south game song tour station museum bridge election"
).split()
NAMES = ["Globex", "Initech", "Umbrella Corporation", "Acme", "Stark Tower", "Wayne Bridge"]


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def make_examples(n: int, seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    definitions = {name: f"{name} is {_words(rng, 50)}." for name in NAMES}
    rows = []
    for i in range(n):
        name = rng.choice(NAMES)
        before, after = _words(rng, rng.randint(2, 8)), _words(rng, rng.randint(15, 25))
        sentence = f"In {rng.randint(2000, 2021)}, {before} {name} {after}."
        mention = sentence.index(name)
        tail = sentence[mention + len(name) + 1 :].split(" ")
        skip, length = rng.randint(0, 5), rng.randint(1, 5)
        span_start = mention + len(name) + 1 + sum(len(w) + 1 for w in tail[:skip])
        span = " ".join(tail[skip : skip + length]).rstrip(".")
        rows.append(
            {
                "id": f"e{i}",
                "entity": name,
                "year": str(rng.randint(2017, 2021)),
                "span_type": "random",
                "sentence": sentence,
                "mention_start": mention,
                "mention_end": mention + len(name),
                "span_start": span_start,
                "span_end": span_start + len(span),
                "span": span,
                "definition": definitions[name],
                "split": "test",
            }
        )
    return rows


def make_tokenizer(kind: str):
    """SmolLM2's 49k byte-level BPE (the vocabulary a real model brings), or a small BPE
    trained on the data."""
    if kind == "smollm2":
        from transformers import AutoTokenizer

        from chronoprobe.models.spec import resolve_spec

        source = resolve_spec("package:smollm2")
        return AutoTokenizer.from_pretrained(source.location, gguf_file=source.gguf_file)
    from chronoprobe.models.tokenizer import train_tokenizer

    texts = [r["definition"] + " " + r["sentence"] for r in make_examples(500)]
    return train_tokenizer(texts, "gpt2", vocab_size=2000)


def make_adapter(tok, shape: str, device: str, batch_size: int):
    from transformers import GPT2Config, GPT2LMHeadModel

    from chronoprobe.models.causal import CausalLM

    torch.manual_seed(0)
    ends = {"bos_token_id": tok.bos_token_id, "eos_token_id": tok.eos_token_id}
    config = GPT2Config(vocab_size=len(tok), n_positions=256, **ends, **SHAPES[shape])
    dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
    model = GPT2LMHeadModel(config).to(device=device, dtype=dtype).eval()
    return CausalLM(model, tok, batch_size=batch_size, name=f"random-gpt2-{shape}")


def _sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def requests(rows: list[dict]):
    """The DEFINITION condition's (text, span character range) of every row."""
    from chronoprobe.probes.span_ppl import DefinitionPool, ECBDExample, condition_request

    pool = DefinitionPool.of({r["entity"]: r["definition"] for r in rows})
    out = []
    for r in rows:
        example = ECBDExample(
            r["id"],
            r["entity"],
            r["year"],
            r["span_type"],
            r["sentence"],
            (r["mention_start"], r["mention_end"]),
            (r["span_start"], r["span_end"]),
            r["definition"],
            r["split"],
            pool,
        )
        request, _ = condition_request(example, "definition")
        start = len(request.cloze.left)
        out.append((request.cloze.filled(request.span), start, start + len(request.span)))
    return out


def _encode(tok, text: str, start: int, end: int) -> tuple[list[int], list[int]]:
    enc = tok(text, return_offsets_mapping=True)
    positions = [
        p for p, (a, b) in enumerate(enc["offset_mapping"]) if b > a and a < end and b > start
    ]
    return enc["input_ids"], positions


def naive(model, tok, items) -> list[float]:
    """One example per forward, full log-softmax; token-normalised NLL per example."""
    out = []
    for text, start, end in items:
        ids, positions = _encode(tok, text, start, end)
        with torch.inference_mode():
            logits = model(input_ids=torch.tensor([ids], device=model.device)).logits[0]
        logprobs = torch.log_softmax(logits.float(), -1)
        out.append(-sum(logprobs[p - 1, ids[p]].item() for p in positions) / len(positions))
    return out


def plain_batched(model, tok, items, batch: int = 256) -> list[float]:
    """Padded batches, log-softmax over the vocabulary at every position."""
    encoded = [_encode(tok, *item) for item in items]
    pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
    out = []
    for begin in range(0, len(encoded), batch):
        chunk = encoded[begin : begin + batch]
        width = max(len(ids) for ids, _ in chunk)
        ids = torch.full((len(chunk), width), pad)
        mask = torch.zeros_like(ids)
        for i, (row, _) in enumerate(chunk):
            ids[i, : len(row)] = torch.tensor(row)
            mask[i, : len(row)] = 1
        with torch.inference_mode():
            logits = model(input_ids=ids.to(model.device), attention_mask=mask.to(model.device))
        logprobs = torch.log_softmax(logits.logits.float(), -1).cpu()
        for i, (row, positions) in enumerate(chunk):
            total = sum(logprobs[i, p - 1, row[p]].item() for p in positions)
            out.append(-total / len(positions))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--examples", type=int, default=2048)
    parser.add_argument("--naive", type=int, default=128, help="subsample for the references")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--shape", choices=SHAPES, default="small")
    parser.add_argument("--tokenizer", choices=("smollm2", "small"), default="smollm2")
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()

    import chronoprobe
    from chronoprobe.jsonl import write_jsonl

    tok = make_tokenizer(args.tokenizer)
    adapter = make_adapter(tok, args.shape, args.device, args.batch_size)
    rows = make_examples(args.examples)
    sample = rows[: args.naive]
    items = requests(sample)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        data, warm = Path(tmp) / "examples.jsonl", Path(tmp) / "warm.jsonl"
        write_jsonl(data, rows)
        write_jsonl(warm, rows[: args.batch_size])
        options = {"conditions": ["definition"], "cache": False}
        chronoprobe.probe("span-ppl", warm, model=adapter, **options)
        _sync()
        began = time.perf_counter()
        done = chronoprobe.probe("span-ppl", data, model=adapter, **options)
        _sync()
        results["chronoprobe (whole command)"] = len(rows) / (time.perf_counter() - began)
        ours = done.predictions.column("nll").to_pylist()
    references = {
        "one example per forward": naive,
        "plain torch, batches of 256, full log-softmax": plain_batched,
    }
    nlls = {}
    for name, fn in references.items():
        _sync()
        began = time.perf_counter()
        nlls[name] = fn(adapter.model, tok, items)
        _sync()
        results[name] = len(sample) / (time.perf_counter() - began)
    fastest = results["chronoprobe (whole command)"]
    tokens = [len(_encode(tok, *item)[0]) for item in items]
    print(
        f"device {args.device}, shape {args.shape}, tokenizer {args.tokenizer} ({len(tok):,}), "
        f"{len(rows):,} examples (references on {len(sample)}), "
        f"mean input {sum(tokens) / len(tokens):.0f} tokens, batch size {args.batch_size}, "
        f"torch threads {torch.get_num_threads()}"
    )
    for name, rate in results.items():
        print(f"{name:48s} {rate:10.1f} ex/s   speed-up of chronoprobe {fastest / rate:6.1f}x")
    for name, values in nlls.items():
        gap = max(abs(a - b) for a, b in zip(values, ours, strict=False))
        print(f"max |NLL difference| chronoprobe vs {name}: {gap:.2e} nats/token")
    print(json.dumps({k: round(v, 2) for k, v in results.items()}))


if __name__ == "__main__":
    main()
