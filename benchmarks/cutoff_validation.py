"""How often the effective-cutoff estimator recovers a model's known cutoff: the table of
docs/cutoff.md, from a run of experiments/cutoff-validation.yaml.

    chronoprobe run experiments/cutoff-validation.yaml --out runs/cutoff-validation
    python benchmarks/cutoff_validation.py runs/cutoff-validation

The control, a model of the series' shape and tokenizer whose weights are drawn and never
trained, must find no cutoff:

    python benchmarks/cutoff_validation.py --control random-model/ runs/cutoff-validation
    chronoprobe probe cutoff runs/cutoff-validation/steps/drift -m random-model/ -o control/

Every model of a cutoff step over a model series is named by its period, which is its true
cutoff (it read the world's text up to that period, the last one last). For each (model,
relation) with an estimate, and over all relations, the estimate is within one period of the
truth when the step's cutoff is at most one period away (see
:func:`chronoprobe.metrics.cutoff.within`); relations with too few changes are counted apart,
with their reason.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from chronoprobe.metrics.cutoff import Cutoff, within


def _as_cutoff(group: dict) -> Cutoff:
    """The part of a metrics.json group that :func:`within` reads, as a :class:`Cutoff`."""
    return Cutoff(
        kind=group["kind"], cutoff=group["cutoff"], split=None, interval=None, p_value=None,
        levels=(None, None), preference=None, preference_ci95=None, curve=[],
        changes=group["changes"], subjects=group["subjects"],
    )  # fmt: skip


def table(run: Path) -> dict:
    rows, missed, few = [], Counter(), Counter()
    for step in sorted((run / "steps").iterdir()):
        path = step / "metrics.json"
        if not path.is_file() or json.loads(path.read_text()).get("view") != "cutoff":
            continue
        metrics = json.loads(path.read_text())
        for model, entry in metrics["models"].items():
            order = entry["periods"]
            groups = {"all": entry["overall"], **entry["by_relation"]}
            for relation, group in groups.items():
                if group is None or group.get("kind") == "too few changes":
                    few[relation] += 1
                    continue
                hit = within(_as_cutoff(group), model, order)
                rows.append(
                    {
                        "step": step.name,
                        "model": model,
                        "relation": relation,
                        "estimate": group["cutoff"],
                        "kind": group["kind"],
                        "interval": group.get("cutoff_interval"),
                        "changes": group["changes"],
                        "within_one": hit,
                    }
                )
                if not hit:
                    missed[relation] += 1
    pairs = [r for r in rows if r["relation"] != "all"]
    overall = [r for r in rows if r["relation"] == "all"]
    return {
        "pairs": len(pairs),
        "within_one": sum(r["within_one"] for r in pairs),
        "overall_models": len(overall),
        "overall_within_one": sum(r["within_one"] for r in overall),
        "missed_by_relation": dict(missed),
        "too_few_changes": dict(few),
        "rows": rows,
    }


def write_control(run: Path, out: Path, seed: int = 0) -> None:
    """A masked LM of the first series model's config and tokenizer, its weights drawn with
    ``seed`` and never trained, saved to ``out``."""
    import shutil

    import torch
    from transformers import AutoConfig, AutoModelForMaskedLM

    series = sorted((run / "steps").glob("series-seed*"))[0]
    first = sorted(p for p in series.iterdir() if (p / "config.json").is_file())[0]
    torch.manual_seed(seed)
    AutoModelForMaskedLM.from_config(AutoConfig.from_pretrained(first)).save_pretrained(out)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(first / name, out / name)
    print(f"wrote {out}: an untrained model of {first}'s shape and tokenizer")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="the run directory of cutoff-validation.yaml")
    parser.add_argument("--json", action="store_true", help="print every row as JSON")
    parser.add_argument(
        "--control", type=Path, metavar="DIR", help="write the untrained control model to DIR"
    )
    args = parser.parse_args()
    if args.control:
        write_control(args.run, args.control)
        return
    result = table(args.run)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    share = result["within_one"] / result["pairs"] if result["pairs"] else float("nan")
    pairs = f"{result['within_one']} of {result['pairs']} ({share:.0%})"
    print(f"(model, relation) pairs within one period: {pairs}")
    print(
        f"models over all relations: {result['overall_within_one']} of {result['overall_models']}"
    )
    print("missed, by relation:", result["missed_by_relation"])
    print("too few changes, by relation:", result["too_few_changes"])
    for row in result["rows"]:
        if row["relation"] == "all" or not row["within_one"]:
            print(
                f"  {row['step']:14} {row['model']:6} {row['relation']:6} {row['kind']:6} "
                f"{row['estimate']} {row['interval']} ({row['changes']} changes)"
            )


if __name__ == "__main__":
    main()
