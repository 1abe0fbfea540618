"""Report sections per step kind: a registry filled by one decorator per kind.

Adding a section for a new step kind is one function::

    @section("tkg", headline=("hits@1", "mrr"))
    def tkg_section(step_dir: Path, record: dict) -> Section:
        metrics = read_metrics(step_dir)
        return Section("Link prediction", [embed(grouped_bars(...), alt="...")])

Sections that ship with chronoprobe are imported by name when first needed (like step kinds),
so building a report loads only the sections it shows. A member of a kind with variants has
its own section under ``KIND:MEMBER`` (a view's ``probe:span-ppl``, a builder's
``build:drift``), else its kind's (any view's ``probe``, any builder's ``build``); a kind with
none gets :func:`generic_section`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chronoprobe.errors import UserError
from chronoprobe.jsonl import read_json_object
from chronoprobe.registry import Registry
from chronoprobe.report.blocks import Block, Section, Text, key_value_table

if TYPE_CHECKING:
    from chronoprobe.report.rundir import RunInfo, StepInfo

SectionFunction = Callable[[Path, dict], Section | None]
Headline = Callable[[dict[str, Any]], dict[str, Any]]  # metrics.json -> {label: figure}
# (the run, its finished steps of one section kind, in config order) -> run-wide blocks
CompareFunction = Callable[["RunInfo", list["StepInfo"]], list[Block]]


@dataclass(frozen=True)
class SectionKind:
    kind: str
    build: SectionFunction
    # metrics.json keys shown in the summary table (default: the first few numbers), or a
    # function of metrics.json giving the figures to show, for a kind whose headline is derived
    headline: tuple[str, ...] | Headline | None = None
    # comparisons across every step of this section kind, shown atop the first one's section
    compare: CompareFunction | None = None


# step kind or KIND:MEMBER -> its section; the sections that ship with chronoprobe are named
# by the module that registers them, imported when one is first shown
SECTIONS: Registry[SectionKind] = Registry(
    "report section",
    {
        "kg": "chronoprobe.report.kg_section",
        "memorize": "chronoprobe.report.lamatk_section",
        "probe:recite": "chronoprobe.report.lamatk_section",
        "build": "chronoprobe.report.build_section",
        "build:drift": "chronoprobe.report.build_section",
        "build:lamatk": "chronoprobe.report.build_section",
        "build:cronq": "chronoprobe.report.build_section",
        "build:ecbd": "chronoprobe.report.build_section",
        "build:dates": "chronoprobe.report.build_section",
        "build:timeline-oracle": "chronoprobe.report.timeline_section",
        "probe:span-ppl": "chronoprobe.report.ecbd_section",
        "probe:generate": "chronoprobe.report.generative_section",
        "probe:date-context": "chronoprobe.report.generative_section",
        "tkg": "chronoprobe.report.tkg_section",
        "probe": "chronoprobe.report.view_section",
        "probe:single-token": "chronoprobe.report.drift_section",
        "probe:multi-token": "chronoprobe.report.drift_section",
        "probe:pll": "chronoprobe.report.drift_section",
        "probe:cutoff": "chronoprobe.report.cutoff_section",
        "probe:doc-cutoff": "chronoprobe.report.doc_cutoff_section",
        "kgqa": "chronoprobe.report.kgqa_section",
        "series": "chronoprobe.report.series_section",
        "report": "chronoprobe.report.sections",
    },
)


def section(
    kind: str,
    *,
    headline: Sequence[str] | Headline | None = None,
    compare: CompareFunction | None = None,
) -> Callable[[SectionFunction], SectionFunction]:
    """Register ``build(step_dir, record) -> Section`` as the report section of step ``kind``
    (or of one member of a kind with variants: ``probe:VIEW``, ``build:FAMILY``).

    ``record`` is the step's ``step.json``. Return None to leave the step out of the report body
    (it still has its row in the summary table). ``compare(run, steps)`` gets every finished
    step of the kind, so that a section can set several runs of one experiment side by side
    without reading its sibling steps itself.
    """

    def register(function: SectionFunction) -> SectionFunction:
        shown = headline if callable(headline) or headline is None else tuple(headline)
        SECTIONS.add(kind, SectionKind(kind, function, shown or None, compare))
        return function

    return register


def _variant(kind: str, record: dict | None) -> str | None:
    """``kind:member`` for a step of a kind with variants (``probe:span-ppl``), else None."""
    from chronoprobe.steps import STEP_KINDS

    if not record or kind not in STEP_KINDS:
        return None
    variants = STEP_KINDS.get(kind).variants
    member = (record.get("params") or {}).get(variants.key) if variants else None
    return f"{kind}:{member}" if member else None


def section_kind(kind: str, record: dict | None = None) -> SectionKind:
    """The section of a step: its kind's member's own (``probe:span-ppl``), else its kind's."""
    for key in (_variant(kind, record), kind):
        if key is not None and key in SECTIONS:
            return SECTIONS.get(key)
    return SectionKind(kind, generic_section)


