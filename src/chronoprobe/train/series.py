"""A series of masked LMs, one per period, each continuing from the one before (as TimeLMs).

Offline there are no TimeLMs, so the series is trained here on the synthetic world's dated text.
What a period's model reads:

- **Snippets** (``snippets.parquet`` beside the KG): a snippet belongs to the period holding the
  first day of its date ("2019-03" is in 2019, in 2019-Q1 and in 2019-03). The first model also
  reads everything dated before the first period, so it starts from a base of the world's past.
  Snippets dated after the last period are read by no model.
- **Fact sentences** (``fact_sentences=True``, the default): every fact holding in the period,
  rendered with its drift template ("X plays for Y."), once per fact and period. The snippets
  already use the drift templates' wording for their present-tense sentences, but only in a few
  of the years a fact holds (and not at all for a KG without snippets); the fact sentences make
  each period's text say what is true in that period, as news of that period would, so a probe
  of the period can be answered from it. The first model gets those of the first period only.
- **Replay** (``replay=r``): later periods also re-read a seeded sample of earlier text, ``r``
  times the period's own size, to soften forgetting. The default 0 is pure continuation, which
  is what makes the drift visible: a model knows its own period's facts, not later ones.

Training is MLM with whole-word masking (15% of words, all of a word's tokens together) and
salient span masking: a mention of a KG entity is masked whole, with probability 0.5 (see
:mod:`chronoprobe.train.mlm` for why a fact probe needs it). One tokenizer (a byte-level BPE
trained on all periods' text) serves the whole series, so every model shares one vocabulary.

Output, every part complete or absent (written beside, then renamed)::

    OUT/tokenizer/          the shared tokenizer
    OUT/<period>/           config.json, model.safetensors, tokenizer files, training.json
    OUT/series.json         options and the finished periods, in order, with their parents

A rerun skips finished periods (same options required) and continues from the last one.
"""

from __future__ import annotations

import json
import math
import os
import shutil
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import torch
from rich.progress import Progress
from transformers import (
    AutoModelForMaskedLM,
    AutoTokenizer,
    PreTrainedModel,
    PreTrainedTokenizerFast,
    get_linear_schedule_with_warmup,
)

from chronoprobe.atomic import atomic_write_text
from chronoprobe.core.devices import resolve_device
from chronoprobe.core.epochs import run_epoch
from chronoprobe.errors import UserError
from chronoprobe.kg.graph import TemporalKG
from chronoprobe.models.tokenizer import SPECIAL_TOKENS
from chronoprobe.templates import ClozeTemplate, load_cloze_templates
from chronoprobe.time import Period, TimePoint
from chronoprobe.train.mlm import (
    MentionFinder,
    encode,
    mask_units,
    mlm_loss,
    pad_batch,
    text_tokenizer,
)
from chronoprobe.train.model import build_model, quiet_transformers
from chronoprobe.train.params import MLMTrainingParams, SeriesParams

FORMAT = "chronoprobe-model-series/1"
SERIES_FILE = "series.json"
TRAINING_FILE = "training.json"
TOKENIZER_DIR = "tokenizer"


@dataclass
class PeriodResult:
    period: str
    dir: str  # relative to the series directory
    parent: str | None
    examples: int
    losses: list[float] = field(default_factory=list)  # mean loss of each epoch

    @property
    def final_loss(self) -> float | None:
        return self.losses[-1] if self.losses else None


@dataclass
class SeriesResult:
    out_dir: Path
    periods: list[PeriodResult]

    def model_dirs(self) -> list[Path]:
        return [self.out_dir / p.dir for p in self.periods]


# ----- which text each period reads ---------------------------------------------------------


def load_snippets(kg_dir: Path) -> pa.Table | None:
    path = Path(kg_dir) / "snippets.parquet"
    if not path.is_file():
        return None
    table = pq.read_table(path)
    missing = {"date", "text"} - set(table.column_names)
    if missing:
        raise UserError(f"{path}: snippets need the columns date and text; missing {missing}")
    return table


def snippet_days(snippets: pa.Table, source: str = "snippets") -> np.ndarray:
    """The first day of each snippet's date (``2019``, ``2019-03`` or ``2019-03-05``)."""
    dates = snippets.column("date").to_pylist()
    first_days: dict[str, int] = {}
    out = np.empty(len(dates), dtype=np.int64)
    for row, date in enumerate(dates):
        if date not in first_days:
            try:
                first_days[date] = TimePoint.parse(date or "").first_day()
            except ValueError as err:
                raise UserError(f"{source}: row {row + 1}: {err}") from None
        out[row] = first_days[date]
    return out


