"""What the cutoff view's estimate costs beside its scoring: ``probe cutoff`` on a drift set of
at least 10,000 rows, against the view's scoring of the changes alone, in the same run.

One synthetic world (``--facts``, 10,000 by default: about 12,000 yearly drift rows over
2011-2022), one tiny random masked LM (the series' ``tiny`` shape, a BPE trained on the
world's snippets), saved to disk as a user's model is. Timed, in turns, ``--repeats`` times:

- scoring: ``chronoprobe.probes.cutoff.predict_cutoff`` over ``read_changes(...)`` of the set,
  the model loaded beforehand (the scoring alone, no file written);
- whole: ``chronoprobe.probe("cutoff", ...)`` with ``cache=False`` and ``reuse_answers=False``:
  the command's work from reading the rows to writing metrics.json, model load included;
- estimate: ``chronoprobe.probes.cutoff.cutoff_metrics`` over the scoring's predictions.

Reported: the median of each, the whole command over the scoring, and the estimate over the
scoring (the target: under 10%). Where the estimate costs more, its profile (cProfile, the
functions of most cumulative time) is printed. Run it with ``nice`` on a shared machine and
read the ratios, not the seconds:

    nice -n 10 python benchmarks/bench_cutoff.py [--facts 10000] [--repeats 3] [--out FILE]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import statistics
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq
import torch


def make_set(root: Path, facts: int) -> tuple[Path, Path]:
    """The world and its yearly drift set, as ``kg synth`` and ``build drift`` write them."""
    import yaml

    import chronoprobe

    steps = [
        {"id": "world", "kind": "kg", "params": {"source": "synth", "facts": facts,
                                                 "first": 1990, "last": 2024}},
        {"id": "drift", "kind": "build", "inputs": {"kg": "world"},
         "params": {"family": "drift", "first": "2011", "last": "2022"}},
    ]  # fmt: skip
    config = root / "set.yaml"
    config.write_text(yaml.safe_dump({"name": "bench-cutoff", "steps": steps}))
    outcome = chronoprobe.run(config, root / "run")
    return outcome["world"].dir, outcome["drift"].dir


def make_model(root: Path, texts: list[str]) -> Path:
    """A random masked LM of the model series' tiny shape (2 layers of 128), saved with a BPE
    of 2,000 tokens trained on the world's snippets."""
    from chronoprobe.models.tiny import random_model
    from chronoprobe.models.tokenizer import train_tokenizer

    tokenizer = train_tokenizer(texts, "roberta", vocab_size=2000)
    model = random_model("roberta", tokenizer, hidden=128, layers=2, heads=2, seed=0)
    path = root / "model"
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def timed(work) -> tuple[float, object]:
    start = time.perf_counter()
    result = work()
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--out", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args()

    import chronoprobe
    from chronoprobe.models.spec import LoadOptions, parse_spec
    from chronoprobe.probes.cutoff import CutoffParams, cutoff_metrics, predict_cutoff, read_changes

    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory(prefix="bench-cutoff-") as scratch:
        root = Path(scratch)
        world, drift = make_set(root, args.facts)
        rows = sum(1 for _ in (drift / "examples.jsonl").open(encoding="utf-8"))
        if rows < 10_000:
            raise SystemExit(f"{rows:,} drift rows: fewer than 10,000; raise --facts")
        snippets = pq.read_table(world / "snippets.parquet", columns=["text"])
        model_dir = make_model(root, snippets["text"].to_pylist())
        params = CutoffParams(batch_size=args.batch_size, device="cpu")
        changes = read_changes(drift / "examples.jsonl")
        options = LoadOptions(device="cpu", batch_size=args.batch_size)
        model = parse_spec(str(model_dir)).load(options)
        scoring, whole, estimate = [], [], []
        for _ in range(args.repeats):
            seconds, predictions = timed(lambda: predict_cutoff(model, changes, params, None))
            scoring.append(seconds)
            seconds, _ = timed(
                lambda: chronoprobe.probe(
                    "cutoff", drift, model=str(model_dir), cache=False, reuse_answers=False,
                    device="cpu", batch_size=args.batch_size,
                )
            )  # fmt: skip
            whole.append(seconds)
            seconds, _ = timed(lambda p=predictions: cutoff_metrics(p, params))
            estimate.append(seconds)
        figures = {
            "rows": rows,
            "changes": len(changes),
            "predictions": len(predictions),
            "repeats": args.repeats,
            "scoring_s": statistics.median(scoring),
            "whole_s": statistics.median(whole),
            "estimate_s": statistics.median(estimate),
            "load": os.getloadavg(),
            "cpus": os.cpu_count(),
        }
        figures["whole_over_scoring"] = figures["whole_s"] / figures["scoring_s"]
        figures["estimate_over_scoring"] = figures["estimate_s"] / figures["scoring_s"]
        print(json.dumps(figures, indent=2))
        print(
            f"{rows:,} rows, {len(changes):,} changes: probe cutoff {figures['whole_s']:.1f} s, "
            f"the scoring alone {figures['scoring_s']:.1f} s "
            f"(x{figures['whole_over_scoring']:.2f}); the estimate {figures['estimate_s']:.2f} s "
            f"= {figures['estimate_over_scoring']:.1%} of the scoring (target: under 10%)"
        )
        if figures["estimate_over_scoring"] >= 0.10:
            profile = cProfile.Profile()
            profile.runcall(cutoff_metrics, predictions, params)
            text = io.StringIO()
            pstats.Stats(profile, stream=text).sort_stats("cumulative").print_stats(20)
            print("the estimate costs 10% or more of the scoring; its profile:\n" + text.getvalue())
            figures["profile"] = text.getvalue()
        if args.out:
            args.out.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
