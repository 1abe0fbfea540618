"""chronoprobe from Python: a probe or a whole experiment in one call, its results in hand.

:func:`probe` is ``chronoprobe probe VIEW DATA -m MODEL`` and :func:`run` is ``chronoprobe run
CONFIG``: the same operations, the same step cache and the same files underneath, so a result
computed in a notebook is served from the cache to the command line and back. Each returns a
result object holding its metrics (every figure with its 95% interval) and, for a probe, its
predictions as a pyarrow table (``to_pandas()`` for a data frame)::

    import chronoprobe

    result = chronoprobe.probe("pll", "drift/", model="package:smollm2", sample=50)
    result.figure("temporal_acc")      # Figure(value=0.31, low=0.19, high=0.45, n=50)
    result.predictions.to_pandas()     # one row per model and answered row

A model may also be an adapter object built in Python (any
:class:`~chronoprobe.models.base.LanguageModel`): it has no weight files to key a cache on, so
such a probe is computed every time.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chronoprobe.errors import UserError
from chronoprobe.models.spec import LoadOptions, ModelSource, ModelSpec
from chronoprobe.renames import python_warning, rename_keys, renamed_fields


@dataclass(frozen=True)
class Figure:
    """One figure of a metrics.json group, with its 95% interval and the rows it covers."""

    name: str
    value: float | None
    low: float | None
    high: float | None
    n: int | None

    def __str__(self) -> str:
        if self.value is None:
            return f"{self.name}: none"
        interval = f" [{self.low:.3f}, {self.high:.3f}]" if self.low is not None else ""
        over = f" over {self.n:,} rows" if self.n is not None else ""
        return f"{self.name} {self.value:.3f}{interval}{over}"


def _figure(group: dict, name: str) -> Figure:
    if name not in group:
        known = sorted(k for k in group if f"{k}_ci95" in group)
        raise KeyError(f"no figure {name!r} here; figures: {', '.join(known) or 'none'}")
    low, high = (group.get(f"{name}_ci95") or (None, None))[:2]
    return Figure(name, group[name], low, high, group.get(f"{name}_n", group.get("n")))


@dataclass(frozen=True)
class ProbeResult:
    """A probe's outputs: ``metrics`` (metrics.json), ``predictions`` and ``skipped`` (pyarrow
    tables), ``matrix`` (matrix.json of a drift view, else None) and ``out``, the folder they
    were written to (None when no ``out`` was given)."""

    view: str
    metrics: dict
    predictions: Any
    skipped: Any
    matrix: dict | None = None
    out: Path | None = None

    @classmethod
    def read(cls, folder: Path, keep: bool) -> ProbeResult:
        import pyarrow.parquet as pq

        metrics = json.loads((folder / "metrics.json").read_text(encoding="utf-8"))
        matrix = folder / "matrix.json"
        return cls(
            metrics["view"],
            metrics,
            pq.read_table(folder / "predictions.parquet"),
            pq.read_table(folder / "skipped.parquet"),
            json.loads(matrix.read_text(encoding="utf-8")) if matrix.is_file() else None,
            folder if keep else None,
        )

    @property
    def models(self) -> list[str]:
        return list(self.metrics["models"])

    def model(self, name: str | None = None) -> dict:
        """One model's metrics.json entry (the only model's when ``name`` is None)."""
        entries = self.metrics["models"]
        if name is None:
            if len(entries) != 1:
                raise UserError(f"{len(entries)} models: name one of {', '.join(entries)}")
            return next(iter(entries.values()))
        if name not in entries:
            raise KeyError(f"no model {name!r}; models: {', '.join(entries)}")
        return entries[name]

    def figure(self, name: str, model: str | None = None) -> Figure:
        """A figure of one model's entry (or its ``overall`` group), with its interval."""
        entry = self.model(model)
        group = entry if f"{name}_ci95" in entry or "overall" not in entry else entry["overall"]
        return _figure(group, name)

    def rows(self, model: str | None = None) -> list[dict]:
        """The predictions as dicts (a model's only, when named), map columns as dicts."""
        from chronoprobe.probes.series_matrix import prediction_rows

        rows = prediction_rows(self.predictions)
        return rows if model is None else [r for r in rows if r["model"] == model]

    def to_pandas(self) -> Any:
        return self.predictions.to_pandas()

    def __repr__(self) -> str:
        rows = self.metrics.get("rows")
        return (
            f"ProbeResult(view={self.view!r}, models={self.models}, rows={rows}, "
            f"predictions={self.predictions.num_rows})"
        )


