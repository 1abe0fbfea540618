"""Synthetic-world generation time and peak memory at 10k, 100k and 1M facts.

Each size runs in its own process so peak RSS is that size's. "KG" is the TemporalKG alone,
"with texts" adds the articles and dated snippets. The aim: 1M facts in under 60 s on 2 cores.

    python benchmarks/bench_synth.py [--sizes 10000,100000,1000000]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time


def measure(facts: int, text: bool) -> dict:
    from chronoprobe.kg.synth import SynthConfig, synthesize

    began = time.perf_counter()
    world = synthesize(SynthConfig(seed=0, facts=facts, text=text))
    seconds = time.perf_counter() - began
    return {
        "facts": len(world.kg),
        "seconds": seconds,
        "snippets": world.snippets.num_rows if text else 0,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # internal: "facts,text" in a child
    args = parser.parse_args()
    if args.measure:
        facts, text = args.measure.split(",")
        print(json.dumps(measure(int(facts), text == "1")))
        return
    print("| target facts | facts | KG only | peak RSS | with texts | snippets | peak RSS |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for size in (int(s) for s in args.sizes.split(",")):
        runs = []
        for text in ("0", "1"):
            child = subprocess.run(
                [sys.executable, __file__, "--measure", f"{size},{text}"],
                check=True,
                capture_output=True,
                text=True,
            )
            runs.append(json.loads(child.stdout))
        kg, full = runs
        print(
            f"| {size:,} | {kg['facts']:,} | {kg['seconds']:.1f} s | {kg['peak_rss_mib']:.0f} MiB "
            f"| {full['seconds']:.1f} s | {full['snippets']:,} | {full['peak_rss_mib']:.0f} MiB |",
            flush=True,
        )


if __name__ == "__main__":
    main()
