"""Scaling: the dump conversion and probe shards on 1 and 2 workers, local and on Ray.

Dump: the synthetic dump of ``bench_wikidata_dump.py`` (real-looking lines, --mb of JSON),
converted by the local process pool (``--processes N``) and by Ray tasks on a local Ray
instance of N CPUs (``--engine ray``, parts of --part-mb so that a small dump still makes
several), N = 1 and 2. Reported: wall seconds, MB/s, MB/s per worker, and the scaling
efficiency (the rate on N workers over N times the rate on one). Each run is a fresh process,
timed from the call of the loader on (Ray's start-up is reported apart).

Probe: a random RoBERTa (the tiny tokenizer), --queries temporal queries, the ``pll`` view, one
model on 1 and 2 Ray CPU actors against the local engine in one process; examples/s of the
whole step (model loads on the actors included).

    python benchmarks/bench_scale.py [--mb 100] [--part-mb 16] [--queries 2048] [--workers 1,2]
"""

from __future__ import annotations

import argparse
import json
import logging
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _start_ray(workers: int):
    import ray

    began = time.perf_counter()
    ray.init(num_cpus=workers, include_dashboard=False, logging_level="warning")
    return time.perf_counter() - began


def dump_run(path: Path, engine: str, workers: int, part_mb: float) -> dict:
    """One conversion in this (fresh) process."""
    from chronoprobe.kg.io import wikidata_dump_ray
    from chronoprobe.kg.io.options import LoadOptions
    from chronoprobe.kg.io.problems import Problems
    from chronoprobe.kg.io.wikidata_load import load

    ray_start = _start_ray(workers) if engine == "ray" else 0.0
    wikidata_dump_ray.PART_SIZE = int(part_mb * 1e6)
    with tempfile.TemporaryDirectory() as work:
        options = LoadOptions(processes=workers, engine=engine, work_dir=Path(work))
        began = time.perf_counter()
        kg = load([path], options, Problems(strict=True))
        seconds = time.perf_counter() - began
    return {"seconds": seconds, "facts": len(kg), "ray_start": ray_start}


def probe_run(model: Path, data: Path, engine: str, workers: int, batch_size: int) -> dict:
    """One ``probe`` step in this (fresh) process."""
    from chronoprobe.step_context import StepContext
    from chronoprobe.steps import get_kind

    ray_start = _start_ray(workers) if engine == "ray" else 0.0
    values = {"view": "pll", "model": [str(model)], "device": "cpu", "batch_size": batch_size}
    if engine == "ray":
        values |= {"engine": "ray", "workers": workers}
    params = get_kind("probe").params.model_validate(values)
    rows = sum(1 for _ in data.open())
    with tempfile.TemporaryDirectory() as out:
        ctx = StepContext("probe", Path(out), Path(out), 0, logging.getLogger("bench"))
        began = time.perf_counter()
        get_kind("probe").run(ctx, params, {"data": data.parent})
        seconds = time.perf_counter() - began
    return {"seconds": seconds, "rows": rows, "ray_start": ray_start}


def _child(*args: str) -> dict:
    child = subprocess.run(
        [sys.executable, __file__, *args], check=True, capture_output=True, text=True
    )
    return json.loads(child.stdout.strip().splitlines()[-1])


def _efficiency(rates: dict[int, float], workers: int) -> str:
    one = rates.get(1)
    return f"{rates[workers] / (workers * one):.0%}" if one else "-"


def dump_table(folder: Path, megabytes: float, workers: list[int], part_mb: float) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    from bench_wikidata_dump import write_dump

    path = folder / "latest-all.json"
    dump = write_dump(path, megabytes)
    size = dump["bytes"] / 1e6
    print(
        f"\ndump: {size:.0f} MB of JSON, {dump['entities']:,} entities, {dump['facts']:,} facts; "
        f"Ray parts of {part_mb:g} MB"
    )
    print("| engine | workers | wall s | MB/s | MB/s per worker | efficiency | Ray start s |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for engine in ("local", "ray"):
        rates: dict[int, float] = {}
        for n in workers:
            run = _child("--dump-run", f"{path},{engine},{n},{part_mb}")
            if run["facts"] != dump["facts"]:
                raise SystemExit(f"expected {dump['facts']:,} facts, got {run['facts']:,}")
            rates[n] = size / run["seconds"]
            print(
                f"| {engine} | {n} | {run['seconds']:.1f} | {rates[n]:.0f} | {rates[n] / n:.0f} "
                f"| {_efficiency(rates, n)} | {run['ray_start']:.1f} |",
                flush=True,
            )


def probe_table(folder: Path, queries: int, workers: list[int], batch_size: int) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    from bench_views import make_model, make_queries, make_tokenizer
    from chronoprobe.jsonl import write_jsonl

    tok = make_tokenizer("tiny")
    model = folder / "model"
    make_model(tok, "small", "cpu").save_pretrained(model)
    tok.save_pretrained(model)
    data = folder / "data" / "examples.jsonl"
    write_jsonl(data, make_queries(queries))
    print(f"\nprobe: pll view, random RoBERTa small, {queries:,} queries, batch {batch_size}")
    print("| engine | workers | wall s | examples/s | efficiency | Ray start s |")
    print("|---|---:|---:|---:|---:|---:|")
    local = _child("--probe-run", f"{model},{data},local,1,{batch_size}")
    print(f"| local | 1 | {local['seconds']:.1f} | {local['rows'] / local['seconds']:.0f} | | |")
    rates: dict[int, float] = {}
    for n in workers:
        run = _child("--probe-run", f"{model},{data},ray,{n},{batch_size}")
        rates[n] = run["rows"] / run["seconds"]
        print(
            f"| ray | {n} | {run['seconds']:.1f} | {rates[n]:.0f} | {_efficiency(rates, n)} "
            f"| {run['ray_start']:.1f} |",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=100, help="uncompressed dump size in MB")
    parser.add_argument("--part-mb", type=float, default=16, help="MB of JSON per Ray part")
    parser.add_argument("--queries", type=int, default=2048)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--only", choices=["dump", "probe"], help="run one of the two")
    parser.add_argument("--dump-run", help=argparse.SUPPRESS)  # internal: path,engine,workers
    parser.add_argument("--probe-run", help=argparse.SUPPRESS)  # internal
    args = parser.parse_args()
    if args.dump_run:
        path, engine, n, part_mb = args.dump_run.rsplit(",", 3)
        print(json.dumps(dump_run(Path(path), engine, int(n), float(part_mb))))
        return
    if args.probe_run:
        model, data, engine, n, batch = args.probe_run.split(",")
        print(json.dumps(probe_run(Path(model), Path(data), engine, int(n), int(batch))))
        return
    workers = [int(n) for n in args.workers.split(",")]
    with tempfile.TemporaryDirectory() as folder:
        if args.only in (None, "dump"):
            dump_table(Path(folder), args.mb, workers, args.part_mb)
        if args.only in (None, "probe"):
            probe_table(Path(folder), args.queries, workers, args.batch_size)


if __name__ == "__main__":
    main()
