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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chronoprobe.atomic import atomic_write_text
from chronoprobe.jsonl import read_jsonl, write_jsonl
from chronoprobe.probes.view import DELETED, SKIPPED, VIEWS, View, check_rows_kind

SHARD_ROWS = 8192


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


def _fingerprint(
    data: Path, model_name: str, view: str, params, limit: int | None, shard_rows: int
) -> str:
    stat = data.stat()
    options = params.model_dump(mode="json")
    key = [str(data.resolve()), stat.st_size, stat.st_mtime_ns, model_name, view, options, limit]
    return hashlib.sha256(json.dumps([*key, shard_rows]).encode()).hexdigest()


@dataclass
class ShardedProbe:
    """One model's probe of one rows file, in shards of rows, each a file renamed into place:
    :meth:`missing` are the shards still to answer, :meth:`write` keeps one (in any order), and
    :meth:`finish` writes predictions.jsonl, skipped.jsonl and metrics.json from all of them.
    A probe whose shards were made from other inputs starts afresh."""

    view: View
    params: Any
    data: Path
    out_dir: Path
    rows: list
    shard_rows: int

    @classmethod
    def start(
        cls,
        data: str | Path,
        model_name: str,
        view_name: str,
        out_dir: str | Path,
        params=None,
        *,
        shard_rows: int = SHARD_ROWS,
        limit: int | None = None,
    ) -> ShardedProbe:
        view = VIEWS.get(view_name)
        params = params if params is not None else view.params()
        data, out_dir = Path(data), Path(out_dir)
        rows = list(view.read(data))[:limit]
        if not rows:
            raise ValueError(f"{data}: no rows in it; nothing to probe")
        probe = cls(view, params, data, out_dir, rows, shard_rows)
        fingerprint = _fingerprint(data, model_name, view_name, params, limit, shard_rows)
        stamp = probe.shard_dir / "fingerprint"
        if not stamp.is_file() or stamp.read_text() != fingerprint:
            shutil.rmtree(probe.shard_dir, ignore_errors=True)
            probe.shard_dir.mkdir(parents=True)
            atomic_write_text(stamp, fingerprint)
        return probe

    @property
    def shard_dir(self) -> Path:
        return self.out_dir / f".shards-{self.view.name}"

    def _path(self, number: int) -> Path:
        return self.shard_dir / f"part-{number:05d}.jsonl"

    @property
    def shards(self) -> int:
        return len(range(0, len(self.rows), self.shard_rows))

    def chunk(self, number: int) -> list:
        return self.rows[number * self.shard_rows : (number + 1) * self.shard_rows]

    def missing(self) -> list[int]:
        return [n for n in range(self.shards) if not self._path(n).is_file()]

    def write(self, number: int, predictions: Sequence[dict]) -> None:
        write_jsonl(self._path(number), predictions)

    def finish(self, model, warnings: list[str]) -> dict:
        """Gather the shards; ``model`` (its ``name`` and ``family``) is named in metrics.json."""
        answered = [p for n in range(self.shards) for p in read_jsonl(self._path(n))]
        predictions = [p for p in answered if SKIPPED not in p]
        skipped = [p for p in answered if SKIPPED in p]
        write_jsonl(self.out_dir / "predictions.jsonl", predictions)
        write_jsonl(self.out_dir / "skipped.jsonl", skipped)
        view, params = self.view, self.params
        metrics = {
            "view": view.name,
            "model": model.name,
            "family": model.family,
            "data": str(self.data),
            "rows": len(self.rows),
            "predicted": len(predictions),
            "skipped": count_skipped(skipped),
            "warnings": warnings,
            "options": params.model_dump(mode="json"),
            **({"selection": view.selection} if view.selection else {}),
            **view.model_metrics(predictions, params),
        }
        atomic_write_text(self.out_dir / "metrics.json", json.dumps(metrics, indent=2) + "\n")
        shutil.rmtree(self.shard_dir)
        return metrics


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
    check_rows_kind(VIEWS.get(view_name), Path(data))  # before anything of the model is used
    probe = ShardedProbe.start(
        data, model.name, view_name, out_dir, params, shard_rows=shard_rows, limit=limit
    )
    view, rows = probe.view, probe.rows
    warnings = view.warnings(model, rows, probe.params) if view.warnings else []
    missing = set(probe.missing())
    for number in range(probe.shards):
        start, chunk = number * shard_rows, probe.chunk(number)
        if number in missing:

            def report(done: int, total: int, start: int = start, size: int = len(chunk)) -> None:
                if progress:
                    progress(start + size * done / max(total, 1), len(rows))

            probe.write(number, view.predict(model, chunk, probe.params, report))
        if progress:
            progress(start + len(chunk), len(rows))
    return probe.finish(model, warnings)
