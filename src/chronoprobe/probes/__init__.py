"""Evaluation views over probe rows, and the ``probe`` operation that runs them.

``VIEWS`` names each view (see :mod:`chronoprobe.probes.view`); the ``probe`` step
(:mod:`chronoprobe.probes.ops`) runs one over a probe set, and ``chronoprobe.probe(...)`` does
the same from Python.
"""

from chronoprobe.probes.grouping import metrics_by_group
from chronoprobe.probes.rows import ProbeRow, read_rows
from chronoprobe.probes.view import VIEWS, ProbeParams, View

__all__ = ["VIEWS", "ProbeParams", "ProbeRow", "View", "metrics_by_group", "read_rows"]
