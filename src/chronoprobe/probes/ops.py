"""The ``probe`` operation: one view over a probe set, for one model, a list of them or a series.

``chronoprobe probe VIEW DATA -m MODEL -o OUT`` and a step ``{kind: probe, params: {view: VIEW,
model: [...]}, inputs: {data: <build step>}}`` are the same operation and write the same
files. Inputs: ``data`` (a directory holding the rows, e.g. a ``build`` step; on the command line
also the rows file itself) and, instead of ``model``, optionally ``series`` (a model series:
every model of it, named by its period). Each model answers in shards of rows
(:mod:`chronoprobe.probes.answering`): a killed run resumes at the first shard not written.
Metrics are computed once, from every model's answers, for a local, a Ray and a served run
alike.

Outputs: ``predictions.parquet`` (one row per model and answered row: ``model``, the row's keys,
the gold answers and the view's fields), ``skipped.parquet`` (rows the view could not answer,
with the reason), ``metrics.json`` (per model: the view's metrics, rows predicted and skipped
per reason, warnings; at the top the figures over all models) and, for views over drift rows,
``matrix.json`` (for rows with periods: the models x periods matrix of every metric, with the
t-1/t/t+1 window; see :mod:`chronoprobe.probes.series_matrix`).
"""

from __future__ import annotations

import json
import shutil
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from chronoprobe.atomic import atomic_write_text
from chronoprobe.errors import UserError
from chronoprobe.models.spec import ModelSpec, parse_spec
from chronoprobe.probes.answering import ProbeRows
from chronoprobe.probes.view import SKIPPED, VIEWS, ServedOptions, View
from chronoprobe.step_context import SHARDS_DIR, StepContext
from chronoprobe.steps import Input, ReadOnce, variant_kind

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
        "trained",
        "A step that trained a model (`train memorize`, `train pretrain`): probe its model/.",
        required=False,
        option=True,
        formerly="model",
    ),
)
MODEL_INPUT = "model"  # the name the model of input `trained` goes by in the outputs


def _declared_models(view: View, params: Any) -> list[tuple[str, ModelSpec]]:
    """The models the params name: their specs, or what the view's own options name."""
    if params.model:
        return [(str(spec), spec) for spec in params.model]
    return view.answered_by(params) if view.answered_by else []


def _check(params: Any, inputs: frozenset[str]) -> list[str]:
    view = VIEWS.get(params.view)
    problems = []
    own = view.answered_by(params) if view.answered_by else []
    if len({"series", "trained"} & inputs) + bool(params.model) + bool(own) != 1:
        problems.append(
            "model: give the models to probe in one way: model specs (`-m SPEC`; in a "
            "config, `model: [spec, ...]`), a model series (`--series DIR`; input `series`), "
            "a step's trained model (`--trained DIR`; input `trained`), or, for the generate "
            "view, answers produced elsewhere (`--responses FILE`)"
        )
    elif params.model and len(set(params.model)) != len(params.model):
        problems.append("model: a model is listed twice")
    if params.engine != "ray" and (params.address is not None or params.workers is not None):
        problems.append("`address` and `workers` apply to `engine: ray` only")
    if params.engine == "ray" and params.device_map is not None:
        problems.append("`device_map` applies to `engine: local` only (a Ray actor holds one GPU)")
    problems += _check_served(params)
    problems += _unreachable_hub_ids(params)
    problems += _column_problems(view)
    if view.check:
        problems += view.check(params, inputs)
    return problems


def _unreachable_hub_ids(params: Any) -> list[str]:
    """A hub id neither cached here nor reachable, told as the options are read (loading it
    would import torch to fail half a minute later)."""
    from chronoprobe.core.hub import missing_hub_model

    said = (missing_hub_model(s.body) for s in params.model or [] if s.scheme == "hub")
    return [f"model: {problem}" for problem in said if problem]


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


