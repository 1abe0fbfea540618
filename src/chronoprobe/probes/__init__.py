"""Evaluation views over probe rows (single-token ranking, multi-token decoding, PLL).

``VIEWS`` names each view; ``run_probe`` runs one over a probe file and writes
predictions.jsonl and metrics.json (per period, per split, per period and split).
"""

from chronoprobe.probes.rows import ProbeRow, read_rows
from chronoprobe.probes.runner import metrics_by_group, run_probe
from chronoprobe.probes.views import VIEWS, View, ViewOptions

__all__ = ["VIEWS", "ProbeRow", "View", "ViewOptions", "metrics_by_group", "read_rows", "run_probe"]
