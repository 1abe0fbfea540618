"""CronQuestions-style temporal questions with answers executed over the KG.

Semantics as in the CronQuestions generation procedure: time is in years and a fact holds in
every year of its interval (an open end runs to the KG's last year; facts without a start, and
those spanning more than LONGEST_SPELL years, are skipped). Each seed template in
``templates/cronq.yaml`` names a procedure below that enumerates the slot fillings the KG
admits and computes their answers:

- simple_entity / simple_time: one fact (who held the office in 2008; when did X play for Y);
- before_after: from the subject's first year (before) or last year (after), the holder(s)
  whose spell ends latest at or before it / starts earliest at or after it;
- first_last: min start / max end years;
- time_join: the years of an event (an entity with its own span) or of another fact.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from chronoprobe import safe_yaml
from chronoprobe.errors import UserError
from chronoprobe.kg.graph import TemporalKG, table_rows

SLOT = re.compile(r"\{(\w+)\}")  # a template's slot: {head}, {tail}, {time}, {event}, {other}
QUESTION_TYPES = ("simple_entity", "simple_time", "before_after", "first_last", "time_join")
# years: the procedures enumerate every year of a spell (a year's holders, a fact's years), so a
# spell of a billion years (a KG's year 2**31 - 1, which its year column holds) would fill the
# memory; such a fact is skipped and counted
LONGEST_SPELL = 10_000
SIMPLE_TYPES = ("simple_entity", "simple_time")


@dataclass(frozen=True)
class SeedTemplate:
    name: str
    type: str
    relation: str
    procedure: str
    question: str
    paraphrases: tuple[str, ...]
    direction: str | None = None

    @property
    def surfaces(self) -> tuple[str, ...]:
        return (self.question, *self.paraphrases)


def load_cronq_templates(path: str | Path | None = None) -> list[SeedTemplate]:
    source = Path(path) if path else resources.files("chronoprobe.templates") / "cronq.yaml"
    entries = safe_yaml.load(source.read_text(encoding="utf-8"))
    templates = []
    for number, entry in enumerate(entries, start=1):
        where = f"{source}: template {number} ({entry.get('name', '?')})"
        unknown = set(entry) - {f for f in SeedTemplate.__dataclass_fields__}
        if unknown:
            raise UserError(f"{where}: unknown keys {', '.join(sorted(unknown))}")
        template = SeedTemplate(**{**entry, "paraphrases": tuple(entry.get("paraphrases", ()))})
        if template.type not in QUESTION_TYPES:
            raise UserError(f"{where}: type must be one of {', '.join(QUESTION_TYPES)}")
        if template.procedure not in PROCEDURES:
            raise UserError(f"{where}: unknown procedure {template.procedure!r}")
        if len(template.paraphrases) < 3:
            raise UserError(f"{where}: give at least three paraphrases")
        slots = {frozenset(SLOT.findall(surface)) for surface in template.surfaces}
        if len(slots) > 1:
            raise UserError(f"{where}: the question and its paraphrases name different slots")
        templates.append(template)
    return templates


@dataclass(frozen=True)
class Spell:
    """One fact as yearly instances: it holds in every year from ``first`` to ``last``."""

    entity: str  # the other side of the fact (head when indexed by tail, and vice versa)
    first: int
    last: int


@dataclass
class YearIndex:
    """Facts of the question relations, indexed both ways, in years."""

    by_tail: dict[str, dict[str, list[Spell]]] = field(default_factory=dict)
    by_head: dict[str, dict[str, list[Spell]]] = field(default_factory=dict)
    events: list[tuple[str, int, int]] = field(default_factory=list)
    skipped: Counter = field(default_factory=Counter)

    @classmethod
    def from_kg(cls, kg: TemporalKG, relations: Sequence[str]) -> YearIndex:
        index = cls()
        _, last_year = kg.year_range()
        facts = kg.facts.filter(
            pc.is_in(kg.facts.column("relation"), pa.array(list(relations), type=pa.string()))
        )
        for relation, head, tail, first, last in table_rows(
            facts, "relation", "subject", "object", "start_year", "end_year"
        ):
            if first is None:
                index.skipped["no start year"] += 1
                continue
            last = last_year if last is None else last
            if last < first:
                index.skipped["end before start"] += 1
                continue
            if last - first >= LONGEST_SPELL:
                index.skipped[f"spans more than {LONGEST_SPELL:,} years"] += 1
                continue
            tails = index.by_tail.setdefault(relation, defaultdict(list))
            heads = index.by_head.setdefault(relation, defaultdict(list))
            tails[tail].append(Spell(head, first, last))
            heads[head].append(Spell(tail, first, last))
        index.events = _events(kg)
        return index


def _events(kg: TemporalKG) -> list[tuple[str, int, int]]:
    """Entities with their own span that time-join questions can name (wars, games...)."""
    entities = kg.entities
    spans = pc.and_(
        entities.column("start_year").is_valid(), entities.column("end_year").is_valid()
    )
    is_event = pc.equal(entities.column("type"), "event")
    typed = entities.column("type").is_valid()
    # Typed KGs mark events; untyped ones (Wikidata dumps) count every spanned entity.
    chosen = entities.filter(pc.and_(spans, pc.if_else(typed, is_event, True)))
    return sorted(table_rows(chosen, "id", "start_year", "end_year"))


# A question before rendering: its slot fillings and its answers.
Filled = tuple[dict[str, str | int], list[str] | list[int]]


@dataclass
class Sampler:
    """How procedures walk their slot fillings: every one (exhaustive), or at random.

    Sampling shuffles the outer fillings and takes one random inner filling per outer one, so a
    capped question set spreads over many entities instead of exhausting the first few.
    """

    rng: np.random.Generator
    exhaustive: bool

    def outer(self, items: list) -> list:
        if self.exhaustive:
            return items
        return [items[i] for i in self.rng.permutation(len(items))]

    def inner(self, items: list) -> list:
        if self.exhaustive or not items:
            return items
        return [items[int(self.rng.integers(len(items)))]]


def _years(spells: list[Spell]) -> list[int]:
    return sorted({y for s in spells for y in range(s.first, s.last + 1)})


def heads_of_tail_in_year(index: YearIndex, t: SeedTemplate, pick: Sampler) -> Iterator[Filled]:
    for tail, spells in pick.outer(list(index.by_tail.get(t.relation, {}).items())):
        for year in pick.inner(_years(spells)):
            answers = sorted({s.entity for s in spells if s.first <= year <= s.last})
            yield {"tail": tail, "time": year}, answers


def tails_of_head_in_year(index: YearIndex, t: SeedTemplate, pick: Sampler) -> Iterator[Filled]:
    for head, spells in pick.outer(list(index.by_head.get(t.relation, {}).items())):
        for year in pick.inner(_years(spells)):
            answers = sorted({s.entity for s in spells if s.first <= year <= s.last})
            yield {"head": head, "time": year}, answers


def years_of_fact(index: YearIndex, t: SeedTemplate, pick: Sampler) -> Iterator[Filled]:
    for head, spells in pick.outer(list(index.by_head.get(t.relation, {}).items())):
        by_tail: dict[str, list[Spell]] = defaultdict(list)
        for spell in spells:
            by_tail[spell.entity].append(spell)
        for tail in pick.inner(sorted(by_tail)):
            yield {"head": head, "tail": tail}, _years(by_tail[tail])


def _before_after(spells: list[Spell], pivot: str, direction: str) -> list[str]:
    """Among spells of entities other than ``pivot``: the latest to end at or before the
    pivot's first year (before), or the earliest to start at or after its last year (after)."""
    own = [s for s in spells if s.entity == pivot]
    others = [s for s in spells if s.entity != pivot]
    if direction == "before":
        first = min(s.first for s in own)
        candidates = [s for s in others if s.last <= first]
        best = max((s.last for s in candidates), default=None)
        return sorted({s.entity for s in candidates if s.last == best})
    last = max(s.last for s in own)
    candidates = [s for s in others if s.first >= last]
    best = min((s.first for s in candidates), default=None)
    return sorted({s.entity for s in candidates if s.first == best})


