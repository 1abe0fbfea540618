"""The ``kg`` step kind: a temporal KG from the synthetic world, the real sample, or source files.

Its output directory is a KG directory (``TemporalKG.load`` reads it), plus the synthetic
world's articles and snippets, and ``metrics.json`` with the KG's headline statistics.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, model_validator

from chronoprobe.atomic import atomic_write_text
from chronoprobe.kg.graph import TemporalKG
from chronoprobe.runs.config import ExistingPath
from chronoprobe.runs.steps import StepContext, step_kind


class SynthSource(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: Literal["synth"]
    facts: int | None = None  # approximate size (default: 20,000 facts unless people is given)
    people: int | None = None
    seed: int | None = None  # default: the experiment's seed
    start_year: int = 1950
    end_year: int = 2024
    text: bool = True  # also write articles.parquet and snippets.parquet

    @model_validator(mode="after")
    def _valid_world(self) -> SynthSource:
        self.synth_config(0)  # the generator's own checks, at load time rather than mid-run
        return self

    def synth_config(self, seed: int):
        from chronoprobe.kg.synth import SynthConfig

        facts = 20_000 if self.facts is None and self.people is None else self.facts
        return SynthConfig(
            seed=seed if self.seed is None else self.seed,
            facts=facts,
            people=self.people,
            start_year=self.start_year,
            end_year=self.end_year,
            text=self.text,
        )


class SampleSource(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: Literal["sample"]


class ConvertSource(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: Literal["convert"]
    format: Literal["wikidata-json", "wikidata-sparql", "cronquestions", "jsonl"]
    paths: list[ExistingPath] = Field(min_length=1)
    relations: list[str] | None = None  # keep only these relation ids (default: all)
    lang: str = "en"
    strict: bool = False
    processes: int = Field(1, ge=1)


Source = Annotated[SynthSource | SampleSource | ConvertSource, Field(discriminator="source")]


class KGParams(RootModel[Source]):
    """``source`` picks which of the three models validates the rest."""


def _files_fingerprint(params: KGParams) -> list | None:
    """Source files change without their names changing: key on size and mtime too."""
    if not isinstance(params.root, ConvertSource):
        return None
    return [[str(p), p.stat().st_size, p.stat().st_mtime_ns] for p in params.root.paths]


def _load(spec: SynthSource | SampleSource | ConvertSource, ctx: StepContext) -> TemporalKG:
    if isinstance(spec, SynthSource):
        from chronoprobe.kg.synth import synthesize

        world = synthesize(spec.synth_config(ctx.seed))
        world.kg.name = ctx.step_id
        world.save(ctx.out_dir)
        return world.kg
    if isinstance(spec, SampleSource):
        from chronoprobe.kg.samples import load_sample

        kg = load_sample()
    else:
        from chronoprobe.kg.io.options import LoadOptions, get_loader
        from chronoprobe.kg.io.problems import Problems

        problems = Problems(strict=spec.strict)
        relations = frozenset(spec.relations) if spec.relations else None
        options = LoadOptions(relations=relations, lang=spec.lang, processes=spec.processes)
        kg = get_loader(spec.format)(spec.paths, options, problems)
        kg.meta["problems"] = dict(problems.counts)
        for line in problems.summary():
            ctx.log.warning(f"skipped: {line.strip()}")
    kg.name = ctx.step_id
    kg.save(ctx.out_dir)
    return kg


def _headline(kg: TemporalKG) -> dict:
    from chronoprobe.kg.stats import kg_statistics

    stats = kg_statistics(kg, top=0)
    first, last = stats["year_range"]
    return {
        "entities": stats["entities"],
        "relations": stats["relations"],
        "facts": stats["facts"],
        "first_year": first,
        "last_year": last,
        "multi_answer_share": stats["multi_answer_share"],
        "open_ended_facts": stats["open_ended_facts"],
        "unknown_start_facts": stats["unknown_start_facts"],
        "relation_share": {rel: row["share"] for rel, row in stats["relation_shares"].items()},
        "problems": kg.meta.get("problems", {}),
    }


@step_kind("kg", KGParams, fingerprint=_files_fingerprint)
def run_kg(ctx: StepContext, params: KGParams, inputs: dict[str, Path]) -> None:
    kg = _load(params.root, ctx)
    ctx.log.info(f"{len(kg):,} facts, {kg.entities.num_rows:,} entities")
    atomic_write_text(ctx.out_dir / "metrics.json", json.dumps(_headline(kg), indent=2) + "\n")
