"""The page template: one self-contained HTML file, CSS inline, figures as data URIs, no script.

Every string from a run (names, labels, parameters) is escaped here and nowhere else.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from numbers import Number

from chronoprobe.report.blocks import (
    Block,
    Code,
    Details,
    Image,
    Link,
    Section,
    Stats,
    Table,
    Text,
    format_value,
)

log = logging.getLogger(__name__)

CSS = """
:root { --ink: #1f2328; --muted: #59636e; --line: #d8dee4; --paper: #ffffff;
  --ground: #f4f6f8; --accent: #0072B2; --cached: #5a6b7b; --error: #b3261e; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--ground); color: var(--ink);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial,
  sans-serif; }
main { max-width: 1080px; margin: 0 auto; padding: 28px 24px 64px; }
header.page h1 { font-size: 28px; margin: 0 0 4px; letter-spacing: -0.01em; }
header.page .sub { color: var(--muted); margin: 0 0 16px; }
dl.env { display: grid; grid-template-columns: repeat(auto-fill, minmax(200px, 1fr));
  gap: 8px 24px; margin: 0 0 20px; padding: 14px 18px; background: var(--paper);
  border: 1px solid var(--line); border-radius: 8px; }
dl.env div { min-width: 0; }
dl.env dt { font-size: 12px; color: var(--muted); text-transform: uppercase;
  letter-spacing: 0.04em; }
dl.env dd { margin: 0; font-weight: 600; overflow-wrap: anywhere; }
nav.toc { margin: 0 0 20px; font-size: 14px; }
nav.toc a { margin-right: 14px; white-space: nowrap; }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
section.step, section.summary { background: var(--paper); border: 1px solid var(--line);
  border-radius: 8px; padding: 18px 22px 20px; margin: 0 0 22px; }
section h2 { font-size: 20px; margin: 0 0 2px; }
.step-meta { color: var(--muted); font-size: 13px; margin: 0 0 14px; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px;
  font-weight: 600; border: 1px solid currentColor; margin-right: 6px; }
