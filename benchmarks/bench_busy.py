"""A tiny masked LM's training steps on idle cores and on cores busy with other work.

    python benchmarks/bench_busy.py [--seconds 15] [--hogs 0,2] [--configs torch,one]

Each (load, configuration) pair is a fresh process that trains the ``tiny`` preset (2 layers,
width 128: the model of the demo's ``series`` and ``memorize`` steps) with AdamW on random
batches of 32 sequences of 64 tokens over a 2,000-token vocabulary, for ``--seconds`` after a
warm-up of 3 steps, and reports seconds per step (wall) and CPU seconds per step (all its
threads). Busy: ``--hogs`` other processes spin in Python for the whole run, at the
benchmark's own priority, as other jobs on a shared machine would. Configurations:

- ``torch``: torch's defaults, a thread per core whose idle threads spin (OpenMP's default);
- ``passive``: as many threads, idle ones sleeping (``OMP_WAIT_POLICY=PASSIVE``);
- ``one``: one thread;
- ``chronoprobe``: what the ``chronoprobe`` command sets (``chronoprobe.core.threads``).

The load average before each run is printed beside it: on a machine shared with other jobs,
compare rows measured under the same load.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

CONFIGS = {
    "torch": {},
    "passive": {"OMP_WAIT_POLICY": "PASSIVE"},
    "one": {"OMP_NUM_THREADS": "1"},
    "chronoprobe": {},  # the child calls configure_threads
}
HOG = "while True: pass"


def child(config: str, seconds: float) -> dict:
    """Train for ``seconds`` in this process; what it measured."""
    if config == "chronoprobe":
        from chronoprobe.core.threads import configure_threads

        configure_threads()
    import torch
    from transformers import RobertaConfig, RobertaForMaskedLM

    from chronoprobe.train.model import PRESETS

    torch.manual_seed(0)
    shape = RobertaConfig(vocab_size=2000, max_position_embeddings=66, **PRESETS["tiny"])
    model = RobertaForMaskedLM(shape)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    tokens = torch.randint(5, 2000, (32, 64))
    labels = torch.where(torch.rand(32, 64) < 0.15, tokens, -100)

    def step() -> None:
        loss = model(input_ids=tokens, labels=labels).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

    for _ in range(3):
        step()
    steps, began = 0, time.perf_counter()
    cpu = time.process_time()
    while time.perf_counter() - began < seconds:
        step()
        steps += 1
    wall = time.perf_counter() - began
    return {
        "threads": torch.get_num_threads(),
        "wait": os.environ.get("OMP_WAIT_POLICY", "(default)"),
        "steps": steps,
        "wall_per_step": wall / steps,
        "cpu_per_step": (time.process_time() - cpu) / steps,
    }


def run(config: str, hogs: int, seconds: float) -> dict:
    """One (load, configuration) pair in a fresh process, with ``hogs`` busy processes."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMP_", "MKL_"))}
    env.update(CONFIGS[config])
    spinning = [subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(hogs)]
    load = os.getloadavg()[0]
    try:
        done = subprocess.run(
            [sys.executable, __file__, "--child", config, "--seconds", str(seconds)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
    finally:
        for process in spinning:
            process.kill()
            process.wait()
    return {"config": config, "hogs": hogs, "load": load, **json.loads(done.stdout)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=15, help="Training time per run.")
    parser.add_argument("--hogs", default=f"0,{os.cpu_count()}", help="Busy processes, per load.")
    parser.add_argument("--configs", default=",".join(CONFIGS), help="Which configurations.")
    parser.add_argument("--child", choices=CONFIGS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.seconds)))
        return
    print("| busy processes | configuration | threads | idle threads | load before | "
          "s per step | CPU s per step |")  # fmt: skip
    print("|---:|---|---:|---|---:|---:|---:|")
    for hogs in map(int, args.hogs.split(",")):
        for config in args.configs.split(","):
            row = run(config, hogs, args.seconds)
            print(
                f"| {row['hogs']} | {row['config']} | {row['threads']} | {row['wait']} | "
                f"{row['load']:.1f} | {row['wall_per_step']:.3f} | {row['cpu_per_step']:.3f} |",
                flush=True,
            )
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"\nCPU seconds of the runs and the busy processes: {used.ru_utime + used.ru_stime:.0f}")


if __name__ == "__main__":
    main()
