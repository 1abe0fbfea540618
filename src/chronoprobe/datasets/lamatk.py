"""LAMA-TK: temporally-scoped masked statements with every correct answer kept.

A fact <S, P, O, ST, ET> becomes "S played for O from ST to ET." (point-in-time relations:
"S received O in T.") and four masked statements: subject, object, start and end (point in time:
subject, object, time). The masked value is the row's target; its answer list is every value that
makes that same masked text true in the KG, so conflicts (1-N, N-1, N-M) are kept, never dropped.
Years are the time unit. Also the paper's derived query sets: temporal boundary queries (4.2)
and implicit-knowledge queries with distractors (4.3).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pydantic import Field

from chronoprobe import safe_yaml
from chronoprobe.errors import UserError
from chronoprobe.kg.graph import TemporalKG, table_rows
from chronoprobe.params import Params
from chronoprobe.templates import MASK
from chronoprobe.time import format_year


@dataclass(frozen=True)
class LamaTKTemplates:
    relations: dict[str, str]  # relation id -> "[X] played for [Y]"
    point_in_time: frozenset[str]  # relations whose facts use "in [T]"
    interval: str
    point: str
    boundary: dict[str, str]  # relation, start, end
    implicit: dict[str, str]  # relation, original, new


def load_lamatk_templates(path: str | Path | None = None) -> LamaTKTemplates:
    source = Path(path) if path else resources.files("chronoprobe.templates") / "lamatk.yaml"
    data = safe_yaml.load(source.read_text(encoding="utf-8"))
    missing = {"relations", "interval", "point", "boundary", "implicit"} - set(data or {})
    if missing:
        raise UserError(f"{source}: missing keys {', '.join(sorted(missing))}")
    relations = {str(r): entry["template"] for r, entry in data["relations"].items()}
    points = frozenset(str(r) for r, e in data["relations"].items() if e.get("point_in_time"))
    return LamaTKTemplates(
        relations, points, data["interval"], data["point"], data["boundary"], data["implicit"]
    )


@dataclass(frozen=True, order=True)
class YearFact:
    """A fact at year granularity, the unit LAMA-TK states facts in."""

    relation: str
    subject: str
    object: str
    start: int
    end: int


def year_facts(kg: TemporalKG, templates: LamaTKTemplates, skipped: Counter) -> list[YearFact]:
    """The KG's facts of the template relations that have both bounds, at year granularity.

    Facts with one bound cannot be stated "from ST to ET" and are skipped and counted; so are
    point-in-time facts whose start and end years differ. Facts that only differ below a year
    state the same statement and are kept once.
    """
    facts = kg.facts
    keep = pc.is_in(facts.column("relation"), pa.array(list(templates.relations), type=pa.string()))
    facts = facts.filter(keep)
    start = facts.column("start_precision").is_valid()
    end = facts.column("end_precision").is_valid()
    both = pc.and_(start, end)
    skipped["no start time"] += int(pc.sum(pc.and_(pc.invert(start), end)).as_py() or 0)
    skipped["no end time"] += int(pc.sum(pc.and_(start, pc.invert(end))).as_py() or 0)
    skipped["no time"] += int(pc.sum(pc.and_(pc.invert(start), pc.invert(end))).as_py() or 0)
    facts = facts.filter(both)
    rows = set()
    for relation, subject, obj, first, last in table_rows(
        facts, "relation", "subject", "object", "start_year", "end_year"
    ):
        if relation in templates.point_in_time and first != last:
            skipped["point-in-time fact spanning several years"] += 1
            continue
        if last < first:
            skipped["end before start"] += 1
            continue
        rows.add(YearFact(relation, subject, obj, first, last))
    return sorted(rows)


def fill(template: str, subject: str, obj: str, times: Sequence[str]) -> str:
    """Replace [X], [Y] and each [T] in turn."""
    text = template.replace("[X]", subject).replace("[Y]", obj)
    for time in times:
        text = text.replace("[T]", time, 1)
    return text


class StatementBuilder:
    """Turns year facts into masked-statement rows with answer lists shared by identical texts."""

    def __init__(self, kg: TemporalKG, templates: LamaTKTemplates) -> None:
        self.kg = kg
        self.templates = templates

    def sentence(self, fact: YearFact, slot: str | None, time_alone: bool = False) -> str:
        """The fact's statement with ``slot`` masked (None: nothing masked).

        ``time_alone`` deletes the other time information around a masked start or end (dynamic
        time masking): "S held the position of O from [MASK]."
        """
        label = self.kg.label
        subject = MASK if slot == "subject" else label(fact.subject)
        obj = MASK if slot == "object" else label(fact.object)
        text = fill(self.templates.relations[fact.relation], subject, obj, ())
        start, end = format_year(fact.start), format_year(fact.end)
        if fact.relation in self.templates.point_in_time:
            prompt = fill(self.templates.point, "", "", [MASK if slot == "time" else start])
        elif time_alone and slot in ("start", "end"):
            prompt = f"from {MASK}" if slot == "start" else f"to {MASK}"
        else:
            times = [MASK if slot == "start" else start, MASK if slot == "end" else end]
            prompt = fill(self.templates.interval, "", "", times)
        return f"{text} {prompt}."

    def slots(self, fact: YearFact) -> tuple[str, ...]:
        if fact.relation in self.templates.point_in_time:
            return ("subject", "object", "time")
        return ("subject", "object", "start", "end")

    @staticmethod
    def target(fact: YearFact, slot: str) -> str:
        values = {
            "subject": fact.subject,
            "object": fact.object,
            "start": format_year(fact.start),
            "end": format_year(fact.end),
            "time": format_year(fact.start),
        }
        return values[slot]

    def rows(self, facts: Iterable[YearFact], slots: Sequence[str] | None = None) -> list[dict]:
        """Masked statements of ``facts`` (all their slots, or only ``slots``)."""
        rows: list[dict] = []
        seen: set[tuple[str, str]] = set()
        for fact in facts:
            for slot in self.slots(fact):
                if slots is not None and slot not in slots:
                    continue
                text = self.sentence(fact, slot)
                target = self.target(fact, slot)
                if (text, target) in seen:
                    continue
                seen.add((text, target))
                rows.append(
                    {
                        "text": text,
                        "slot": slot,
                        "target": target,
                        "subject": fact.subject,
                        "relation": fact.relation,
                        "object": fact.object,
                        "start": format_year(fact.start),
                        "end": format_year(fact.end),
                        "text_alone": self.sentence(fact, slot, time_alone=True)
                        if slot in ("start", "end")
                        else None,
                    }
                )
        return finish(rows)


def finish(rows: list[dict], prefix: str = "lamatk") -> list[dict]:
    """Give every row an id, and the answer list of its masked text (shared by identical texts)."""
    answers: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        answers[row["text"]].add(row["target"])
    out = []
    for index, row in enumerate(rows):
        answer_list = sorted(answers[row["text"]])
        out.append(
            {
                "id": f"{prefix}-{index:07d}",
                **row,
                "answers": answer_list,
                "multi_answer": len(answer_list) > 1,
            }
        )
    return out


def build_statements(
    kg: TemporalKG, templates: LamaTKTemplates | None = None
) -> tuple[list[dict], Counter]:
    """Every masked statement of the KG, with conflicts; and the counts of skipped facts."""
    templates = templates or load_lamatk_templates()
    skipped: Counter = Counter()
    facts = year_facts(kg, templates, skipped)
    return StatementBuilder(kg, templates).rows(facts), skipped


def without_conflicts(rows: Sequence[dict]) -> list[dict]:
    """The non-conflict variant: multi-answer statements removed."""
    return [row for row in rows if not row["multi_answer"]]


def query_groups(rows: Sequence[dict]) -> list[list[int]]:
    """The row indices of each query (one masked text), queries in order of first appearance."""
    groups: dict[str, list[int]] = {}
    for index, row in enumerate(rows):
        groups.setdefault(row["text"], []).append(index)
    return list(groups.values())


def subsample(rows: Sequence[dict], n: int, seed: int = 0) -> list[dict]:
    """About ``n`` rows drawn as whole queries (seeded), in their original order.

    A query is one masked text with all its rows, one per answer, so a drawn multi-answer
    statement comes with every other answer of its text and the sample keeps the conflict
    structure of ``rows``. Queries are taken in a seeded random order until the sample holds at
    least ``n`` rows: it ends with ``n`` to ``n`` + (rows of the largest query - 1) rows. For
    ``n`` at or above ``len(rows)``, every row.
    """
    if n >= len(rows):
        return list(rows)
    groups = query_groups(rows)
    chosen: list[int] = []
    for group in np.random.default_rng(seed).permutation(len(groups)):
        chosen.extend(groups[group])
        if len(chosen) >= n:
            break
    return [rows[i] for i in sorted(chosen)]


def sample_statistics(drawn: Sequence[dict], requested: int, seed: int, population: int) -> dict:
    """How a sample was drawn, measured on the drawn rows alone: the size asked for, the seed,
    the number of statements it was drawn from, the queries and statements drawn, and how many
    of them share their masked text with another drawn row (multi-answer within the sample)."""
    groups = query_groups(drawn)
    multi = sum(len(group) for group in groups if len(group) > 1)
    return {
        "requested": requested,
        "seed": seed,
        "from_statements": population,
        "queries": len(groups),
        "statements": len(drawn),
        "multi_answer": multi,
        "multi_answer_share": multi / len(drawn) if drawn else 0.0,
    }


def boundary_set(
    kg: TemporalKG, templates: LamaTKTemplates | None = None
) -> tuple[list[dict], list[dict]]:
    """Section 4.2: training rows (start and end masked) and zero-shot boundary queries.

    The queries use templates never seen in training ("S was elected O in [MASK]" for the start,
    "S resigned from O in [MASK]" for the end); a person elected to one office twice has two
    answers.
    """
    templates = templates or load_lamatk_templates()
    relation = templates.boundary["relation"]
    chosen = [f for f in year_facts(kg, templates, Counter()) if f.relation == relation]
    builder = StatementBuilder(kg, templates)
    train = builder.rows(chosen, slots=("start", "end"))
    queries = []
    for fact in chosen:
        for slot in ("start", "end"):
            text = fill(
                templates.boundary[slot], kg.label(fact.subject), kg.label(fact.object), [MASK]
            )
            queries.append(
                {
                    "text": f"{text}.",
                    "slot": slot,
                    "target": builder.target(fact, slot),
                    "subject": fact.subject,
                    "relation": fact.relation,
                    "object": fact.object,
                    "start": format_year(fact.start),
                    "end": format_year(fact.end),
                }
            )
    return train, finish(queries, prefix="boundary")


def implicit_set(
    kg: TemporalKG, templates: LamaTKTemplates | None = None, seed: int = 0
) -> tuple[list[dict], list[dict]]:
    """Section 4.3: facts with distractors for training, and queries for a year inside each fact.

    A fact <S, P, O, ST, ET> of the implicit relation qualifies when S has a distractor: another
    fact of P with a different object, or a fact of another relation. Training holds the
    qualifying facts and their distractors; each qualifying fact whose interval has a year
    strictly inside it gets two queries for that year: the training template ("original") and
    an unseen one ("new"), the object masked; answers are every object S held in that year.
    """
    templates = templates or load_lamatk_templates()
    relation = templates.implicit["relation"]
    facts = year_facts(kg, templates, Counter())
    by_subject: dict[str, list[YearFact]] = defaultdict(list)
    for fact in facts:
        by_subject[fact.subject].append(fact)
    qualifying, training = [], set()
    for fact in facts:
        if fact.relation != relation:
            continue
        distractors = [
            other
            for other in by_subject[fact.subject]
            if other.object != fact.object and other != fact
        ]
        if distractors:
            qualifying.append(fact)
            training.add(fact)
            training.update(distractors)
    rng = np.random.default_rng(seed)
    builder = StatementBuilder(kg, templates)
    queries = []
    for fact in qualifying:
        if fact.end - fact.start < 2:
            continue
        year = int(rng.integers(fact.start + 1, fact.end))
        held = sorted(
            {
                other.object
                for other in by_subject[fact.subject]
                if other.relation == relation and other.start <= year <= other.end
            }
        )
        for variant in ("original", "new"):
            text = fill(
                templates.implicit[variant], kg.label(fact.subject), MASK, [format_year(year)]
            )
            queries.append(
                {
                    "text": f"{text}.",
                    "slot": "object",
                    "target": fact.object,
                    "template": variant,
                    "year": format_year(year),
                    "subject": fact.subject,
                    "relation": fact.relation,
                    "object": fact.object,
                    "start": format_year(fact.start),
                    "end": format_year(fact.end),
                    "held": held,
                }
            )
    query_rows = finish(queries, prefix="implicit")
    for row in query_rows:  # the answers are every office S held that year
        row["answers"] = row.pop("held")
        row["multi_answer"] = len(row["answers"]) > 1
    return builder.rows(sorted(training)), query_rows


def statistics(rows: Sequence[dict], skipped: Counter | None = None) -> dict:
    """Counts as the paper reports them: statements, multi-answer share, per relation and slot."""
    multi = sum(row["multi_answer"] for row in rows)
    per_relation: dict[str, Counter] = defaultdict(Counter)
    per_slot: Counter = Counter()
    for row in rows:
        per_relation[row["relation"]]["statements"] += 1
        per_relation[row["relation"]]["multi_answer"] += row["multi_answer"]
        per_slot[row["slot"]] += 1
    return {
        "statements": len(rows),
        "multi_answer": multi,
        "multi_answer_share": multi / len(rows) if rows else 0.0,
        "relations": {r: dict(c) for r, c in sorted(per_relation.items())},
        "slots": dict(per_slot),
        "skipped_facts": dict(skipped or {}),
    }


class LamaTKSet(Params):
    """Which LAMA-TK set is built: ``build lamatk`` takes these, and ``train memorize`` too
    when it builds its statements from a KG."""

    task: Literal["memorize", "boundary", "implicit"] = Field(
        "memorize",
        description="memorize: every masked statement; boundary: start/end statements of "
        "position held plus zero-shot elected/resigned queries; implicit: facts with "
        "distractors plus queries for a year inside each fact.",
    )
    conflicts: bool = Field(
        True,
        description="Keep multi-answer statements (off: the non-conflict variant, the "
        "multi-answer statements removed after any sample).",
    )
    sample: int | None = Field(
        None,
        ge=1,
        description="Draw about N statements as whole queries (every row of a drawn masked "
        "text, so conflicts keep all their answers), seeded: queries are added until there "
        "are at least N.",
    )