def step_id_of(step_dir: Path, record: dict) -> str:
    """A step's id as its step.json records it; its folder's name for a record without one."""
    return str(record.get("id", step_dir.name))


def no_metrics(title: str) -> Section:
    """The section of a step that should have written a metrics.json and did not."""
    return Section(title, [Text("The step wrote no metrics.json.", style="error")])


def read_metrics(step_dir: Path) -> dict[str, Any]:
    """A step's ``metrics.json`` ({} when it wrote none); bad JSON names the file and line."""
    path = step_dir / "metrics.json"
    if not path.exists():
        return {}
    if not path.is_file():  # a pipe or a device would be read forever
        raise UserError(f"{path}: not a regular file")
    return read_json_object(path, "metrics")


def over_seeds(steps: list[StepInfo]) -> list[tuple[str, dict[str, Any]]]:
    """(label, metrics) per config step: a step run once as it is, a step repeated over seeds
    as one entry, "<step> (N seeds)", whose figures are the means over its copies with their
    standard deviations (``<figure>_sd``, which error bars then show)."""
    from chronoprobe.metrics.uncertainty import mean_over_seeds

    groups: dict[str, list[StepInfo]] = {}
    for step in steps:
        groups.setdefault(str(step.record.get("step", step.id)), []).append(step)
    out = []
    for name, copies in groups.items():
        if len(copies) == 1 and "seed" not in copies[0].record:
            out.append((copies[0].id, read_metrics(copies[0].dir)))
        else:
            merged = mean_over_seeds([read_metrics(s.dir) for s in copies])
            out.append((f"{name} ({len(copies)} seeds)", merged))
    return out


def side_by_side(
    noun: str, plot: Callable[[list[tuple[str, dict[str, Any]]]], Block]
) -> CompareFunction:
    """A comparison that plots the metrics of every step of the kind in one figure, under a
    line that counts them ("The run's 3 QA models, side by side:"); a step repeated over seeds
    is one entry, its mean ± sd over them (:func:`over_seeds`). A lone step is plotted only
    when it was repeated over several seeds: its copies' sections show each seed, and this
    figure their mean ± sd, which no section shows."""

    def compare(run: RunInfo, steps: list[StepInfo]) -> list[Block]:
        entries = over_seeds(steps)
        seeds = max((m.get("seeds", 1) for _, m in entries), default=1)
        if len(entries) == 1 and seeds > 1:
            note = f"{entries[0][0]}: the mean over the seeds, its error bar ± one sd"
        elif len(entries) < 2:
            return []
        else:
            note = f"The run's {len(entries)} {noun}, side by side"
            if seeds > 1:
                note += " (a step repeated over seeds: the mean, its error bar ± one sd)"
        return [Text(note + ":"), plot(entries)]

    return compare


def answered_nothing(model: str, metrics: dict[str, Any]) -> Text | None:
    """A note for a model of a probe step that answered no row, saying why its rows were
    skipped; None when it answered some."""
    if metrics.get("predicted", 1):
        return None
    reasons = "; ".join(f"{n:,} {why}" for why, n in (metrics.get("skipped") or {}).items())
    return Text(
        f"{model} answered none of the rows" + (f" (skipped: {reasons})" if reasons else "") + ".",
        style="error",
    )


def per_model_section(
    step_dir: Path, record: dict, title: str, blocks_of: Callable[[str, dict], list[Block]]
) -> Section:
    """A probe step's section titled ``title: <step id>``: ``blocks_of(model, metrics)`` for
    each of its models (a note instead for a model that answered nothing)."""
    title = f"{title}: {record.get('id', step_dir.name)}"
    models = read_metrics(step_dir).get("models") or {}
    if not models:
        return no_metrics(title)
    blocks: list[Block] = []
    for model, metrics in models.items():
        note = answered_nothing(model, metrics)
        blocks.extend([note] if note else blocks_of(model, metrics))
    return Section(title, blocks)


def generic_section(step_dir: Path, record: dict) -> Section:
    """Parameters and every metric, for step kinds without a section of their own."""
    metrics = read_metrics(step_dir)
    if metrics:
        blocks = [key_value_table(metrics, caption="Metrics (metrics.json)")]
    else:
        blocks = [Text(f"Step kind {record.get('kind')!r} wrote no metrics.json.", style="note")]
    return Section(f"Step {record.get('id', step_dir.name)}", blocks)


@section("report")
def _report_section(step_dir: Path, record: dict) -> None:
    """The report step's output is this page: nothing to show about it."""
    return None
