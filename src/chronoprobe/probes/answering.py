"""The rows of a probe step and each model's answers to them, in the step's one shard layer.

A probe step reads its rows once (:class:`ProbeRows`): the rows the user gave (``sample``
applied), and what the models are asked, which for a drift view is each distinct (query,
answer labels) once: a query whose answers do not change reads the same in every period, and
such a view's answer depends on the query and its labels alone, so a 25-year set is answered in
a fraction of the forward passes.

Each model answers the asked rows in shards of rows (:class:`ModelShards`), each a Parquet file
of the step's work area renamed into place, so a killed step resumes at the first shard not
written, of the first model not finished, and never asks a finished row again. A model's record
(its per-model params, family, warnings and a served model's usage) is written when its last
shard is. The work area belongs to the step's cache key, so its shards are always answers to
these rows, by these models, with these options.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chronoprobe.atomic import atomic_write_text
from chronoprobe.errors import UserError
from chronoprobe.models.capabilities import ReportsUsage
from chronoprobe.models.spec import ModelSpec
from chronoprobe.probes.view import SKIPPED, View, check_rows_kind, no_rows_file
from chronoprobe.step_context import SHARDS_DIR, StepContext

SHARD_ROWS = 8192  # rows a shard holds, at most


@dataclass
class ProbeRows:
    """``rows``: the view's rows of ``file`` (the first ``sample``); ``asked``: what each model
    answers; ``expansion``: for a drift view, each row's id -> (the id of the distinct query it
    is asked as, the row's own fields), else None (the rows are asked as they are)."""

    file: Path
    rows: list
    asked: list
    expansion: dict[str, tuple[str, dict]] | None = None

    @classmethod
    def read(cls, view: View, data: Path, rows_file: str | None, limit: int | None) -> ProbeRows:
        """The rows of ``data`` (the probe set's folder; its file ``rows_file`` or the view's)
        that ``view`` answers; a file of another kind is refused before any model loads."""
        path = data / (rows_file or view.rows.file)
        if not path.is_file():
            raise UserError(no_rows_file(path, f"the rows the {view.name} view reads"))
        check_rows_kind(view, path)
        if view.drift is None:
            rows = list(view.rows.read(path))[:limit]
            if not rows:
                raise UserError(f"{path}: no rows in it; nothing to probe")
            return cls(path, rows, rows)
        return _distinct_queries(path, limit)

    def chunks(self, size: int) -> list[list]:
        return [self.asked[start : start + size] for start in range(0, len(self.asked), size)]

    def per_row(self, answers: list[dict]) -> list[dict]:
        """One model's answers to the asked rows, as one prediction per row given."""
        if self.expansion is None:
            return answers
        by_query = {p["id"]: p for p in answers}
        return [{**by_query[asked], **own} for asked, own in self.expansion.values()]


def _distinct_queries(path: Path, limit: int | None) -> ProbeRows:
    """Each distinct (query, answer labels) of a drift rows file once. Every row is checked
    here, in the user's file, so a problem names its line there and not the line of the
    distinct query it would have become."""
    from chronoprobe.probes.rows import ProbeRow, numbered_probe_lines

    distinct: dict[tuple, ProbeRow] = {}
    rows: list[ProbeRow] = []
    expansion: dict[str, tuple[str, dict]] = {}
    for number, item, cloze in numbered_probe_lines(path):
        if limit is not None and len(rows) >= limit:
            break
        if item.id in expansion:
            raise UserError(f"{path}:{number}: duplicate id {item.id!r}")
        labels = item.answer_labels
        key = (item.query, tuple(sorted(labels)))
        first = distinct.setdefault(key, ProbeRow(f"q{len(distinct)}", cloze, labels, None, None))
        own = {k: getattr(item, k) for k in ("id", "period", "split", "relation", "subject")}
        expansion[item.id] = (first.id, {**own, "query": item.query, "answer_labels": labels})
        rows.append(ProbeRow(item.id, cloze, labels, item.period, item.split))
    if not rows:
        raise UserError(f"{path}: no probe rows in it; nothing to probe")
    return ProbeRows(path, rows, list(distinct.values()), expansion)


