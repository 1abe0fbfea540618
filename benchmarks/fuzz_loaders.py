"""Fuzz every loader at a chosen count and print records tried and outcomes per format.

    python benchmarks/fuzz_loaders.py --cases 5000

runs the property of ``tests/kg/io/test_fuzz.py`` (each fixture damaged one record at a time,
seeded) with that many cases per format, and prints the table that docs/reliability.md shows.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTCOMES = ("kept as sound", "reported with location", "uncaught", "violations")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=1000, help="Damaged records per format.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "fuzz.json"
        env = {
            **os.environ,
            "CHRONOPROBE_FUZZ_CASES": str(args.cases),
            "CHRONOPROBE_FUZZ_REPORT": str(report),
        }
        test = ROOT / "tests" / "kg" / "io" / "test_fuzz.py"
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", str(test)], env=env, check=False
        )
        figures = json.loads(report.read_text())
    print(f"| format | records damaged | {' | '.join(OUTCOMES)} |")
    print("|---|" + "---:|" * (len(OUTCOMES) + 1))
    totals = dict.fromkeys(("records tried", *OUTCOMES), 0)
    for name, row in figures.items():
        print(
            f"| {name} | {row['records tried']:,} | "
            + " | ".join(f"{row[o]:,}" for o in OUTCOMES)
            + " |"
        )
        for key in totals:
            totals[key] += row[key]
    print(
        f"| all | {totals['records tried']:,} | "
        + " | ".join(f"{totals[o]:,}" for o in OUTCOMES)
        + " |"
    )
    sys.exit(done.returncode)


if __name__ == "__main__":
    main()
