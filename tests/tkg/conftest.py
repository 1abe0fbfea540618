"""Shared fixtures: a hand-made KG and a small synthetic world (torch runs on one thread:
see tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chronoprobe.kg.graph import TemporalKG
from chronoprobe.kg.records import Fact
from chronoprobe.time import TimePoint


@pytest.fixture
def tiny_kg() -> TemporalKG:
    """Presidents and a war: closed, open-ended, month-precision and end-only facts."""
    return TemporalKG.from_records(
        [
            Fact("obama", "held", "president", TimePoint(2009), TimePoint(2017)),
            Fact("trump", "held", "president", TimePoint(2017, 1), TimePoint(2021, 1)),
            Fact("biden", "held", "president", TimePoint(2021), None),  # still true
            Fact("biden", "held", "vice_president", TimePoint(2009), TimePoint(2017)),
            Fact("obama", "spouse", "michelle", None, TimePoint(2010)),  # start unknown
            # the same years at month precision: a duplicate once times are years
            Fact("obama", "held", "president", TimePoint(2009, 1), TimePoint(2017, 1)),
            Fact("war", "occurred", "event", TimePoint(2003), TimePoint(2011)),
            Fact("nobody", "held", "nothing", None, None),  # no time at all
        ],
        name="tiny",
    )


@pytest.fixture(scope="session")
def synth_kg() -> TemporalKG:
    from chronoprobe.kg.synth import SynthConfig, synthesize

    return synthesize(SynthConfig(seed=0, facts=3000, text=False)).kg


@pytest.fixture(scope="session")
def synth_dir(synth_kg: TemporalKG, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return synth_kg.save(tmp_path_factory.mktemp("kg") / "world")