def _check_served(params: Any) -> list[str]:
    """Options of served models need one (and Ray actors hold models loaded there)."""
    served = [spec for spec in params.model or () if spec.served]
    if served and params.engine == "ray":
        return [
            f"engine ray loads models on the cluster's GPUs; {served[0]} is answered by its "
            "server: use engine local, with --concurrency requests in flight"
        ]
    if served:
        return []
    fields = ServedOptions.model_fields
    given = [n for n in fields if getattr(params, n) != fields[n].default]
    return [f"`{given[0]}` applies to openai: models only (-m openai:MODEL)"] if given else []


def _fingerprint(params: Any) -> list | ReadOnce | None:
    """What the models' names do not say: their fingerprints (the content of local weight
    files, a served model's server, a responses file's content)."""
    options = params.load_options()
    chosen = _declared_models(VIEWS.get(params.view), params)
    prints = [spec.fingerprint(options) for _, spec in chosen]
    if None in prints:  # a model object given in Python: nothing on disk says what it is
        return ReadOnce("a model given as a Python object has no files to key a cache on")
    return prints or None


def _models(view: View, params: Any, inputs: dict[str, Path]) -> list[tuple[str, ModelSpec]]:
    """(name, spec) of every model to probe, in order."""
    declared = _declared_models(view, params)
    if declared:
        return declared
    if "trained" in inputs:
        trained = inputs["trained"] / "model"
        if not trained.is_dir():
            raise UserError(f"{inputs['trained']}: input `trained` holds no model/ directory")
        return [(MODEL_INPUT, parse_spec(str(trained)))]
    if not inputs["series"].is_dir():
        raise UserError(f"{inputs['series']}: a file; input `series` is a model series folder")
    path = inputs["series"] / "series.json"
    if not path.is_file():
        raise UserError(f"{path}: no series.json; is input `series` a model series?")
    series = json.loads(path.read_text(encoding="utf-8"))
    return [(p["period"], parse_spec(str(inputs["series"] / p["dir"]))) for p in series["periods"]]


def _check_series(rows: ProbeRows, models: list, series: Path, warn) -> None:
    """Before any model is loaded: a mismatch of the series and the rows costs nothing."""
    from chronoprobe.probes.series_inputs import check_series_kg, check_series_periods, series_kg

    periods = [own["period"] for _, own in (rows.expansion or {}).values()]
    names = [name for name, _ in models]
    check_series_periods(periods, names, rows.file, warn, series_kg(series))
    check_series_kg(rows.file, series, warn)


