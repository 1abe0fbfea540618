"""The ``import`` operation: a released dataset's files as the probe set ``build`` would write.

Each importer is one entry of :data:`IMPORTERS`, keyed by the released format: its params and a
function writing the same files as the matching builder (the same row schema, ``stats.json``
and ``metrics.json``), so ``probe``, ``kgqa``, ``train`` and the report take an imported set
like a built one. ``chronoprobe import FORMAT FILE... -o OUT`` and a step ``{kind: import,
params: {format: FORMAT, paths: [...]}}`` are the same operation.

One row in is one row out: an importer writes no row its files lack. A row it cannot read
stops the import naming file, line and reason (with ``skip_bad``, it is skipped and counted by
reason in ``metrics.json``); a file of another format stops it at once, saying which format it
looks like and which fields are missing. An import that gives no row writes nothing and fails.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from chronoprobe.atomic import atomic_write_text
from chronoprobe.datasets.card import Release
from chronoprobe.families import family_named
from chronoprobe.params import Cli, ExistingPath, Params
from chronoprobe.registry import Registry
from chronoprobe.step_context import StepContext
from chronoprobe.steps import Variant, files_fingerprint, variant, variant_kind

IMPORTERS: Registry[Variant] = Registry("importer")


class ImportParams(Params):
    paths: Annotated[list[ExistingPath], Cli(argument=True)] = Field(
        min_length=1,
        description="The released files, as published, or the folders holding them (every "
        "file of the format under a folder, train before valid before test).",
    )
    skip_bad: bool = Field(
        False,
        description="Skip rows that cannot be read (counted by reason in metrics.json) instead "
        "of stopping at the first one.",
    )


def _problems(params: ImportParams):
    from chronoprobe.kg.io.problems import Problems

    return Problems(strict=not params.skip_bad)


def _nothing(params: ImportParams, problems, what: str) -> ValueError:
    files = ", ".join(map(str, params.paths))
    why = f"{problems.total:,} bad rows, skipped" if problems.total else "no rows"
    return ValueError(f"no {what} in {files} ({why})")


def _finish(ctx: StepContext, params: ImportParams, problems, family: str, headline: dict):
    """metrics.json (the headline counts, the source, the rows skipped) and the set's card."""
    from chronoprobe.core.tables import figures_line
    from chronoprobe.datasets.builders import BUILDERS
    from chronoprobe.datasets.card import card_text, import_card_text, write_step_card

    for line in problems.summary():
        ctx.log.warning(f"skipped: {line.strip()}")
    metrics = {
        "family": family,
        **headline,
        "source": {"format": params.format, "inputs": list(map(str, params.paths))},
        "skipped": dict(problems.counts),
    }
    atomic_write_text(ctx.out_dir / "metrics.json", json.dumps(metrics, indent=2) + "\n")
    ctx.log.info(figures_line(headline))
    release = IMPORTERS.get(params.format).card
    text = card_text(BUILDERS.get(family))
    if release is not None:
        text = import_card_text(release, text)
    released = (params.format, list(params.paths), release)
    write_step_card(ctx, "import", text, params, {}, released=released)


# --- TempLAMA and DynamicTempLAMA -------------------------------------------------------------


class TemplamaParams(ImportParams):
    aliases: ExistingPath | None = Field(
        None,
        description="A KG giving the answers' other names, joined by Wikidata id: a KG "
        "directory (`kg convert`), or a file a `kg convert` format reads (a Wikidata dump "
        "slice, SPARQL results of labels and skos:altLabel, JSONL entities with aliases). "
        "Judging then reads every answer's aliases; without it, only the released names, "
        "and metrics.json says so. Example: --aliases answers-kg/.",
    )
    aliases_lang: str = Field(
        "en", description="Language of the aliases read from a source file (with --aliases)."
    )


