"""The SmolLM2 tables of docs/drift.md, from the run of experiments/drift-sample-smollm2.yaml.

    python benchmarks/drift_smollm2_tables.py runs/drift-sample-smollm2

Per test year (deleted rows left out): the pll view's temporal accuracy and MRR with the 95%
intervals its matrix.json holds, the temporal accuracy of the gap-last, gap-first and updated
rows with Wilson intervals, and the multi-token view's token F1 with its interval. Then the
temporal accuracy pooled over five-year blocks, and the difference of each block from
2005-2009, each with a bootstrap interval that resamples queries: a query is asked in every
year, so its years are not independent rows.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from chronoprobe.metrics.uncertainty import NO_INTERVAL, short_reason, wilson_interval
from chronoprobe.probes.series_matrix import read_predictions, with_temporal_ranks

BLOCKS = {f"{a}-{a + 4}": range(a, a + 5) for a in range(2000, 2025, 5)}
DRAWS = 2000


def _figure(value: float, low: float, high: float, digits: int = 2) -> str:
    return f"{value:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def _estimate(group: dict, name: str, digits: int = 3) -> str:
    """``group[name]`` with its interval, or with why it has none ("no spread": every
    resample gives one value, as F1 0 of a year whose answers all score 0)."""
    interval = group.get(f"{name}_ci95")
    if interval is None:
        return f"{group[name]:.{digits}f} ({short_reason(group.get(name + NO_INTERVAL, ''))})"
    return _figure(group[name], *interval, digits=digits)


def _accuracy(rows: list[dict]) -> str:
    """Temporal accuracy of the ranked rows among ``rows``, its Wilson interval and n."""
    hits = [r["temporal_rank"] == 1 for r in rows if r["temporal_rank"] is not None]
    if not hits:
        return "\N{EN DASH} (0)"
    share = _figure(sum(hits) / len(hits), *wilson_interval(sum(hits), len(hits)))
    return f"{share} ({len(hits)})"


def _gap_first(row: dict) -> bool:
    return row["query"].startswith("[MASK]")


def year_table(steps: Path, rows: list[dict]) -> None:
    matrix = json.loads((steps / "pll" / "matrix.json").read_text(encoding="utf-8"))["metrics"]
    accuracy, mrr = matrix["temporal_acc"]["all"], matrix["temporal_mrr"]["all"]
    metrics = json.loads((steps / "multi-token" / "metrics.json").read_text(encoding="utf-8"))
    (multi,) = metrics["models"].values()
    print(
        "| year | rows | ranked | temporal acc | temporal MRR | gap last: temporal acc (ranked) "
        "| gap first: temporal acc (ranked) | updated: temporal acc (ranked) | multi-token F1 "
        "(rows) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    years = accuracy["periods"]
    cells = [
        (year, [r for r in rows if r["period"] == year], j, multi["by_period"][year])
        for j, year in enumerate(years)
    ]
    for year, here, j, f1 in [*cells, ("all", rows, None, multi["overall"])]:
        if j is None:
            acc = _figure(accuracy["overall"][0], *accuracy["overall_ci95"][0])
            ranks = _figure(mrr["overall"][0], *mrr["overall_ci95"][0])
        else:
            acc = _figure(accuracy["values"][0][j], *accuracy["intervals"][0][j])
            ranks = _figure(mrr["values"][0][j], *mrr["intervals"][0][j])
        ranked = sum(r["temporal_rank"] is not None for r in here)
        print(
            f"| {year} | {len(here)} | {ranked} | {acc} | {ranks} | "
            f"{_accuracy([r for r in here if not _gap_first(r)])} | "
            f"{_accuracy([r for r in here if _gap_first(r)])} | "
            f"{_accuracy([r for r in here if r.get('split') == 'updated'])} | "
            f"{_estimate(f1, 'f1')} ({f1['n']}) |"
        )


def block_table(rows: list[dict], peak: str = "2005-2009") -> None:
    ranked = [r for r in rows if r["temporal_rank"] is not None]
    queries = sorted({r["query"] for r in ranked})
    index = {q: i for i, q in enumerate(queries)}
    hits = np.zeros((len(queries), len(BLOCKS)))
    counts = np.zeros((len(queries), len(BLOCKS)))
    for row in ranked:
        for j, years in enumerate(BLOCKS.values()):
            if int(row["period"]) in years:
                hits[index[row["query"]], j] += row["temporal_rank"] == 1
                counts[index[row["query"]], j] += 1
    draws = np.random.default_rng(0).integers(len(queries), size=(DRAWS, len(queries)))
    value = hits.sum(0) / counts.sum(0)
    boot = hits[draws].sum(1) / counts[draws].sum(1)
    top = list(BLOCKS).index(peak)
    print(f"\n{len(queries)} queries ranked; bootstrap over them, {DRAWS} draws\n")
    print(f"| years | ranked rows | temporal acc | {peak} minus these | {peak} above in |")
    print("|---|---|---|---|---|")
    for j, name in enumerate(BLOCKS):
        low, high = np.percentile(boot[:, j], [2.5, 97.5])
        cells = ["", ""]
        if j != top:
            diff = boot[:, top] - boot[:, j]
            d_low, d_high = np.percentile(diff, [2.5, 97.5])
            gap = value[top] - value[j]
            cells = [f"{gap:+.2f} [{d_low:+.2f}, {d_high:+.2f}]", f"{np.mean(diff > 0):.1%}"]
        acc = _figure(value[j], low, high)
        print(f"| {name} | {int(counts[:, j].sum())} | {acc} | {cells[0]} | {cells[1]} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="the run directory")
    steps = parser.parse_args().run / "steps"
    predictions = read_predictions(steps / "pll" / "predictions.parquet")
    rows = [r for r in with_temporal_ranks(predictions) if r.get("split") != "deleted"]
    year_table(steps, rows)
    block_table(rows)


if __name__ == "__main__":
    main()
