"""The figures every report section draws from: lines, heatmaps, grouped bars, and embedding.

Figures are built on ``matplotlib.figure.Figure`` directly, never through pyplot: no global
figure registry to leak memory over a long report, and no GUI backend to pick (saving a bare
Figure renders with Agg), so nothing changes matplotlib's global state at import or after.
Colours come from the Okabe-Ito palette, which stays distinct under the common colour-vision
deficiencies; heatmaps use viridis for the same reason.
"""

from __future__ import annotations

import base64
import io
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib import rc_context
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator

from chronoprobe.errors import UserError
from chronoprobe.report.blocks import Image, Table

# Okabe & Ito (2008), reordered so that the first few series are the most distinct; black last.
OKABE_ITO = (
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#D55E00",  # vermillion
    "#56B4E9",  # sky blue
    "#CC79A7",  # reddish purple
    "#F0E442",  # yellow
    "#000000",  # black
)
OTHER = "#999999"  # for "other" / aggregate series, never confused with a palette colour
WIDTH = 9.0  # inches; pages show figures at the column width, so all share one scale
DPI = 150
# rows below which a cell's share is drawn faded: from 30 rows a share of one half is uncertain
# by about 18 points either way (95% normal interval), from 10 by about 31
FEW_ROWS = 30
FADED = 0.35  # opacity of a faded cell's colour and of a faded point

_STYLE = {
    "font.size": 10,
    "axes.titlesize": 12,
    "axes.titleweight": "bold",
    "axes.titlelocation": "left",
    "axes.labelsize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#e3e3e3",
    "grid.linewidth": 0.8,
    "axes.axisbelow": True,
    "legend.frameon": False,
    "legend.fontsize": 9,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
}


def palette(n: int) -> list[str]:
    """``n`` colours: Okabe-Ito while it lasts, then a perceptually ordered colormap."""
    if n <= len(OKABE_ITO):
        return list(OKABE_ITO[:n])
    from matplotlib import colormaps

    return [colormaps["viridis"](x) for x in np.linspace(0, 0.95, n)]


def new_figure(height: float = 3.6, width: float = WIDTH) -> tuple[Figure, Axes]:
    """A figure in the report's style with one axes; draw inside ``styled()`` for fonts."""
    with rc_context(_STYLE):
        fig = Figure(figsize=(width, height), layout="constrained")
        return fig, fig.add_subplot()


def styled():
    """The report's matplotlib style, for drawing on a figure from :func:`new_figure`."""
    return rc_context(_STYLE)


TITLE_MARGIN = 1.2  # inches left of a left-aligned title: the y axis' label and ticks


def _fitted_title(fig: Figure, ax: Axes, title: str) -> None:
    """Set the axes' title, wrapped onto more lines where one would run past the figure's
    edge (a narrow heatmap cut "... (all rows but deleted)" to "... (all rows but de")."""
    width = ax.set_title(title).get_window_extent().width / fig.dpi  # inches
    room = fig.get_figwidth() - TITLE_MARGIN
    if width > room:
        ax.set_title(textwrap.fill(title, max(12, int(len(title) * room / width))))


