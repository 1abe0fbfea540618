"""TKG-embedding training and ranking throughput, against a tkbc-style loop in the same run.

The KG is the synthetic world at CronQuestions' size (300k facts by default), split as
``chronoprobe tkg train`` splits it, one timestamp per fact (its start year) as tkbc trains on
CronQuestions; each fact is two examples (reciprocal relations). Three measurements:

* training: a slice of the epoch (``--batches`` batches) through chronoprobe's loop, and the
  same batches through the loop tkbc runs (full logits, ``cross_entropy``, autograd backward),
  same model, penalties and optimizer; the epoch time is extrapolated from the rate;
* ranking: filtered ranking of held-out queries (both directions), chronoprobe's batched mask
  against a per-query Python filter loop as tkbc writes it;
* tkbc's own figures, measured with tkbc as published (facebookresearch/tkbc, its ``.cuda()``
  calls made no-ops so it runs on a CPU) on a 2-core CPU at 60k facts, rank 128, batch 1000: 33 s
  an epoch (3,500 examples/s) and 5,400 ranking queries/s. Their KG and machine differ: read
  those ratios as indicative, the same-run ratios as the measurement.

    python benchmarks/bench_tkg.py [--facts 300000] [--rank 64] [--batches 20] [--device cpu]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch
import torch.nn.functional as F

# tkbc as published, on a 2-core CPU: 60k-fact KG, rank 128, batch 1000 (see the docstring).
TKBC_CPU = {"examples_per_s": 3_500, "epoch_s": 33.0, "ranking_q_per_s": 5_400}


def _data(facts: int, seed: int, test_queries: int):
    from chronoprobe.kg.synth import SynthConfig, synthesize
    from chronoprobe.tkg.data import TimeMode, split_kg

    began = time.perf_counter()
    kg = synthesize(SynthConfig(seed=seed, facts=facts, text=False)).kg
    test_fraction = min(0.5, test_queries / len(kg))
    data = split_kg(kg, valid_fraction=0.0, test_fraction=test_fraction, seed=seed,
                    mode=TimeMode.start)  # fmt: skip
    return data, time.perf_counter() - began


def _model(data, rank: int, device: torch.device):
    from chronoprobe.tkg.models import build_model

    shape = {
        "model": "tcomplex",
        "rank": rank,
        "n_entities": len(data.vocab.entities),
        "n_relations": 2 * len(data.vocab.relations),
        "n_times": data.vocab.n_times,
    }
    model = build_model(shape).to(device)
    return model, torch.optim.Adagrad(model.parameters(), lr=0.1)


def _batches(data, batch_size: int, n: int, device: torch.device) -> list[torch.Tensor]:
    from chronoprobe.tkg.data import with_reciprocals

    examples = with_reciprocals(data.training_quadruples(1, 0), len(data.vocab.relations))
    order = np.random.default_rng(0).permutation(len(examples))[: batch_size * n]
    return list(torch.from_numpy(examples[order]).to(device).split(batch_size))


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def train_rate(data, rank: int, batch_size: int, n: int, device: torch.device, ours: bool) -> float:
    """Examples per second over ``n`` batches (after one warm-up batch)."""
    from chronoprobe.tkg.regularizers import penalty
    from chronoprobe.tkg.train import _default_chunk, full_softmax_cross_entropy

    model, optimizer = _model(data, rank, device)
    batches = _batches(data, batch_size, n + 1, device)
    chunk = _default_chunk(device, model.entity.shape[0], batch_size)
    began = 0.0
    for i, batch in enumerate(batches):
        if i == 1:
            _sync(device)
            began = time.perf_counter()
        s, r, o, t = batch.unbind(1)
        query = model.object_query(s, r, t)
        if ours:
            fit = full_softmax_cross_entropy(query, model.entity, o, chunk)
        else:  # tkbc: the whole batch x entities logit matrix, autograd through it
            fit = F.cross_entropy(query @ model.entity.t(), o)
        loss = fit + penalty(model, s, r, o, t, 1e-2, 1e-2)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    _sync(device)
    return sum(len(b) for b in batches[1:]) / (time.perf_counter() - began)


@torch.inference_mode()
def naive_ranking_rate(data, model, n_queries: int) -> float:
    """tkbc's ranking: score a batch, then mask each query's known answers in a Python loop."""
    from chronoprobe.tkg.data import with_reciprocals

    n_relations = len(data.vocab.relations)
    answers: dict[tuple, list[int]] = {}
    for s, r, o, t in with_reciprocals(data.known, n_relations).tolist():
        answers.setdefault((s, r, t), []).append(o)
    queries = torch.from_numpy(with_reciprocals(data.queries("test"), n_relations))[:n_queries]
    began = time.perf_counter()
    for batch in queries.split(500):
        s, r, o, t = batch.unbind(1)
        scores = model.object_scores(s, r, t)
        targets = scores[torch.arange(len(o)), o].clone()
        for i, (a, b, c) in enumerate(zip(s.tolist(), r.tolist(), t.tolist(), strict=True)):
            scores[i, torch.tensor(answers[(a, b, c)])] = -1e6
        (scores >= targets[:, None]).sum(1)
    return len(queries) / (time.perf_counter() - began)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=300_000)
    parser.add_argument("--rank", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=1000)
    parser.add_argument("--batches", type=int, default=20, help="training batches timed")
    parser.add_argument("--test-queries", type=int, default=2000, help="held-out facts ranked")
    parser.add_argument("--naive-queries", type=int, default=1000)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from chronoprobe.core.devices import resolve_device
    from chronoprobe.tkg.evaluate import entity_ranks

    device = resolve_device(args.device)
    data, synth_s = _data(args.facts, args.seed, args.test_queries)
    n_examples = 2 * len(data.train)
    ours = train_rate(data, args.rank, args.batch_size, args.batches, device, ours=True)
    naive = train_rate(data, args.rank, args.batch_size, args.batches, device, ours=False)
    model, _ = _model(data, args.rank, device)
    queries = data.queries("test")
    _sync(device)
    began = time.perf_counter()
    ranks = entity_ranks(model, queries, data.known, len(data.vocab.relations), 1000, device)
    _sync(device)
    ranking = len(ranks) / (time.perf_counter() - began)
    naive_ranking = naive_ranking_rate(data, model.cpu(), args.naive_queries)
    result = {
        "device": str(device),
        "threads": torch.get_num_threads(),
        "kg": {
            "facts": args.facts,
            "entities": len(data.vocab.entities),
            "relations": len(data.vocab.relations),
            "years": data.vocab.n_times,
            "train_facts": len(data.train),
            "epoch_examples": n_examples,
            "synth_and_split_s": round(synth_s, 1),
        },
        "rank": args.rank,
        "batch_size": args.batch_size,
        "train_examples_per_s": round(ours),
        "train_facts_per_s": round(ours / 2),
        "epoch_s": round(n_examples / ours, 1),
        "tkbc_loop_examples_per_s": round(naive),
        "tkbc_loop_epoch_s": round(n_examples / naive, 1),
        "train_speedup_same_run": round(ours / naive, 2),
        "ranking_queries_per_s": round(ranking),
        "tkbc_ranking_queries_per_s": round(naive_ranking),
        "ranking_speedup_same_run": round(ranking / naive_ranking, 2),
        "vs_published_tkbc_cpu": {
            "train_examples_per_s_ratio": round(ours / TKBC_CPU["examples_per_s"], 2),
            "ranking_ratio": round(ranking / TKBC_CPU["ranking_q_per_s"], 2),
        },
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
