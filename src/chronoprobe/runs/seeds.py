"""Repeating an experiment's trained steps over seeds, so each figure comes with its spread.

One training run is one draw: another seed initialises, shuffles and drops out differently,
and a figure can move by more than the differences a paper reports. With ``seeds: [0, 1, 2]``
(or ``chronoprobe run --seeds 0,1,2``), every step of a kind that trains (``tkg``, ``kgqa``,
``memorize``, ``pretrain``, ``series``, or a plugin's kind declared with ``trains=True``) runs
once per seed, and so does every step that reads the output of a repeated step, each copy
reading the copy of its own seed. Steps that train nothing (the world, the question set) run
once with the config's ``seed``; the report, which reads the whole run, runs once.

A repeated step's copies are named ``<id>-seed<S>`` in the run directory, and each one's
step.json records its ``seed`` and the config ``step`` it repeats. A copy is an ordinary step
with that seed: its cache key holds the seed, so copies never share a cache entry, a resumed
run picks up each copy where it stopped, and the copy of the config's own seed is the very step
(same key) that a run without ``seeds`` computes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

SUFFIX = "-seed"


def seeded_id(step_id: str, seed: int) -> str:
    """The id of a repeated step's copy for ``seed``."""
    return f"{step_id}{SUFFIX}{seed}"


@dataclass(frozen=True)
class StepRun:
    """One step as the run executes it: its id in the run, the config step it comes from, the
    seed it runs with, and the run ids of its inputs; ``repeated`` when it is a seed's copy."""

    id: str
    step: str
    seed: int
    inputs: dict[str, str]
    repeated: bool = False


def repeated_steps(steps: Sequence, kinds: dict) -> set[str]:
    """Ids of the steps that run once per seed: steps of kinds that train, and every cached
    step that reads one of them (``steps``: the config's, in order; ``kinds``: id -> kind)."""
    repeated: set[str] = set()
    for step in steps:
        kind = kinds[step.id]
        if kind.cacheable and (kind.trains or set(step.inputs.values()) & repeated):
            repeated.add(step.id)
    return repeated


def step_runs(
    steps: Sequence, kinds: dict, seed: int, seeds: Sequence[int] | None
) -> list[StepRun]:
    """Every step the run executes, in order: the config's steps, each repeated step expanded
    into its copies (one per seed, in the order of ``seeds``) where it stands."""
    repeated = repeated_steps(steps, kinds) if seeds else set()
    out = []
    for step in steps:
        if step.id not in repeated:
            out.append(StepRun(step.id, step.id, seed, dict(step.inputs)))
            continue
        for s in seeds or ():
            inputs = {
                name: seeded_id(source, s) if source in repeated else source
                for name, source in step.inputs.items()
            }
            out.append(StepRun(seeded_id(step.id, s), step.id, s, inputs, repeated=True))
    return out


def seed_problems(
    steps: Sequence, kinds: dict, params: dict, seeds: Sequence[int]
) -> list[tuple[tuple, str]]:
    """What is wrong with repeating these steps over ``seeds``: (key path, reason) pairs."""
    repeated = repeated_steps(steps, kinds)
    problems = []
    ids = {step.id for step in steps}
    for i, step in enumerate(steps):
        kind = kinds[step.id]
        if step.id in repeated:
            own = getattr(getattr(params[step.id], "root", params[step.id]), "seed", None)
            if own is not None:
                problems.append(
                    (
                        ("steps", i, "params", "seed"),
                        f"fixed at {own}, so every seed would repeat the same run; leave it "
                        "out to let `seeds` set it",
                    )
                )
            clashes = sorted({seeded_id(step.id, s) for s in seeds} & ids)
            if clashes:
                problems.append(
                    (
                        ("steps", i, "id"),
                        f"its copies over seeds would be named like the step {clashes[0]!r}; "
                        "rename one of them",
                    )
                )
        elif not kind.cacheable:
            for name, source in step.inputs.items():
                if source in repeated:
                    problems.append(
                        (
                            ("steps", i, "inputs", name),
                            f"{source!r} runs once per seed and this {kind.name} step runs "
                            "once; it cannot take one seed's copy",
                        )
                    )
    return problems
