"""Experiments: YAML configs of steps, run directories, the shared step cache, resumable shards.

``run_experiment("experiments/demo.yaml")`` is the one call behind ``chronoprobe run``; step
kinds register with :func:`step_kind` and write into :attr:`StepContext.out_dir`.
"""

from chronoprobe.runs.config import ConfigError, load_experiment
from chronoprobe.runs.engine import RunResult, StepResult, run_experiment
from chronoprobe.step_context import StepContext
from chronoprobe.steps import step_kind

__all__ = [
    "ConfigError",
    "RunResult",
    "StepContext",
    "StepResult",
    "load_experiment",
    "run_experiment",
    "step_kind",
]