def holder_before_after(index: YearIndex, t: SeedTemplate, pick: Sampler) -> Iterator[Filled]:
    """Who was the office's holder before/after a given holder."""
    for tail, spells in pick.outer(list(index.by_tail.get(t.relation, {}).items())):
        for head in pick.inner(sorted({s.entity for s in spells})):
            yield {"tail": tail, "head": head}, _before_after(spells, head, t.direction)


def tail_before_after(index: YearIndex, t: SeedTemplate, pick: Sampler) -> Iterator[Filled]:
    """Which team (spouse, ...) a subject had before/after a given one."""
    for head, spells in pick.outer(list(index.by_head.get(t.relation, {}).items())):
        for tail in pick.inner(sorted({s.entity for s in spells})):
            yield {"head": head, "tail": tail}, _before_after(spells, tail, t.direction)


def first_last_head(index: YearIndex, t: SeedTemplate, pick: Sampler) -> Iterator[Filled]:
    for tail, spells in pick.outer(list(index.by_tail.get(t.relation, {}).items())):
        if t.direction == "first":
            year = min(s.first for s in spells)
            answers = sorted({s.entity for s in spells if s.first == year})
        else:
            year = max(s.last for s in spells)
            answers = sorted({s.entity for s in spells if s.last == year})
        yield {"tail": tail}, answers


