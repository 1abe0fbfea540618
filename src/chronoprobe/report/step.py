"""The ``report`` step kind: ``report.html`` for the whole run, written by the report module.

It reads every step before it, so its output cannot be keyed by its params and inputs alone:
it is never cached and runs on every ``chronoprobe run``.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from chronoprobe.step_context import StepContext
from chronoprobe.steps import step_kind


class ReportParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _target_problems(run_dir: Path) -> list[str]:
    """The run's report.html must be new or an earlier report, checked before any step runs."""
    from chronoprobe.report import REPORT_FILE, check_report_target

    try:
        check_report_target(run_dir / REPORT_FILE)
    except ValueError as err:
        return [str(err)]
    return []


@step_kind("report", ReportParams, cacheable=False, run_dir_check=_target_problems)
def run_report(ctx: StepContext, params: ReportParams, inputs: dict[str, Path]) -> None:
    """Write the run's report.html: a section per step, self-contained, plots embedded."""
    from chronoprobe.report import write_report
    from chronoprobe.runs.ownership import own_tmp

    path = write_report(ctx.run_dir, tmp_dir=own_tmp(ctx.run_dir))
    ctx.log.info(f"report: {path}")
