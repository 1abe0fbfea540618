"""DynamicTempLAMA-style time-sliced probe sets with fine-grained splits.

For each period of a range (years, quarters or months) and each (subject, relation) query of the
most frequent subjects, the answers are every object whose interval overlaps the period. Against
the previous period a query is unchanged (same answers), updated (different answers), new (no
answers before) or deleted (answers before, none now: the row carries the previous answers).
The first period has no split. Answer sets come from the KG's vectorised queries: one call per
period for all relations at once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from chronoprobe.errors import UserError
from chronoprobe.kg.graph import TemporalKG, table_rows
from chronoprobe.templates import ClozeTemplate, load_cloze_templates
from chronoprobe.time import Period


@dataclass(frozen=True)
class DriftRow:
    id: str
    period: str
    relation: str
    subject: str
    query: str
    answers: list[str]
    answer_labels: list[str]
    split: str | None
    # each answer's other names, in the order of answer_labels (for matching generated text)
    answer_aliases: list[list[str]] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def split_of(previous: Sequence[str] | None, current: Sequence[str] | None) -> str | None:
    """The fine-grained split of a query given its answers at t-1 and t (None: no answers)."""
    if current:
        if not previous:
            return "new"
        return "unchanged" if sorted(previous) == sorted(current) else "updated"
    return "deleted" if previous else None


def top_subjects(
    kg: TemporalKG, relations: Sequence[str], n: int, first: Period, last: Period
) -> dict[str, list[str]]:
    """Per relation, the ``n`` subjects with the most facts overlapping the range (ties by id)."""
    mask = (kg.start_days <= last.last_day()) & (kg.end_days >= first.first_day())
    mask &= pc.is_in(
        kg.facts.column("relation"), pa.array(list(relations), type=pa.string())
    ).to_numpy(zero_copy_only=False)
    counts = (
        kg.facts.filter(pa.array(mask))
        .group_by(["relation", "subject"])
        .aggregate([("object", "count")])
        .sort_by(
            [("relation", "ascending"), ("object_count", "descending"), ("subject", "ascending")]
        )
    )
    chosen: dict[str, list[str]] = {r: [] for r in relations}
    for relation, subject in zip(
        counts.column("relation").to_pylist(), counts.column("subject").to_pylist(), strict=True
    ):
        if len(chosen[relation]) < n:
            chosen[relation].append(subject)
    return chosen


def _period_answers(
    kg: TemporalKG, period: Period, templates: dict[str, ClozeTemplate], keep: set[str]
) -> dict[tuple[str, str], list[str]]:
    """(given entity, relation) -> answers in ``period``, for the kept queries only."""
    out: dict[tuple[str, str], list[str]] = {}
    for ask in ("object", "subject"):
        relations = [r for r, t in templates.items() if t.mask == ask]
        if not relations:
            continue
        table = kg.answer_sets(period, relations=relations, ask=ask)
        given = templates[relations[0]].given
        keys = pc.binary_join_element_wise(table.column("relation"), table.column(given), "\t")
        table = table.filter(pc.is_in(keys, pa.array(sorted(keep), type=pa.string())))
        for entity, relation, answers in table_rows(table, given, "relation", "answers"):
            out[(entity, relation)] = answers
    return out


def build_drift(
    kg: TemporalKG,
    periods: Sequence[Period],
    top: int = 1000,
    relations: Sequence[str] | None = None,
    templates: dict[str, ClozeTemplate] | None = None,
    on_period: Callable[[Period], None] | None = None,
) -> Iterator[DriftRow]:
    """Yield the probe rows of every period (consecutive, one granularity), in period order."""
    templates = templates or load_cloze_templates("drift")
    if relations is not None:
        unknown = sorted(set(relations) - set(templates))
        if unknown:
            raise UserError(f"no drift template for relations: {', '.join(unknown)}")
        templates = {r: templates[r] for r in relations}
    present = set(kg.facts_per_relation())
    templates = {r: t for r, t in templates.items() if r in present}
    chosen = top_subjects(kg, list(templates), top, periods[0], periods[-1])
    keep = {f"{r}\t{s}" for r, subjects in chosen.items() for s in subjects}

    def answers_per_period() -> Iterator[tuple[str, dict[tuple[str, str], list[str]]]]:
        for period in periods:
            yield period.label(), _period_answers(kg, period, templates, keep)
            if on_period:
                on_period(period)

    for label, (entity, relation), answers, split in assign_splits(answers_per_period()):
        yield DriftRow(
            id=f"{entity}_{relation}_{label}",
            period=label,
            relation=relation,
            subject=entity,
            query=templates[relation].query(kg.label(entity)),
            answers=list(answers),
            answer_labels=[kg.label(a) for a in answers],
            split=split,
            answer_aliases=[kg.aliases(a) for a in answers],
        )


def answer_names(
    kg: TemporalKG, templates: dict[str, ClozeTemplate], relations: Sequence[str]
) -> Iterator[dict]:
    """Every entity that answers one of ``relations`` anywhere in the KG (the side its template
    asks for), with its label and aliases: judging a generated answer tells it from a gold
    answer named alike ("Inter Miami" from Inter Milan)."""
    column = kg.facts.column("relation")
    for relation in sorted(relations):
        facts = kg.facts.filter(pc.equal(column, relation))
        for entity in sorted(set(facts.column(templates[relation].mask).to_pylist())):
            yield {
                "id": entity,
                "relation": relation,
                "names": [kg.label(entity), *kg.aliases(entity)],
            }


Key = tuple[str, str]  # (given entity, relation)


def assign_splits(
    periods: Iterator[tuple[str, dict[Key, list[str]]]],
) -> Iterator[tuple[str, Key, list[str], str | None]]:
    """(period, key, answers, split) for consecutive periods' answer sets.

    Rows come in period order, then by relation and entity. A deleted row carries the previous
    period's answers; the first period's rows have no split.
    """
    previous: dict[Key, list[str]] | None = None
    for label, current in periods:
        keys = set(current) | set(previous or ())
        for key in sorted(keys, key=lambda k: (k[1], k[0])):
            answers = current.get(key)
            if previous is None:
                yield label, key, answers, None
                continue
            before = previous.get(key)
            split = split_of(before, answers)
            yield label, key, answers or before, split
        previous = current


def drift_statistics(
    rows: Sequence[dict], is_single_token: Callable[[str], bool] | None = None
) -> list[dict]:
    """Per period: rows per split (like the paper's Table 5), and with a tokenizer the
    single-token subset (rows with at least one single-token answer label) and the rest."""
    stats: dict[str, Counter] = {}
    for row in rows:
        counter = stats.setdefault(row["period"], Counter())
        counter["total"] += 1
        counter[row["split"] or "first period"] += 1
        if is_single_token is not None:
            single = any(is_single_token(label) for label in row["answer_labels"])
            counter["single-token" if single else "multi-token"] += 1
    return [{"period": period, **dict(counter)} for period, counter in stats.items()]
