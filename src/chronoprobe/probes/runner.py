"""Run one view over one probe file: resumable shards, then predictions.jsonl and metrics.json.

Rows are cut into shards; each finished shard is a file renamed into place, so a killed run
restarts at the first missing shard. A fingerprint of the inputs (data file, model, view,
options) guards the shards: a run with different inputs starts afresh instead of mixing results.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path

from chronoprobe.atomic import atomic_write_text
from chronoprobe.jsonl import read_jsonl, write_jsonl
from chronoprobe.probes.rows import read_rows
from chronoprobe.probes.views import VIEWS, View, ViewOptions

SHARD_ROWS = 8192


def _grouped(predictions: Sequence[dict], *fields: str) -> dict[tuple, list[dict]]:
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for p in predictions:
        key = tuple(p.get(f) for f in fields)
        if None not in key:
            groups[key].append(p)
    return dict(sorted(groups.items()))


def metrics_by_group(view: View, predictions: Sequence[dict]) -> dict:
    """The view's metrics overall, per period, per split, and per (period, split)."""
    by_period_split: dict[str, dict] = defaultdict(dict)
    for (period, split), group in _grouped(predictions, "period", "split").items():
        by_period_split[period][split] = view.summarize(group)
    return {
        "overall": view.summarize(predictions),
        "by_period": {k[0]: view.summarize(g) for k, g in _grouped(predictions, "period").items()},
        "by_split": {k[0]: view.summarize(g) for k, g in _grouped(predictions, "split").items()},
        "by_period_split": dict(by_period_split),
    }


def _fingerprint(data: Path, model_name: str, view: str, options: ViewOptions) -> str:
    stat = data.stat()
    key = [str(data.resolve()), stat.st_size, stat.st_mtime_ns, model_name, view, asdict(options)]
    return hashlib.sha256(json.dumps(key).encode()).hexdigest()


def run_probe(
    data: str | Path,
    model,
    view_name: str,
    out_dir: str | Path,
    options: ViewOptions | None = None,
    *,
    shard_rows: int = SHARD_ROWS,
    progress: Callable[[float, float], None] | None = None,
) -> dict:
    """Probe ``model`` with one view over ``data``; returns the metrics written to metrics.json.

    ``progress(done, total)`` is called in rows as work finishes, shards resumed included.
    """
    if view_name not in VIEWS:
        raise ValueError(f"unknown view {view_name!r}; choose one of {', '.join(VIEWS)}")
    view, options = VIEWS[view_name], options or ViewOptions()
    data, out_dir = Path(data), Path(out_dir)
    rows = (view.read or read_rows)(data)
    shard_dir = out_dir / f".shards-{view_name}"
    fingerprint = _fingerprint(data, model.name, view_name, options)
    stamp = shard_dir / "fingerprint"
    if not stamp.is_file() or stamp.read_text() != fingerprint:
        shutil.rmtree(shard_dir, ignore_errors=True)
        shard_dir.mkdir(parents=True)
        atomic_write_text(stamp, fingerprint)
    starts = range(0, len(rows), shard_rows)
    for number, start in enumerate(starts):
        chunk = rows[start : start + shard_rows]
        path = shard_dir / f"part-{number:05d}.jsonl"
        if not path.is_file():

            def report(done: int, total: int, start: int = start, size: int = len(chunk)) -> None:
                if progress:
                    progress(start + size * done / max(total, 1), len(rows))

            write_jsonl(path, view.predict(model, chunk, options, report))
        if progress:
            progress(start + len(chunk), len(rows))
    predictions = [
        p for n in range(len(starts)) for p in read_jsonl(shard_dir / f"part-{n:05d}.jsonl")
    ]
    write_jsonl(out_dir / "predictions.jsonl", predictions)
    metrics = {
        "view": view_name,
        "model": model.name,
        "family": model.family,
        "data": str(data),
        "rows": len(rows),
        "predicted": len(predictions),
        "options": asdict(options),
        **(
            view.metrics(predictions, options)
            if view.metrics
            else metrics_by_group(view, predictions)
        ),
    }
    atomic_write_text(out_dir / "metrics.json", json.dumps(metrics, indent=2) + "\n")
    shutil.rmtree(shard_dir)
    return metrics
