"""Does a probe set fit the model series it is probed with?

A series' models are named by the period each was trained up to, and the drift analysis reads
a row against the model of its own period: the matrix's diagonal and the t-1 / t / t+1 window
exist only for rows whose period names a model. A quarterly probe set probed with a yearly
series has no such row: every figure would be computed, none would mean what the paper's do.
So the ``probe`` step refuses a probe set none of whose rows has a model of its period, warns
with the counts when only some have, and warns when the rows come from another KG than the one
the series was trained on (its models never read those facts).
"""

from __future__ import annotations

import json
import shlex
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from chronoprobe.errors import UserError
from chronoprobe.probes.series_matrix import period_order
from chronoprobe.set_files import KG_RECORD
from chronoprobe.time import Granularity, Period


def _granularity(labels: Sequence[str]) -> str | None:
    """The granularity's name when every label is a period of one granularity."""
    try:
        kinds = {Period.parse(label).granularity for label in labels}
    except ValueError:
        return None
    return Granularity(kinds.pop()).name.lower() if len(kinds) == 1 else None


def _span(labels: Sequence[str]) -> str:
    """ "2016..2020 (year)": the first and last of some periods, and their granularity."""
    ordered = period_order(labels)
    if not ordered:
        return "no period"
    kind = _granularity(ordered)
    span = ordered[0] if len(ordered) == 1 else f"{ordered[0]}..{ordered[-1]}"
    return f"{span} ({kind})" if kind else span


def _build_hint(models: Sequence[str], kg: str | None) -> str:
    """What to build instead: the command itself, with the series' own KG where it is known."""
    ordered = period_order(models)
    kind = _granularity(ordered)
    if not ordered or kind is None:
        return "build the probe set over the periods the models are named by"
    first, last = ordered[0], ordered[-1]
    words = ["chronoprobe", "build", "drift", kg or "KG", "--granularity", kind]
    words += ["--first", first, "--last", last, "-o", f"drift-{first}-{last}"]
    said = ":" if kg else ", e.g."
    return f"build the probe set over the models' periods{said} `{shlex.join(words)}`"


def series_kg(series_dir: Path) -> str | None:
    """The KG directory a series was trained on, as its series.json names it (None: unknown)."""
    try:
        record = json.loads((series_dir / "series.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    kg = record.get("kg") if isinstance(record, dict) else None
    return kg if isinstance(kg, str) and Path(kg).is_dir() else None


def check_series_periods(
    row_periods: Sequence[str | None],
    models: Sequence[str],
    where: Path,
    warn: Callable[[str], None],
    kg: str | None = None,
) -> None:
    """Refuse rows none of which has a model of its period (one line, with what to build from
    ``kg``, the series' KG); warn with the counts when some have none."""
    counts = Counter(row_periods)
    total = sum(counts.values())
    named = set(models)
    with_model = sum(n for period, n in counts.items() if period in named)
    if with_model == total:
        return
    dated = [p for p in counts if p is not None]
    if not with_model:
        kinds = [f"of {_span(dated)}"] if dated else []
        kinds += ["without a period"] if None in counts else []
        raise UserError(
            f"{where}: no row has a model of its period in the series: the rows are "
            f"{' and '.join(kinds)}, the models of {_span(list(models))}; {_build_hint(models, kg)}"
        )
    missing = [p for p in counts if p not in named]
    periods = _span([p for p in missing if p is not None])
    if None in counts:
        periods += f", {counts[None]:,} without a period"
    warn(
        f"{where}: {with_model:,} of {total:,} rows have a model of their period in the series "
        f"and {total - with_model:,} have none ({periods}): every model probes them, but no "
        "model is at t for them, so they add no diagonal cell and no window"
    )


def check_series_kg(rows_file: Path, series_dir: Path, warn: Callable[[str], None]) -> None:
    """Warn when the probe set and the series record different KGs (silent where either
    record is missing: imported sets have no KG of their own, older series no fingerprint)."""
    record = rows_file.parent / KG_RECORD
    series_file = series_dir / "series.json"
    if not record.is_file() or not series_file.is_file():
        return
    try:
        ours = json.loads(record.read_text(encoding="utf-8"))
        theirs = json.loads(series_file.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        return  # not ours to judge here: the readers of these files name what is wrong
    mine = ours.get("fingerprint") if isinstance(ours, dict) else None
    its = theirs.get("kg_fingerprint") if isinstance(theirs, dict) else None
    if isinstance(mine, str) and isinstance(its, str) and mine != its:
        warn(
            f"{rows_file.parent} was built from KG {ours.get('name')!r} ({mine[:12]}), the "
            f"series {series_dir} was trained on {theirs.get('kg')} ({its[:12]}): its models "
            "never read these rows' facts"
        )
