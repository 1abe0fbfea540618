"""Step kinds for the run-engine tests, loaded the way users add theirs: ``plugins: [module]``.

``tiny_kg`` writes a hand-checked KG, ``squares`` is a slow sharded step that logs every shard
it computes to a side file (to count recomputation after a kill), ``summary`` reads an input.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict

from chronoprobe.atomic import atomic_write_text
from chronoprobe.kg import Entity, Fact, TemporalKG
from chronoprobe.step_context import StepContext
from chronoprobe.steps import step_kind
from chronoprobe.time import TimePoint


class TinyKGParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    last_pm: str = "Q180589"


@step_kind("tiny_kg", TinyKGParams)
def tiny_kg(ctx: StepContext, params: TinyKGParams, inputs: dict[str, Path]) -> None:
    facts = [
        Fact("Q145", "P6", "Q264766", TimePoint(2016, 7, 13), TimePoint(2019, 7, 24)),
        Fact("Q145", "P6", params.last_pm, TimePoint(2019, 7, 24), TimePoint(2022, 9, 6)),
    ]
    labels = {"Q145": "United Kingdom", "Q264766": "Theresa May", "Q180589": "Boris Johnson"}
    TemporalKG.from_records(facts, [Entity(i, n) for i, n in labels.items()]).save(ctx.out_dir)
    atomic_write_text(ctx.out_dir / "metrics.json", json.dumps({"facts": len(facts)}))


class SquaresParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    shards: int = 20
    rows_per_shard: int = 10
    delay: float = 0.0  # seconds per shard, to leave time to kill the run
    side_file: str | None = None  # every shard computation appends its index here


@step_kind("squares", SquaresParams)
def squares(ctx: StepContext, params: SquaresParams, inputs: dict[str, Path]) -> None:
    for index in ctx.shards("squares", params.shards):
        if params.side_file:
            with open(params.side_file, "a") as side:
                side.write(f"{index}\n")
                side.flush()
                os.fsync(side.fileno())
        if str(index) == os.environ.get("CHRONOPROBE_TEST_FAIL_AT"):  # not a param: same key
            raise RuntimeError(f"failing at shard {index}")
        if str(index) == os.environ.get("CHRONOPROBE_TEST_BLOCK_AT"):  # wait here to be killed
            time.sleep(60)
        time.sleep(params.delay)
        i = np.arange(index * params.rows_per_shard, (index + 1) * params.rows_per_shard)
        noise = np.random.default_rng([ctx.seed, index]).random(len(i))
        ctx.write_shard("squares", index, pa.table({"i": i, "square": i * i, "noise": noise}))
    table = pq.read_table(ctx.merge_shards("squares"))
    metrics = {"rows": table.num_rows, "noise": {"mean": float(np.mean(table["noise"]))}}
    atomic_write_text(ctx.out_dir / "metrics.json", json.dumps(metrics))


class SummaryParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


@step_kind("summary", SummaryParams)
def summary(ctx: StepContext, params: SummaryParams, inputs: dict[str, Path]) -> None:
    kg = TemporalKG.load(inputs["kg"])
    answers = kg.answers(subject="Q145", relation="P6", period="2019-Q3")
    atomic_write_text(ctx.out_dir / "metrics.json", json.dumps({"answers": sorted(answers)}))


class FitParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    seed: int | None = None


@step_kind("fit", FitParams, trains=True)
def fit(ctx: StepContext, params: FitParams, inputs: dict[str, Path]) -> None:
    """A training whose result depends on its seed: 5, 6 or 7 of 10 right for seeds 0, 1, 2."""
    from chronoprobe.metrics.uncertainty import proportion, summary

    seed = ctx.seed if params.seed is None else params.seed
    right = 5 + seed % 3
    atomic_write_text(ctx.out_dir / "weights.txt", f"{seed}\n")
    outcomes = [i < right for i in range(10)]
    metrics = summary(10, {"accuracy": proportion(outcomes)})
    atomic_write_text(ctx.out_dir / "metrics.json", json.dumps(metrics))


@step_kind("reads_fit", SummaryParams)
def reads_fit(ctx: StepContext, params: SummaryParams, inputs: dict[str, Path]) -> None:
    """Reads a fit's weights: with seeds, each copy must read the fit of its own seed."""
    weights = int((inputs["model"] / "weights.txt").read_text())
    atomic_write_text(ctx.out_dir / "metrics.json", json.dumps({"weights_seed": weights}))


class CountParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    epochs: int = 1


def _carry_count(entry: Path, work: Path) -> None:
    (work / ".shards").mkdir(parents=True, exist_ok=True)
    (work / ".shards" / "state.json").write_bytes((entry / "state.json").read_bytes())


@step_kind("count_up", CountParams, continues=("epochs", _carry_count))
def count_up(ctx: StepContext, params: CountParams, inputs: dict[str, Path]) -> None:
    """A training that goes on from a finished run of fewer epochs: its state says which."""
    state = ctx.out_dir / ".shards" / "state.json"
    earlier = json.loads(state.read_text()) if state.exists() else {"epochs": 0, "note": ""}
    done = {"epochs": params.epochs, "from": earlier["epochs"], "note": earlier.get("note", "")}
    atomic_write_text(ctx.out_dir / "state.json", json.dumps(done))


class ExitParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    code: int | None = 0


@step_kind("exits", ExitParams)
def exits(ctx: StepContext, params: ExitParams, inputs: dict[str, Path]) -> None:
    """A plugin step that ends the process instead of returning."""
    import sys

    sys.exit(params.code)
