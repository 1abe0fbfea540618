"""The ``probe`` operation: one view over a probe set, for one model, a list of them or a series.

``chronoprobe probe VIEW DATA -m MODEL -o OUT`` and a step ``{kind: probe, params: {view: VIEW,
models: [...]}, inputs: {data: <build step>}}`` are the same operation and write the same
files. Inputs: ``data`` (a directory holding the rows, e.g. a ``build`` step; on the command line
also the rows file itself) and, instead of ``models``, optionally ``series`` (a model series:
every model of it, named by its period). Each model is one shard: a killed run resumes at the
first model not finished, and inside it at the runner's last finished shard of rows.

Outputs: ``predictions.parquet`` (one row per model and answered row: ``model``, the row's keys,
the gold answers and the view's fields), ``skipped.parquet`` (rows the view could not answer,
with the reason), ``metrics.json`` (per model: the view's metrics, rows predicted and skipped
per reason, warnings; at the top the figures over all models) and, for views over drift rows,
``matrix.json`` (for rows with periods: the models x periods matrix of every metric, with the
t-1/t/t+1 window; see
:mod:`chronoprobe.probes.series_matrix`).
"""

from __future__ import annotations

import gc
import json
import shutil
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from chronoprobe.atomic import atomic_write_text
from chronoprobe.probes.view import (
    SERVED_OPTIONS,
    SKIPPED,
    VIEWS,
    View,
    check_rows_kind,
    no_rows_file,
)
from chronoprobe.steps import SHARDS_DIR, Input, StepContext, variant_kind

INPUTS = (
    Input(
        "data",
        "The probe set: a directory of rows (e.g. from `build`), or its rows file.",
        file_param="rows",
    ),
    Input(
        "series",
        "A model series (`train series`): probe every model of it, named by its period.",
        required=False,
        option=True,
    ),
    Input(
        "model",
        "A step that trained a model (`train memorize`, `train pretrain`): probe its model/.",
        required=False,
        option=True,
    ),
)
MODEL_INPUT = "model"  # the name the model of input `model` goes by in the outputs


def _check(params: Any, inputs: frozenset[str]) -> list[str]:
    problems = []
    responses = getattr(params, "responses", None) is not None
    if len({"series", "model"} & inputs) + bool(params.models) + responses != 1:
        problems.append(
            "models: give the models to probe in one way: model specs (`-m SPEC`; in a "
            "config, `models: [spec, ...]`), a model series (`--series DIR`; input `series`), "
            "a step's trained model (`--model DIR`; input `model`), or, for the generate "
            "view, answers produced elsewhere (`--responses FILE`)"
        )
    elif params.models and len(set(params.models)) != len(params.models):
        problems.append("models: a model is listed twice")
    if params.engine != "ray" and (params.address is not None or params.workers is not None):
        problems.append("address and workers apply to engine ray only")
    if params.engine == "ray" and params.device_map is not None:
        problems.append("device_map applies to engine local only (a Ray actor holds one GPU)")
    problems += _check_served(params)
    problems += _column_problems(VIEWS.get(params.view))
    unknown = sorted(set(getattr(params, "cutoff_years", {})) - set(params.models or ()))
    if unknown and params.models:
        problems.append(f"cutoff_years: names models not in `models`: {', '.join(unknown)}")
    return problems


def _column_problems(view: View) -> list[str]:
    """What can be told of a view's ``columns()`` before any model is loaded: each has a
    pyarrow type, and each of the view's keys, which every prediction repeats, is one of them
    (else the predictions table is refused after every row was answered)."""
    import pyarrow as pa

    columns = dict(view.columns())
    untyped = [name for name, kind in columns.items() if not isinstance(kind, pa.DataType)]
    if untyped:
        kind = columns[untyped[0]]
        return [
            f"view: the {view.name} view's columns() gives {untyped[0]!r} the type {kind!r}, "
            "not a pyarrow type (e.g. pa.string())"
        ]
    missing = [key for key in view.keys if key not in columns]
    if missing:
        return [
            f"view: the {view.name} view's columns() lacks {missing[0]!r}, one of its keys "
            f"({', '.join(view.keys)}), which every prediction repeats; add it, e.g. "
            f"({missing[0]!r}, pa.string())"
        ]
    return []