@dataclass(frozen=True)
class ModelShards:
    """One model's shards of a probe step (the ``index``-th model) and its record."""

    ctx: StepContext
    index: int

    @property
    def name(self) -> str:
        return f"model-{self.index:05d}"

    @property
    def _record(self) -> Path:
        return self.ctx.out_dir / SHARDS_DIR / f"{self.name}.json"

    def record(self) -> dict | None:
        """The model's record, once every shard of it is written (None before)."""
        if not self._record.is_file():
            return None
        return json.loads(self._record.read_text(encoding="utf-8"))

    def plan(self, rows: ProbeRows, size: int) -> list[list]:
        """The chunks of asked rows, of ``size`` rows unless an earlier attempt chose another
        size (its shards are kept, so the cut stays as it was)."""
        path = self._record.with_suffix(".plan")
        if path.is_file():
            size = int(path.read_text(encoding="utf-8"))
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, str(size))
        return rows.chunks(size)

    def missing(self, chunks: Sequence[list]) -> list[int]:
        return [n for n in range(len(chunks)) if not self.ctx.shard_path(self.name, n).is_file()]

    def write(self, view: View, number: int, answers: list[dict]) -> None:
        self.ctx.write_shard(self.name, number, shard_table(view, answers))

    def finish(self, record: dict) -> dict:
        atomic_write_text(self._record, json.dumps(record))
        return record

    def answers(self, rows: ProbeRows) -> list[dict]:
        """Every answer of the model, one per row given (in the order given)."""
        import pyarrow.parquet as pq

        chunks = len(self.plan(rows, SHARD_ROWS))
        asked = [
            row
            for n in range(chunks)
            for row in pq.read_table(self.ctx.shard_path(self.name, n)).to_pylist()
        ]
        return rows.per_row(asked)


def shard_table(view: View, answers: list[dict]) -> Any:
    """``answers`` as a table of the view's columns (and why a row was skipped); a value that
    does not fit its column's type is one line naming the view, the column and the row, not
    pyarrow's message, which names neither."""
    import pyarrow as pa

    schema = pa.schema([*view.columns(), (SKIPPED, pa.string())])
    try:
        return pa.Table.from_pylist(answers, schema=schema)
    except (pa.ArrowException, TypeError, OverflowError):
        for column in schema:
            for row in answers:
                value = row.get(column.name)
                try:
                    pa.array([value], type=column.type)
                except (pa.ArrowException, TypeError, OverflowError):
                    raise UserError(
                        f"view {view.name}: column {column.name!r} is {column.type} in its "
                        f"columns(), but predict gave {value!r} ({type(value).__name__}) for "
                        f"row {row.get('id')!r}; make the two agree"
                    ) from None
        raise


def prepared(view: View, params: Any, model: Any, rows: ProbeRows, say: Callable) -> tuple:
    """The params to probe ``model`` with (the view's per-model options) and the warnings a
    user should know about these rows and this model: one computation for every engine."""
    mine = view.for_model(params, model, say) if view.for_model else params
    warnings = view.warnings(model, rows.rows, mine) if view.warnings else []
    return mine, warnings


def model_record(mine: Any, model: Any, rows: ProbeRows, warnings: list[str]) -> dict:
    record = {
        "params": mine.model_dump(mode="json"),
        "rows": len(rows.rows),
        "family": model.family,
        "warnings": warnings,
    }
    if isinstance(model, ReportsUsage):  # what the server was asked, and said it was
        record["served"] = model.record()
    return record


def answer_here(
    ctx: StepContext, view: View, params: Any, rows: ProbeRows, index: int, name: str, spec
) -> dict:
    """Answer ``rows`` with the ``index``-th model in this process, shard by shard; returns its
    record. A model whose shards are all written is not loaded again."""
    shards = ModelShards(ctx, index)
    done = shards.record()
    if done is not None:
        return done
    model = _loaded(spec, params)
    try:
        mine, warnings = prepared(view, params, model, rows, ctx.log.info)
        chunks = shards.plan(rows, SHARD_ROWS)
        asked, missing = len(rows.asked), set(shards.missing(chunks))
        with ctx.progress_task(f"{name} ({view.name})") as progress:
            start = 0
            for number, chunk in enumerate(chunks):
                if number in missing:

                    def report(done: int, total: int, start: int = start, size=len(chunk)) -> None:
                        progress(start + size * done / max(total, 1), asked)

                    shards.write(view, number, view.predict(model, chunk, mine, report))
                start += len(chunk)
                progress(start, asked)
        record = model_record(mine, model, rows, warnings)
    finally:
        _release(model, name, ctx.log.info)
    return shards.finish(record)


def _loaded(spec: ModelSpec, params: Any) -> Any:
    """The model of ``spec``, answering from the answer cache when the step reuses answers."""
    options = params.load_options()
    model = spec.load(options)
    if params.reuse_answers and spec.answers_cached:
        from chronoprobe.core.cache_dir import default_cache_dir
        from chronoprobe.models.request_cache import answer_cache

        model = answer_cache(spec, model, default_cache_dir(), options)
    return model


def _release(model: Any, name: str, say: Callable[[str], None]) -> None:
    import gc

    from chronoprobe.models.request_cache import CachedModel

    if isinstance(model, CachedModel):
        if model.hits:
            say(f"{name}: {model.hits:,} of {model.hits + model.misses:,} answers reused")
        model.store.close()
    del model
    gc.collect()


def ray_shard_rows(asked: int, batch_size: int, actors: int) -> int:
    """About four shards per actor, each of at least a batch."""
    return min(SHARD_ROWS, max(batch_size, math.ceil(asked / (4 * actors))))
