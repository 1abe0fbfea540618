"""The ``kg`` operation: a temporal KG directory from the synthetic world, the real sample, or
source files (``chronoprobe kg synth|sample|convert`` and a step ``{kind: kg, params: {source:
synth|sample|convert, ...}}``, the same operation). Each source is one entry of
:data:`KG_SOURCES`; the output is a KG directory (``TemporalKG.load`` reads it), plus the
synthetic world's articles and snippets, and ``metrics.json`` with the KG's headline statistics.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, ClassVar, Literal

from pydantic import Field, model_validator

from chronoprobe.atomic import atomic_write_text
from chronoprobe.errors import UserError
from chronoprobe.kg.io.options import LOADERS
from chronoprobe.params import Cli, ExistingPath, Params, choice_of, seed_field
from chronoprobe.registry import Registry
from chronoprobe.step_context import SHARDS_DIR, StepContext
from chronoprobe.steps import Variant, files_fingerprint, variant, variant_kind

KG_SOURCES: Registry[Variant] = Registry("KG source")


class SynthParams(Params):
    renamed: ClassVar[dict[str, str]] = {"start_year": "first", "end_year": "last"}

    facts: int | None = Field(
        None,
        ge=1,
        description="Approximate number of facts (default: about 20,000; at most 2.5 million).",
    )
    people: int | None = Field(None, ge=1, description="Number of people, instead of facts.")
    seed: int | None = seed_field("the world (the same seed, the same world)")
    first: int = Field(1950, description="First year of the world's history.")
    last: int = Field(2024, description="Last year of the world's history (inclusive).")
    text: bool = Field(True, description="Also write articles and dated snippets.")

    @model_validator(mode="after")
    def _valid_world(self) -> SynthParams:
        self.synth_config(0)  # the generator's own checks, when the config loads
        return self

    def synth_config(self, seed: int):
        from chronoprobe.kg.synth import SynthConfig

        facts = 20_000 if self.facts is None and self.people is None else self.facts
        return SynthConfig(
            seed=seed if self.seed is None else self.seed,
            facts=facts,
            people=self.people,
            start_year=self.first,
            end_year=self.last,
            text=self.text,
        )


@variant(KG_SOURCES, "synth", SynthParams)
def synth(ctx: StepContext, params: SynthParams, inputs: dict[str, Path]) -> None:
    """Generate the synthetic world: a seeded KG with real-world structure, plus its texts.

    People, teams, companies, universities, offices, awards, countries and events, with
    careers, conflicts, repeated terms and Zipfian popularity. Writes the KG and, with text,
    articles.parquet and snippets.parquet (dated text about the facts of each period).

    Example: chronoprobe kg synth --facts 20000 --seed 0 -o kg/world
    """
    from chronoprobe.kg.synth import synthesize

    world = synthesize(params.synth_config(ctx.seed))
    world.kg.name = "synth"
    world.save(ctx.out_dir)
    _finish(ctx, world.kg)


class SampleParams(Params):
    pass


@variant(KG_SOURCES, "sample", SampleParams)
def sample(ctx: StepContext, params: SampleParams, inputs: dict[str, Path]) -> None:
    """Write the small real sample KG shipped with chronoprobe (hand-curated Wikidata facts).

    338 time-scoped facts of 11 relations about 286 entities: heads of government, US
    presidents, Roman consuls, footballers' clubs, Nobel prizes, marriages... Ids are Wikidata's
    where they could be confirmed offline; the others are local ids starting with X: (e.g.
    X:satya-nadella), which a real dump will name by their Q-ids, so do not join the sample with
    other data on them. A stand-in to try things offline, too small to measure with: replace it
    with real dumps via `kg convert`.

    Example: chronoprobe kg sample -o kg/real
    """
    from chronoprobe.kg.samples import load_sample

    kg = load_sample()
    kg.name = "sample"
    kg.save(ctx.out_dir)
    _finish(ctx, kg)


class ConvertParams(Params):
    paths: Annotated[list[ExistingPath], Cli(argument=True)] = Field(
        min_length=1,
        description="Source files (.json[.gz|.bz2], .txt, .jsonl), or a CronQuestions kg "
        "directory.",
    )
    format: Annotated[choice_of(LOADERS), Cli(short="-f")] = Field(
        description="Format of the inputs."
    )
    relations: list[str] | None = Field(
        None, description="Relation ids to keep, e.g. P39,P54 (default: all)."
    )
    lang: str = Field("en", description="Language of labels, aliases and descriptions.")
    strict: bool = Field(
        False, description="Stop at the first bad record instead of skipping and counting."
    )
    processes: int = Field(1, ge=1, description="Worker processes (Wikidata dumps).")
    engine: Literal["local", "ray"] = Field(
        "local",
        description="Where Wikidata dumps are parsed: local (this machine, --processes "
        "workers) or ray (Ray tasks on the cluster of --address, or on a local Ray instance; "
        "needs pip install 'chronoprobe[ray]'). A killed ray conversion resumes from the parts "
        "it finished; the KG is the same either way.",
    )
    address: str | None = Field(
        None,
        description="Ray cluster address with engine ray, e.g. auto or ray://head:10001 "
        "(default: RAY_ADDRESS, else a Ray instance started on this machine).",
    )
    var: list[str] = Field(
        default_factory=list,
        description="SPARQL results: the variable NAME plays ROLE, as NAME=ROLE; roles: "
        "subject, relation, object, start, end, start_precision, end_precision, "
        "subject_label, relation_label, object_label, statement.",
    )
    constant: Annotated[list[str], Cli(commas=False)] = Field(
        default_factory=list,
        description="SPARQL results: a role the query fixed in its text, as ROLE=VALUE, e.g. "
        "relation=P39, object=Q11696, start_precision=9.",
    )
    mapping: ExistingPath | None = Field(
        None,
        description="SPARQL results: a YAML file of 'variables: {NAME: ROLE}' and "
        "'constants: {ROLE: VALUE}'; var and constant override it.",
    )

    @model_validator(mode="after")
    def _mapping_is_for_sparql(self) -> ConvertParams:
        if (self.var or self.constant or self.mapping) and self.format != "wikidata-sparql":
            raise UserError(
                "`var`, `constant` and `mapping` apply to `format: wikidata-sparql` only"
            )
        if self.engine == "ray" and self.format != "wikidata-json":
            raise UserError("`engine: ray` applies to `format: wikidata-json` only")
        if self.address is not None and self.engine != "ray":
            raise UserError("`address` applies to `engine: ray` only")
        folders = [str(p) for p in self.paths if p.is_dir()]
        if folders and self.format != "cronquestions":
            raise UserError(
                f"{', '.join(folders)}: a folder; format {self.format} reads files: pass the "
                "files in it (only a CronQuestions kg folder is read as a whole)"
            )
        self.sparql_mapping()  # its own checks, when the config loads
        return self

    def sparql_mapping(self):
        """The SPARQL variable mapping these options give; None for the defaults."""
        from chronoprobe.kg.io.sparql_mapping import VariableMapping, parse_pairs

        if not (self.var or self.constant or self.mapping):
            return None
        variables = parse_pairs(self.var, "var")
        constants = parse_pairs(self.constant, "constant")
        if self.mapping is not None:
            return VariableMapping.from_file(self.mapping, variables, constants)
        return VariableMapping.build(variables, constants)


@variant(KG_SOURCES, "convert", ConvertParams)
def convert(ctx: StepContext, params: ConvertParams, inputs: dict[str, Path]) -> None:
    """Convert source files into a KG directory.

    Bad records are reported as FILE:LINE: REASON. By default they are skipped and counted by
    reason; with strict the first one stops the conversion. A conversion that gives neither a
    fact nor a dated entity nor an alias writes nothing and fails, saying why; one of dated
    entities alone (new entities from a dump slice) is a KG that `build ecbd` reads, one of
    names alone (SPARQL labels and skos:altLabel) one that `import templama --aliases` reads.

    Example: chronoprobe kg convert latest-all.json.bz2 -f wikidata-json --relations P39,P54 -o kg/
    """
    from chronoprobe.kg.io.options import LoadOptions
    from chronoprobe.kg.io.problems import Problems

    problems = Problems(strict=params.strict)
    if params.format == "wikidata-json":
        from chronoprobe.kg.io.wikidata_dump import Scanner

        if Scanner is None:
            ctx.log.warning(
                "the compiled dump scanner was not built when chronoprobe was installed (no C "
                "compiler then): reading with msgspec alone, about half as fast, to the same KG. "
                "Install a C compiler (gcc) and reinstall chronoprobe to build it."
            )
    processes = params.processes
    if params.format == "wikidata-json" and params.engine == "local" and processes > 1:
        from chronoprobe.kg.io.wikidata_load import worker_processes

        processes, capped = worker_processes(processes, params.paths)
        if capped:
            ctx.log.warning(capped)
    with ctx.progress_task(f"reading {params.paths[0].name}") as progress:
        options = LoadOptions(
            relations=frozenset(params.relations) if params.relations else None,
            lang=params.lang,
            processes=processes,
            progress=progress,
            sparql=params.sparql_mapping(),
            engine=params.engine,
            address=params.address,
            work_dir=ctx.out_dir / SHARDS_DIR,
        )
        kg = LOADERS.get(params.format)(params.paths, options, problems)
    for warning in problems.warnings:
        ctx.log.warning(f"warning: {warning}")
    for line in problems.summary():
        ctx.log.warning(f"skipped: {line.strip()}")
    skipped = kg.meta.get("skipped") or {}
    not_facts = ", ".join(f"{k} {v:,}" for k, v in skipped.items() if v)
    dated = kg.entities.num_rows - kg.entities.column("start_year").null_count
    named = sum(bool(a) for a in kg.entities.column("aliases").to_pylist())
    if not len(kg) and not dated and not named:
        why = [f"{problems.total:,} bad records (above)"] if problems.total else []
        why += [f"records that are no time-scoped facts: {not_facts}"] if not_facts else []
        raise UserError(
            f"no facts and no dated entities in {', '.join(map(str, params.paths))}"
            + (f" ({'; '.join(why)})" if why else " (no records)")
        )
    if not len(kg):  # new entities of a dump slice (what ECBD reads), or names alone
        ctx.log.warning(
            f"no time-scoped facts, only entities ({kg.entities.num_rows:,}, {dated:,} of them "
            f"dated, {named:,} with aliases): `build ecbd` reads dated entities, `import "
            "templama --aliases` their names; the builders of the other families need facts"
        )
    if not_facts:  # valid records that are not facts (no time, deprecated, ...)
        ctx.log.info(f"not facts: {not_facts}")
    kg.meta.setdefault(
        "source", {"format": params.format, "inputs": [str(p) for p in params.paths]}
    )
    kg.meta["problems"] = dict(problems.counts)
    if problems.warnings:
        kg.meta["warnings"] = problems.warnings
    kg.name = params.paths[0].name
    kg.save(ctx.out_dir)
    _finish(ctx, kg)


def _finish(ctx: StepContext, kg) -> None:
    from chronoprobe.kg.stats import kg_statistics

    stats = kg_statistics(kg, top=0)
    first, last = stats["year_range"]
    metrics = {
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
    atomic_write_text(ctx.out_dir / "metrics.json", json.dumps(metrics, indent=2) + "\n")
    ctx.log.info(f"{len(kg):,} facts, {kg.entities.num_rows:,} entities")


def show(out: Path) -> str:
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    text = (
        f"{metrics['facts']:,} facts, {metrics['entities']:,} entities, "
        f"{metrics['relations']:,} relations"
    )
    if metrics["first_year"] is not None:  # a KG of entities alone has no fact years
        text += f", years {metrics['first_year']} to {metrics['last_year']}"
    problems = metrics.get("problems") or {}
    if problems:
        kinds = ", ".join(f"{n:,} {kind}" for kind, n in problems.items())
        text += f"; skipped {sum(problems.values()):,} bad records: {kinds}"
    return text


variant_kind("kg", "source", KG_SOURCES, inputs=(), fingerprint=files_fingerprint, show=show)
