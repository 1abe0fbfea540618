"""What a report section is made of: plain data that the page template turns into HTML.

Section functions build these and never write markup, so every section looks the same and all
escaping happens in one place (:mod:`chronoprobe.report.html`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True)
class Text:
    """A paragraph of plain text, escaped when rendered.

    ``style`` is "plain", "note" (smaller, grey: caveats) or "error" (a section that could not
    be built says so where the reader looks, instead of disappearing).
    """

    text: str
    style: Literal["plain", "note", "error"] = "plain"


@dataclass(frozen=True)
class Stats:
    """Headline numbers shown as a row of labelled tiles."""

    items: Mapping[str, Any]


@dataclass(frozen=True)
class Link:
    """A table cell that links within the page (``href`` is "#anchor") or to a run file."""

    text: str
    href: str


@dataclass(frozen=True)
class Table:
    columns: Sequence[str]
    rows: Sequence[Sequence[Any]]
    caption: str | None = None
    # rows left out of a long table; the caption says how many and where the rest lives
    omitted: int = 0


@dataclass(frozen=True)
class Image:
    """An embedded figure: a ``data:`` URI, so the page needs no other file or network."""

    uri: str
    alt: str
    caption: str | None = None
    data: Table | None = None  # the numbers behind the figure, in a collapsed table


@dataclass(frozen=True)
class Details:
    """A collapsed group of blocks (parameters, files, logs): there when wanted, not in the way."""

    summary: str
    blocks: Sequence[Block]


@dataclass(frozen=True)
class Code:
    text: str


Block = Text | Stats | Table | Image | Details | Code


@dataclass
class Section:
    title: str
    blocks: list[Block] = field(default_factory=list)


DASH = "\u2013"  # en dash: a missing value, and year ranges


class Percent(float):
    """A share in [0, 1] that reads as a percentage but stays a number (sorts, aligns right)."""

    @classmethod
    def of(cls, value: float | None) -> Percent | None:
        """A share as a cell or tile: None (shown as a dash) where there is none."""
        return None if value is None else cls(value)


def format_value(value: Any) -> str:
    """Numbers as a reader wants them: thousands separated, a few significant digits."""
    if value is None:
        return DASH
    if isinstance(value, Percent):
        return f"{value:.1%}"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return str(value)
        if value == int(value) and abs(value) < 1e15:
            return f"{int(value):,}" if abs(value) >= 1 else "0"
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        if abs(value) >= 1:
            return f"{value:.2f}"
        return f"{value:.3g}"
    return str(value)


def with_uncertainty(group: Mapping[str, Any], key: str, digits: int = 3) -> str:
    """A figure of a metrics.json dict as a table cell: "0.433 ± 0.012" (mean ± sd over seeds),
    "0.433 [0.401, 0.465]" (its 95% interval), else the figure alone; followed by the rows it
    counts where the dict's coverage record names it (" over 40 of 60 rows (66.7%)")."""
    from chronoprobe.metrics.uncertainty import with_interval

    value, sd = group.get(key), group.get(f"{key}_sd")
    if isinstance(value, int | float) and isinstance(sd, int | float):
        return f"{value:.{digits}f} ± {sd:.{digits}f}" + covered(group, key)
    if f"{key}_ci95" in group:
        return with_interval(dict(group), key, digits) + covered(group, key)
    return format_value(value)


def covered(group: Mapping[str, Any], key: str) -> str:
    """ " over N of M rows (P%)" where ``group``'s coverage record names its figure ``key``
    (see :mod:`chronoprobe.probes.coverage`), else ""."""
    from chronoprobe.probes.coverage import over_rows

    coverage = group.get("coverage")
    if not isinstance(coverage, Mapping) or key not in (coverage.get("figures") or ()):
        return ""
    return f" {over_rows(coverage)}"


def flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    """Nested dicts (metrics, params) to dotted keys; lists of scalars stay one value."""
    if not isinstance(data, Mapping):
        return {prefix: data} if prefix else {"value": data}
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, Mapping) and value:
            out.update(flatten(value, name))
        elif isinstance(value, list):
            out[name] = ", ".join(format_value(v) for v in value) if value else "[]"
        elif isinstance(value, Mapping):
            out[name] = "{}"
        else:
            out[name] = value
    return out


def key_value_table(data: Mapping[str, Any], caption: str | None = None, limit: int = 200) -> Table:
    """A two-column table of flattened ``data``, cut at ``limit`` rows with the count said."""
    items = list(flatten(data).items())
    return Table(
        columns=["name", "value"],
        rows=[[k, v] for k, v in items[:limit]],
        caption=caption,
        omitted=max(0, len(items) - limit),
    )
