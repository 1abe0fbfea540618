"""Start-up stays light: the command, the run engine, the step kinds and the report sections
import without torch or transformers (seconds of import), which load only when a model runs."""

from __future__ import annotations

import subprocess
import sys

LIGHT = (
    "chronoprobe.cli.main",
    "chronoprobe.runs.engine",
    "chronoprobe.runs.ecbd_step",
    "chronoprobe.runs.probe_step",
    "chronoprobe.runs.kgqa_step",
    "chronoprobe.runs.memorize_step",
    "chronoprobe.report.ecbd_section",
    "chronoprobe.probes.span_ppl",
)


def test_light_modules_do_not_import_torch_or_transformers():
    code = (
        f"import sys, {', '.join(LIGHT)}; "
        "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