def _finish(fig: Figure, ax: Axes, title: str, xlabel: str, ylabel: str, legend: bool) -> Figure:
    with styled():
        _fitted_title(fig, ax, title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if legend:
            handles, labels = ax.get_legend_handles_labels()
            fig.legend(handles, labels, loc="outside right upper")
    return fig


def line_plot(
    series: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    stacked: bool = False,
    markers: bool = False,
    ylim: tuple[float | None, float | None] | None = None,
    height: float = 3.6,
    categories: Sequence[str] | None = None,
    faded: Mapping[str, Sequence[bool]] | None = None,
    errors: Mapping[str, Sequence[Sequence[float]]] | None = None,
    colours: Mapping[str, str] | None = None,
    dashed: Sequence[str] = (),
) -> Figure:
    """One line per series (``name -> (x, y)``), e.g. accuracy over training epochs per model.

    ``stacked`` draws stacked areas instead (the series must share their x values), for parts
    of a whole such as facts per year by relation. ``categories`` names the x positions 0, 1,
    ... (periods such as "2019-H1"); ``faded[name]`` marks points drawn hollow and faint (a
    value from few rows); ``errors[name]`` (rows below, above; see :func:`error_rows`) draws
    each point's error bar. ``colours[name]`` fixes a series' colour where it carries a meaning
    (Correct green, Incorrect red); the ``dashed`` series are drawn thin, dashed and on top, so
    a summary line over the others hides none of them.
    """
    if not series:
        raise UserError("line_plot needs at least one series")
    names = list(series)
    drawn = palette(len(names))
    if names[-1].lower() == "other":
        drawn[-1] = OTHER
    drawn = [(colours or {}).get(n, c) for n, c in zip(names, drawn, strict=True)]
    fig, ax = new_figure(height)
    with styled():
        if stacked:
            x = np.asarray(series[names[0]][0])
            for name in names[1:]:
                if not np.array_equal(np.asarray(series[name][0]), x):
                    raise UserError(f"stacked series {name!r} has other x values than {names[0]!r}")
            ys = [np.asarray(series[n][1], dtype=float) for n in names]
            ax.stackplot(x, *ys, labels=names, colors=drawn, alpha=0.9, linewidth=0)
            if len(x) > 1:
                ax.set_xlim(x.min(), x.max())
        else:
            for name, colour in zip(names, drawn, strict=True):
                x, y = series[name]
                line: dict[str, Any] = {"linewidth": 2, "marker": "o" if markers else None}
                if name in dashed:
                    line = {"linewidth": 1.5, "linestyle": (0, (4, 3)), "zorder": 3}
                ax.plot(x, y, label=name, color=colour, **line)
                if errors is not None and name in errors:
                    ax.errorbar(
                        x,
                        np.asarray(y, dtype=float),
                        yerr=np.asarray(errors[name], dtype=float),
                        fmt="none",
                        ecolor=colour,
                        elinewidth=1,
                        capsize=3,
                    )
                weak = np.asarray((faded or {}).get(name, ()), dtype=bool)
                if weak.any():
                    ax.plot(
                        np.asarray(x)[weak],
                        np.asarray(y, dtype=float)[weak],
                        linestyle="none",
                        marker="o",
                        markersize=8,
                        markerfacecolor="white",
                        markeredgecolor=colour,
                        alpha=FADED + 0.3,
                    )
        if categories is not None:
            ax.set_xticks(range(len(categories)), labels=list(categories))
        if ylim is not None:
            ax.set_ylim(*ylim)
        elif stacked or all(min(series[n][1], default=0) >= 0 for n in names):
            ax.set_ylim(bottom=0)
        ax.yaxis.set_major_formatter(FuncFormatter(_thousands))
        if categories is None and all(_integral(series[n][0]) for n in names):
            # years, epochs, steps: whole ticks, and no thousands separator in "2024"
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.0f}"))
        if all(_integral(series[n][1]) for n in names):
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    return _finish(fig, ax, title, xlabel, ylabel, legend=len(names) > 1)


def _integral(values: Sequence[float]) -> bool:
    array = np.asarray(values)
    return array.dtype.kind in "iub" or bool(np.all(np.mod(array, 1) == 0))


def _thousands(value: float, _position: Any) -> str:
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:g}"


