"""Feeding and reciting throughput (statements/s) of the LAMA-TK masked LM, per model preset.

A seeded synthetic world of --facts facts gives the entity-and-year vocabulary; --statements of
its masked statements are trained for one epoch (the optimizer steps, the checkpoint excluded)
and then recited. A first, shorter run warms up the kernels and is not counted.

    python benchmarks/bench_memorize.py [--presets tiny,6L] [--facts 5000] [--statements 1024]
        [--batch-size 64] [--device cpu|cuda] [--threads N]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path


def measure(preset: str, path: Path, rows: list[dict], batch: int, device: str) -> dict:
    from chronoprobe.train import checkpoint
    from chronoprobe.train.memorize import TrainOptions, train
    from chronoprobe.train.recite import recite

    with tempfile.TemporaryDirectory() as out:
        result = train(
            path, out, TrainOptions(preset=preset, epochs=2, batch_size=batch), device=device
        )
        loaded, _ = checkpoint.load(out, device)
        recite(loaded, rows[:batch], device=device, batch_size=4 * batch)  # warm-up
        began = time.perf_counter()
        recite(loaded, rows, device=device, batch_size=4 * batch)
        seconds = time.perf_counter() - began
    return {
        "symbols": len(loaded.vocab),
        "parameters": sum(p.numel() for p in loaded.model.parameters()),
        "train": result.history[-1]["statements_per_s"],  # the second epoch: warm
        "recite": len(rows) / seconds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presets", default="tiny,6L")
    parser.add_argument("--facts", type=int, default=5000)
    parser.add_argument("--statements", type=int, default=1024)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, help="CPU threads (default: torch's choice)")
    args = parser.parse_args()

    import torch

    if args.threads:
        torch.set_num_threads(args.threads)

    from chronoprobe.datasets.lamatk import build_statements, subsample
    from chronoprobe.jsonl import write_jsonl
    from chronoprobe.kg.synth import SynthConfig, synthesize

    world = synthesize(SynthConfig(seed=0, facts=args.facts, text=False))
    all_rows, _ = build_statements(world.kg)
    rows = subsample(all_rows, args.statements, seed=0)
    device = torch.cuda.get_device_name() if args.device.startswith("cuda") else "CPU"
    threads = torch.get_num_threads()
    print(f"{device}, {threads} threads; {len(rows):,} of {len(all_rows):,} statements")
    print("| preset | parameters | symbols | batch | feeding (statements/s) | reciting |")
    print("|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "statements.jsonl"
        write_jsonl(path, rows)
        for preset in args.presets.split(","):
            m = measure(preset, path, rows, args.batch_size, args.device)
            print(
                f"| {preset} | {m['parameters'] / 1e6:.1f}M | {m['symbols']:,} | {args.batch_size} "
                f"| {m['train']:,.0f} | {m['recite']:,.0f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
