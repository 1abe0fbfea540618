"""A model as judge against the person, on both shipped hand-judged sets: a markdown table.

Runs ``chronoprobe probe judge-agreement`` (the same prompt and answer cache as ``probe
generate --judge``) on ``tests/fixtures/judging/calibration.jsonl`` and ``strong.jsonl``, and
prints the judge's agreement, Cohen's kappa, the share of right answers it accepts and of
wrong ones it accepts (false correct), with 95% intervals, beside the default rule's.

``--judge SPEC`` calibrates any model (``package:smollm2``, a Hugging Face id, ``openai:NAME``
with ``--base-url``); ``--sample N`` asks it a seeded random draw of N answers of each set
instead of every answer (a slow judge on a CPU). ``--stub-right`` calibrates a stub
OpenAI-compatible server on 127.0.0.1 scripted to give the person's verdict on every answer:
the end of the scale a perfect judge reaches, which shows the measurement itself loses
nothing.

    python benchmarks/judge_calibration.py --judge package:smollm2 --device cpu --sample 100
    python benchmarks/judge_calibration.py --stub-right
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from contextlib import nullcontext
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SETS = ROOT / "tests" / "fixtures" / "judging"
FIGURES = ("accuracy", "kappa", "recall", "false_correct")


def _stub(records_by_prompt: dict[str, bool]):
    """A stub server (tests/models/served_stub.py) replying the person's verdict."""
    sys.path.insert(0, str(ROOT / "tests" / "models"))
    from served_stub import StubServer

    def reply(path, body, headers):
        said = records_by_prompt[body["messages"][-1]["content"]]
        message = {"role": "assistant", "content": "yes" if said else "no"}
        return 200, {"model": "stub-right", "choices": [{"index": 0, "message": message}]}, {}

    return StubServer(reply)


def _truth() -> dict[str, bool]:
    from chronoprobe.probes.calibration import read_records
    from chronoprobe.probes.judge_agreement import _asked
    from chronoprobe.probes.model_judge import prompt

    return {
        prompt(_asked(r)): r.human
        for name in ("calibration.jsonl", "strong.jsonl")
        for r in read_records(SETS / name)
    }


def _drawn(folder: Path, name: str, sample: int | None, work: Path) -> Path:
    """The folder of the set to ask: the shipped one, or a seeded draw of ``sample`` answers."""
    if sample is None:
        return folder
    import random

    lines = (folder / name).read_text(encoding="utf-8").splitlines()
    drawn = sorted(random.Random(f"judge:{name}").sample(range(len(lines)), sample))
    out = work / "drawn"
    out.mkdir(exist_ok=True)
    (out / name).write_text("".join(lines[i] + "\n" for i in drawn), encoding="utf-8")
    return out


def _cell(figures: dict, name: str) -> str:
    value, interval = figures.get(name), figures.get(f"{name}_ci95")
    if value is None:
        return "undefined"
    return f"{value:.3f}" + (f" [{interval[0]:.3f}, {interval[1]:.3f}]" if interval else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--judge", help="the judge's model spec")
    group.add_argument("--stub-right", action="store_true", help="a stub scripted to be right")
    parser.add_argument("--base-url", help="the server of an openai: judge")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--sample", type=int, help="a seeded draw of N answers of each set")
    args = parser.parse_args()
    spec = "openai:stub-right" if args.stub_right else args.judge
    env = {**os.environ}
    if args.stub_right:
        env.setdefault("OPENAI_API_KEY", "stub")
    served = _stub(_truth()) if args.stub_right else nullcontext()
    rows = []
    with served as server, tempfile.TemporaryDirectory() as work:
        base = server.url if args.stub_right else args.base_url
        for name in ("calibration.jsonl", "strong.jsonl"):
            out, sets = Path(work) / name, _drawn(SETS, name, args.sample, Path(work))
            command = ["chronoprobe", "probe", "judge-agreement", str(sets), "--rows", name,
                       "-m", spec, "--device", args.device, "-o", str(out)]  # fmt: skip
            command += ["--base-url", base] if base else []
            subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)
            metrics = json.loads((out / "metrics.json").read_text())
            entry = next(iter(metrics["models"].values()))
            overall, names = entry["overall"], entry["rules"]["names"]
            rows.append((name, spec, overall))
            rows.append((name, "`names` rule", names))
            print(
                f"{name}: {overall['unclear_replies']} replies neither yes nor no", file=sys.stderr
            )
    print("| set | judge | n | agreement [95% CI] | Cohen's kappa [95% CI] "
          "| right answers accepted [95% CI] | false correct [95% CI] |")  # fmt: skip
    print("|---|---|---:|---:|---:|---:|---:|")
    for name, who, figures in rows:
        cells = " | ".join(_cell(figures, f) for f in FIGURES)
        print(f"| {name} | {who} | {figures['n']} | {cells} |")


if __name__ == "__main__":
    main()