class ObjectSpec(ModelSpec):
    """An adapter object given in Python, as a model spec. Nothing on disk says what it is, so
    a probe of it is never cached, nor are its answers."""

    scheme = "object"
    answers_cached = False

    def __init__(self, model: Any) -> None:
        super().__init__(getattr(model, "name", "") or type(model).__name__)
        object.__setattr__(self, "model", model)

    def locate(self) -> ModelSource:
        return ModelSource(self.text)

    def weight_files(self) -> list[Path]:
        return []

    def fingerprint(self, options: LoadOptions | None = None) -> None:  # type: ignore[override]
        return None

    def load(self, options: LoadOptions) -> Any:
        return self.model


def _as_spec(model: Any) -> ModelSpec | str:
    return model if isinstance(model, str | ModelSpec) else ObjectSpec(model)


def probe(
    view: str,
    data: str | Path,
    *,
    model: Any = None,
    series: str | Path | None = None,
    trained: str | Path | None = None,
    out: str | Path | None = None,
    cache: bool = True,
    **options: Any,
) -> ProbeResult:
    """Probe models with ``view`` over the probe set ``data`` (a folder from ``build`` or
    ``import``, or its rows file), as ``chronoprobe probe VIEW DATA`` does.

    The models: ``model`` (one spec, e.g. ``"package:smollm2"``, or an adapter object, or a
    list of them), or ``series`` (a ``train series`` folder: each of its models), or
    ``trained`` (a ``train memorize``/``train pretrain`` folder). ``options`` are the view's
    options by their config names (``sample=50``, ``batch_size=32``, ``match="names"``...);
    ``chronoprobe probe VIEW --help`` lists them. ``out``: a folder to keep the files in (as
    ``--out``); without it they are read into the result and the folder is removed.
    ``cache=False`` recomputes (``--no-cache``)."""
    from pydantic import ValidationError

    from chronoprobe.params import refused
    from chronoprobe.probes.view import VIEWS
    from chronoprobe.runs.single import run_operation
    from chronoprobe.steps import get_kind

    member = VIEWS.get(view)  # an unknown view is refused before anything else
    kind = get_kind("probe")
    if model is not None:
        options["model"] = model
    options = rename_keys(options, renamed_fields(member.params), python_warning)
    if options.get("model") is not None:
        chosen = options["model"]
        options["model"] = (
            [_as_spec(m) for m in chosen] if isinstance(chosen, list) else [_as_spec(chosen)]
        )
    data = Path(data)
    if data.is_file():
        options.setdefault("rows", data.name)
        data = data.parent
    inputs = {"data": data}
    for name, folder in (("series", series), ("trained", trained)):
        if folder is not None:
            inputs[name] = Path(folder)
    values = {"view": view, **options}
    try:
        params = kind.params.model_validate(values)
    except ValidationError as err:  # named as given here; a value never repeated (a key)
        raise refused(err, values, lambda name: f"{name}=", echo=False) from None
    problems = kind.problems(params, inputs)
    if problems:
        raise UserError("; ".join(problems))
    with tempfile.TemporaryDirectory(prefix="chronoprobe-") as scratch:
        target = Path(out) if out is not None else Path(scratch) / "out"
        run_operation(kind, params, inputs, target, f"probe {view}", use_cache=cache)
        return ProbeResult.read(target, keep=out is not None)


@dataclass(frozen=True)
class StepOutcome:
    """One step of a run: its id, kind, folder, whether it came from the cache, and its
    metrics.json (None for a step that writes none)."""

    id: str
    kind: str
    dir: Path
    cached: bool
    metrics: dict | None

    def probe(self) -> ProbeResult:
        """A probe step's outputs, as :func:`probe` returns them."""
        if self.kind != "probe":
            raise UserError(f"step {self.id} is a {self.kind} step, not a probe")
        return ProbeResult.read(self.dir, keep=True)


@dataclass(frozen=True)
class RunOutcome:
    """A run's steps, by id, and its run directory and report."""

    run_dir: Path
    steps: dict[str, StepOutcome]
    report: Path | None

    def __getitem__(self, step_id: str) -> StepOutcome:
        if step_id not in self.steps:
            raise KeyError(f"no step {step_id!r}; steps: {', '.join(self.steps)}")
        return self.steps[step_id]


def run(
    config: str | Path,
    out: str | Path | None = None,
    *,
    overrides: list[str] | tuple[str, ...] = (),
    cache: bool = True,
    trust_plugins: bool = False,
    seeds: list[int] | None = None,
) -> RunOutcome:
    """Run an experiment config as ``chronoprobe run CONFIG --out OUT`` does (``out`` default:
    ``runs/<name>``); ``overrides`` are ``--set KEY=VALUE`` values."""
    from chronoprobe.runs.engine import run_experiment

    result = run_experiment(
        config, out, overrides, use_cache=cache, trust_plugins=trust_plugins, seeds=seeds
    )
    steps = {}
    for step in result.steps:
        path = step.dir / "metrics.json"
        metrics = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
        steps[step.id] = StepOutcome(step.id, step.kind, step.dir, step.cached, metrics)
    return RunOutcome(result.run_dir, steps, result.report)
