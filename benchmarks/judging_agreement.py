"""Each judging rule against a person, on the hand-judged calibration set: a markdown table.

The set (``tests/fixtures/judging/calibration.jsonl``, described in its README) holds real
SmolLM2-135M-Instruct answers to TempLAMA rows and to the sample KG's drift rows, each judged by
hand. This prints each rule's accuracy and Cohen's kappa against those judgements (with 95%
intervals), its false positives (and how many name a wrong entity: one the rule was told of, a
stale or similar one, or another), its false negatives, and then the answers on which the
default rule and the person disagree, for whoever tunes a rule.

Whoever tunes a rule on this set makes its agreement here optimistic. ``--half a`` and
``--half b`` split the set in two by a hash of the row id (every answer to a row falls in the
same half), so that a rule can be revised reading one half's disagreements and measured on the
other: the ``names`` rule was revised reading half a's only.

    python benchmarks/judging_agreement.py [--set FILE] [--source templama|sample-kg] [--half a|b]
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

from chronoprobe.probes.calibration import agreement, markdown_table, read_records
from chronoprobe.probes.judging import DEFAULT_RULE

SET = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "judging" / "calibration.jsonl"


def half(row_id: str) -> str:
    """The half of the set a row falls in: a when its id's SHA-256 is even, b when odd."""
    return "ab"[int(hashlib.sha256(row_id.encode()).hexdigest(), 16) % 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, default=SET, help="a calibration file")
    parser.add_argument("--source", help="only the records of this source")
    parser.add_argument(
        "--half", choices=("a", "b"), help="only the rows of one half (split by row id hash)"
    )
    args = parser.parse_args()
    records = read_records(args.set)
    if args.source:
        records = [r for r in records if r.source == args.source]
    if args.half:
        records = [r for r in records if half(r.id) == args.half]
    if not records:
        asked = ", ".join(
            f"{k} {v}" for k, v in [("source", args.source), ("half", args.half)] if v
        )
        raise SystemExit(f"{args.set}: no records" + (f" of {asked}" if asked else ""))
    rows = agreement(records)
    positives = sum(r.human for r in records)
    print(f"{len(records)} answers, {positives} correct by hand; default rule `{DEFAULT_RULE}`\n")
    print(markdown_table(rows))
    default = next(a for a in rows if a.rule == DEFAULT_RULE)
    by_name = {r.name: r for r in records}
    print(f"\n`{DEFAULT_RULE}` and the person disagree on {len(default.disagreements)}:\n")
    for name in default.disagreements:
        r = by_name[name]
        verdict = "correct" if r.human else "incorrect"
        print(f"- {name} ({r.period}) {r.answer!r}: person says {verdict}: {r.reason}")


if __name__ == "__main__":
    main()