def _predictions_table(view: View, answered: list[dict], schema: Any) -> Any:
    """``answered`` as a table of ``schema``; a value that does not fit its column's type
    (as the view's ``columns()`` gives it) is one line naming the view, the column and the
    row, not pyarrow's message, which names neither."""
    import pyarrow as pa

    try:
        return pa.Table.from_pylist(answered, schema=schema)
    except (pa.ArrowException, TypeError, OverflowError):
        for column in schema:
            for row in answered:
                value = row.get(column.name)
                try:
                    pa.array([value], type=column.type)
                except (pa.ArrowException, TypeError, OverflowError):
                    raise ValueError(
                        f"view {view.name}: column {column.name!r} is {column.type} in its "
                        f"columns(), but predict gave {value!r} ({type(value).__name__}) for "
                        f"row {row.get('id')!r}; make the two agree"
                    ) from None
        raise


def _check_served(params: Any) -> list[str]:
    """Options of served models need one (and Ray actors hold models loaded there)."""
    from chronoprobe.models.served import is_served

    served = [spec for spec in params.models or () if is_served(spec)]
    if served and params.engine == "ray":
        return [
            f"engine ray loads models on the cluster's GPUs; {served[0]} is answered by its "
            "server: use engine local, with --concurrency requests in flight"
        ]
    if served:
        return []
    fields = type(params).model_fields
    given = [n for n in SERVED_OPTIONS if getattr(params, n) != fields[n].default]
    return [f"`{given[0]}` applies to openai: models only (-m openai:MODEL)"] if given else []


def _weights_fingerprint(params: Any) -> list | None:
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
    responses = getattr(params, "responses", None)  # answers judged instead of a model's
    if responses is not None and responses.is_file():
        out.append([str(responses), responses.stat().st_size, responses.stat().st_mtime_ns])
    return out or None


def _models(params: Any, inputs: dict[str, Path]) -> list[tuple[str, str]]:
    """(name, spec) of every model to probe, in order (answers read from a file: its name
    and path)."""
    if params.models:
        return [(spec, spec) for spec in params.models]
    responses = getattr(params, "responses", None)
    if responses is not None:
        return [(params.name or responses.stem, str(responses))]
    if "model" in inputs:
        trained = inputs["model"] / "model"
        if not trained.is_dir():
            raise ValueError(f"{inputs['model']}: input `model` holds no model/ directory")
        return [(MODEL_INPUT, str(trained))]
    if not inputs["series"].is_dir():
        raise ValueError(f"{inputs['series']}: a file; input `series` is a model series folder")
    path = inputs["series"] / "series.json"
    if not path.is_file():
        raise ValueError(f"{path}: no series.json; is input `series` a model series?")
    series = json.loads(path.read_text(encoding="utf-8"))
    return [(p["period"], str(inputs["series"] / p["dir"])) for p in series["periods"]]


def _rows_file(view: View, params: Any, inputs: dict[str, Path]) -> Path:
    path = inputs["data"] / (params.rows or view.rows_file)
    if not path.is_file():
        raise ValueError(no_rows_file(path, f"the rows the {view.name} view reads"))
    check_rows_kind(view, path)
    return path


def _distinct_queries(data: Path, target: Path, limit: int | None) -> dict[str, tuple[str, dict]]:
    """Write each distinct (query, answer labels) once to ``target``; map row ids to them.

    A query whose answers do not change reads the same in every period, and every cloze view's
    output depends on the query and the labels only, so a 25-year probe set is answered in a
    fraction of the forward passes. Returns row id -> (distinct id, the row's own fields).
    """
    from chronoprobe.jsonl import write_jsonl
    from chronoprobe.probes.rows import numbered_probe_lines

    distinct: dict[tuple, dict] = {}
    rows: dict[str, tuple[str, dict]] = {}
    # every row is checked here, in the user's file, so a problem names its line there and
    # not the line of the distinct query it would have become
    for number, row, _ in numbered_probe_lines(data):
        if limit is not None and len(rows) >= limit:
            break
        row_id, query, labels = row.id, row.query, row.answer_labels
        if row_id in rows:
            raise ValueError(f"{data}:{number}: duplicate id {row_id!r}")
        key = (query, tuple(sorted(labels)))
        first = distinct.setdefault(
            key, {"id": f"q{len(distinct)}", "query": query, "answer_labels": labels}
        )
        own = {k: getattr(row, k) for k in ("period", "split", "relation", "subject")}
        rows[row_id] = (first["id"], {**own, "id": row_id, "query": query, "answer_labels": labels})
    if not rows:
        raise ValueError(f"{data}: no probe rows in it; nothing to probe")
    if not target.is_file():  # a resumed run keeps the file the runner's shards were made from
        write_jsonl(target, list(distinct.values()))
    return rows