def _aliases_of(ctx: StepContext, params: Any, rows: list[dict]) -> tuple[dict, dict]:
    """The ``--aliases`` KG's names by id (empty without one), and what metrics.json says of
    them: where they came from and how many answers got some."""
    answers = {i for row in rows for i in row["answers"]}
    if params.aliases is None:
        return {}, {"source": None, "answers": len(answers), "with_aliases": 0}
    from chronoprobe.kg.entity_names import read_entity_names

    read = read_entity_names(params.aliases, params.aliases_lang)
    for line in read.skipped:
        ctx.log.warning(f"--aliases: skipped {line}")
    counts = {
        "source": read.source,
        "answers": len(answers),
        "in_kg": sum(i in read.names for i in answers),
        "with_aliases": sum(len(read.names.get(i, ())) > 1 for i in answers),
    }
    return read.names, counts


def _import_templama(ctx: StepContext, params: Any, fmt: str) -> None:
    from chronoprobe.datasets.ops import drift_headline
    from chronoprobe.datasets.templama import read_templama, release_names
    from chronoprobe.datasets.writers import write_drift_rows
    from chronoprobe.jsonl import write_jsonl
    from chronoprobe.set_files import NAMES_FILE

    problems = _problems(params)
    rows, deleted = read_templama(params.paths, problems, fmt)
    if not rows:
        raise _nothing(params, problems, "rows")
    names, aliases = _aliases_of(ctx, params, rows)
    write_jsonl(ctx.out_dir / NAMES_FILE, release_names(rows, names))
    stats = write_drift_rows(ctx.out_dir, rows, deleted)
    if not aliases["with_aliases"]:
        ctx.log.warning(
            "no answer has aliases: generated answers are judged by the released names alone "
            "(give --aliases KG to add the KG's other names)"
        )
    _finish(ctx, params, problems, "drift", {**drift_headline(stats), "aliases": aliases})


@variant(
    IMPORTERS,
    "templama",
    TemplamaParams,
    card=Release(
        "TempLAMA",
        "Bhuwan Dhingra, Jeremy R. Cole, Julian Martin Eisenschlos, Daniel Gillick, Jacob "
        "Eisenstein, William W. Cohen. *Time-Aware Language Models as Temporal Knowledge "
        "Bases.* TACL 2022",
        "the facts come from Wikidata (CC0); the code is Apache-2.0: check "
        "github.com/google-research/language for the data files' own terms",
    ),
)
def import_templama(ctx: StepContext, params: TemplamaParams, inputs: dict[str, Path]) -> None:
    """Import TempLAMA (Dhingra et al., TACL 2022): JSONL rows of a query with _X_ and its
    answers at a year.

    One drift row per released row: _X_ becomes the gap, every answer is kept (answer may be
    one object or a list), most_frequent_answer and most_recent_answer are kept as fields.
    Splits (unchanged, updated, new) compare each query with its answers at the previous year
    of the files; queries that disappear are counted as deleted in stats.json, not written.
    Writes examples.jsonl and stats.json, as `build drift` does, and answer_names.jsonl: every
    answer of the files with its names, the KG that judging generated answers reads. With
    --aliases KG each answer takes the KG's aliases, joined by Wikidata id.

    Example: chronoprobe import templama train.json val.json test.json --aliases kg/ -o templama/
    """
    _import_templama(ctx, params, "templama")


@variant(
    IMPORTERS,
    "dynamic-templama",
    TemplamaParams,
    card=Release(
        "DynamicTempLAMA",
        family_named("drift").paper,
        "see the LICENSE of github.com/amazon-science/temporal-robustness; the facts come from "
        "Wikidata (CC0)",
    ),
)
def import_dynamic_templama(
    ctx: StepContext, params: TemplamaParams, inputs: dict[str, Path]
) -> None:
    """Import DynamicTempLAMA (Margatina et al., EACL 2023 Findings): TempLAMA's rows with
    quarter (2019-Q1) or month (2019-01) dates; the granularity is read from the dates.

    Rows, splits and files as `import templama`.

    Example: chronoprobe import dynamic-templama dynamic_templama_quarterly.jsonl -o dtl/
    """
    _import_templama(ctx, params, "dynamic-templama")


# --- ECBD and entity knowledge propagation ----------------------------------------------------

