"""The generate view against a one-prompt-at-a-time ``model.generate`` loop, whole commands timed.

Both sides answer the same greedy prompts (drift rows of the real sample KG, "In {period},
{statement}") with the same model. Ours is the ``chronoprobe probe generate`` command: start-up,
model load, batched left-padded decoding with the key/value cache. The loop loads the same model
through chronoprobe, then calls transformers' ``model.generate`` once per prompt (greedy, the
same token limit, stopping at a newline or sentence end as ours does). The answers must be
identical.

    python benchmarks/bench_generate.py [--rows 200] [--model package:smollm2] [--threads 2]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MAX_TOKENS = 12


class StopAtAnswerEnd:
    """The stop rule ours uses (a newline or a sentence end), as a cheap stopping criterion:
    transformers' ``stop_strings`` preprocesses the whole vocabulary on every call."""

    def __init__(self, tokenizer, prompt_length: int) -> None:
        self.tokenizer, self.prompt_length = tokenizer, prompt_length

    def __call__(self, input_ids, scores, **kwargs):
        import torch

        from chronoprobe.models.completion import cut_answer

        text = self.tokenizer.decode(input_ids[0, self.prompt_length :], skip_special_tokens=True)
        return torch.tensor([cut_answer(text)[1]])


def loop(data: str, model_spec: str, rows: int, threads: int, out: str) -> None:
    """The baseline: one ``model.generate`` call per prompt."""
    import torch

    from chronoprobe.models import load_model
    from chronoprobe.models.completion import cut_answer
    from chronoprobe.models.requests import Cloze, PromptRequest
    from chronoprobe.probes.generate import GenerateParams, prompt_for, read_asked_rows

    torch.set_num_threads(threads)
    model = load_model(model_spec, device="cpu")
    params = GenerateParams()
    answers = {}
    for row in read_asked_rows(data)[:rows]:
        if not row.cloze.left.strip():
            continue
        request = PromptRequest(Cloze(prompt_for(row, params, 0, 0) + " ", ""))
        ids = torch.tensor([model.prompt_row(request).ids])  # the tokens ours reads
        with torch.inference_mode():
            made = model.model.generate(
                input_ids=ids,
                attention_mask=torch.ones_like(ids),
                max_new_tokens=MAX_TOKENS,
                do_sample=False,
                pad_token_id=model.pad_id,
                stopping_criteria=[StopAtAnswerEnd(model.tokenizer, ids.shape[1])],
            )
        raw = model.tokenizer.decode(made[0, ids.shape[1] :], skip_special_tokens=True)
        answers[row.id] = cut_answer(raw)[0]
    Path(out).write_text(json.dumps(answers))


def _timed(command: list[str], env: dict) -> float:
    began = time.perf_counter()
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--model", default="package:smollm2")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--loop", nargs=2, metavar=("DATA", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.loop:
        loop(args.loop[0], args.model, args.rows, args.threads, args.loop[1])
        return

    from chronoprobe.datasets.writers import write_drift
    from chronoprobe.kg.samples import load_sample
    from chronoprobe.time import Granularity, periods_between

    env = {**os.environ, "CHRONOPROBE_THREADS": str(args.threads)}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "drift"
        relations = ["P39", "P54", "P108", "P102", "P27", "P69"]
        write_drift(
            load_sample(),
            data,
            periods_between("2000", "2024", Granularity.YEAR),
            relations=relations,
        )
        out = Path(tmp) / "ours"
        ours_s = _timed(
            [str(Path(sys.executable).with_name("chronoprobe")), "probe", "generate", str(data),
             "-m", args.model, "--sample", str(args.rows), "--batch-size", str(args.batch_size),
             "--max-tokens", str(MAX_TOKENS), "--device", "cpu", "-o", str(out)],
            env,
        )  # fmt: skip
        baseline = Path(tmp) / "loop.json"
        loop_s = _timed(
            [sys.executable, __file__, "--rows", str(args.rows), "--model", args.model,
             "--threads", str(args.threads), "--loop", str(data / "examples.jsonl"),
             str(baseline)],
            env,
        )  # fmt: skip
        import pyarrow.parquet as pq

        ours = {
            r["id"]: r["prediction"] for r in pq.read_table(out / "predictions.parquet").to_pylist()
        }
        theirs = json.loads(baseline.read_text())
        differ = sorted(k for k in theirs if ours.get(k) != theirs[k])
    print(
        json.dumps(
            {
                "model": args.model,
                "prompts": len(theirs),
                "threads": args.threads,
                "generate_view_s": round(ours_s, 1),
                "generate_loop_s": round(loop_s, 1),
                "speed_up": round(loop_s / ours_s, 2),
                "answers_differ": len(differ),
                "differing_ids": differ[:10],
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
