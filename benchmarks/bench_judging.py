"""How fast the generate view judges answers produced elsewhere (``--responses``).

Reads a probe set (e.g. the real TempLAMA training file imported with ``--aliases``), makes one
answer a row the ways strong models answer (a gold name or alias alone, in a sentence, with a
period, another answer of the KG, a refusal: drawn by a hash of the row id), and times the
judging of all of them by every rule (``predict_generate`` with a :class:`Responses` stand-in,
the rows and the names file read included), against a baseline measured in the same run:
ChroKnowledge's ``fuzzy`` rule alone (rapidfuzz's token-set ratio against every gold name),
the cheapest rule the literature uses. Prints both times, the answers per second and the ratio.

    python benchmarks/bench_judging.py templama/            # import templama ... -o templama/
"""

from __future__ import annotations

import argparse
import hashlib
import time
from pathlib import Path

from chronoprobe.jsonl import read_jsonl


def make_answers(rows: list[dict], names: dict[str, list[list[str]]]) -> dict[str, list[str]]:
    """One answer a row, as a strong model might give it."""
    out = {}
    for row in rows:
        pick = int(hashlib.sha256(row["id"].encode()).hexdigest(), 16)
        labels = row["answer_labels"] or ["nothing"]
        aliases = [a for group in row.get("answer_aliases") or [] for a in group]
        others = names.get(row["relation"], [["someone"]])
        other = others[pick % len(others)][0]
        gold = (aliases + labels)[pick % (len(aliases) + len(labels))]
        subject = row["query"].split(" [MASK]")[0].split(" ")[:3]
        out[row["id"]] = [
            [
                gold,
                f"In {row['period']}, {' '.join(subject)} ... {gold}.",
                f"the {row['period']} {gold}",
                f"{gold} (since {row['period']})",
                other,
                f"I believe it was {other}, or perhaps {labels[0]}",
                "I'm not sure about that year.",
            ][pick % 7]
        ]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="a probe set folder (examples.jsonl)")
    args = parser.parse_args()
    from chronoprobe.probes.generate import GenerateParams, predict_generate, read_asked_rows
    from chronoprobe.probes.judging import FUZZY_THRESHOLD, first_line
    from chronoprobe.probes.responses import Responses

    rows = list(read_jsonl(args.data / "examples.jsonl"))
    names: dict[str, list[list[str]]] = {}
    if (args.data / "answer_names.jsonl").is_file():
        for entity in read_jsonl(args.data / "answer_names.jsonl"):
            names.setdefault(entity["relation"], []).append(entity["names"])
    answers = make_answers(rows, names)
    with_aliases = sum(any(any(g) for g in r.get("answer_aliases") or []) for r in rows)

    started, cpu = time.perf_counter(), time.process_time()
    asked = read_asked_rows(args.data / "examples.jsonl")
    given = Responses(args.data / "made.jsonl", "made", answers, {})
    predictions = predict_generate(given, asked, GenerateParams(), None)
    judging, judging_cpu = time.perf_counter() - started, time.process_time() - cpu

    from rapidfuzz import fuzz

    started, cpu = time.perf_counter(), time.process_time()
    baseline = 0
    for row in rows:
        line = first_line(answers[row["id"]][0]).lower()
        gold = [*row["answer_labels"], *(a for g in row.get("answer_aliases") or [] for a in g)]
        baseline += any(fuzz.token_set_ratio(line, n.lower()) >= FUZZY_THRESHOLD for n in gold)
    fuzzy, fuzzy_cpu = time.perf_counter() - started, time.process_time() - cpu

    correct = sum(p["correct"] for p in predictions)
    print(f"{len(predictions):,} answers ({with_aliases:,} rows with aliases), {correct:,} correct")
    print(
        f"every rule, rows and names read: {judging:.2f} s wall, {judging_cpu:.2f} s CPU "
        f"({len(rows) / judging:,.0f} answers/s)"
    )
    print(
        f"fuzzy alone (baseline): {fuzzy:.2f} s wall, {fuzzy_cpu:.2f} s CPU; ratio "
        f"{judging_cpu / fuzzy_cpu:.1f}x in CPU time"
    )


if __name__ == "__main__":
    main()
