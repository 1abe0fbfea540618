"""The HTML report of a run: ``chronoprobe report RUNDIR`` and the ``report`` step.

Sections per step kind live in a registry (:mod:`chronoprobe.report.sections`); plot helpers
for them in :mod:`chronoprobe.report.plots`. Importing this package loads neither matplotlib
nor any section: :func:`write_report` does, when called.
"""

from __future__ import annotations

from pathlib import Path

from chronoprobe.atomic import atomic_write_text

REPORT_FILE = "report.html"


def write_report(
    run_dir: str | Path, out: str | Path | None = None, *, tmp_dir: Path | None = None
) -> Path:
    """Write the self-contained report of ``run_dir``, a run directory or any folder of
    outputs (default ``FOLDER/report.html``; see :func:`default_target`); ``tmp_dir`` is where
    its temporary file goes (default: beside it)."""
    from chronoprobe.report.document import render_report

    target = Path(out) if out is not None else default_target(Path(run_dir))
    check_report_target(target)
    atomic_write_text(target, render_report(run_dir), tmp_dir)
    return target


def default_target(folder: Path) -> Path:
    """``FOLDER/report.html``; beside a single command's output (``OUT-report.html``), since
    that folder holds only what its command wrote and the command would refuse to replace it."""
    from chronoprobe.runs.outputs import is_output, is_run

    if is_output(folder) and not is_run(folder):
        resolved = folder.resolve()
        return resolved.with_name(f"{resolved.name}-{REPORT_FILE}")
    return folder / REPORT_FILE


# How an earlier report is recognised (the generator tag; the title, before it was added).
_REPORT_SIGNS = (b'<meta name="generator" content="chronoprobe">', b"<title>chronoprobe report:")


def check_report_target(target: Path) -> None:
    """A report is written over nothing but an earlier report: a folder, a link or a user's
    file at ``target`` is refused, naming what is there."""
    from chronoprobe.runs.ownership import describe, lstat_kind

    kind = lstat_kind(target)
    if kind is None:
        return
    if kind == "dir":
        raise ValueError(
            f"{target} is a folder; pass the report's file, e.g. {target / REPORT_FILE}"
        )
    if kind != "file":
        raise ValueError(f"{target} is {describe(kind)}; pass a new file name for the report")
    with open(target, "rb") as stream:
        head = stream.read(4096)
    if not any(sign in head for sign in _REPORT_SIGNS):
        raise ValueError(
            f"{target} exists and is not a chronoprobe report; a report writes over nothing "
            "else: pass a new file name"
        )


__all__ = ["REPORT_FILE", "write_report"]