def first_last_year(index: YearIndex, t: SeedTemplate, pick: Sampler) -> Iterator[Filled]:
    for head, spells in pick.outer(list(index.by_head.get(t.relation, {}).items())):
        for tail in pick.inner(sorted({s.entity for s in spells})):
            own = [s for s in spells if s.entity == tail]
            year = min(s.first for s in own) if t.direction == "first" else max(s.last for s in own)
            yield {"head": head, "tail": tail}, [year]


def first_last_year_any(index: YearIndex, t: SeedTemplate, pick: Sampler) -> Iterator[Filled]:
    for head, spells in pick.outer(list(index.by_head.get(t.relation, {}).items())):
        year = (
            min(s.first for s in spells) if t.direction == "first" else max(s.last for s in spells)
        )
        yield {"head": head}, [year]


def _overlapping(
    spells: list[Spell], first: int, last: int, exclude: str | None = None
) -> list[str]:
    return sorted(
        {s.entity for s in spells if s.first <= last and s.last >= first and s.entity != exclude}
    )


def heads_during_event(index: YearIndex, t: SeedTemplate, pick: Sampler) -> Iterator[Filled]:
    tails = index.by_tail.get(t.relation, {})
    for event, first, last in pick.outer(index.events):
        candidates = [tail for tail, spells in tails.items() if _overlapping(spells, first, last)]
        for tail in pick.inner(sorted(candidates)):
            yield {"tail": tail, "event": event}, _overlapping(tails[tail], first, last)


def heads_during_fact(index: YearIndex, t: SeedTemplate, pick: Sampler) -> Iterator[Filled]:
    """Who held office ``tail`` while ``head`` held office ``other`` (any year of that spell)."""
    tails = index.by_tail.get(t.relation, {})
    anchors = [(h, s) for h, spells in index.by_head.get(t.relation, {}).items() for s in spells]
    for head, spell in pick.outer(anchors):
        candidates = [
            tail
            for tail, spells in tails.items()
            if tail != spell.entity and _overlapping(spells, spell.first, spell.last, exclude=head)
        ]
        for tail in pick.inner(sorted(candidates)):
            answers = _overlapping(tails[tail], spell.first, spell.last, exclude=head)
            yield {"tail": tail, "head": head, "other": spell.entity}, answers


def coheads_during_fact(index: YearIndex, t: SeedTemplate, pick: Sampler) -> Iterator[Filled]:
    """Who else held the same tail (played for the same team) during the head's spells."""
    tails = index.by_tail.get(t.relation, {})
    for tail, spells in pick.outer(list(tails.items())):
        for head in pick.inner(sorted({s.entity for s in spells})):
            own = [s for s in spells if s.entity == head]
            answers = sorted({a for s in own for a in _overlapping(spells, s.first, s.last, head)})
            yield {"head": head, "tail": tail}, answers


PROCEDURES: dict[str, Callable[[YearIndex, SeedTemplate, Sampler], Iterator[Filled]]] = {
    f.__name__: f
    for f in (
        heads_of_tail_in_year,
        tails_of_head_in_year,
        years_of_fact,
        holder_before_after,
        tail_before_after,
        first_last_head,
        first_last_year,
        first_last_year_any,
        heads_during_event,
        heads_during_fact,
        coheads_during_fact,
    )
}


TIME_PROCEDURES = frozenset({"years_of_fact", "first_last_year", "first_last_year_any"})