def _probe_one(
    ctx: StepContext,
    view: View,
    params: Any,
    name: str,
    spec: str,
    data: Path,
    rows_file: Path,
    work: Path,
) -> tuple[list[dict], Any, dict]:
    """One model's answers (predictions and skipped rows) to the rows of ``data`` (the rows
    file, or its distinct queries), its options, and its family, rows and warnings (counted
    over the rows file)."""
    from chronoprobe.jsonl import read_jsonl
    from chronoprobe.models import load_model
    from chronoprobe.probes.runner import run_probe

    model = view.stand_in(params) if view.stand_in else None
    cached = model is None and params.reuse_answers
    if model is None:
        model = load_model(spec, device_map=params.device_map, **params.load_options())
    served = model if hasattr(model, "record") else None
    if cached:
        from chronoprobe.core.cache_dir import default_cache_dir
        from chronoprobe.models.request_cache import answer_cache

        model = answer_cache(spec, model, default_cache_dir(), params.answer_key())
    mine = view.for_model(params, model, ctx.log.info) if view.for_model else params
    limit = None if view.drift_rows else params.limit  # drift rows were limited already
    try:
        with ctx.progress_task(f"{name} ({view.name})") as progress:
            metrics = run_probe(data, model, view.name, work, mine, progress=progress, limit=limit)
        if data != rows_file and view.warnings:  # distinct queries: count over the rows
            every = list(view.read(rows_file))[: params.limit]
            metrics["warnings"] = view.warnings(model, every, mine)
    finally:
        if cached:
            if model.hits:
                ctx.log.info(
                    f"{name}: {model.hits:,} of {model.hits + model.misses:,} answers reused"
                )
            model.store.close()
        del model
        gc.collect()
    answers = [*read_jsonl(work / "predictions.jsonl"), *read_jsonl(work / "skipped.jsonl")]
    run = {k: metrics[k] for k in ("rows", "family", "warnings")}
    if served is not None:  # what the server was asked, and said it was
        run["served"] = served.record()
    return answers, mine, run


