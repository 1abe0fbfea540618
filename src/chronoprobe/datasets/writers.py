"""Each probe-set builder from a KG to files on disk, shared by `chronoprobe build` and run steps.

Every function writes its JSONL files and ``stats.json`` atomically into ``out`` and returns the
statistics, so the command line prints them and a run step records them as its metrics.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from chronoprobe.atomic import atomic_write_text
from chronoprobe.errors import UserError
from chronoprobe.jsonl import write_jsonl
from chronoprobe.kg.graph import TemporalKG
from chronoprobe.set_files import EXAMPLES, KG_RECORD, NAMES_FILE, STATEMENTS
from chronoprobe.time import Period

Stats = dict[str, Any]


def _write_stats(out: Path, stats: Any, kg: TemporalKG | None) -> None:
    """``stats.json``, and ``kg.json``: the name and fingerprint of the KG the rows come from,
    which later steps compare with their other inputs' (see ``TemporalKG.fingerprint``); an
    imported set has no KG of its own."""
    atomic_write_text(out / "stats.json", json.dumps(stats, indent=2) + "\n")
    if kg is None:
        return
    source = {"name": kg.name, "fingerprint": kg.fingerprint}
    atomic_write_text(out / KG_RECORD, json.dumps(source, indent=2) + "\n")


def write_drift(
    kg: TemporalKG,
    out: Path,
    periods: Sequence[Period],
    *,
    top_subjects: int = 1000,
    relations: Sequence[str] | None = None,
    templates: Path | None = None,
    on_period: Callable[[Any], None] | None = None,
) -> list[Stats]:
    """``examples.jsonl`` (one row per subject, relation and period), per-period split
    counts, and ``answer_names.jsonl`` (every entity answering a probed relation in the KG,
    with its names, for judging generated answers); ``templates``: a user's templates file
    (CSV or YAML) instead of the built-in ones."""
    from chronoprobe.datasets.drift import answer_names, build_drift
    from chronoprobe.templates import load_cloze_templates, load_templates_file

    chosen = load_templates_file(templates, "drift") if templates is not None else None
    rows = [
        row.to_dict()
        for row in build_drift(
            kg,
            periods,
            top=top_subjects,
            relations=relations,
            templates=chosen,
            on_period=on_period,
        )
    ]
    stats = write_drift_rows(out, rows, kg=kg)
    relations = {row["relation"] for row in rows}
    names = answer_names(kg, chosen or load_cloze_templates("drift"), relations)
    write_jsonl(out / NAMES_FILE, names)
    return stats


def write_drift_rows(
    out: Path,
    rows: Sequence[dict],
    deleted: dict[str, int] | None = None,
    kg: TemporalKG | None = None,
) -> list[Stats]:
    """``examples.jsonl`` and ``stats.json`` of drift rows, built or imported; ``deleted``
    counts, per period, queries of the previous period that have no row (imported sets keep
    one row per released row, so a query that disappears is counted, not written)."""
    from chronoprobe.datasets.drift import drift_statistics

    out.mkdir(parents=True, exist_ok=True)
    write_jsonl(out / EXAMPLES, rows)
    stats = drift_statistics(rows)
    for period in stats:
        if deleted and deleted.get(period["period"]):
            period["deleted"] = period.get("deleted", 0) + deleted[period["period"]]
    _write_stats(out, stats, kg)
    return stats


def write_lamatk(
    kg: TemporalKG,
    out: Path,
    *,
    task: str = "memorize",
    conflicts: bool = True,
    sample: int | None = None,
    seed: int = 0,
) -> Stats:
    """``statements.jsonl`` (and ``queries.jsonl`` for the boundary and implicit tasks).

    ``sample`` draws about that many statements as whole queries; ``conflicts=False`` then
    removes the drawn multi-answer statements, so a sampled non-conflict set holds exactly the
    single-answer statements of the conflict set drawn with the same seed (the paper's
    non-conflict variant: the same data, multi-answer statements removed).
    """
    from chronoprobe.datasets import lamatk as builder
    from chronoprobe.datasets.lamatk_vocab import LABELS_FILE, write_labels

    queries: list[dict] | None = None
    skipped = None
    if sample is not None and task != "memorize":
        # thinning the training rows after the queries are built would query untrained facts
        raise UserError(f"`sample` applies to `task: memorize` only, not {task!r}")
    if task == "memorize":
        rows, skipped = builder.build_statements(kg)
    elif task == "boundary":
        rows, queries = builder.boundary_set(kg)
    elif task == "implicit":
        rows, queries = builder.implicit_set(kg, seed=seed)
    else:
        raise UserError(f"unknown LAMA-TK task {task!r}; choose memorize, boundary or implicit")
    sampled = None
    if sample is not None:
        population = len(rows)
        rows = builder.subsample(rows, sample, seed)
        sampled = builder.sample_statistics(rows, sample, seed, population)
    if not conflicts:
        rows = builder.without_conflicts(rows)
    out.mkdir(parents=True, exist_ok=True)
    write_jsonl(out / STATEMENTS, rows)
    named = {row[key] for row in [*rows, *(queries or [])] for key in ("subject", "object")}
    write_labels(out / LABELS_FILE, {entity: kg.label(entity) for entity in named})
    stats = {"statements": builder.statistics(rows, skipped)}
    if sampled is not None:
        stats["sample"] = sampled
    if queries is not None:
        write_jsonl(out / "queries.jsonl", queries)
        stats["queries"] = builder.statistics(queries)
    _write_stats(out, stats, kg)
    return stats


def write_cronq(
    kg: TemporalKG,
    out: Path,
    *,
    exhaustive: bool = False,
    max_per_template: int = 1000,
    seed: int = 0,
) -> Stats:
    """``questions.jsonl`` and the entity-disjoint ``train/valid/test.jsonl``."""
    from chronoprobe.datasets import cronq as generator

    rows, skipped = generator.generate_questions(
        kg, exhaustive=exhaustive, max_per_template=max_per_template, seed=seed
    )
    events = {event for event, _, _ in generator.YearIndex.from_kg(kg, []).events}
    splits = generator.split_questions(rows, events, seed=seed)
    extra = {
        "dropped_by_split": len(splits["dropped"]),
        "skipped_facts": dict(skipped),
        "entity_order": "question",  # as the question names them, on every split
    }
    return write_cronq_rows(out, rows, splits, extra, kg)


def write_cronq_rows(
    out: Path,
    rows: Sequence[dict],
    splits: dict[str, Sequence[dict]],
    extra: Stats,
    kg: TemporalKG | None = None,
) -> Stats:
    """``questions.jsonl``, ``train/valid/test.jsonl`` (empty where ``splits`` has none) and
    ``stats.json`` of question rows, generated or imported."""
    from chronoprobe.datasets.cronq import question_statistics

    out.mkdir(parents=True, exist_ok=True)
    write_jsonl(out / "questions.jsonl", rows)
    for name in ("train", "valid", "test"):
        write_jsonl(out / f"{name}.jsonl", splits.get(name, []))
    stats = {
        "all": question_statistics(rows),
        **{name: question_statistics(splits.get(name, [])) for name in ("train", "valid", "test")},
        **extra,
    }
    _write_stats(out, stats, kg)
    return stats


def write_ecbd(kg: TemporalKG, out: Path, articles: Path, config: Any, spacy_model: str) -> Stats:
    """``examples.jsonl`` of masked spans, grouped by the entities' origination years."""
    from chronoprobe.datasets.articles import iter_articles
    from chronoprobe.datasets.ecbd import build_ecbd, load_spacy

    if not articles.exists():
        raise FileNotFoundError(f"{articles}: no articles; pass --articles")
    seen: Counter = Counter()
    rows = build_ecbd(
        kg, iter_articles(articles), config, nlp=load_spacy(spacy_model), articles_seen=seen
    )
    if not rows:
        raise UserError(f"{articles}: no ECBD examples: {_why_no_examples(seen, config)}")
    articles_seen = {k: seen[k] for k in ("matched", "too short", "longest")}
    return write_ecbd_rows(out, rows, {"articles": articles_seen}, kg)


def write_ecbd_rows(
    out: Path, rows: Sequence[dict], extra: Stats | None = None, kg: TemporalKG | None = None
) -> Stats:
    """``examples.jsonl`` and ``stats.json`` (examples per year group, plus ``extra``) of ECBD
    rows, built or imported."""
    out.mkdir(parents=True, exist_ok=True)
    write_jsonl(out / EXAMPLES, rows)
    groups = Counter(str(row["year"]) for row in rows)
    stats = {"examples": len(rows), "groups": dict(sorted(groups.items())), **(extra or {})}
    _write_stats(out, stats, kg)
    return stats


def _why_no_examples(seen: Counter, config: Any) -> str:
    """Which of the builder's rules left it with nothing, for the user to change."""
    if not seen["matched"]:
        return "no article's title or id matches an entity of the KG with an origination date"
    why = (
        f"{seen['too short']:,} of them are shorter than `min_article_words: "
        f"{config.min_article_words}` (the longest has {seen['longest']:,} words): lower it"
        if seen["too short"]
        else "no sentence of them mentions its entity with a span after the mention"
    )
    matched = f"{seen['matched']:,} articles belong to entities with an origination date"
    return f"{matched} (or popular ones); {why}"
