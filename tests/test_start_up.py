"""Start-up stays light: the command, the run engine, every step kind, view and report section
import without torch or transformers (seconds of import), which load only when a model runs."""

from __future__ import annotations

import subprocess
import sys

CODE = """
import sys
import chronoprobe.cli.main, chronoprobe.runs.engine, chronoprobe.report.ecbd_section
from chronoprobe.steps import STEP_KINDS
from chronoprobe.probes.view import VIEWS
for name in STEP_KINDS.names():
    STEP_KINDS.get(name).params
for name in VIEWS.names():
    VIEWS.get(name)
print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))
"""


def test_light_modules_do_not_import_torch_or_transformers():
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_python_dash_m_runs_the_command():
    from chronoprobe import __version__

    out = subprocess.run(
        [sys.executable, "-m", "chronoprobe", "--version"], capture_output=True, text=True
    )
    assert out.returncode == 0 and __version__ in out.stdout