def fact_sentences(
    kg: TemporalKG, period: Period, templates: dict[str, ClozeTemplate]
) -> list[str]:
    """Every fact holding in ``period`` as its template's statement, in KG order."""
    facts = kg.facts_in(period, relations=list(templates))
    return [
        templates[relation].fill(kg.label(subject), kg.label(obj))
        for subject, relation, obj in zip(
            facts.column("subject").to_pylist(),
            facts.column("relation").to_pylist(),
            facts.column("object").to_pylist(),
            strict=True,
        )
    ]


def period_texts(
    kg: TemporalKG,
    snippets: pa.Table | None,
    periods: Sequence[Period],
    with_facts: bool = True,
    templates: dict[str, ClozeTemplate] | None = None,
) -> list[list[str]]:
    """The training text of each period's model (see the module docstring for the rules)."""
    if not periods:
        raise UserError("give at least one period")
    templates = templates if templates is not None else load_cloze_templates("drift")
    texts: list[list[str]] = [[] for _ in periods]
    if snippets is not None and snippets.num_rows:
        days = snippet_days(snippets)
        lines = np.asarray(snippets.column("text").to_pylist(), dtype=object)
        for i, period in enumerate(periods):
            chosen = days <= period.last_day()
            if i:
                chosen &= days >= period.first_day()
            texts[i].extend(lines[chosen].tolist())
    if with_facts:
        for i, period in enumerate(periods):
            texts[i].extend(fact_sentences(kg, period, templates))
    return texts


def with_replay(texts: list[list[str]], fraction: float, seed: int) -> list[list[str]]:
    """Each later period's text plus a seeded sample of all earlier text, ``fraction`` its size."""
    if fraction <= 0:
        return texts
    out = [list(texts[0])]
    rng = np.random.default_rng(seed)
    for i in range(1, len(texts)):
        earlier = [line for part in texts[:i] for line in part]
        n = min(len(earlier), round(fraction * len(texts[i])))
        picks = rng.choice(len(earlier), size=n, replace=False) if n else []
        out.append([*texts[i], *(earlier[j] for j in picks)])
    return out


# ----- training -----------------------------------------------------------------------------


def start_model(
    previous: Path | None, tokenizer: PreTrainedTokenizerFast, options: MLMTrainingParams
) -> PreTrainedModel:
    """The model a period starts from: the previous period's checkpoint, or a fresh one."""
    if previous is not None:
        with quiet_transformers():
            return AutoModelForMaskedLM.from_pretrained(previous)
    torch.manual_seed(options.seed)
    return build_model(options.preset, tokenizer, symbols=0, max_length=options.max_length)


