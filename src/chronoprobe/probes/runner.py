"""Run one view over one probe file: resumable shards, then predictions.jsonl and metrics.json.

Rows are cut into shards; each finished shard is a file renamed into place, so a killed run
restarts at the first missing shard. A fingerprint of the inputs (data file, model, view,
options) guards the shards: a run with different inputs starts afresh instead of mixing results.
Rows the view skipped go to skipped.jsonl with their reason, counted in metrics.json.

Deleted rows carry the previous period's answers: they are a split's test of forgetting, not
knowledge of their own period. Overall and per-period metrics leave them out by default; the
``deleted`` split keeps its own metrics either way.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

from chronoprobe.atomic import atomic_write_text
from chronoprobe.jsonl import read_jsonl, write_jsonl
from chronoprobe.probes.view import SKIPPED, VIEWS, View, check_rows_kind

SHARD_ROWS = 8192
DELETED = "deleted"


def _grouped(predictions: Sequence[dict], *fields: str) -> dict[tuple, list[dict]]:
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for p in predictions:
        key = tuple(p.get(f) for f in fields)
        if None not in key:
            groups[key].append(p)
    return dict(sorted(groups.items()))


def outside_all(include_deleted: bool = False) -> list[str]:
    """The splits left out of overall, per-period and "all" figures."""
    return [] if include_deleted else [DELETED]


def metrics_by_group(
    view: View, predictions: Sequence[dict], *, include_deleted: bool = False
) -> dict:
    """The view's metrics overall, per period, per split, and per (period, split).

    Overall and per period leave the deleted rows out unless ``include_deleted``; per split
    and per (period, split) every split has its own metrics.
    """
    left_out = outside_all(include_deleted)
    kept = [p for p in predictions if p.get("split") not in left_out]
    by_period_split: dict[str, dict] = defaultdict(dict)
    for (period, split), group in _grouped(predictions, "period", "split").items():
        by_period_split[period][split] = view.summarize(group)
    return {
        "overall_excludes": left_out,
        "overall": view.summarize(kept),
        "by_period": {k[0]: view.summarize(g) for k, g in _grouped(kept, "period").items()},
        "by_split": {k[0]: view.summarize(g) for k, g in _grouped(predictions, "split").items()},
        "by_period_split": dict(by_period_split),
    }


def count_skipped(skipped: Sequence[dict]) -> dict[str, int]:
    """Skipped rows per reason, most frequent first."""
    return dict(Counter(s[SKIPPED] for s in skipped).most_common())


def _fingerprint(data: Path, model_name: str, view: str, params, limit: int | None) -> str:
    stat = data.stat()
    options = params.model_dump(mode="json")
    key = [str(data.resolve()), stat.st_size, stat.st_mtime_ns, model_name, view, options, limit]
    return hashlib.sha256(json.dumps(key).encode()).hexdigest()


def run_probe(
    data: str | Path,
    model,
    view_name: str,
    out_dir: str | Path,
    params=None,
    *,
    shard_rows: int = SHARD_ROWS,
    progress: Callable[[float, float], None] | None = None,
    limit: int | None = None,
) -> dict:
    """Probe ``model`` with one view over ``data``; returns the metrics written to metrics.json.

    ``params`` are the view's params (its defaults when None); ``limit`` reads only the first
    rows. ``progress(done, total)`` is called in rows as work finishes, shards resumed included.
    metrics.json lists ``warnings``: what a user should know about these rows and this model.
    """
    view = VIEWS.get(view_name)
    params = params if params is not None else view.params()
    data, out_dir = Path(data), Path(out_dir)
    check_rows_kind(view, data)
    rows = list(view.read(data))[:limit]
    warnings = view.warnings(model, rows) if view.warnings else []
    shard_dir = out_dir / f".shards-{view_name}"
    fingerprint = _fingerprint(data, model.name, view_name, params, limit)
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

            write_jsonl(path, view.predict(model, chunk, params, report))
        if progress:
            progress(start + len(chunk), len(rows))
    answered = [
        p for n in range(len(starts)) for p in read_jsonl(shard_dir / f"part-{n:05d}.jsonl")
    ]
    predictions = [p for p in answered if SKIPPED not in p]
    skipped = [p for p in answered if SKIPPED in p]
    write_jsonl(out_dir / "predictions.jsonl", predictions)
    write_jsonl(out_dir / "skipped.jsonl", skipped)
    metrics = {
        "view": view_name,
        "model": model.name,
        "family": model.family,
        "data": str(data),
        "rows": len(rows),
        "predicted": len(predictions),
        "skipped": count_skipped(skipped),
        "warnings": warnings,
        "options": params.model_dump(mode="json"),
        **({"selection": view.selection} if view.selection else {}),
        **view.metrics(predictions, params),
    }
    atomic_write_text(out_dir / "metrics.json", json.dumps(metrics, indent=2) + "\n")
    shutil.rmtree(shard_dir)
    return metrics