def _render(text: str, slots: dict[str, str | int], kg: TemporalKG) -> str:
    values = {k: str(v) if k == "time" else kg.label(str(v)) for k, v in slots.items()}
    return text.format(**values)


def generate_questions(
    kg: TemporalKG,
    templates: Sequence[SeedTemplate] | None = None,
    exhaustive: bool = False,
    max_per_template: int = 1000,
    seed: int = 0,
) -> tuple[list[dict], Counter]:
    """Every question the templates admit (``exhaustive``), or up to ``max_per_template`` each
    (sampled, seeded); questions without answers are left out."""
    templates = list(templates or load_cronq_templates())
    rng = np.random.default_rng(seed)
    sampler = Sampler(rng, exhaustive)
    index = YearIndex.from_kg(kg, sorted({t.relation for t in templates}))
    rows: list[dict] = []
    for template in templates:
        produced = 0
        for slots, answers in PROCEDURES[template.procedure](index, template, sampler):
            if not answers:
                continue
            surfaces = [_render(s, slots, kg) for s in template.surfaces]
            shown = int(rng.integers(len(surfaces)))
            rows.append(
                {
                    "id": f"cronq-{len(rows):07d}",
                    "question": surfaces[shown],
                    "paraphrases": [s for i, s in enumerate(surfaces) if i != shown],
                    "type": template.type,
                    "direction": template.direction,
                    "answer_type": "time" if template.procedure in TIME_PROCEDURES else "entity",
                    "answers": [str(a) for a in answers],  # one JSON type: years as text
                    "entities": mentioned_entities(template.surfaces[shown], slots),
                    "times": [int(slots["time"])] if "time" in slots else [],
                    "relations": [template.relation],
                    "template": template.surfaces[shown],
                    "template_name": template.name,
                    "annotation": dict(slots),
                }
            )
            produced += 1
            if not exhaustive and produced >= max_per_template:
                break
    return rows, index.skipped


def split_questions(
    rows: Sequence[dict],
    event_ids: set[str],
    valid: float = 0.15,
    test: float = 0.15,
    seed: int = 0,
) -> dict[str, list[dict]]:
    """Train/valid/test with no entity shared across splits (events excepted).

    Every non-event entity is drawn into test, valid or train with the given probabilities; a
    question goes to a split when all its entities are there, and is dropped otherwise. Test
    questions whose wording (any paraphrase) also appears in train are dropped too.
    """
    rng = np.random.default_rng(seed)
    entities = sorted({e for row in rows for e in row["entities"] if e not in event_ids})
    draws = rng.random(len(entities))
    side = {
        e: "test" if d < test else "valid" if d < test + valid else "train"
        for e, d in zip(entities, draws, strict=True)
    }
    splits: dict[str, list[dict]] = {"train": [], "valid": [], "test": [], "dropped": []}
    for row in rows:
        sides = {side[e] for e in row["entities"] if e not in event_ids}
        splits[sides.pop() if len(sides) == 1 else "dropped"].append(row)
    seen = {s for row in splits["train"] for s in (row["question"], *row["paraphrases"])}
    for name in ("valid", "test"):
        kept = []
        for row in splits[name]:
            surfaces = {row["question"], *row["paraphrases"]}
            (splits["dropped"] if surfaces & seen else kept).append(row)
        splits[name] = kept
    return splits


def question_statistics(rows: Sequence[dict]) -> dict:
    types = Counter(row["type"] for row in rows)
    answers = Counter(row["answer_type"] for row in rows)
    return {
        "questions": len(rows),
        "types": {t: types.get(t, 0) for t in QUESTION_TYPES},
        "answer_types": dict(answers),
        "templates": dict(Counter(row["template_name"] for row in rows)),
    }


def mentioned_entities(template: str, slots: Mapping[str, str | int]) -> list[str]:
    """The entities of a question in the order its wording names them (the slots' places in
    ``template``, the text the question was rendered from), as CronKGQA's code orders a
    question's entities and reads the first as its head and the second as its tail. The order
    comes from the question alone, never from which slot of the fact each entity fills, which
    Saxena et al. (2021) annotate for training questions only."""
    named = [slot for slot in SLOT.findall(template) if slot != "time"]
    return list(dict.fromkeys(str(slots[slot]) for slot in named))
