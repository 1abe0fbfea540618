"""Result tables that fit the terminal, and the same tables for a paper (Markdown, LaTeX, CSV,
JSON).

A rich table squeezed into 80 columns cuts its headers ("accura…") and folds its cells, so a
model name comes out as "package / :smollm / 2". A :class:`ResultTable` picks, each time it is
printed, the first layout that fits the console without folding anything:

1. the table as it is;
2. the same table with abbreviated headers, and a legend under it naming each in full;
3. the table turned on its side: one row per figure, one column per model (or step);
4. one small block per row, its figures one per line.

The first column names the row (a model, a step) and is never broken. A figure with a 95%
interval is one cell, written ``0.412 [0.380, 0.440]`` in every layout and text format; CSV and
JSON give its value and its two ends as plain numbers instead, for a program to read. A figure
whose interval was left out says why in short, ``0.412 (n too small)``. Counts are written as
whole numbers wherever they stand, shares and means rounded, inside lists too.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from rich.columns import Columns
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from chronoprobe.errors import UserError

FORMATS = ("table", "markdown", "latex", "csv", "json")
MIN_HEADER = 5  # headers cut shorter read as riddles: the table is turned instead
MISSING = "-"
INTERVAL_NOTE = "In brackets: 95% intervals."


def format_number(value: float, digits: int = 3) -> str:
    """A figure as tables print it: ``digits`` decimals below 100, fewer above (a perplexity
    of 1234.5 reads ``1234``, a count of 244.0 ``244``), no thousands separators (they would
    read as list commas inside an interval)."""
    if math.isnan(value) or math.isinf(value):
        return str(value)
    if abs(value) >= 1000:
        return f"{value:.0f}"
    if abs(value) >= 100:
        return f"{value:.0f}" if value.is_integer() else f"{value:.1f}"
    return f"{value:.{digits}f}"


@dataclass(frozen=True)
class Figure:
    """A number and, where it has one, its 95% interval: one table cell. ``note`` says in
    short why a figure has no interval where one was left out ("n too small")."""

    value: float
    low: float | None = None
    high: float | None = None
    note: str | None = None

    def __str__(self) -> str:
        if self.low is None or self.high is None:
            if self.note:
                return f"{format_number(self.value)} ({self.note})"
            return cell_text(self.value)  # a count reads as one
        text = format_number(self.value)
        return f"{text} [{format_number(self.low)}, {format_number(self.high)}]"

    @classmethod
    def of(cls, group: Mapping[str, Any], name: str) -> Figure | None:
        """``group[name]`` with the interval ``group[name + "_ci95"]`` beside it, as
        metrics.json holds them (or why it has none, ``name + "_no_interval"``); None where
        the figure is missing or not a number."""
        from chronoprobe.metrics.uncertainty import NO_INTERVAL, short_reason

        value = group.get(name)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        interval = group.get(f"{name}_ci95")
        if isinstance(interval, list | tuple) and len(interval) == 2 and None not in interval:
            return cls(float(value), float(interval[0]), float(interval[1]))
        why = group.get(f"{name}{NO_INTERVAL}")
        return cls(float(value), note=short_reason(why) if isinstance(why, str) else None)


# keys that belong to the figure they are named after: its interval, its count, why it has no
# interval
FIGURE_PARTS = ("_ci95", "_n", "_no_interval")


def figures_of(group: Mapping[str, Any]) -> dict[str, Any]:
    """A metrics.json group's figures as cells: each number with its interval folded in;
    the keys that belong to a figure beside them (:data:`FIGURE_PARTS`) are dropped."""
    out: dict[str, Any] = {}
    for key, value in group.items():
        base = next((key.removesuffix(p) for p in FIGURE_PARTS if key.endswith(p)), key)
        if base != key and base in group:
            continue
        if isinstance(value, float):
            out[key] = Figure.of(group, key)
        else:
            out[key] = value
    return out


def figures_line(group: Mapping[str, Any]) -> str:
    """A metrics.json group's top-level figures as one line of a log, "statements 600,
    multi_answer_share 0.193, accuracy 0.800 [0.490, 0.943]": each rounded as a table cell
    writes it, with its interval folded in; nested groups are left out. The file keeps every
    digit."""
    shown = figures_of(group)
    return ", ".join(f"{k} {cell_text(v)}" for k, v in shown.items() if not isinstance(v, dict))


def cell_text(value: Any) -> str:
    """A cell as every text layout writes it: a whole float as the count it is ("11", not
    "11.000"), other floats rounded, lists and mappings with their numbers rounded alike."""
    if value is None:
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{int(value):,}" if value.is_integer() else format_number(value)
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_nested(k)}: {_nested(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_nested(v) for v in value) + "]"
    return str(value)


def _nested(value: Any) -> str:
    """A value inside a list or mapping cell: text quoted as JSON writes it, numbers as
    :func:`cell_text` writes them, without thousands separators (they read as list commas)."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return format_number(float(value)) if not float(value).is_integer() else str(int(value))
    return cell_text(value)


