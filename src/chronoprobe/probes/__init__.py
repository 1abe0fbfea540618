"""Evaluation views over probe rows, and the ``probe`` operation that runs them.

``VIEWS`` names each view (see :mod:`chronoprobe.probes.view`); ``run_probe`` runs one over a
probe file for one model and writes predictions.jsonl, skipped.jsonl and metrics.json.
"""

from chronoprobe.probes.rows import ProbeRow, read_rows
from chronoprobe.probes.runner import metrics_by_group, run_probe
from chronoprobe.probes.view import VIEWS, ProbeParams, View

__all__ = ["VIEWS", "ProbeParams", "ProbeRow", "View", "metrics_by_group", "read_rows", "run_probe"]