def _split_skipped(merged: Path, keys: list[str]) -> list[dict]:
    """Keep the answered rows in ``merged``; write the skipped ones to skipped.parquet."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = pq.read_table(merged)
    answered = pc.is_null(table.column(SKIPPED))
    skipped = table.filter(pc.invert(answered)).select([*keys, SKIPPED])
    pq.write_table(skipped, merged.with_name("skipped.parquet"))
    pq.write_table(table.filter(answered).drop_columns([SKIPPED]), merged)
    return skipped.to_pylist()


def _probe_models(ctx, view, params, models, data, rows_file, rows, remote, schema) -> None:
    """Each model's answers as one shard of the step, in order: from ``remote`` (its future,
    by model number) when the model was given to Ray, else probed here."""
    area = ctx.out_dir / SHARDS_DIR
    for index in ctx.shards("predictions", len(models)):
        name, spec = models[index]
        work = area / "runs" / f"{index:05d}"
        if index in remote:
            answers, mine, run = remote[index].result()
        else:
            answers, mine, run = _probe_one(ctx, view, params, name, spec, data, rows_file, work)
        for message in run["warnings"]:
            ctx.log.warning(f"{name}: {message}")
        if rows is not None:
            by_query = {p["id"]: p for p in answers}
            answered = [{**by_query[q], **own, "model": name} for q, own in rows.values()]
        else:
            answered = [{**p, "model": name} for p in answers]
        ctx.write_shard("predictions", index, _predictions_table(view, answered, schema))
        record = {"params": mine.model_dump(mode="json"), **run}
        atomic_write_text(area / f"model-{index:05d}.json", json.dumps(record))
        shutil.rmtree(work)
        skips = sum(p.get(SKIPPED) is not None for p in answered)
        ctx.log.info(f"{name}: {len(answered) - skips:,} predictions, {skips:,} rows skipped")


def run_probe_step(ctx: StepContext, params: Any, inputs: dict[str, Path]) -> None:
    """Probe models with a view; write predictions, skipped rows, metrics (and the matrix)."""
    import pyarrow as pa

    from chronoprobe.probes.runner import count_skipped
    from chronoprobe.probes.series_matrix import read_predictions, series_tables

    view = VIEWS.get(params.view)
    if getattr(params, "seed", 0) is None:
        params = params.model_copy(update={"seed": ctx.seed})
    data, models = _rows_file(view, params, inputs), _models(params, inputs)
    rows_file = data
    area = ctx.out_dir / SHARDS_DIR
    area.mkdir(parents=True, exist_ok=True)
    rows = None
    if view.drift_rows:
        rows = _distinct_queries(data, area / "queries.jsonl", params.limit)
        data = area / "queries.jsonl"
        if "series" in inputs:  # before any model is loaded: a mismatch costs nothing
            from chronoprobe.probes.series_inputs import (
                check_series_kg,
                check_series_periods,
                series_kg,
            )

            periods = [own["period"] for _, own in rows.values()]
            names = [name for name, _ in models]
            kg = series_kg(inputs["series"])
            check_series_periods(periods, names, rows_file, ctx.log.warning, kg)
            check_series_kg(rows_file, inputs["series"], ctx.log.warning)
    schema = pa.schema([("model", pa.string()), *view.columns(), (SKIPPED, pa.string())])
    with ExitStack() as stack:
        remote = {}
        todo = [i for i in range(len(models)) if not ctx.shard_path("predictions", i).is_file()]
        if params.engine == "ray" and todo:  # every model at once, taken in order below
            from chronoprobe.probes.ray_engine import RayProbes

            probes = RayProbes(ctx, view, params, models)
            stack.callback(probes.close)
            remote = probes.start(todo, data, rows_file, area)
        _probe_models(ctx, view, params, models, data, rows_file, rows, remote, schema)
    merged = ctx.merge_shards("predictions")
    skipped = _split_skipped(merged, ["model", *view.keys])
    predictions = read_predictions(merged)
    per_model, read = {}, 0
    for index, (name, spec) in enumerate(models):
        record = json.loads((area / f"model-{index:05d}.json").read_text(encoding="utf-8"))
        mine, read = type(params).model_validate(record["params"]), record["rows"]
        own = [p for p in predictions if p["model"] == name]
        per_model[name] = {
            "spec": spec,
            "family": record["family"],
            "predicted": len(own),
            "skipped": count_skipped([s for s in skipped if s["model"] == name]),
            "warnings": record["warnings"],
            **({"served": record["served"]} if "served" in record else {}),
            "options": record["params"],
            **view.model_metrics(own, mine),
        }
    shutil.rmtree(area, ignore_errors=True)
    metrics = {
        "view": view.name,
        "rows": len(rows) if rows is not None else read,
        "model_count": len(models),
        **view.overall(per_model, params),
        **({"selection": view.selection} if view.selection else {}),
        "models": per_model,
    }
    atomic_write_text(ctx.out_dir / "metrics.json", json.dumps(metrics, indent=2) + "\n")
    periods = any(p.get("period") for p in predictions)
    if view.drift_rows and periods and view.metric_names(predictions):
        tables = series_tables(
            predictions,
            view.name,
            models=[n for n, _ in models],
            include_deleted=getattr(params, "include_deleted", False),  # cloze params have it
        )
        atomic_write_text(ctx.out_dir / "matrix.json", json.dumps(tables, indent=2) + "\n")


def show(out: Path):
    """What ``chronoprobe probe`` prints: each model's figures (with their 95% intervals where
    metrics.json has them), skipped rows and warnings, in a table that fits the terminal."""
    from chronoprobe.core.tables import ResultTable, figures_of

    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    view = VIEWS.get(metrics["view"])
    figures = {name: figures_of(view.shown(m)) for name, m in metrics["models"].items()}
    columns = list(next(iter(figures.values()), {}))
    rows = [
        [
            name,
            *(figures[name].get(c) for c in columns),
            m["predicted"],
            sum(m["skipped"].values()),
        ]
        for name, m in metrics["models"].items()
    ]
    n = metrics["rows"]
    notes = [
        f"{name}: skipped {k:,} of {n:,} rows: {reason}"
        for name, m in metrics["models"].items()
        for reason, k in m["skipped"].items()
    ]
    notes += [
        f"{name}: asked {m['asked_as_question']:,} of {n:,} rows as questions (gap first)"
        for name, m in metrics["models"].items()
        if m.get("asked_as_question")
    ]
    notes += [
        f"{name}: warning: {w}" for name, m in metrics["models"].items() for w in m["warnings"]
    ]
    return ResultTable(
        ["model", *columns, "predicted", "skipped"],
        rows,
        title=f"{view.name}: {n:,} rows",
        notes=notes,
    )


variant_kind(
    "probe",
    "view",
    VIEWS,
    run=run_probe_step,
    inputs=INPUTS,
    check=_check,
    fingerprint=_weights_fingerprint,
    show=show,
)
