"""The symbolic oracle's figures of docs/timeline.md, over drop seeds, from its output folders.

    python benchmarks/timeline_oracle_tables.py DIR

DIR holds one `build timeline-oracle` output folder per drop share and seed, named
`drop{SHARE}-{SEED}` (`drop0.2-0`, `drop0.2-1`, ... `drop0.5-2`), all over the same questions,
as docs/timeline.md makes them:

    for d in 0.2 0.5; do for s in 0 1 2; do
      chronoprobe build timeline-oracle kg/real --questions timeline/ --drop $d --seed $s \
        -o DIR/drop$d-$s
    done; done

For each share: accuracy overall, by complexity, capability and answer type, as the mean ± sd
over the seeds and each seed's figure with its Wilson 95% interval (metrics.json's), and how
many questions each seed left unanswered.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
from collections import defaultdict
from pathlib import Path

GROUPS = ("by_complexity", "by_capability", "by_answer_type")


def _runs(folder: Path) -> dict[str, list[dict]]:
    """metrics.json of every drop{SHARE}-{SEED} folder, by share, in seed order."""
    found: dict[str, list[tuple[int, dict]]] = defaultdict(list)
    for path in folder.iterdir():
        match = re.fullmatch(r"drop([0-9.]+)-([0-9]+)", path.name)
        if match and (path / "metrics.json").is_file():
            metrics = json.loads((path / "metrics.json").read_text(encoding="utf-8"))
            found[match[1]].append((int(match[2]), metrics))
    if not found:
        raise SystemExit(f"{folder}: no drop{{SHARE}}-{{SEED}} folder with a metrics.json")
    return {
        share: [m for _, m in sorted(runs, key=lambda r: r[0])] for share, runs in found.items()
    }


def _line(name: str, groups: list[dict]) -> str:
    values = [g["accuracy"] for g in groups]
    spread = f" ± {statistics.stdev(values):.2f}" if len(values) > 1 else ""
    seeds = ", ".join(
        f"{g['accuracy']:.2f} [{g['accuracy_ci95'][0]:.2f}, {g['accuracy_ci95'][1]:.2f}]"
        for g in groups
    )
    return f"| {name} | {groups[0]['n']} | {statistics.mean(values):.2f}{spread} | {seeds} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="the folder of drop{SHARE}-{SEED} outputs")
    for share, runs in sorted(_runs(parser.parse_args().folder).items()):
        unanswered = ", ".join(str(r["unanswered"]) for r in runs)
        dropped = ", ".join(str(r["facts_dropped"]) for r in runs)
        print(
            f"\n{share} of the facts dropped, {len(runs)} seeds: facts dropped {dropped}; "
            f"unanswered {unanswered} of {runs[0]['n']}\n"
        )
        print("| group | n | accuracy, mean ± sd | each seed [95% CI] |")
        print("|---|---|---|---|")
        print(_line("overall", runs))
        for group in GROUPS:
            for key in runs[0][group]:
                print(_line(f"{group[3:].replace('_', ' ')}: {key}", [r[group][key] for r in runs]))


if __name__ == "__main__":
    main()
