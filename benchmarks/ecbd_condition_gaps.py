"""The paired condition gaps of docs/ecbd.md, from a `probe span-ppl` output folder.

    python benchmarks/ecbd_condition_gaps.py out/

For one model's predictions: ECBD's entity-averaged perplexity of each condition, the gap
between each pair the paper compares (ORIGINAL - DEFINITION, NO ENT - ORIGINAL, RANDOM DEF -
ORIGINAL) with a 95% interval from a bootstrap that resamples entities with all their examples,
both conditions of an entity together (as metrics.json's intervals do), the share of draws in
which DEFINITION < ORIGINAL < NO ENT holds, and per entity how many of them each condition
helps or hurts.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

CONDITIONS = ("original", "no-ent", "random-def", "definition")
PAIRS = (("original", "definition"), ("no-ent", "original"), ("random-def", "original"))
DRAWS = 2000


def entity_nll(path: Path) -> tuple[list[str], dict[str, np.ndarray], np.ndarray]:
    """(entities, each condition's mean token NLL per entity, each entity's examples)."""
    rows = pq.read_table(path / "predictions.parquet").to_pylist()
    models = {r["model"] for r in rows}
    if len(models) != 1:
        raise SystemExit(f"{path}: holds {len(models)} models; give a folder of one")
    sums: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        if row.get("nll") is not None:
            sums[row["condition"]][row["entity"]].append(row["nll"])
    entities = sorted(sums["original"])
    means = {c: np.array([np.mean(sums[c][e]) for e in entities]) for c in CONDITIONS if c in sums}
    sizes = np.array([len(sums["original"][e]) for e in entities])
    return entities, means, sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="a probe span-ppl output folder")
    entities, means, sizes = entity_nll(parser.parse_args().out)
    draws = np.random.default_rng(0).integers(len(entities), size=(DRAWS, len(entities)))

    def perplexity(nll: np.ndarray) -> tuple[float, np.ndarray]:
        """ECBD's average (over entities, then exponentiated), and its value in each draw."""
        return float(np.exp(nll.mean())), np.exp(nll[draws].mean(1))

    ppl = {c: perplexity(nll) for c, nll in means.items()}
    print(f"{len(entities)} entities, {int(sizes.sum())} examples; {DRAWS} bootstrap draws\n")
    print("| condition | perplexity [95% CI] |")
    print("|---|---|")
    for c, (value, boot) in ppl.items():
        low, high = np.percentile(boot, [2.5, 97.5])
        print(f"| {c} | {value:.2f} [{low:.2f}, {high:.2f}] |")
    print("\n| gap | value [95% CI] | above zero in | entities where the first is higher |")
    print("|---|---|---|---|")
    for a, b in PAIRS:
        if a in ppl and b in ppl:
            gap = ppl[a][1] - ppl[b][1]
            low, high = np.percentile(gap, [2.5, 97.5])
            higher = int((means[a] > means[b]).sum())
            print(
                f"| {a} - {b} | {ppl[a][0] - ppl[b][0]:.2f} [{low:.2f}, {high:.2f}] | "
                f"{np.mean(gap > 0):.1%} | {higher} of {len(entities)} |"
            )
    if {"original", "no-ent", "definition"} <= set(ppl):
        order = (ppl["definition"][1] < ppl["original"][1]) & (
            ppl["original"][1] < ppl["no-ent"][1]
        )
        print(f"\nDEFINITION < ORIGINAL < NO ENT in {np.mean(order):.1%} of draws")


if __name__ == "__main__":
    main()
