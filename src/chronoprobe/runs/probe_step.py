"""The ``probe`` step kind: one evaluation view over a drift probe set, for one or many models.

Inputs: ``data`` (a ``build`` step that wrote ``examples.jsonl``) and, instead of the
``models`` param, optionally ``series`` (a ``series`` step: every model of the series, named by
its period). Each model is one shard of the step: a killed run resumes at the first model not
finished, and inside that model at the runner's own last finished shard of rows.

Outputs: ``predictions.parquet`` (one row per model and probe row: ``model``, ``id``,
``period``, ``split``, ``relation``, ``subject``, ``query`` and the view's fields),
``metrics.json`` (per model: overall, per period, per split, per period and split, and the rows
the view skipped per reason) and ``matrix.json`` (the models x periods matrix of every metric
of the view, over all rows and per split, with the t-1/t/t+1 window; see
:mod:`chronoprobe.probes.series_matrix`). Deleted rows count in the ``deleted`` split only:
overall, per period and ``all`` leave them out unless the param ``include_deleted`` is set.
"""

from __future__ import annotations

import gc
import json
import shutil
from pathlib import Path
from typing import Literal

import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field

from chronoprobe.atomic import atomic_write_text
from chronoprobe.runs.steps import SHARDS_DIR, StepContext, step_kind

KEY_FIELDS = ("model", "id", "period", "split", "relation", "subject", "query")
VIEW_FIELDS: dict[str, list[tuple[str, pa.DataType]]] = {
    "single-token": [("predictions", pa.list_(pa.string())), ("gold_rank", pa.int64())],
    "multi-token": [
        ("prediction", pa.string()),
        (
            "candidates",
            pa.list_(
                pa.struct(
                    [
                        ("text", pa.string()),
                        ("logprob", pa.float64()),
                        ("mean_logprob", pa.float64()),
                    ]
                )
            ),
        ),
        ("exact_match", pa.float64()),
        ("f1", pa.float64()),
        ("rouge_l", pa.float64()),
    ],
    "pll": [
        ("label_scores", pa.map_(pa.string(), pa.float64())),
        ("label_tokens", pa.map_(pa.string(), pa.int64())),
    ],
}


class ProbeParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    view: Literal["single-token", "multi-token", "pll"] = "pll"
    models: list[str] | None = None  # model specs; leave out when the input `series` is given
    top_k: int = Field(10, ge=1)  # single-token: predictions listed per row
    max_tokens: int = Field(5, ge=1)  # multi-token: M
    batch_size: int = Field(64, ge=1)
    device: str = "auto"
    family: Literal["masked", "causal", "seq2seq"] | None = None  # default: from the config
    # count deleted rows (the previous period's answers) in overall, per-period and "all" figures
    include_deleted: bool = False


def predictions_schema(view: str) -> pa.Schema:
    return pa.schema([(name, pa.string()) for name in KEY_FIELDS] + VIEW_FIELDS[view])


def _weights_fingerprint(params: ProbeParams) -> list | None:
    """Local model files change without their names changing: key on their sizes and mtimes."""
    from chronoprobe.models.spec import resolve_spec

    out = []
    for spec in params.models or []:
        try:
            source = resolve_spec(spec)
        except (ValueError, FileNotFoundError):
            continue  # the run reports it with the step's id
        base = Path(source.location)
        files = [base / source.gguf_file] if source.gguf_file else sorted(base.glob("*"))
        out += [[str(f), f.stat().st_size, f.stat().st_mtime_ns] for f in files if f.is_file()]
    return out or None


def _models(ctx: StepContext, params: ProbeParams, inputs: dict[str, Path]) -> list[tuple]:
    """(name, spec) of every model to probe, in order."""
    if ("series" in inputs) == bool(params.models):
        raise ValueError(
            f"{ctx.step_id}: give either the param `models: [spec, ...]` or the input "
            "`series: <series step id>`, not both and not neither"
        )
    if params.models:
        if len(set(params.models)) != len(params.models):
            raise ValueError(f"{ctx.step_id}: a model is listed twice in `models`")
        return [(spec, spec) for spec in params.models]
    path = inputs["series"] / "series.json"
    if not path.is_file():
        raise ValueError(f"{path}: no series.json; is input `series` a series step?")
    series = json.loads(path.read_text(encoding="utf-8"))
    return [(p["period"], str(inputs["series"] / p["dir"])) for p in series["periods"]]


def _examples(ctx: StepContext, inputs: dict[str, Path]) -> Path:
    if "data" not in inputs:
        raise ValueError(f"{ctx.step_id}: a probe step needs the input `data: <build step id>`")
    path = inputs["data"] / "examples.jsonl"
    if not path.is_file():
        raise ValueError(f"{path}: no examples.jsonl; is input `data` a drift build step?")
    return path


def _distinct_queries(data: Path, target: Path) -> dict[str, tuple[str, dict]]:
    """Write each distinct (query, answer labels) once to ``target``; map row ids to them.

    A query whose answers do not change reads the same in every period, and every view's
    output depends on the query and the labels only, so a 25-year probe set is answered in a
    fraction of the forward passes. Returns row id -> (distinct id, the row's own fields).
    """
    from chronoprobe.jsonl import read_jsonl, write_jsonl

    distinct: dict[tuple, dict] = {}
    rows: dict[str, tuple[str, dict]] = {}
    for number, row in enumerate(read_jsonl(data), start=1):
        try:
            row_id, query, labels = str(row["id"]), row["query"], row["answer_labels"]
            key = (query, tuple(sorted(labels)))
        except (KeyError, TypeError) as err:
            raise ValueError(
                f"{data}:{number}: a probe row needs id, query and answer_labels ({err!r})"
            ) from None
        if row_id in rows:
            raise ValueError(f"{data}:{number}: duplicate id {row_id!r}")
        first = distinct.setdefault(
            key, {"id": f"q{len(distinct)}", "query": query, "answer_labels": labels}
        )
        own = {k: row.get(k) for k in ("period", "split", "relation", "subject")}
        rows[row_id] = (first["id"], {**own, "id": row_id, "query": query})
    if not target.is_file():  # a resumed run keeps the file the runner's shards were made from
        write_jsonl(target, list(distinct.values()))
    return rows


