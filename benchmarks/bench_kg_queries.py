"""KG load and query times, and peak memory, at 10k, 100k and 1M facts.

Each size runs in its own process (so peak RSS is that size's), on a synthetic world saved to a
temporary directory. The naive baseline answers the same period query with a Python loop over
fact rows, as a builder without a columnar KG would; both must return the same answer sets.

    python benchmarks/bench_kg_queries.py [--sizes 10000,100000,1000000]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time


def _timed(fn):
    began = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - began


def naive_answer_sets(kg, period) -> dict[tuple[str, str], list[str]]:
    """Row-by-row: the way a builder looks up answers without vectorised queries."""
    from chronoprobe.kg.records import bound_points

    first, last = period.first_day(), period.last_day()
    answers: dict[tuple[str, str], set[str]] = {}
    rows = zip(
        kg.facts.column("subject").to_pylist(),
        kg.facts.column("relation").to_pylist(),
        kg.facts.column("object").to_pylist(),
        bound_points(kg.facts, "start"),
        bound_points(kg.facts, "end"),
        strict=True,
    )
    for subject, relation, obj, start, end in rows:
        if (start is None or start.first_day() <= last) and (
            end is None or end.last_day() >= first
        ):
            answers.setdefault((subject, relation), set()).add(obj)
    return {key: sorted(values) for key, values in answers.items()}


def measure(kg_dir: str) -> dict:
    from chronoprobe.kg.graph import TemporalKG
    from chronoprobe.kg.stats import kg_statistics
    from chronoprobe.time import Period

    # Loading includes deriving the day-number arrays every period query uses.
    kg, load_s = _timed(lambda: (k := TemporalKG.load(kg_dir), k.start_days, k.end_days)[0])
    period = Period.parse("2000")
    _, holding_s = _timed(lambda: kg.facts_in(period))
    table, answer_sets_s = _timed(lambda: kg.answer_sets(period))
    subject = table.column("subject")[0].as_py()
    relation = table.column("relation")[0].as_py()
    _, point_s = _timed(lambda: kg.answers(subject=subject, relation=relation, period=period))
    _, stats_s = _timed(lambda: kg_statistics(kg))
    naive, naive_s = _timed(lambda: naive_answer_sets(kg, period))
    fast = {
        (s, r): a
        for s, r, a in zip(
            table.column("subject").to_pylist(),
            table.column("relation").to_pylist(),
            table.column("answers").to_pylist(),
            strict=True,
        )
    }
    if fast != naive:
        raise SystemExit("vectorised and naive answer sets differ")
    return {
        "facts": len(kg),
        "load_s": load_s,
        "facts_in_period_s": holding_s,
        "answer_sets_s": answer_sets_s,
        "point_query_s": point_s,
        "statistics_s": stats_s,
        "naive_answer_sets_s": naive_s,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # internal: one size, in a child
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure)))
        return

    from chronoprobe.kg.synth import SynthConfig, synthesize

    print(
        "| facts | load | facts in a year | answer sets of a year | one query | kg info stats "
        "| naive answer sets | speed-up | peak RSS |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            synthesize(SynthConfig(seed=0, facts=size, text=False)).kg.save(tmp)
            child = subprocess.run(
                [sys.executable, __file__, "--measure", tmp],
                check=True,
                capture_output=True,
                text=True,
            )
        r = json.loads(child.stdout)
        print(
            f"| {r['facts']:,} | {r['load_s']:.3f} s | {r['facts_in_period_s'] * 1e3:.1f} ms "
            f"| {r['answer_sets_s'] * 1e3:.1f} ms | {r['point_query_s'] * 1e3:.2f} ms "
            f"| {r['statistics_s']:.2f} s | {r['naive_answer_sets_s']:.2f} s "
            f"| {r['naive_answer_sets_s'] / r['answer_sets_s']:.0f}x "
            f"| {r['peak_rss_mib']:.0f} MiB |",
            flush=True,
        )


if __name__ == "__main__":
    main()