SPLIT_HELP = (
    "Split of every row (default: the file name's, e.g. np_spans_dev.json is dev; none when "
    "the name gives none)."
)


class ECBDImportParams(ImportParams):
    split: str | None = Field(None, description=SPLIT_HELP)
    year: str | None = Field(
        None,
        description="Year group of every row (default: the row's year; rows of a file in a "
        "folder named popular are the POPULAR group).",
    )


def _write_ecbd(ctx: StepContext, params: Any, rows: list[dict], problems) -> None:
    from chronoprobe.datasets.ecbd_release import undated
    from chronoprobe.datasets.writers import write_ecbd_rows

    if not rows:
        raise _nothing(params, problems, "examples")
    entities = len({row["entity"] for row in rows})
    missing = undated(rows)
    extra = {"entities": entities, **({"undated": missing} if missing else {})}
    stats = write_ecbd_rows(ctx.out_dir, rows, extra)
    headline = {"examples": stats["examples"], "groups": len(stats["groups"])}
    if missing:
        headline["undated"] = sum(missing.values())
        for why, n in missing.items():
            ctx.log.warning(f"{n:,} examples without a year: {why}")
    _finish(ctx, params, problems, "ecbd", headline)


@variant(
    IMPORTERS,
    "ecbd",
    ECBDImportParams,
    card=Release(
        "ECBD", family_named("ecbd").paper, "CC BY-SA, as the Wikipedia text it is made of"
    ),
)
def import_ecbd(ctx: StepContext, params: ECBDImportParams, inputs: dict[str, Path]) -> None:
    """Import ECBD (Onoe et al., NAACL 2022 Findings): masked sentences about entities by
    origination year, as the span-ppl view reads them.

    One example per released row: the sentence rebuilt with its span (answer_str, checked
    against answer_d), the mention's character offsets from entity_span_loc (word positions)
    checked against entity_span_str, the first definition sentence without its [ENT_START] /
    [ENT_END] markers for the DEFINITION condition. NP-COMMON and NP-PROPER spans are np spans
    (the released type is kept as released_span_type). Writes examples.jsonl and stats.json,
    as `build ecbd` does.

    Example: chronoprobe import ecbd ecbd/2020/np_spans_test.json -o ecbd-2020/
    """
    from chronoprobe.datasets.ecbd_release import read_ecbd

    problems = _problems(params)
    rows = read_ecbd(params.paths, problems, params.split, params.year)
    _write_ecbd(ctx, params, rows, problems)


YEARS_FROM_HELP = (
    "ECBD's release files, or their folder, to date the entities: the released rows carry no "
    "origination date, and each takes the year ECBD's rows give its Wikipedia page (the page id "
    "in ex_id). A row left undated has year unknown and says why in year_missing, as stats.json "
    "counts them."
)


class EKPImportParams(ImportParams):
    split: str | None = Field(None, description=SPLIT_HELP)
    years_from: list[ExistingPath] = Field([], description=YEARS_FROM_HELP)
    year: str | None = Field(
        None, description="Year group of every row, instead of the release files' years."
    )
    span_type: str | None = Field(
        None, description="Span type of every row (default: np or random, from the file name)."
    )


@variant(
    IMPORTERS,
    "ecbd-ekp",
    EKPImportParams,
    card=Release(
        "ECBD entity knowledge propagation",
        "Yasumasa Onoe, Michael J.Q. Zhang, Shankar Padmanabhan, Greg Durrett, Eunsol Choi. "
        "*Can LMs Learn New Entities from Descriptions? Challenges in Propagating Injected "
        "Knowledge.* ACL 2023",
        "CC BY-SA, as the Wikipedia text it is made of",
    ),
)
def import_ecbd_ekp(ctx: StepContext, params: EKPImportParams, inputs: dict[str, Path]) -> None:
    """Import the entity-knowledge-propagation sets (Onoe et al., ACL 2023): each probe
    sentence of an entity, as the span-ppl view reads them.

    Each probe sentence is one example, its label's span in the gap; the entity's definition,
    its own masked span (def_target) filled in, is the DEFINITION condition's. The rows carry
    no origination date: --years-from ECBD's release files dates each by its Wikipedia page.
    Writes examples.jsonl and stats.json, as `build ecbd` does.

    Example: chronoprobe import ecbd-ekp all_ent_2020_2021_np_500samples.json --years-from
    ecbd/ -o ekp/
    """
    from chronoprobe.datasets.ecbd_release import read_ekp

    problems = _problems(params)
    rows = read_ekp(
        params.paths, problems, params.split, params.year, params.span_type, params.years_from
    )
    _write_ecbd(ctx, params, rows, problems)


