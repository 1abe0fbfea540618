"""Validation of the documents' effective cutoff where the truth is known: a series of models,
each trained on the synthetic world's texts up to its year, probed with the doc-cutoff view.

Two steps:

    python benchmarks/doc_cutoff_validation.py texts KG_DIR OUT_DIR [--first 2012 --last 2022
        --per-family-period 200 --seed 0]

writes ``OUT_DIR/snippets.parquet``: the world's snippets (written again from its KG, so they
say their relation even where the world was written before snippets did) dated in the range,
with at most N snippets of each relation and year (a seeded sample, so that a masked model's
pseudo-log-likelihood of every token fits a CPU's time; 0: every snippet). Probe each series
with it, then

    python benchmarks/doc_cutoff_validation.py table PROBE_OUT [PROBE_OUT ...]

prints, per family and overall, how often the estimate lies within one period of each model's
true cutoff (its period, the name the series gives it), over every probe output given (one per
seed), as a Markdown table.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from chronoprobe.kg.graph import TemporalKG
from chronoprobe.kg.synth.text import write_snippets
from chronoprobe.time import Period


def texts(kg_dir: Path, out_dir: Path, first: int, last: int, per: int, seed: int) -> None:
    table = write_snippets(TemporalKG.load(kg_dir))
    given = kg_dir / "snippets.parquet"
    if given.is_file():
        old = pq.read_table(given)
        if not table.select(old.column_names).equals(old):
            raise SystemExit(f"{given}: not the snippets of this KG written again; stopping")
    years = table["year"].to_numpy()
    table = table.filter(pa.array((years >= first) & (years <= last)))
    if per:
        rng = np.random.default_rng(seed)
        groups: dict[tuple, list[int]] = defaultdict(list)
        keys = zip(table["relation"].to_pylist(), table["year"].to_pylist(), strict=True)
        for i, key in enumerate(keys):
            groups[key].append(i)
        kept = sorted(
            i
            for rows in groups.values()
            for i in (rows if len(rows) <= per else rng.choice(rows, per, replace=False))
        )
        table = table.take(pa.array(kept))
    out_dir.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, out_dir / "snippets.parquet", compression="zstd")
    counts = pc.value_counts(table["relation"]).to_pylist()
    print(f"{table.num_rows:,} snippets, {first}-{last}:")
    for item in sorted(counts, key=lambda c: -c["counts"]):
        print(f"  {item['values']}: {item['counts']:,}")


def _distance(estimate: str | None, truth: str) -> int | None:
    if estimate is None:
        return None
    return abs(Period.parse(estimate).year - Period.parse(truth).year)


def _covers(group: dict, truth: str) -> bool:
    interval = group.get("cutoff_ci95")
    if not interval:
        return False
    years = [Period.parse(p).year for p in interval]
    return years[0] <= Period.parse(truth).year <= years[1]


def table(outputs: list[Path]) -> None:
    pairs: dict[str, list[int | None]] = defaultdict(list)
    covered: dict[str, list[bool]] = defaultdict(list)
    documents: dict[str, list[int]] = defaultdict(list)
    missed = []
    for out in outputs:
        metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
        for name, entry in metrics["models"].items():
            truth = name.rsplit("/", 1)[-1]
            groups = {**entry["by_family"], "all": entry["overall"]}
            for family, group in groups.items():
                distance = _distance(group.get("cutoff"), truth)
                pairs[family].append(distance)
                covered[family].append(_covers(group, truth))
                documents[family].append(group.get("documents", 0))
                if distance is None or distance > 1:
                    missed.append((out.name, truth, family, group.get("cutoff")))
    families = sorted((f for f in pairs if f != "all"), key=lambda f: -np.mean(documents[f]))
    print(
        "| family | documents per model | within one period | exact | median distance "
        "| truth in the 95% interval |"
    )
    print("|---|---|---|---|---|---|")
    for family in [*families, "all"]:
        found = [d for d in pairs[family] if d is not None]
        within = sum(d <= 1 for d in found)
        exact = sum(d == 0 for d in found)
        n = len(pairs[family])
        print(
            f"| {family} | {np.mean(documents[family]):,.0f} | {within} of {n} "
            f"({within / n:.0%}) | {exact} of {n} | {np.median(found) if found else '-'} "
            f"| {sum(covered[family])} of {n} |"
        )
    total = [d for f in families for d in pairs[f]]
    within = sum(d is not None and d <= 1 for d in total)
    print(f"\n(model, family) pairs within one period: {within} of {len(total)}")
    print("beyond one period (output, true cutoff, family, estimate):")
    for miss in missed:
        print("  ", *miss)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("texts", help="the snippets to probe, with their relation")
    make.add_argument("kg", type=Path)
    make.add_argument("out", type=Path)
    make.add_argument("--first", type=int, default=2012)
    make.add_argument("--last", type=int, default=2022)
    make.add_argument("--per-family-period", type=int, default=200)
    make.add_argument("--seed", type=int, default=0)
    tab = commands.add_parser("table", help="within one period of the truth, per family")
    tab.add_argument("outputs", type=Path, nargs="+")
    args = parser.parse_args()
    if args.command == "texts":
        texts(args.kg, args.out, args.first, args.last, args.per_family_period, args.seed)
    else:
        table(args.outputs)


if __name__ == "__main__":
    main()