def train_period(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerFast,
    texts: Sequence[str],
    options: MLMTrainingParams,
    seed: int,
    progress: Progress | None = None,
    label: str = "",
    mentions: MentionFinder | None = None,
) -> list[float]:
    """Train ``model`` in place on ``texts`` for ``options.epochs``; each epoch's loss (the mean
    over its lines of their batch's loss)."""
    encoded = encode(tokenizer, texts, options.max_length, mentions)
    if not len(encoded) or not options.epochs:
        return []
    generator = torch.Generator().manual_seed(seed)
    total = math.ceil(len(encoded) / options.batch_size) * options.epochs
    optimizer = torch.optim.AdamW(model.parameters(), lr=options.learning_rate, weight_decay=0.01)
    schedule = get_linear_schedule_with_warmup(optimizer, max(1, total // 16), total)
    device = resolve_device(options.device)
    model.to(device).train()

    def step(rows: list[int]) -> tuple[torch.Tensor, int]:
        ids, attention, units, salient = pad_batch(encoded, rows, tokenizer.pad_token_id)
        inputs, labels = mask_units(
            ids,
            units,
            salient,
            mask_id=tokenizer.mask_token_id,
            first_regular_id=len(SPECIAL_TOKENS["roberta"]),
            vocab_size=len(tokenizer),
            prob=options.mask_prob,
            entity_prob=options.entity_mask_prob,
            generator=generator,
        )
        loss = mlm_loss(model, inputs.to(device), attention.to(device), labels.to(device))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad(set_to_none=True)
        return loss.detach(), len(rows)

    losses = []
    for epoch in range(1, options.epochs + 1):
        order = torch.randperm(len(encoded), generator=generator).tolist()
        batches = (
            order[at : at + options.batch_size] for at in range(0, len(order), options.batch_size)
        )
        title = f"{label}: epoch {epoch}/{options.epochs}"
        record = run_epoch(
            epoch, batches, step, total=len(order), unit="lines", bar=progress, title=title
        )
        losses.append(record["loss"])
    model.eval()
    return losses


def _save_dir(target: Path, write) -> None:
    """Write a directory beside ``target`` and rename it into place: complete or absent."""
    partial = target.with_name(f".{target.name}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    write(partial)
    os.replace(partial, target)


def _shared_tokenizer(out_dir: Path, texts: list[list[str]], options: MLMTrainingParams):
    path = out_dir / TOKENIZER_DIR
    if not path.is_dir():
        tokenizer = text_tokenizer((line for part in texts for line in part), options.vocab_size)
        _save_dir(path, tokenizer.save_pretrained)
    return AutoTokenizer.from_pretrained(path)


def _check_resumable(out_dir: Path, options: SeriesParams) -> None:
    path = out_dir / SERIES_FILE
    if not path.is_file():
        return
    before = json.loads(path.read_text(encoding="utf-8")).get("options")
    recipe = options.recipe()
    if before != recipe:
        changed = sorted(k for k in recipe if (before or {}).get(k) != recipe[k])
        raise UserError(
            f"{path}: this series was trained with other options ({', '.join(changed)} differ); "
            "give a new output directory or delete this one"
        )


def _write_series(
    out_dir: Path, kg: TemporalKG, kg_dir: Path, options: SeriesParams, done: list
) -> None:
    record = {
        "format": FORMAT,
        "kg": str(kg_dir),
        "kg_fingerprint": kg.fingerprint,  # a probe set of another KG is named when probed
        "options": options.recipe(),
        "tokenizer": TOKENIZER_DIR,
        "periods": [{**asdict(p), "final_loss": p.final_loss} for p in done],
    }
    atomic_write_text(out_dir / SERIES_FILE, json.dumps(record, indent=2) + "\n")


def train_series(
    kg_dir: Path,
    periods: Sequence[Period],
    out_dir: Path,
    options: SeriesParams,
    progress: Progress | None = None,
) -> SeriesResult:
    """Train (or finish training) one model per period into ``out_dir``; see the module doc.
    ``options.seed`` None counts as 0."""
    if options.seed is None:
        options = options.model_copy(update={"seed": 0})
    kg_dir, out_dir = Path(kg_dir), Path(out_dir)
    kg = TemporalKG.load(kg_dir)
    texts = period_texts(kg, load_snippets(kg_dir), periods, options.fact_sentences)
    texts = with_replay(texts, options.replay, options.seed)
    out_dir.mkdir(parents=True, exist_ok=True)
    _check_resumable(out_dir, options)
    if not (out_dir / SERIES_FILE).is_file():
        _write_series(out_dir, kg, kg_dir, options, [])  # so a rerun can check its options
    tokenizer = _shared_tokenizer(out_dir, texts, options)
    mentions = MentionFinder(tokenizer, kg.entities.column("label").to_pylist())
    done: list[PeriodResult] = []
    task = progress.add_task("periods", total=len(periods)) if progress else None
    for index, (period, lines) in enumerate(zip(periods, texts, strict=True)):
        label = period.label()
        parent = done[-1].period if done else None
        target = out_dir / label
        if (target / TRAINING_FILE).is_file():
            record = json.loads((target / TRAINING_FILE).read_text(encoding="utf-8"))
            if record.get("parent") != parent:
                raise UserError(
                    f"{target}: trained after {record.get('parent')!r}, not {parent!r}; "
                    "the periods differ from the earlier run: give a new output directory"
                )
            keys = ("period", "dir", "parent", "examples", "losses")
            result = PeriodResult(**{k: record[k] for k in keys})
        else:
            model = start_model(out_dir / parent if parent else None, tokenizer, options)
            losses = train_period(
                model,
                tokenizer,
                lines,
                options,
                options.seed * 1000 + index,
                progress=progress,
                label=label,
                mentions=mentions,
            )
            result = PeriodResult(label, label, parent, len(lines), losses)
            record = {**asdict(result), "options": options.recipe(), "format": FORMAT}

            def write(path: Path, model=model, record=record) -> None:
                with quiet_transformers():
                    model.save_pretrained(path)
                tokenizer.save_pretrained(path)
                atomic_write_text(path / TRAINING_FILE, json.dumps(record, indent=2) + "\n")

            _save_dir(target, write)
        done.append(result)
        _write_series(out_dir, kg, kg_dir, options, done)
        if task is not None:
            progress.advance(task)
    if task is not None:
        progress.remove_task(task)
    return SeriesResult(out_dir, done)
