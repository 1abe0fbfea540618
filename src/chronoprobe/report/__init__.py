"""The HTML report of a run: ``chronoprobe report RUNDIR`` and the ``report`` step.

Sections per step kind live in a registry (:mod:`chronoprobe.report.sections`); plot helpers
for them in :mod:`chronoprobe.report.plots`. Importing this package loads neither matplotlib
nor any section: :func:`write_report` does, when called.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from chronoprobe.atomic import atomic_write_text
from chronoprobe.errors import UserError

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
    atomic_write_text(target, sealed(render_report(run_dir)), tmp_dir)
    return target


def default_target(folder: Path) -> Path:
    """``FOLDER/report.html`` for a run directory; beside a single command's output
    (``OUT-report.html``), since that folder holds only what its command wrote and the command
    would refuse to replace it. Any other folder is refused: inside a run (its ``steps/``, one
    of its steps) the run rewrites what it holds, and a folder of outputs (``kg/``) is the
    user's, whose report goes where the user says (``--out``)."""
    from chronoprobe.runs.outputs import find_outputs, is_output, is_run

    if is_run(folder):
        return folder / REPORT_FILE
    resolved = folder.resolve()
    run = next((p for p in resolved.parents if is_run(p)), None)
    if run is not None and resolved.is_relative_to(run / "steps"):
        raise UserError(
            f"{folder} is inside the run directory {run}, which its run rewrites; report the "
            f"run (chronoprobe report {run}), or pass --out FILE.html"
        )
    if is_output(folder):
        return resolved.with_name(f"{resolved.name}-{REPORT_FILE}")
    found = find_outputs(folder)  # refuses a folder without any output
    first = (found.outputs or found.runs)[0][1]
    raise UserError(
        f"{folder} is not a run directory or one command's output (it holds "
        f"{found.describe()}); report one of them (chronoprobe report {first}), or all of them "
        f"together into a file you name: chronoprobe report {folder} --out FILE.html"
    )


# An earlier report is recognised by the generator tag, and told unedited by the digest of
# its own bytes that chronoprobe writes beside the tag (with zeros in the digest's place).
_GENERATOR = '<meta name="generator" content="chronoprobe">'
_DIGEST = re.compile(rb'<meta name="chronoprobe-sha256" content="([0-9a-f]{64})">')
_UNSEALED = '<meta name="chronoprobe-sha256" content="' + "0" * 64 + '">'
_SIGNS = (_GENERATOR.encode(), b"<title>chronoprobe report:")  # the title: before the tag
_HEAD = 4096  # the tags sit in the head, within the first few hundred bytes


def sealed(page: str) -> str:
    """``page`` with the SHA-256 of its own bytes beside its generator tag, so that an edit
    (a note added, the file saved again by a browser) can be told and the edited file is never
    written over."""
    unsealed = page.replace(_GENERATOR, _GENERATOR + "\n" + _UNSEALED, 1)
    digest = hashlib.sha256(unsealed.encode("utf-8")).hexdigest()
    return unsealed.replace(_UNSEALED, _UNSEALED.replace("0" * 64, digest), 1)


def check_report_target(target: Path) -> None:
    """A report is written over nothing but an earlier report, unedited: a folder, a link, a
    user's file or a report edited since it was written at ``target`` is refused, naming what
    is there."""
    from chronoprobe.runs.ownership import describe, lstat_kind

    kind = lstat_kind(target)
    if kind is None:
        return
    if kind == "dir":
        raise UserError(
            f"{target} is a folder; pass the report's file, e.g. {target / REPORT_FILE}"
        )
    if kind != "file":
        raise UserError(f"{target} is {describe(kind)}; pass a new file name for the report")
    with open(target, "rb") as stream:
        head = stream.read(_HEAD)
        if not any(sign in head for sign in _SIGNS):
            raise UserError(
                f"{target} exists and is not a chronoprobe report; a report writes over nothing "
                "else: pass a new file name"
            )
        found = _DIGEST.search(head)
        if found is None:
            raise UserError(
                f"{target} is a report of an older chronoprobe, which wrote no digest of it, so "
                "an edit to it cannot be told: move it away (or delete it) to have it written "
                "again, or pass another --out"
            )
        digest = hashlib.sha256(head.replace(found.group(1), b"0" * 64, 1))
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
    if digest.hexdigest() != found.group(1).decode():
        raise UserError(
            f"{target} was edited since chronoprobe wrote it; a report writes over nothing of "
            "yours: move it away (or delete it) to have it written again, or pass another --out"
        )


__all__ = ["REPORT_FILE", "write_report"]
