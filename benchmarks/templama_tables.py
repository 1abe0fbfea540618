"""The tables of docs/templama.md, from a `probe pll` and a `probe generate` output folder.

    python benchmarks/templama_tables.py pll-smollm2 gen-smollm2

pll: temporal accuracy and MRR per year, relation and split (deleted rows left out), with n and
95% intervals from chronoprobe's own estimators, and the accuracy a random ranking of each
query's labels would reach. generate: the `names` and `fuzzy` accuracy and the share of answers
naming another year's answer, per year, relation and split, as metrics.json holds them.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from chronoprobe.probes.series_matrix import metric_estimate, read_predictions, with_temporal_ranks
from chronoprobe.templates import load_cloze_templates


def _label(relation: str, labels: dict[str, str]) -> str:
    return f"{relation} {labels[relation]}" if relation in labels else relation


def pll_tables(folder: Path, labels: dict[str, str]) -> None:
    predictions = read_predictions(folder / "predictions.parquet")
    rows = [r for r in with_temporal_ranks(predictions) if r.get("split") != "deleted"]
    for key in ("period", "relation", "split"):
        groups: dict[str, list[dict]] = defaultdict(list)
        for row in rows:
            groups[str(row[key])].append(row)
        print(f"| {key} | rows | ranked | temporal_acc [95% CI] | temporal_mrr [95% CI] |")
        print("|---|---:|---:|---|---|")
        for name in sorted(groups):
            acc = metric_estimate("pll", "temporal_acc", groups[name])
            mrr = metric_estimate("pll", "temporal_mrr", groups[name])
            shown = _label(name, labels) if key == "relation" else name
            print(
                f"| {shown} | {len(groups[name]):,} | {acc.n:,} | "
                f"{acc.value:.3f} [{acc.low:.3f}, {acc.high:.3f}] | "
                f"{mrr.value:.3f} [{mrr.low:.3f}, {mrr.high:.3f}] |"
            )
        print()
    query_labels: dict[tuple, set[str]] = defaultdict(set)
    for row in predictions:
        query_labels[(row["subject"], row["relation"], row["query"])].update(row["answer_labels"])
    ranked = [r for r in rows if r.get("temporal_rank") is not None]
    chance = sum(
        len(set(r["answer_labels"])) / len(query_labels[(r["subject"], r["relation"], r["query"])])
        for r in ranked
    ) / len(ranked)
    print(
        f"random ranking of each query's labels: temporal_acc {chance:.3f} ({len(ranked):,} rows)"
    )
    print()


def generate_tables(folder: Path, labels: dict[str, str]) -> None:
    metrics = json.loads((folder / "metrics.json").read_text(encoding="utf-8"))
    for model, figures in metrics["models"].items():
        print(f"{model}: {figures['predicted']:,} rows asked, skipped {figures['skipped']}")
        for group in ("by_period", "by_relation", "by_split"):
            print(f"| {group[3:]} | rows | names [95% CI] | fuzzy [95% CI] | other year [95% CI] |")
            print("|---|---:|---|---|---|")
            for name, g in sorted(figures[group].items()):
                shown = _label(name, labels) if group == "by_relation" else name
                cells = []
                for key in ("accuracy_names", "accuracy_fuzzy", "other_period"):
                    low, high = g[f"{key}_ci95"]
                    cells.append(f"{g[key]:.3f} [{low:.3f}, {high:.3f}]")
                print(f"| {shown} | {g['n']:,} | " + " | ".join(cells) + " |")
            print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pll", type=Path, help="a `probe pll` output folder")
    parser.add_argument("generate", type=Path, nargs="?", help="a `probe generate` output folder")
    args = parser.parse_args()
    labels = {r: t.label for r, t in load_cloze_templates("drift").items()}
    pll_tables(args.pll, labels)
    if args.generate is not None:
        generate_tables(args.generate, labels)


if __name__ == "__main__":
    main()