def _plain(text: str | None) -> Text | None:
    return None if text is None else Text(text)


def _numeric(value: Any) -> bool:
    return isinstance(value, Figure) or (
        isinstance(value, int | float) and not isinstance(value, bool)
    )


def _whole(cells: Sequence[Any]) -> bool:
    """Are all the numbers among ``cells`` whole (ints, or floats without a fraction)?"""
    return all(
        isinstance(v, int) or (isinstance(v, float) and v.is_integer())
        for v in cells
        if _numeric(v)
    )


@dataclass(frozen=True)
class ResultTable:
    """Rows of figures under named columns; the first column names each row.

    Printed on a rich console it fits the width (see the module docstring); :meth:`render`
    writes it in one of :data:`FORMATS`. ``notes`` are lines printed under it (rows skipped,
    what the brackets mean)."""

    columns: Sequence[str]
    rows: Sequence[Sequence[Any]]
    title: str | None = None
    notes: Sequence[str] = field(default_factory=tuple)

    @property
    def all_notes(self) -> list[str]:
        """The notes, and what the brackets mean where some figure has an interval."""
        bracketed = any(isinstance(v, Figure) and v.low is not None for r in self.rows for v in r)
        return [*self.notes, *([INTERVAL_NOTE] if bracketed else [])]

    def __post_init__(self) -> None:
        for row in self.rows:
            if len(row) != len(self.columns):
                raise UserError(f"a row of {len(row)} cells under {len(self.columns)} columns")

    # the terminal

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from self.layout(console, options.max_width)

    def layout(self, console: Console, width: int) -> list[Any]:
        """The renderables of the first layout that fits ``width`` columns."""
        notes = [Text(note) for note in self.all_notes]
        full = self._table(self.columns)
        if _width(console, full) <= width:
            return [full, *notes]
        widest = self._widest_cells()
        for cap in range(max(map(len, self.columns)) - 1, MIN_HEADER - 1, -1):
            short, legend = _abbreviations(self.columns, widest, cap)
            abbreviated = self._table(short)
            if legend and _width(console, abbreviated) <= width:
                entries = [Text(entry, style="dim") for entry in legend]
                return [abbreviated, Columns(entries, padding=(0, 3)), *notes]
        turned = self._turned()
        if turned is not None and _width(console, turned) <= width:
            return [turned, *notes]
        return [*self._records(), *notes]

    @cached_property
    def texts(self) -> list[list[str]]:
        """Every cell as text; a column whose numbers are all whole (counts kept as floats
        by SQL) is written as whole numbers, "244" rather than "244.0"."""
        whole = [_whole([row[i] for row in self.rows]) for i in range(len(self.columns))]
        return [
            [
                cell_text(int(v) if whole[i] and isinstance(v, float) else v)
                for i, v in enumerate(row)
            ]
            for row in self.rows
        ]

    def _widest_cells(self) -> list[int]:
        return [
            max((len(row[i]) for row in self.texts), default=0) for i in range(len(self.columns))
        ]

    def _justify(self, i: int) -> str:
        cells = [row[i] for row in self.rows if row[i] is not None]
        return "right" if i and cells and all(_numeric(c) for c in cells) else "left"

    def _table(self, headers: Sequence[str]) -> Table:
        # every cell, header and title as Text: values (model names, labels) are never markup
        table = Table(title=_plain(self.title))
        for i, header in enumerate(headers):
            table.add_column(Text(header), justify=self._justify(i), no_wrap=True)  # type: ignore[arg-type]
        for row in self.texts:
            table.add_row(*map(Text, row))
        return table

    def _turned(self) -> Table | None:
        """One row per figure, one column per row of the table (None with no rows)."""
        if not self.rows:
            return None
        table = Table(title=_plain(self.title))
        table.add_column(Text(self.columns[0]), no_wrap=True)
        for row in self.texts:
            table.add_column(Text(row[0]), justify="right", no_wrap=True)
        for i, column in enumerate(self.columns[1:], start=1):
            table.add_row(Text(column), *(Text(row[i]) for row in self.texts))
        return table

    def _records(self) -> Iterator[Any]:
        """A block per row: its name in bold, then its figures one per line."""
        if self.title:
            yield Text(self.title, style="italic")
        for row in self.texts:
            grid = Table.grid(padding=(0, 2))
            grid.add_column(no_wrap=True)
            grid.add_column(overflow="fold")
            for column, text in zip(self.columns[1:], row[1:], strict=True):
                grid.add_row(Text(column), Text(text))
            yield Text(f"{self.columns[0]}: {row[0]}", style="bold")
            yield grid

    # formats for a paper or a program

    def render(self, fmt: str) -> str:
        """The table as ``fmt`` (one of :data:`FORMATS` but "table") text."""
        writers = {"markdown": self.markdown, "latex": self.latex, "csv": self.csv}
        if fmt == "json":
            return json.dumps(self.records(), indent=2, default=str)
        if fmt not in writers:
            raise UserError(f"format {fmt!r}: choose one of {', '.join(FORMATS)}")
        return writers[fmt]()

    def records(self) -> list[dict[str, Any]]:
        """Rows as dicts of plain values: a figure as its value, and its interval under
        ``<column>_ci95`` as [low, high] (or why it has none, ``<column>_no_interval``)."""
        out = []
        for row in self.rows:
            record: dict[str, Any] = {}
            for column, value in zip(self.columns, row, strict=True):
                if isinstance(value, Figure):
                    record[column] = value.value
                    if value.low is not None:
                        record[f"{column}_ci95"] = [value.low, value.high]
                    elif value.note:
                        record[f"{column}_no_interval"] = value.note
                else:
                    record[column] = value
            out.append(record)
        return out

    def csv(self) -> str:
        """CSV with a header; a column of figures with intervals gets ``_ci_low`` and
        ``_ci_high`` columns after it."""
        with_interval = {
            i
            for i in range(len(self.columns))
            if any(isinstance(r[i], Figure) and r[i].low is not None for r in self.rows)
        }
        header: list[str] = []
        for i, column in enumerate(self.columns):
            header += (
                [column, f"{column}_ci_low", f"{column}_ci_high"]
                if i in with_interval
                else [column]
            )
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(header)
        for row in self.rows:
            cells: list[Any] = []
            for i, value in enumerate(row):
                plain = value.value if isinstance(value, Figure) else value
                cells.append("" if plain is None else plain)
                if i in with_interval:
                    low, high = (
                        (value.low, value.high) if isinstance(value, Figure) else (None, None)
                    )
                    cells += ["" if low is None else low, "" if high is None else high]
            writer.writerow(cells)
        return buffer.getvalue()

    def markdown(self) -> str:
        """A GitHub-flavoured Markdown table (numbers right-aligned), notes under it."""

        def line(cells: Iterable[str]) -> str:
            return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

        align = ["---:" if self._justify(i) == "right" else "---" for i in range(len(self.columns))]
        lines = [line(self.columns), line(align)]
        lines += [line(row) for row in self.texts]
        if self.all_notes:
            lines += ["", *self.all_notes]
        return "\n".join(lines) + "\n"

    def latex(self) -> str:
        """A LaTeX ``tabular`` with booktabs rules (``\\usepackage{booktabs}``), every cell
        escaped; the title and notes as comments."""
        spec = "".join(
            "r" if self._justify(i) == "right" else "l" for i in range(len(self.columns))
        )
        lines = [f"% {line}" for line in (self.title, *self.all_notes) if line]
        lines += [
            f"\\begin{{tabular}}{{{spec}}}",
            "\\toprule",
            " & ".join(latex_escape(c) for c in self.columns) + " \\\\",
            "\\midrule",
            *(" & ".join(latex_escape(text) for text in row) + " \\\\" for row in self.texts),
            "\\bottomrule",
            "\\end{tabular}",
        ]
        return "\n".join(lines) + "\n"


