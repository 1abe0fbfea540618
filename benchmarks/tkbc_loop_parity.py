"""TKG training through tkbc's loop on the same split: does it give chronoprobe's figures?

chronoprobe trains with a fused softmax (the loss and both gradients from one chunked pass over
the entities; see docs/tkg.md); tkbc (Lacroix, Obozinski and Usunier, "Tensor Decompositions for
Temporal Knowledge Base Completion", ICLR 2020) builds the whole batch x entities logit matrix,
takes ``cross_entropy`` and lets autograd do the rest. This script reads finished ``tkg`` steps
(their checkpoints hold the split and the training options), trains each one's model again from
the same initialisation, with the same shuffles, penalties and optimizer, through tkbc's loss,
ranks the same test facts with the same filtered ranking, and prints both sets of figures with
each run's 95% intervals. Equal up to float rounding means the fused loss changes nothing but
the time; the spread over seeds says how much rounding alone moves a figure.

    python benchmarks/tkbc_loop_parity.py runs/tkg-comparison/steps/tcomplex-seed*
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch
import torch.nn.functional as F


def tkbc_train(step_dir: Path) -> tuple[dict, dict, float]:
    """(chronoprobe's test metrics, tkbc's loop's, seconds) for one finished tkg step."""
    from chronoprobe.tkg import checkpoint
    from chronoprobe.tkg.data import TimeMode, with_reciprocals
    from chronoprobe.tkg.evaluate import evaluate
    from chronoprobe.tkg.models import build_model
    from chronoprobe.tkg.regularizers import penalty

    saved = checkpoint.load(step_dir)
    options, data = saved.config["train"], saved.data
    if options["time_loss"]:
        raise SystemExit(f"{step_dir}: trained with --time-loss, which tkbc's loss has not")
    model = build_model(
        saved.config["model"], init_scale=options["init_scale"], seed=options["seed"]
    )
    optimizer = torch.optim.Adagrad(model.parameters(), lr=options["learning_rate"])
    n_relations = len(data.vocab.relations)
    fixed = None if data.mode is TimeMode.sampled else data.training_quadruples(0, options["seed"])
    began = time.perf_counter()
    for epoch in range(1, options["epochs"] + 1):
        quads = data.training_quadruples(epoch, options["seed"]) if fixed is None else fixed
        examples = torch.from_numpy(with_reciprocals(quads, n_relations))
        shuffle = torch.Generator().manual_seed(options["seed"] * 1_000_003 + epoch)
        model.train()
        for batch in examples[torch.randperm(len(examples), generator=shuffle)].split(
            options["batch_size"]
        ):
            s, r, o, t = batch.unbind(1)
            logits = model.object_query(s, r, t) @ model.entity.t()
            loss = F.cross_entropy(logits, o)
            loss = loss + penalty(model, s, r, o, t, options["n3"], options["smoothness"])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
    seconds = time.perf_counter() - began
    ours = json.loads((step_dir / "metrics.json").read_text(encoding="utf-8"))
    return ours, evaluate(model, data, "test"), seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("steps", nargs="+", type=Path, help="finished tkg step directories")
    args = parser.parse_args()
    keys = ("mrr", "hits@1", "hits@10", "time_accuracy")
    for step_dir in args.steps:
        ours, theirs, seconds = tkbc_train(step_dir)
        row = {"step": step_dir.name, "tkbc_loop_train_s": round(seconds, 1)}
        for key in keys:
            if key in theirs:
                row[key] = {
                    "chronoprobe": round(ours[key], 4),
                    "tkbc_loop": round(theirs[key], 4),
                    "tkbc_loop_ci95": [round(v, 4) for v in theirs[f"{key}_ci95"]],
                }
        print(json.dumps(row))


if __name__ == "__main__":
    main()
