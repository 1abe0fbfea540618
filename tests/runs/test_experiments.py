"""Every shipped experiment config validates: a renamed param or step kind breaks the suite, not
a user's run hours in."""

from __future__ import annotations

from pathlib import Path

import pytest

from chronoprobe.runs.config import load_experiment

EXPERIMENTS = sorted((Path(__file__).parents[2] / "experiments").glob("*.yaml"))


@pytest.mark.parametrize("path", EXPERIMENTS, ids=[p.stem for p in EXPERIMENTS])
def test_experiment_config_is_valid(path):
    experiment = load_experiment(path)
    ids = [step.id for step in experiment.config.steps]
    assert ids[-1] == "report"  # every experiment ends in its report
    for step in experiment.config.steps:
        assert set(step.inputs.values()) <= set(ids[: ids.index(step.id)])


def test_the_demo_covers_every_family():
    kinds = {
        step.kind for step in load_experiment(EXPERIMENTS[0].parent / "demo.yaml").config.steps
    }
    assert {"kg", "build", "memorize", "series", "probe", "tkg", "kgqa"} <= kinds
