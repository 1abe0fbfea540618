"""Training by link prediction: full softmax over all entities (and over all years, for time
prediction), N3 and temporal smoothness, Adagrad.

The hot path is one cross entropy over every entity per example. It is computed in row chunks
that fit in cache, and the loss and both gradients come out of the same pass (a softmax turned
into its own gradient in place, then two matmuls), so no batch x entities matrix is allocated
more than once per chunk and nothing is recomputed in the backward pass.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from rich.progress import Progress
from torch import Tensor

from chronoprobe.atomic import atomic_write_text
from chronoprobe.core.devices import resolve_device
from chronoprobe.core.epochs import epoch_progress, run_epoch
from chronoprobe.errors import UserError
from chronoprobe.tkg import checkpoint
from chronoprobe.tkg.data import SPLITS, TimeMode, TKGData, with_reciprocals
from chronoprobe.tkg.evaluate import evaluate
from chronoprobe.tkg.models import TKGModel, build_model
from chronoprobe.tkg.params import TKGTrainParams
from chronoprobe.tkg.regularizers import penalty

# Logit chunk size in bytes: small enough to stay in a CPU's last-level cache between the
# softmax and the two gradient matmuls. Never fewer rows than _MIN_CHUNK_ROWS, though: each
# chunk adds its rows into the whole entity gradient, and with very many entities thin chunks
# would rewrite that table more often than the logits they save (measured: 2x slower at 70k
# entities with 32-row chunks).
_CPU_CHUNK_BYTES = 8 << 20
_MIN_CHUNK_ROWS = 256


@dataclass
class TrainResult:
    model: TKGModel
    history: list[dict] = field(default_factory=list)  # one row per epoch, resumed ones included
    metrics: dict[str, float] = field(default_factory=dict)  # on the test split, after training
    started_at_epoch: int = 0  # epochs already done when this call began (resume)


class _FullSoftmaxCrossEntropy(torch.autograd.Function):
    """Mean cross entropy of queries @ table.T against integer targets, gradients included."""

    @staticmethod
    def forward(ctx, queries: Tensor, table: Tensor, targets: Tensor, chunk: int):
        n = queries.shape[0]
        grad_queries = torch.empty_like(queries)
        grad_table = torch.zeros_like(table)
        loss = queries.new_zeros(())
        for begin in range(0, n, chunk):
            q, y = queries[begin : begin + chunk], targets[begin : begin + chunk]
            rows = torch.arange(len(y), device=y.device)
            probs = q @ table.t()
            top = probs.amax(1, keepdim=True)
            gold = probs[rows, y]
            probs.sub_(top).exp_()
            total = probs.sum(1, keepdim=True)
            loss += (top.squeeze(1) + total.squeeze(1).log() - gold).sum()
            # softmax - one_hot, divided by n: the gradient of the mean loss wrt the logits.
            probs.div_(total * n)
            probs[rows, y] -= 1.0 / n
            grad_queries[begin : begin + chunk] = probs @ table
            grad_table.addmm_(probs.t(), q)
        ctx.save_for_backward(grad_queries, grad_table)
        return loss / n

    @staticmethod
    def backward(ctx, grad_loss: Tensor):
        grad_queries, grad_table = ctx.saved_tensors
        return grad_queries * grad_loss, grad_table * grad_loss, None, None


def full_softmax_cross_entropy(
    queries: Tensor, table: Tensor, targets: Tensor, chunk: int | None = None
) -> Tensor:
    """Same value and gradients as ``cross_entropy(queries @ table.T, targets)``, cheaper on a
    CPU: each chunk of logits becomes its softmax gradient in place, so the batch x entities
    tensor is not written and read back three times. ``chunk`` None: as
    :func:`_default_chunk` says."""
    chunk = chunk or _default_chunk(queries.device, table.shape[0], queries.shape[0])
    if chunk is None:
        return F.cross_entropy(queries @ table.t(), targets)
    return _FullSoftmaxCrossEntropy.apply(queries, table, targets, chunk)


def _default_chunk(device: torch.device, n_entities: int, batch: int) -> int | None:
    """Rows of logits scored at once on a CPU; None on a GPU, where the fused
    ``cross_entropy`` kernel is faster than the chunked loop (benchmarks/bench_tkg.py on an
    H100: the chunked loop ran at 0.84-0.87x of it)."""
    if device.type != "cpu":
        return None
    return min(batch, max(_MIN_CHUNK_ROWS, _CPU_CHUNK_BYTES // (4 * n_entities)))


def train(
    data: TKGData,
    config: TKGTrainParams,
    out: Path | None = None,
    *,
    progress: Progress | bool = True,
    resume: bool = True,
    log: Callable[[str], None] | None = None,
) -> TrainResult:
    """Train (or resume) a model on ``data``; with ``out``, checkpoint after every epoch.

    Resuming needs the same model shape, vocabulary and splits as the checkpoint; it continues
    at the epoch after the saved one with Adagrad's state, and every epoch's shuffle (and
    sampled years) depends only on the seed and the epoch number, so 2 epochs then 1 resumed
    equal 3 straight. ``progress`` may be a live rich Progress to draw into (a run's).
    """
    if config.seed is None:
        config = config.model_copy(update={"seed": 0})
    device = resolve_device(config.device)
    n_relations = len(data.vocab.relations)
    shape = {
        "model": config.arch,
        "rank": config.rank,
        "n_entities": len(data.vocab.entities),
        "n_relations": 2 * n_relations,
        "n_times": data.vocab.n_times,
    }
    model = build_model(shape, init_scale=config.init_scale, seed=config.seed).to(device)
    optimizer = torch.optim.Adagrad(model.parameters(), lr=config.learning_rate)
    history: list[dict] = []
    start = 0
    if out is not None and resume and checkpoint.exists(out):
        saved = checkpoint.load(out, device)
        _check_compatible(saved, shape, data, out)
        model.load_state_dict(saved.model.state_dict())
        if saved.optimizer_state is None:
            raise UserError(
                f"{out}: a checkpoint of an older chronoprobe, whose optimizer state cannot be "
                "resumed; train again into another directory"
            )
        # Adagrad's sums and steps from the checkpoint, its learning rate from this call
        groups = optimizer.state_dict()["param_groups"]
        optimizer.load_state_dict({**saved.optimizer_state, "param_groups": groups})
        history, start = list(saved.config.get("history", [])), saved.epoch
        if log is not None and start:
            log(f"resuming {out} after epoch {start}")

    def save(epoch: int) -> None:
        body = {
            "epoch": epoch,
            "train": config.model_dump(mode="json"),
            "history": history,
        }
        checkpoint.save(out, model, optimizer, data, body)

    chunk = _default_chunk(device, shape["n_entities"], config.batch_size)
    fixed = None if data.mode is TimeMode.sampled else data.training_quadruples(0, config.seed)
    result = TrainResult(model, history, started_at_epoch=start)
    own = epoch_progress("examples") if progress is True else None
    bar = own if own is not None else (progress if isinstance(progress, Progress) else None)
    with own if own is not None else nullcontext():
        for epoch in range(start + 1, config.epochs + 1):
            quads = data.training_quadruples(epoch, config.seed) if fixed is None else fixed
            examples = torch.from_numpy(with_reciprocals(quads, n_relations)).to(device)
            row = _epoch(model, optimizer, examples, config, epoch, chunk, bar)
            if len(data.valid) and config.eval_every and epoch % config.eval_every == 0:
                row["valid"] = evaluate(model, data, "valid", config.eval_batch_size, device)
            history.append(row)
            if log is not None:
                log(_describe(row))
            if out is not None:
                save(epoch)
    if out is not None and not checkpoint.exists(out):  # --epochs 0: the untrained model
        save(0)
    result.metrics = evaluate(model, data, "test", config.eval_batch_size, device)
    if log is not None:
        log(f"test: {_describe_metrics(result.metrics)}")
    if out is not None:
        body = {
            "model": config.arch,
            "split": "test",
            "split_origin": data.origin,
            "candidate_entities": len(data.vocab.entities),
            "candidate_years": data.vocab.n_times,
            **result.metrics,
        }
        atomic_write_text(Path(out) / "metrics.json", json.dumps(body, indent=2) + "\n")
    return result


def _epoch(
    model: TKGModel,
    optimizer: torch.optim.Optimizer,
    examples: Tensor,
    config: TKGTrainParams,
    epoch: int,
    chunk: int,
    bar: Progress | None,
) -> dict:
    model.train()
    # One generator per epoch, so a resumed run shuffles exactly as an uninterrupted one.
    shuffle = torch.Generator().manual_seed(config.seed * 1_000_003 + epoch)
    order = torch.randperm(len(examples), generator=shuffle).to(examples.device)

    def step(batch: Tensor) -> tuple[float, int]:
        s, r, o, t = batch.unbind(1)
        fit = full_softmax_cross_entropy(model.object_query(s, r, t), model.entity, o, chunk)
        loss = fit + penalty(model, s, r, o, t, config.n3, config.smoothness)
        if model.has_time and config.time_loss:
            # The time offset is the same for every year, so the softmax over years ignores it.
            when = full_softmax_cross_entropy(model.time_query(s, r, o), model.time, t, chunk)
            loss = loss + config.time_loss * when
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return fit.item(), len(batch)

    batches = examples[order].split(config.batch_size)
    return run_epoch(epoch, batches, step, total=len(examples), unit="examples", bar=bar)


def _check_compatible(saved: checkpoint.Checkpoint, shape: dict, data: TKGData, out: Path) -> None:
    saved_shape = {k: saved.config["model"].get(k) for k in shape}
    same_data = saved.data.vocab == data.vocab and saved.data.mode is data.mode
    same_data = same_data and all(
        np.array_equal(saved.data.split(name), data.split(name)) for name in SPLITS
    )
    if saved_shape != shape or not same_data:
        raise UserError(
            f"{out}: holds a checkpoint of another model or data ({saved_shape}, "
            f"{len(saved.data.train):,} training facts, mode {saved.data.mode}); "
            "pass another --out, or --no-resume to overwrite it"
        )


def _describe_metrics(metrics: dict) -> str:
    """A split's figures as the log writes them ("no fact" where the split holds none)."""
    if not metrics["n"]:
        return "no fact"
    text = f"filtered MRR {metrics['mrr']:.4f}, Hits@1 {metrics['hits@1']:.4f}, "
    text += f"Hits@10 {metrics['hits@10']:.4f}"
    if "time_accuracy" in metrics:
        text += f", time accuracy {metrics['time_accuracy']:.4f}"
    return text


def _describe(row: dict) -> str:
    text = (
        f"epoch {row['epoch']}: loss {row['loss']:.4f}, {row['seconds']:.1f} s, "
        f"{row['examples_per_s']:,.0f} examples/s"
    )
    if "valid" in row:
        text += f"; valid {_describe_metrics(row['valid'])}"
    return text