def _predictions(view: View, rows: ProbeRows, models: list, ctx: StepContext) -> list[dict]:
    """Every model's answers, one prediction per row given, written to predictions.parquet
    (answered rows) and skipped.parquet (the others, with the reason)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from chronoprobe.probes.answering import ModelShards

    schema = pa.schema([("model", pa.string()), *view.columns(), (SKIPPED, pa.string())])
    answered, skipped = [], []
    for index, (name, _) in enumerate(models):
        for p in ModelShards(ctx, index).answers(rows):
            (answered if p.get(SKIPPED) is None else skipped).append({**p, "model": name})
    keys = ["model", *view.keys, SKIPPED]
    skipped_schema = pa.schema([schema.field(k) for k in keys])
    pq.write_table(
        pa.Table.from_pylist([{k: p.get(k) for k in keys} for p in skipped], skipped_schema),
        ctx.out_dir / "skipped.parquet",
    )
    pq.write_table(
        pa.Table.from_pylist(answered, schema).drop_columns([SKIPPED]),
        ctx.out_dir / "predictions.parquet",
    )
    return skipped


def run_probe_step(ctx: StepContext, params: Any, inputs: dict[str, Path]) -> None:
    """Probe models with a view; write predictions, skipped rows, metrics (and the matrix)."""
    from chronoprobe.probes.answering import answer_here
    from chronoprobe.probes.coverage import completed
    from chronoprobe.probes.grouping import count_skipped
    from chronoprobe.probes.series_matrix import read_predictions, series_tables

    view = VIEWS.get(params.view)
    if getattr(params, "seed", 0) is None:
        params = params.model_copy(update={"seed": ctx.seed})
    rows = ProbeRows.read(view, inputs["data"], params.rows, params.sample)
    models = _models(view, params, inputs)
    if "series" in inputs and view.drift is not None:
        _check_series(rows, models, inputs["series"], ctx.log.warning)
    records: dict[int, Any] = {}
    with ExitStack() as stack:
        if params.engine == "ray":  # every model at once; each record is taken in order below
            from chronoprobe.probes.ray_engine import RayProbes

            probes = RayProbes(ctx, view, params, models)
            stack.callback(probes.close)
            records = probes.start(rows)
        for index, (name, spec) in enumerate(models):
            if index in records:
                record = records[index].result()
            else:
                record = answer_here(ctx, view, params, rows, index, name, spec)
            records[index] = record
            for message in record["warnings"]:
                ctx.log.warning(f"{name}: {message}")
    skipped = _predictions(view, rows, models, ctx)
    predictions = read_predictions(ctx.out_dir / "predictions.parquet")
    per_model = {}
    for index, (name, spec) in enumerate(models):
        record = records[index]
        mine = type(params).model_validate(record["params"])
        own = [p for p in predictions if p["model"] == name]
        not_answered = [s for s in skipped if s["model"] == name]
        reasons = count_skipped(not_answered)
        ctx.log.info(f"{name}: {len(own):,} predictions, {sum(reasons.values()):,} rows skipped")
        figures = view.model_metrics(own, mine)
        found = figures.pop("warnings", [])  # what the answers told (empty ones, say)
        for message in found:
            ctx.log.warning(f"{name}: {message}")
        entry = {
            "spec": str(spec),
            "family": record["family"],
            "predicted": len(own),
            "skipped": reasons,
            "warnings": [*record["warnings"], *found],
            **({"served": record["served"]} if "served" in record else {}),
            "options": record["params"],
            **figures,
        }
        # what the figures cover of the rows given, and why the rest were left out
        coverage = completed(entry, len(rows.rows), own, not_answered)
        per_model[name] = {**entry, "coverage": coverage}
    metrics = {
        "view": view.name,
        "rows": len(rows.rows),
        "model_count": len(models),
        **view.overall(per_model, params),
        **({"selection": view.selection} if view.selection else {}),
        "models": per_model,
    }
    shutil.rmtree(ctx.out_dir / SHARDS_DIR, ignore_errors=True)
    atomic_write_text(ctx.out_dir / "metrics.json", json.dumps(metrics, indent=2) + "\n")
    periods = any(p.get("period") for p in predictions)
    if view.drift is not None and periods and view.metric_names(predictions):
        names = [n for n, _ in models]
        tables = series_tables(
            predictions, view, models=names, include_deleted=view.keeps_deleted(params)
        )
        atomic_write_text(ctx.out_dir / "matrix.json", json.dumps(tables, indent=2) + "\n")


def show(out: Path):
    """What ``chronoprobe probe`` prints: each model's figures (with their 95% intervals where
    metrics.json has them) and the rows they count, what they cover and why the rest were left
    out, the figures per form, and warnings, in a table that fits the terminal."""
    from chronoprobe.core.tables import ResultTable, figures_of
    from chronoprobe.probes.coverage import coverage_notes

    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    view = VIEWS.get(metrics["view"])
    figures = {name: figures_of(view.shown(m)) for name, m in metrics["models"].items()}
    columns = list(next(iter(figures.values()), {}))
    rows = [
        [name, *(figures[name].get(c) for c in columns), m["coverage"]["counted"]]
        for name, m in metrics["models"].items()
    ]
    n = metrics["rows"]
    notes = [note for name, m in metrics["models"].items() for note in coverage_notes(name, m)]
    notes += [
        f"{name}: warning: {w}" for name, m in metrics["models"].items() for w in m["warnings"]
    ]
    return ResultTable(
        ["model", *columns, "n"], rows, title=f"{view.name}: {n:,} rows given", notes=notes
    )


variant_kind(
    "probe",
    "view",
    VIEWS,
    run=run_probe_step,
    inputs=INPUTS,
    check=_check,
    fingerprint=_fingerprint,
    show=show,
)
