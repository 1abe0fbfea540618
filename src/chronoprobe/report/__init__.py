"""The HTML report of a run: ``chronoprobe report RUNDIR`` and the ``report`` step.

Sections per step kind live in a registry (:mod:`chronoprobe.report.sections`); plot helpers
for them in :mod:`chronoprobe.report.plots`. Importing this package loads neither matplotlib
nor any section: :func:`write_report` does, when called.
"""

from __future__ import annotations

from pathlib import Path

from chronoprobe.atomic import atomic_write_text

REPORT_FILE = "report.html"


def write_report(run_dir: str | Path, out: str | Path | None = None) -> Path:
    """Write the self-contained report of ``run_dir`` (default ``RUNDIR/report.html``)."""
    from chronoprobe.report.document import render_report

    target = Path(out) if out is not None else Path(run_dir) / REPORT_FILE
    atomic_write_text(target, render_report(run_dir))
    return target


__all__ = ["REPORT_FILE", "write_report"]
