"""Each judging rule against a person, on the hand-judged calibration sets: markdown tables.

The sets (``tests/fixtures/judging/``, described in its README) are ``calibration.jsonl``, 416
real SmolLM2-135M-Instruct answers (37 of them right), and ``strong.jsonl``, 683 answers written
as strong models answer (426 of them right), to real TempLAMA rows and to the sample KG's
drift rows, each judged by hand. For each set this prints each rule's agreement with the person
and Cohen's kappa, the share of the right answers it accepts and of the wrong ones it accepts
(false correct), with 95% intervals, and the counts of its errors; then, for a set given alone,
the answers on which the default rule and the person disagree, for whoever tunes a rule.

Whoever tunes a rule on a set makes its agreement there optimistic. Each set splits in two by a
hash of the row id (every answer to a row falls in the same half): ``--half a`` and ``--half
b``. The rules were revised reading the disagreements of half a of each set only; half b of
``strong.jsonl`` is its held-out half. ``--no-aliases`` judges without the gold answers'
aliases, as a release without aliases is judged.

    python benchmarks/judging_agreement.py                  # both sets, whole and by half
    python benchmarks/judging_agreement.py --set tests/fixtures/judging/strong.jsonl --half a
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

from chronoprobe.probes.calibration import agreement, markdown_table, read_records
from chronoprobe.probes.judging import DEFAULT_RULE

SETS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "judging"
SHIPPED = (SETS / "calibration.jsonl", SETS / "strong.jsonl")


def half(row_id: str) -> str:
    """The half of a set a row falls in: a when its id's SHA-256 is even, b when odd."""
    return "ab"[int(hashlib.sha256(row_id.encode()).hexdigest(), 16) % 2]


def records_of(path: Path, source: str | None, part: str | None, aliases: bool) -> list:
    records = read_records(path)
    if source:
        records = [r for r in records if r.source == source]
    if part:
        records = [r for r in records if half(r.id) == part]
    if not aliases:
        for r in records:
            r.aliases = [[] for _ in r.labels]
    return records


def table(path: Path, part: str | None, records: list) -> tuple[str, list]:
    rows = agreement(records)
    right = sum(r.human for r in records)
    which = {None: "whole set", "a": "half a (read)", "b": "half b (held out)"}[part]
    title = f"### {path.name}, {which}: {len(records)} answers, {right} right by hand"
    return f"{title}\n\n{markdown_table(rows)}", rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, action="append", help="a calibration file")
    parser.add_argument("--source", help="only the records of this source")
    parser.add_argument(
        "--half", choices=("a", "b"), help="only the rows of one half (split by row id hash)"
    )
    parser.add_argument(
        "--no-aliases", action="store_true", help="judge without the gold answers' aliases"
    )
    args = parser.parse_args()
    paths = args.set or list(SHIPPED)
    parts = [args.half] if args.half or args.set else [None, "a", "b"]
    for path in paths:
        for part in parts:
            records = records_of(path, args.source, part, not args.no_aliases)
            if not records:
                raise SystemExit(f"{path}: no records of source {args.source} half {part}")
            text, rows = table(path, part, records)
            print(f"{text}\n")
    if args.set and len(paths) == 1:
        default = next(a for a in rows if a.rule == DEFAULT_RULE)
        by_name = {r.name: r for r in records}
        print(f"`{DEFAULT_RULE}` and the person disagree on {len(default.disagreements)}:\n")
        for name in default.disagreements:
            r = by_name[name]
            verdict = "correct" if r.human else "incorrect"
            print(f"- {name} ({r.period}) {r.answer!r}: person says {verdict}: {r.reason}")


if __name__ == "__main__":
    main()