_LATEX = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters written as literals."""
    return "".join(_LATEX.get(c, c) for c in text)


def _width(console: Console, table: Table) -> int:
    """Columns ``table`` needs to print without folding a cell (measured without the
    console's own width, to which a measurement is otherwise cut)."""
    unbounded = console.options.update(max_width=1 << 16)
    return Measurement.get(console, unbounded, table).maximum


def abbreviate(name: str, size: int) -> str:
    """``name`` in at most ``size`` characters: each of its words cut alike ("temporal_acc"
    -> "temp_acc"), a single word cut with a stop ("predicted" -> "pred."), or, where
    neither fits, its start."""
    if len(name) <= size:
        return name
    parts = re.split(r"([_\s.\-@]+)", name)
    if len(parts) == 1:
        return f"{name[: size - 1]}." if size > 1 else name[:size]
    for keep in range(max(map(len, parts)) - 1, 1, -1):
        short = "".join(p if i % 2 else p[:keep] for i, p in enumerate(parts))
        if len(short) <= size:
            return short
    return name[:size]


def _abbreviations(
    columns: Sequence[str], widest: Sequence[int], cap: int
) -> tuple[list[str], list[str]]:
    """Headers longer than ``cap`` (and than their column's widest cell) abbreviated, kept
    apart by a number where two would read alike, and the legend lines of those cut. The
    first column, which names the rows, keeps its header."""
    short: list[str] = []
    legend: list[str] = []
    for i, (column, cells) in enumerate(zip(columns, widest, strict=True)):
        size = max(cap, cells, MIN_HEADER)
        if i == 0 or len(column) <= size:
            short.append(column)
            continue
        name, n = abbreviate(column, size), 1
        while name in short or name in columns:
            n += 1
            name = f"{abbreviate(column, size - len(str(n)))}{n}"
        short.append(name)
        legend.append(f"{name} = {column}")
    return short, legend