def _probe_one(ctx, params, name: str, spec: str, data: Path, work: Path) -> list[dict]:
    """The runner's answers for the distinct queries in ``data``: predictions and skipped rows."""
    from chronoprobe.jsonl import read_jsonl
    from chronoprobe.models import load_model
    from chronoprobe.probes import ViewOptions, run_probe

    model = load_model(
        spec, family=params.family, device=params.device, batch_size=params.batch_size
    )
    options = ViewOptions(top_k=params.top_k, max_tokens=params.max_tokens)

    def warn(message: str) -> None:
        ctx.log.warning(f"{name}: {message} (counted over distinct queries)")

    try:
        with ctx.progress_task(f"{name} ({params.view})") as progress:
            run_probe(data, model, params.view, work, options, progress=progress, warn=warn)
    finally:
        del model
        gc.collect()
    return [*read_jsonl(work / "predictions.jsonl"), *read_jsonl(work / "skipped.jsonl")]


def _metrics(
    params: ProbeParams,
    predictions: list[dict],
    skipped: list[dict],
    models: list[tuple],
    rows: int,
) -> dict:
    """Per model: the headline metric, the runner's groups and the skipped rows per reason."""
    from chronoprobe.probes import VIEWS, metrics_by_group
    from chronoprobe.probes.runner import count_skipped, outside_all
    from chronoprobe.probes.series_matrix import METRICS, metric_value, with_temporal_ranks

    view, left_out = params.view, outside_all(params.include_deleted)
    if view == "pll":
        predictions = with_temporal_ranks(predictions)
    headline = METRICS[view][0]
    per_model = {}
    for name, spec in models:
        mine = [p for p in predictions if p["model"] == name]
        kept = [p for p in mine if p["split"] not in left_out]
        per_model[name] = {
            "spec": spec,
            "predicted": len(mine),
            "skipped": count_skipped([p for p in skipped if p["model"] == name]),
            headline: metric_value(view, headline, kept),
            **metrics_by_group(VIEWS[view], mine, include_deleted=params.include_deleted),
        }
    values = [m[headline] for m in per_model.values() if m[headline] is not None]
    selection = VIEWS[view].selection
    return {
        "view": view,
        "rows": rows,
        "model_count": len(models),
        "metric": headline,
        headline: sum(values) / len(values) if values else None,  # mean over models
        "overall_excludes": left_out,
        **({"selection": selection} if selection else {}),
        "models": per_model,
    }


def _split_skipped(merged: Path) -> list[dict]:
    """Keep the answered rows in ``merged``; write the skipped ones to skipped.parquet."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from chronoprobe.probes.views import SKIPPED

    table = pq.read_table(merged)
    answered = pc.is_null(table.column(SKIPPED))
    skipped = table.filter(pc.invert(answered)).select([*KEY_FIELDS, SKIPPED])
    pq.write_table(skipped, merged.with_name("skipped.parquet"))
    pq.write_table(table.filter(answered).drop_columns([SKIPPED]), merged)
    return skipped.to_pylist()


@step_kind("probe", ProbeParams, fingerprint=_weights_fingerprint)
def run_probe_step(ctx: StepContext, params: ProbeParams, inputs: dict[str, Path]) -> None:
    from chronoprobe.probes.series_matrix import read_predictions, series_tables
    from chronoprobe.probes.views import SKIPPED

    data = _examples(ctx, inputs)
    models = _models(ctx, params, inputs)
    distinct_file = ctx.out_dir / SHARDS_DIR / "queries.jsonl"
    distinct_file.parent.mkdir(parents=True, exist_ok=True)
    rows = _distinct_queries(data, distinct_file)
    schema = predictions_schema(params.view).append(pa.field(SKIPPED, pa.string()))
    for index in ctx.shards("predictions", len(models)):
        name, spec = models[index]
        work = ctx.out_dir / SHARDS_DIR / "runs" / f"{index:05d}"
        answers = {p["id"]: p for p in _probe_one(ctx, params, name, spec, distinct_file, work)}
        answered = [{**answers[query], **own, "model": name} for query, own in rows.values()]
        ctx.write_shard("predictions", index, pa.Table.from_pylist(answered, schema=schema))
        shutil.rmtree(work)
        skips = sum(SKIPPED in p for p in answered)
        ctx.log.info(
            f"{name}: {len(answered) - skips:,} predictions, {skips:,} rows skipped "
            f"({len(answers):,} distinct)"
        )
    merged = ctx.merge_shards("predictions")
    skipped = _split_skipped(merged)
    predictions = read_predictions(merged)
    shutil.rmtree(ctx.out_dir / SHARDS_DIR, ignore_errors=True)
    metrics = _metrics(params, predictions, skipped, models, len(rows))
    atomic_write_text(ctx.out_dir / "metrics.json", json.dumps(metrics, indent=2) + "\n")
    tables = series_tables(
        predictions,
        params.view,
        models=[n for n, _ in models],
        include_deleted=params.include_deleted,
    )
    atomic_write_text(ctx.out_dir / "matrix.json", json.dumps(tables, indent=2) + "\n")
