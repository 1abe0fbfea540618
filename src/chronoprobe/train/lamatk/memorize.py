"""Feeding temporal knowledge into a masked LM: entity-level MLM on LAMA-TK statements.

Each statement already has its one masked slot; the loss is the cross-entropy of the slot's
symbol over the entity-and-year vocabulary only. Dynamic time masking (paper, 4.2): a start or
end row is shown without its other time ("S held the position of O from [MASK].") with
probability k. As in RoBERTa's dynamic masking, the data is duplicated D times, each copy with
its own seeded draw of which rows lose their other time, and epoch e trains on copy e mod D, so
over the epochs each statement is seen in up to D different forms.

Everything random is seeded by (seed, epoch): the row order, the copies and torch's own RNG
(dropout), so a run resumed from the checkpoint of epoch e ends with the weights an
uninterrupted run would have.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
from rich.progress import Progress

from chronoprobe.core.devices import resolve_device
from chronoprobe.core.epochs import epoch_progress, run_epoch
from chronoprobe.datasets.lamatk_vocab import LABELS_FILE, EntityVocab, read_labels
from chronoprobe.errors import UserError
from chronoprobe.models.tokenizer import train_tokenizer
from chronoprobe.train.lamatk import checkpoint as ckpt
from chronoprobe.train.lamatk.encoding import StatementEncoder, word_texts
from chronoprobe.train.lamatk.statements import file_digest, load_statements
from chronoprobe.train.model import (
    PRESETS,
    build_model,
    from_pretrained,
    max_positions,
    symbol_logits,
)

TIME_SLOTS = ("start", "end")


@dataclass(frozen=True)
class TrainOptions:
    """Everything that decides the trained weights; a resumed run must be given the same."""

    preset: str = "tiny"
    init: str | None = None  # a Hugging Face masked LM (path or id) instead of a random preset
    epochs: int = 50
    batch_size: int = 64
    lr: float | None = None  # None: 1e-3 for the random tiny preset, else 1e-4
    warmup: float = 0.06  # share of steps with a linearly rising learning rate
    weight_decay: float = 0.01
    time_masking: float = 0.0  # k: probability that a start/end row loses its other time
    duplicates: int = 1  # D: masked copies of the data, cycled through by epoch
    seed: int = 0
    max_length: int = 128  # positions of a randomly initialised model
    word_vocab: int = 2000  # size of the word tokenizer trained for a random model

    def __post_init__(self) -> None:
        if self.init is None and self.preset not in PRESETS:
            raise UserError(f"unknown preset {self.preset!r}; choose one of {', '.join(PRESETS)}")
        if not 0.0 <= self.time_masking <= 1.0:
            raise UserError(f"time masking must be within [0, 1], got {self.time_masking}")
        for name in ("epochs", "batch_size", "duplicates"):
            if getattr(self, name) < 1:
                raise UserError(f"{name.replace('_', ' ')} must be at least 1")
        if not 0.0 <= self.warmup < 1.0:
            raise UserError(f"warmup must be a share of steps in [0, 1), got {self.warmup}")

    @property
    def learning_rate(self) -> float:
        if self.lr is not None:
            return self.lr
        return 1e-3 if self.init is None and self.preset == "tiny" else 1e-4


@dataclass
class TrainResult:
    checkpoint: Path
    epochs_run: int  # epochs trained by this call (0: the run was already finished)
    resumed_from: int  # the epoch the run started from (0: a fresh run)
    history: list[dict] = field(default_factory=list)


def time_masking_plan(has_alone: np.ndarray, k: float, copies: int, seed: int) -> np.ndarray:
    """Which rows each copy shows without their other time: bool [copies, rows].

    Only rows with a time-alone form (start and end slots) can be chosen; each copy draws
    independently, seeded by (seed, copy).
    """
    plan = np.zeros((copies, len(has_alone)), dtype=bool)
    for copy in range(copies):
        draw = np.random.default_rng([seed, 1, copy]).random(len(has_alone))
        plan[copy] = has_alone & (draw < k)
    return plan


def epoch_order(rows: int, epoch: int, seed: int) -> np.ndarray:
    return np.random.default_rng([seed, 0, epoch]).permutation(rows)


def learning_rate_at(step: int, total: int, peak: float, warmup: float) -> float:
    """Linear warm-up to ``peak``, then linear decay to zero at ``total`` steps."""
    rise = max(1, math.ceil(total * warmup))
    if step < rise:
        return peak * (step + 1) / rise
    return peak * max(0.0, (total - step) / max(1, total - rise))


@dataclass
class _Data:
    """Both forms of every row, padded to one width: ids [2, rows, width], mask_at [2, rows]."""

    ids: torch.Tensor
    lengths: torch.Tensor
    mask_at: torch.Tensor
    targets: torch.Tensor
    has_alone: np.ndarray

    @classmethod
    def encode(cls, encoder: StatementEncoder, rows: Sequence[dict], limit: int) -> _Data:
        plain = encoder.encode(rows, [r["text"] for r in rows], limit)
        has_alone = np.array(
            [r["slot"] in TIME_SLOTS and bool(r.get("text_alone")) for r in rows], dtype=bool
        )
        alone_texts = [
            r["text_alone"] if a else r["text"] for r, a in zip(rows, has_alone, strict=True)
        ]
        alone = encoder.encode(rows, alone_texts, limit) if has_alone.any() else plain
        width = max(plain.ids.shape[1], alone.ids.shape[1])
        pad = encoder.tokenizer.pad_token_id
        ids = np.full((2, len(rows), width), pad, dtype=np.int64)
        ids[0, :, : plain.ids.shape[1]] = plain.ids
        ids[1, :, : alone.ids.shape[1]] = alone.ids
        if (plain.targets < 0).any():
            bad = rows[int(np.argmax(plain.targets < 0))]
            raise UserError(f"row {bad['id']}: target {bad['target']!r} has no token")
        return cls(
            torch.from_numpy(ids),
            torch.from_numpy(np.stack([plain.lengths, alone.lengths])),
            torch.from_numpy(np.stack([plain.mask_at, alone.mask_at])),
            torch.from_numpy(plain.targets),
            has_alone,
        )

    def to(self, device: torch.device) -> _Data:
        move = {k: v.to(device) for k, v in vars(self).items() if isinstance(v, torch.Tensor)}
        return _Data(**move, has_alone=self.has_alone)

    def batch(self, index: torch.Tensor, form: torch.Tensor, pad: int) -> tuple[torch.Tensor, ...]:
        width = int(self.lengths[form, index].max())
        ids = self.ids[form, index, :width]
        return ids, ids != pad, self.mask_at[form, index], self.targets[index]


def _new_checkpoint(
    rows: list[dict], options: TrainOptions, labels: dict[str, str]
) -> ckpt.Checkpoint:
    vocab = EntityVocab.from_rows(rows, labels)
    torch.manual_seed(options.seed)
    if options.init is not None:
        model, tokenizer = from_pretrained(options.init, len(vocab))
    else:
        words = word_texts(rows, vocab)
        tokenizer = train_tokenizer(words, "roberta", vocab_size=options.word_vocab)
        model = build_model(options.preset, tokenizer, len(vocab), options.max_length)
    return ckpt.Checkpoint(model, StatementEncoder(tokenizer, vocab, len(tokenizer)))


def _resume(
    out: Path, options: TrainOptions, digest: str, device: torch.device
) -> tuple[ckpt.Checkpoint, dict | None] | None:
    if ckpt.resolve(out) is None:
        return None
    checkpoint, training = ckpt.load(out, device)
    if checkpoint.state.get("options") != asdict(options):
        old = checkpoint.state.get("options") or {}
        changed = sorted(k for k, v in asdict(options).items() if old.get(k) != v)
        raise UserError(
            f"{out}: holds a run with other options ({', '.join(changed)} differ); "
            "resume with the same options or choose another --out"
        )
    if checkpoint.state.get("statements_sha256") != digest:
        raise UserError(f"{out}: holds a run on other statements; choose another --out")
    return checkpoint, training


def train(
    statements: str | Path,
    out: str | Path,
    options: TrainOptions | None = None,
    *,
    device: str = "auto",
    labels: dict[str, str] | None = None,
    progress: Progress | None = None,
    on_epoch: Callable[[int, dict], None] | None = None,
) -> TrainResult:
    """Train on ``statements`` into ``out``, resuming from its last checkpoint if it has one.

    ``labels`` (entity id -> label) default to the labels file beside the statements.
    ``on_epoch(epoch, record)`` is called after each epoch's checkpoint is written.
    """
    options = options or TrainOptions()
    out = Path(out)
    rows = load_statements(statements)
    if labels is None:
        labels = read_labels(Path(statements).parent / LABELS_FILE)
    digest = file_digest(statements)
    dev = resolve_device(device)
    resumed = _resume(out, options, digest, dev)
    if resumed is None:
        checkpoint, training = _new_checkpoint(rows, options, labels), None
        checkpoint.state = {"options": asdict(options), "statements_sha256": digest}
        checkpoint.model.to(dev)
    else:
        checkpoint, training = resumed
    start = checkpoint.epoch
    history: list[dict] = list(checkpoint.state.get("history", []))
    if start >= options.epochs:
        return TrainResult(ckpt.resolve(out), 0, start, history)  # type: ignore[arg-type]

    model, encoder = checkpoint.model, checkpoint.encoder
    data = _Data.encode(encoder, rows, max_positions(model)).to(dev)
    plan = torch.from_numpy(
        time_masking_plan(data.has_alone, options.time_masking, options.duplicates, options.seed)
    ).to(dev)
    optimizer = torch.optim.AdamW(  # RoBERTa's betas and eps
        model.parameters(),
        lr=options.learning_rate,
        betas=(0.9, 0.98),
        eps=1e-6,
        weight_decay=options.weight_decay,
        foreach=True,
    )
    if training is not None:
        optimizer.load_state_dict(training)
    n, size = len(rows), options.batch_size
    total = math.ceil(n / size) * options.epochs
    steps = start * math.ceil(n / size)
    pad = encoder.tokenizer.pad_token_id
    autocast = torch.autocast("cuda", dtype=torch.bfloat16) if dev.type == "cuda" else nullcontext()

    def step(batch: tuple[torch.Tensor, torch.Tensor]) -> tuple[torch.Tensor, int]:
        nonlocal steps
        index, forms = batch
        ids, attention, mask_at, targets = data.batch(index, forms, pad)
        for group in optimizer.param_groups:
            group["lr"] = learning_rate_at(steps, total, options.learning_rate, options.warmup)
        with autocast:
            logits = symbol_logits(model, ids, attention, mask_at, encoder.offset)
        loss = torch.nn.functional.cross_entropy(logits, targets)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        steps += 1
        return loss.detach(), len(index)  # a tensor: the loss sum stays on the device

    own = epoch_progress("statements") if progress is None else None
    bar = own if own is not None else progress
    model.train()
    with own if own is not None else nullcontext():
        for epoch in range(start, options.epochs):
            torch.manual_seed(options.seed * 1_000_003 + epoch)
            order = torch.from_numpy(epoch_order(n, epoch, options.seed)).to(dev)
            forms = plan[epoch % options.duplicates].long()
            batches = ((index, forms[index]) for index in order.split(size))
            title = f"feeding, epoch {epoch + 1}/{options.epochs}"
            record = run_epoch(
                epoch + 1, batches, step, total=n, unit="statements", bar=bar, title=title
            )
            record["loss"] = round(record["loss"], 6)
            history.append(record)
            checkpoint.state.update(epoch=epoch + 1, step=steps, history=history)
            ckpt.save(out, checkpoint, optimizer)
            if on_epoch is not None:
                on_epoch(epoch + 1, record)
    model.eval()
    return TrainResult(ckpt.resolve(out), options.epochs - start, start, history)  # type: ignore[arg-type]