.badge.kind { color: var(--accent); }
.badge.cached { color: var(--cached); }
.badge.computed { color: #006b4f; }
.badge.pending { color: var(--error); }
.stats { display: grid; grid-template-columns: repeat(auto-fill, minmax(132px, 1fr));
  gap: 10px; margin: 0 0 16px; }
.stat { border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px;
  background: #fafbfc; }
.stat .v { font-size: 20px; font-weight: 700; font-variant-numeric: tabular-nums; }
.stat .k { font-size: 12px; color: var(--muted); }
.stat .ci { display: block; font-size: 12px; font-weight: 400; color: var(--muted);
  font-variant-numeric: tabular-nums; }
table { border-collapse: collapse; width: 100%; margin: 0 0 6px; font-size: 14px; }
caption { text-align: left; font-weight: 600; padding: 0 0 6px; }
th, td { text-align: left; padding: 5px 10px; border-bottom: 1px solid var(--line);
  vertical-align: top; }
th { background: #eef1f4; font-weight: 600; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.nowrap, td > a { white-space: nowrap; }
tbody tr:nth-child(even) { background: #f8f9fa; }
.table-wrap { overflow-x: auto; margin: 0 0 16px; }
figure { margin: 0 0 18px; }
figure img { display: block; max-width: 100%; height: auto; border: 1px solid var(--line);
  border-radius: 6px; background: #fff; }
figcaption { color: var(--muted); font-size: 13px; margin: 6px 2px 0; }
details { margin: 8px 0; }
details > summary { cursor: pointer; color: var(--accent); font-size: 14px; }
details[open] > summary { margin-bottom: 8px; }
p { margin: 0 0 12px; }
p.note { color: var(--muted); font-size: 13px; }
p.error { color: var(--error); border-left: 4px solid var(--error); padding: 6px 12px;
  background: #fdf1f0; white-space: pre-wrap; }
pre { background: #f6f8fa; border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px;
  overflow-x: auto; font-size: 13px; line-height: 1.4; }
footer { color: var(--muted); font-size: 12px; text-align: center; margin-top: 28px; }
@media (max-width: 900px) {
  /* a narrow window: tables of a dozen figures fit without scrolling their captions away */
  main { padding: 20px 10px 48px; }
  section.step, section.summary { padding: 14px 12px 16px; }
  table { font-size: 13px; }
  th, td { padding: 4px 6px; }
  th, th.num { white-space: normal; }
}
"""


@dataclass(frozen=True)
class StepView:
    """A step as the page shows it: its record's essentials and its section."""

    id: str
    kind: str
    status: str  # "cached", "computed" or "not run"
    seconds: float | None
    section: Section


def anchor(step_id: str) -> str:
    return "step-" + "".join(c if c.isalnum() or c in "-_" else "-" for c in step_id)


_DATE = re.compile(r"-?\d{4}(-\d\d){0,2}(T[\d:.+Z-]*)?")


def _cell(value: object, numeric: bool = False) -> str:
    """A table cell; in a ``numeric`` column a missing value's dash is aligned as the numbers
    are, under its own header rather than by the column to its left."""
    if isinstance(value, Link):
        return f'<td><a href="{escape(value.href)}">{escape(value.text)}</a></td>'
    css = ""
    if (isinstance(value, Number) and not isinstance(value, bool)) or (numeric and value is None):
        css = ' class="num"'
    elif isinstance(value, str) and _DATE.fullmatch(value):
        css = ' class="nowrap"'
    return f"<td{css}>{escape(format_value(value))}</td>"


def _table(table: Table) -> str:
    numeric = [
        bool(table.rows)
        and all(isinstance(row[i], Number) or row[i] is None for row in table.rows)
        and any(isinstance(row[i], Number) for row in table.rows)
        for i in range(len(table.columns))
    ]
    caption = table.caption or ""
    if table.omitted:
        caption += f" (first {len(table.rows):,} rows; {table.omitted:,} more not shown)"
    head = "".join(
        f"<th{' class=num' if num else ''}>{escape(c)}</th>"
        for c, num in zip(table.columns, numeric, strict=True)
    )
    body = "\n".join(
        "<tr>" + "".join(_cell(v, num) for v, num in zip(row, numeric, strict=True)) + "</tr>"
        for row in table.rows
    )
    cap = f"<caption>{escape(caption.strip())}</caption>" if caption.strip() else ""
    return (
        f'<div class="table-wrap"><table>{cap}<thead><tr>{head}</tr></thead>'
        f"<tbody>\n{body}\n</tbody></table></div>"
    )


_NUMBER = r"-?[\d.,]+%?"
# a figure and its interval or spread: "0.412 [0.380, 0.440]", "0.41 ± 0.02"
_INTERVAL = re.compile(rf"({_NUMBER}) (\[{_NUMBER}, {_NUMBER}\]|± {_NUMBER})")


def _tile_value(value: object) -> str:
    """A tile's figure large, its interval (or spread) small under it, so that the figure
    reads at a glance and the tile does not break it over three lines."""
    text = format_value(value)
    parts = _INTERVAL.fullmatch(text)
    if parts is None:
        return escape(text)
    return f'{escape(parts[1])}<span class="ci">{escape(parts[2])}</span>'


def _stats(stats: Stats) -> str:
    tiles = "".join(
        f'<div class="stat"><div class="v">{_tile_value(v)}</div>'
        f'<div class="k">{escape(k)}</div></div>'
        for k, v in stats.items.items()
    )
    return f'<div class="stats">{tiles}</div>'


def _image(image: Image) -> str:
    caption = f"<figcaption>{escape(image.caption)}</figcaption>" if image.caption else ""
    data = ""
    if image.data is not None:
        data = _details(Details("Data behind this figure", [image.data]))
    return (
        f'<figure><img src="{escape(image.uri)}" alt="{escape(image.alt)}">{caption}{data}</figure>'
    )


def _details(details: Details) -> str:
    inner = "\n".join(render_block(b) for b in details.blocks)
    return f"<details><summary>{escape(details.summary)}</summary>\n{inner}\n</details>"


def render_block(block: Block) -> str:
    match block:
        case Text(text=text, style=style):
            css = f' class="{style}"' if style != "plain" else ""
            return f"<p{css}>{escape(text)}</p>"
        case Stats():
            return _stats(block)
        case Table():
            return _table(block)
        case Image():
            return _image(block)
        case Details():
            return _details(block)
        case Code(text=text):
            return f"<pre>{escape(text)}</pre>"
    raise TypeError(f"not a report block: {block!r}")


def _step(view: StepView) -> str:
    badge = {"cached": "cached", "computed": "computed"}.get(view.status, "pending")
    seconds = f" · {view.seconds:,.1f} s" if view.seconds is not None else ""
    try:
        blocks = "\n".join(render_block(b) for b in view.section.blocks)
    except Exception as err:  # one section that cannot be drawn must not cost the page
        message = f"the {view.kind} section of step {view.id} could not be drawn"
        log.warning("report: %s: %s: %s", message, type(err).__name__, err)
        blocks = render_block(Text(f"{message}: {type(err).__name__}: {err}", style="error"))
    return (
        f'<section class="step" id="{anchor(view.id)}">\n'
        f"<h2>{escape(view.section.title)}</h2>\n"
        f'<p class="step-meta">step <strong>{escape(view.id)}</strong> '
        f'<span class="badge kind">{escape(view.kind)}</span>'
        f'<span class="badge {badge}">{escape(view.status)}</span>{seconds}</p>\n'
        f"{blocks}\n</section>"
    )


def render_page(
    *,
    title: str,
    subtitle: str,
    environment: Sequence[tuple[str, str]],
    summary: Table,
    steps: Sequence[StepView],
    appendix: Sequence[Block],
    footer: str,
    problems: Sequence[Block] = (),
    appendix_title: str = "Run",
) -> str:
    """The page. ``problems`` (run files that could not be read) are shown under the header;
    the ``appendix`` (config, packages, log) at the end under ``appendix_title``, if any."""
    env = "".join(f"<div><dt>{escape(k)}</dt><dd>{escape(v)}</dd></div>" for k, v in environment)
    toc = " ".join(
        f'<a href="#{anchor(s.id)}">{escape(s.id)}</a>' for s in steps if s.section.blocks
    )
    body = "\n".join(_step(s) for s in steps)
    extra = "\n".join(render_block(b) for b in appendix)
    if extra:
        heading = f"<h2>{escape(appendix_title)}</h2>"
        extra = f'<section class="summary" id="run">\n{heading}\n{extra}\n</section>'
    notes = "\n".join(render_block(b) for b in problems)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="chronoprobe">
<title>{escape(title)}</title>
<style>{CSS}</style>
</head>
<body>
<main>
<header class="page">
<h1>{escape(title)}</h1>
<p class="sub">{escape(subtitle)}</p>
<dl class="env">{env}</dl>
{notes}
</header>
<nav class="toc">Steps: {toc}</nav>
<section class="summary" id="summary">
<h2>Summary</h2>
{_table(summary)}
</section>
{body}
{extra}
<footer>{escape(footer)}</footer>
</main>
</body>
</html>
"""
