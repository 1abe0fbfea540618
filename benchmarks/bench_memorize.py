"""Feeding and reciting throughput (statements/s) of the LAMA-TK masked LM, per model preset.

A seeded synthetic world of --facts facts gives the entity-and-year vocabulary; --statements of
its masked statements are trained for one epoch (the optimizer steps, the checkpoint excluded)
and then recited. A first, shorter run warms up the kernels and is not counted.

With --to-accuracy A, each preset is instead trained on --statements non-conflict statements
(multi-answer ones removed, as the paper's 100k non-conflict statements) until it recites them
at Acc@1 >= A, at most --max-epochs epochs (the learning-rate schedule spans those): the figure
is the wall time of training to that point, from reading the statements to the checkpoint of the
epoch that reached A, with the recitals after each epoch left out (they are timed apart).

    python benchmarks/bench_memorize.py [--presets tiny,6L] [--facts 5000] [--statements 1024]
        [--batch-size 64] [--device cpu|cuda] [--threads N]
    python benchmarks/bench_memorize.py --presets 6L --facts 40000 --statements 100000 \
        --to-accuracy 0.95 --batch-size 256 --device cuda
"""

from __future__ import annotations

import argparse
import contextlib
import tempfile
import time
from pathlib import Path


def recite(out: str, rows: list[dict], device: str, batch: int) -> tuple[dict, object]:
    """The recite view's metrics of the model trained into ``out``, and the model."""
    from chronoprobe.models import load_model
    from chronoprobe.probes.recite import ReciteParams, predict_recite, recite_metrics

    model = load_model(out, device=device, batch_size=batch)
    predictions = predict_recite(model, rows, ReciteParams(model=[out]), None)
    return recite_metrics(predictions), model


def measure(preset: str, path: Path, rows: list[dict], batch: int, device: str) -> dict:
    from chronoprobe.train.lamatk.memorize import TrainOptions, train

    with tempfile.TemporaryDirectory() as out:
        result = train(
            path, out, TrainOptions(preset=preset, epochs=2, batch_size=batch), device=device
        )
        recite(out, rows[:batch], device, 4 * batch)  # warm-up
        began = time.perf_counter()
        _, model = recite(out, rows, device, 4 * batch)
        seconds = time.perf_counter() - began
    return {
        "symbols": len(model.symbols),
        "parameters": sum(p.numel() for p in model.model.parameters()),
        "train": result.history[-1]["statements_per_s"],  # the second epoch: warm
        "recite": len(rows) / seconds,
    }


class _Reached(Exception):
    """Raised from the epoch callback to end training once the target accuracy is reached."""


def time_to_accuracy(
    preset: str, path: Path, rows: list[dict], batch: int, device: str, target: float, epochs: int
) -> dict:
    from chronoprobe.train.lamatk.memorize import TrainOptions, train

    trace: list[dict] = []
    with tempfile.TemporaryDirectory() as out:
        began, reciting = time.perf_counter(), 0.0

        def on_epoch(epoch: int, record: dict) -> None:
            nonlocal reciting
            trained = time.perf_counter() - began - reciting
            start = time.perf_counter()
            metrics, _ = recite(out, rows, device, 4 * batch)
            reciting += time.perf_counter() - start
            trace.append({"epoch": epoch, "acc@1": metrics["acc@1"], "train_s": trained})
            print(f"  epoch {epoch}: Acc@1 {metrics['acc@1']:.4f} after {trained:,.1f} s")
            if metrics["acc@1"] >= target:
                raise _Reached

        options = TrainOptions(preset=preset, epochs=epochs, batch_size=batch)
        with contextlib.suppress(_Reached):
            train(path, out, options, device=device, on_epoch=on_epoch)
    last = trace[-1]
    return {**last, "reached": last["acc@1"] >= target, "recite_s": reciting}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presets", default="tiny,6L")
    parser.add_argument("--facts", type=int, default=5000)
    parser.add_argument("--statements", type=int, default=1024)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, help="CPU threads (default: torch's choice)")
    parser.add_argument("--to-accuracy", type=float, help="train until Acc@1 reaches this")
    parser.add_argument("--max-epochs", type=int, default=100, help="with --to-accuracy")
    args = parser.parse_args()

    import torch

    if args.threads:
        torch.set_num_threads(args.threads)

    from chronoprobe.datasets.lamatk import build_statements, subsample, without_conflicts
    from chronoprobe.datasets.lamatk_vocab import LABELS_FILE, write_labels
    from chronoprobe.jsonl import write_jsonl
    from chronoprobe.kg.synth import SynthConfig, synthesize

    world = synthesize(SynthConfig(seed=0, facts=args.facts, text=False))
    all_rows, _ = build_statements(world.kg)
    if args.to_accuracy is not None:
        all_rows = without_conflicts(all_rows)
    if len(all_rows) < args.statements:
        parser.error(f"the world has {len(all_rows):,} such statements; raise --facts")
    rows = subsample(all_rows, args.statements, seed=0)
    named = {row[key] for row in rows for key in ("subject", "object")}
    labels = {entity: world.kg.label(entity) for entity in named}
    device = torch.cuda.get_device_name() if args.device.startswith("cuda") else "CPU"
    threads = torch.get_num_threads()
    print(f"{device}, {threads} threads; {len(rows):,} of {len(all_rows):,} statements")
    if args.to_accuracy is not None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "statements.jsonl"
            write_jsonl(path, rows)
            write_labels(path.parent / LABELS_FILE, labels)
            for preset in args.presets.split(","):
                print(f"{preset}: training to Acc@1 {args.to_accuracy}", flush=True)
                m = time_to_accuracy(
                    preset, path, rows, args.batch_size, args.device, args.to_accuracy,
                    args.max_epochs,
                )  # fmt: skip
                outcome = "reached" if m["reached"] else "NOT reached"
                print(
                    f"{preset}: {outcome} Acc@1 {m['acc@1']:.4f} at epoch {m['epoch']} in "
                    f"{m['train_s']:,.1f} s of training ({m['recite_s']:,.1f} s reciting apart)"
                )
        return
    print("| preset | parameters | symbols | batch | feeding (statements/s) | reciting |")
    print("|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "statements.jsonl"
        write_jsonl(path, rows)
        write_labels(path.parent / LABELS_FILE, labels)
        for preset in args.presets.split(","):
            m = measure(preset, path, rows, args.batch_size, args.device)
            print(
                f"| {preset} | {m['parameters'] / 1e6:.1f}M | {m['symbols']:,} | {args.batch_size} "
                f"| {m['train']:,.0f} | {m['recite']:,.0f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