def heatmap(
    values: Sequence[Sequence[float]] | np.ndarray,
    rows: Sequence[str],
    columns: Sequence[str],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    value_label: str,
    fmt: str = "{:.2f}",
    vmin: float | None = None,
    vmax: float | None = None,
    counts: Sequence[Sequence[int]] | None = None,
    few: int = FEW_ROWS,
) -> Figure:
    """A matrix such as models x periods, every cell annotated with its value.

    NaN cells (no data) are left blank, not coloured as a value. Text is black or white by
    the cell's luminance, so it stays readable at both ends of the colormap. With ``counts``
    (the rows behind each cell) every cell also shows its n, and a cell from fewer than
    ``few`` rows is faded: its colour is drawn at low opacity and its text in grey.
    """
    matrix = np.asarray(values, dtype=float)
    if matrix.shape != (len(rows), len(columns)):
        raise UserError(f"values have shape {matrix.shape}, labels ({len(rows)}, {len(columns)})")
    n = None if counts is None else np.asarray(counts, dtype=int)
    if n is not None and n.shape != matrix.shape:
        raise UserError(f"counts have shape {n.shape}, values {matrix.shape}")
    width = min(WIDTH, max(4.5, 2.8 + 0.55 * len(columns)))
    height = max(2.2, 1.2 + 0.38 * len(rows))
    fig, ax = new_figure(height, width)
    with styled():
        from matplotlib import colormaps

        cmap = colormaps["viridis"]
        masked = np.ma.masked_invalid(matrix)
        image = ax.imshow(masked, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
        if n is not None:
            image.set_alpha(np.where(n < few, FADED, 1.0))
        ax.grid(False)
        ax.set_xticks(range(len(columns)), labels=list(columns))
        ax.set_yticks(range(len(rows)), labels=list(rows))
        if len(columns) > 6:
            ax.tick_params(axis="x", labelrotation=45)
            for label in ax.get_xticklabels():
                label.set_horizontalalignment("right")
        for spine in ax.spines.values():
            spine.set_visible(False)
        fig.colorbar(image, ax=ax, label=value_label, shrink=0.9)
        size = 9 if len(columns) <= 12 else 7
        for (i, j), value in np.ndenumerate(matrix):
            if np.isnan(value):
                continue
            r, g, b, _ = cmap(image.norm(value))
            colour = "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.5 else "white"
            text = fmt.format(value)
            if n is not None:
                text += f"\nn={n[i, j]:,}"
                colour = "#555555" if n[i, j] < few else colour
            ax.text(j, i, text, ha="center", va="center", color=colour, fontsize=size)
    return _finish(fig, ax, title, xlabel, ylabel, legend=False)


def grouped_bars(
    categories: Sequence[str],
    series: Mapping[str, Sequence[float]],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    errors: Mapping[str, Sequence[float] | Sequence[Sequence[float]]] | None = None,
    horizontal: bool = False,
    value_format: str | None = None,
    value_limits: tuple[float, float] | None = None,
) -> Figure:
    """Bars per category, one bar per series side by side, with optional error bars.

    ``errors[name]`` is a symmetric half-width per category, or two rows (below, above).
    ``horizontal`` suits many or long category names (relations, question types); categories
    then read top to bottom in the given order. ``value_format`` (e.g. ``"{:.1%}"``) prints
    each bar's value at its end; ``value_limits`` fixes the value axis (e.g. (0, 1) for
    shares), which otherwise fits the bars.
    """
    if not series:
        raise UserError("grouped_bars needs at least one series")
    names = list(series)
    n = len(categories)
    for name in names:
        if len(series[name]) != n:
            raise UserError(f"series {name!r} has {len(series[name])} values for {n} categories")
    slot = 0.8 / len(names)
    positions = np.arange(n)
    height = max(2.6, 1.0 + 0.28 * n * max(1, len(names) * 0.6)) if horizontal else 3.6
    fig, ax = new_figure(height)
    with styled():
        for k, (name, colour) in enumerate(zip(names, palette(len(names)), strict=True)):
            offset = positions - 0.4 + slot * (k + 0.5)
            values = np.asarray(series[name], dtype=float)
            error = None if errors is None or name not in errors else np.asarray(errors[name])
            bar = ax.barh if horizontal else ax.bar
            error_key = "xerr" if horizontal else "yerr"
            bars = bar(
                offset,
                values,
                slot * 0.92,
                label=name,
                color=colour,
                **{error_key: error},
                error_kw={"ecolor": "#333333", "capsize": 3, "elinewidth": 1},
            )
            if value_format is not None:
                labels = [value_format.format(v) for v in values]
                ax.bar_label(bars, labels=labels, padding=3, fontsize=8)
        if value_limits is not None:
            (ax.set_xlim if horizontal else ax.set_ylim)(*value_limits)
        if horizontal:
            ax.set_yticks(positions, labels=list(categories))
            ax.invert_yaxis()
            ax.grid(axis="y", visible=False)
            ax.margins(x=0.08 if value_format else 0.02)
        else:
            ax.set_xticks(positions, labels=list(categories))
            ax.grid(axis="x", visible=False)
            if n > 6 or max((len(c) for c in categories), default=0) > 12:
                ax.tick_params(axis="x", labelrotation=30)
                for label in ax.get_xticklabels():
                    label.set_horizontalalignment("right")
    return _finish(fig, ax, title, xlabel, ylabel, legend=len(names) > 1)


def error_bar(group: Mapping[str, Any], key: str) -> tuple[float, float]:
    """The error bar (below, above) of figure ``key`` of ``group`` (a metrics.json dict): ±
    its sd over seeds where it has one (``<key>_sd``), else its 95% interval
    (``<key>_ci95``), else none (0, 0)."""
    value, sd, interval = group.get(key), group.get(f"{key}_sd"), group.get(f"{key}_ci95")
    if not isinstance(value, int | float):
        return 0.0, 0.0
    if isinstance(sd, int | float):
        return float(sd), float(sd)
    if isinstance(interval, list) and len(interval) == 2 and None not in interval:
        return max(value - interval[0], 0.0), max(interval[1] - value, 0.0)
    return 0.0, 0.0


def error_rows(figures: Sequence[tuple[Mapping[str, Any], str]]) -> list[list[float]]:
    """Error bars of several (group, key) figures, as the two rows (below, above) that
    :func:`grouped_bars` and :func:`line_plot` take for one series."""
    bars = [error_bar(group, key) for group, key in figures]
    return [[b for b, _ in bars], [a for _, a in bars]]


def figure_png(fig: Figure) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI, facecolor="white")
    return buffer.getvalue()


def embed(fig: Figure, alt: str, caption: str | None = None, data: Table | None = None) -> Image:
    """Render ``fig`` into the page as a base64 PNG and release it.

    ``alt`` describes the figure for readers who cannot see it; ``data`` (optional) is the
    table of numbers plotted, shown collapsed under the figure.
    """
    uri = "data:image/png;base64," + base64.b64encode(figure_png(fig)).decode("ascii")
    fig.clear()
    return Image(uri=uri, alt=alt, caption=caption, data=data)