# --- CronQuestions ----------------------------------------------------------------------------


class CronQImportParams(ImportParams):
    split: Literal["train", "valid", "test"] | None = Field(
        None,
        description="Split of every question (default: the file name's, e.g. test.pickle is test).",
    )
    entity_order: Literal["question", "annotation"] = Field(
        "question",
        description="How each question's entities are ordered; the QA models read the first as "
        "its head and the second as its tail. question: by where the released question names "
        "their ids, as CronKGQA's code orders them. annotation: head, then tail, as the "
        "annotation names them; the paper withholds the annotation from test questions, so "
        "this gives the models what it does not (a departure, for comparison).",
    )


@variant(
    IMPORTERS,
    "cronquestions",
    CronQImportParams,
    card=Release(
        "CronQuestions",
        family_named("cronq").paper,
        "see github.com/apoorvumang/CronKGQA; the facts come from Wikidata (CC0)",
    ),
)
def import_cronquestions(
    ctx: StepContext, params: CronQImportParams, inputs: dict[str, Path]
) -> None:
    """Import CronQuestions (Saxena et al., ACL 2021): the released question pickles, or the
    same rows as JSON, as `kgqa train` and `kgqa eval` read them.

    Pickles go through a restricted unpickler: no code runs, and depth, size and time are
    bounded. A row's question is the released paraphrases[0] (the released question, which
    names Wikidata ids, is kept as question_ids), its id SPLIT-UNIQ_ID; the template's {type}
    and {adj} slots are filled from the annotation (before/after, first/last), and direction
    is that word. Sets become sorted lists; times stay integers, a time question's answers are
    written as text ("1885"), as every answer is. A question with a value of
    the wrong kind (text that is no text, a year that is no integer, a uniq_id given twice in a
    split...) is reported as FILE:LINE (FILE: question:INDEX in a pickle) and its reason. The
    split is --split or the file name's. Writes questions.jsonl, train/valid/test.jsonl and
    stats.json, as `build cronq` does.

    Example: chronoprobe import cronquestions data/wikidata_big/questions -o cronq/
    """
    from chronoprobe.datasets.cronq_release import read_question_files
    from chronoprobe.datasets.writers import write_cronq_rows

    problems = _problems(params)
    splits = read_question_files(params.paths, problems, params.split, params.entity_order)
    rows = [row for name in ("train", "valid", "test") for row in splits.get(name, [])]
    if not rows:
        raise _nothing(params, problems, "questions")
    extra = {"dropped_by_split": 0, "entity_order": params.entity_order}
    stats = write_cronq_rows(ctx.out_dir, rows, splits, extra)
    headline = {
        "questions": stats["all"]["questions"],
        **{f"{name}_questions": stats[name]["questions"] for name in ("train", "test")},
        "types": stats["all"]["types"],
        "entity_order": params.entity_order,
    }
    _finish(ctx, params, problems, "cronq", headline)


# ---------------------------------------------------------------------------------------------


def show(out: Path):
    """What ``chronoprobe import`` prints: the family's summary, as ``build`` prints it."""
    from chronoprobe.datasets.ops import show_family

    return show_family(out)


def _fingerprint(params: Any) -> Any:
    """The files an import reads: its paths, and the ECBD files that date its rows."""
    dating = getattr(params, "years_from", [])
    return files_fingerprint(params.model_copy(update={"paths": [*params.paths, *dating]}))


variant_kind("import", "format", IMPORTERS, inputs=(), fingerprint=_fingerprint, show=show)
