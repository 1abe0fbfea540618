"""Timeline questions (``chronoprobe build timeline``) as the rows the KGQA models read.

The KGQA models rank one answer among the KG's entities and years (CronKGQA, Saxena et al.,
"Question Answering Over Temporal Knowledge Graphs", ACL 2021), with the question's entities
and time linked as its head, tail and time. Of the timeline kinds (Sun et al., "TimelineKGQA",
WWW 2025 Companion), those whose answer is an entity, or a time point asked to the year, fit
that answer space; :data:`ANSWERED` names them with the CronQuestions type that fits:

- ``start``, ``end`` ("When did X begin to play for Y?", asked to the year): ``simple_time``,
  linking the fact's subject and object;
- ``at_time`` ("Who played for Y in March 2009?"): ``simple_entity``, head the entity given,
  time the year of the time asked (CronKGQA's times are years: a month or day in the question
  is linked as its year, and the text keeps what it says);
- ``during_fact`` ("While X was P, who was Q of Y?"): ``time_join``, linking the entity given
  of the relation asked about and the other fact's subject and object; no time is linked, as
  CronQuestions links none for its time_join questions;
- ``ranking`` ("Who was first to play for Y: A, B or C?"): ``first_last``, linking the entity
  given; the options are in the text but not linked (CronKGQA has slots for a head, a tail
  and a time), so the model ranks every entity, not the options alone. Second and third
  places are asked too, which CronQuestions' first_last questions never are.

Every other question is not answered, with its reason (:func:`refusal`): a time range, a
duration, an Allen relation, yes or no, or a ranked list is none of one entity or one year,
and a time point asked to the month or day is finer than the years CronKGQA ranks.

The linked entities come in the order the question names them (:func:`named_order`), as
CronKGQA's code orders them: the first is the head the models score with, the second the tail,
whichever slot of a fact each fills. The template (``--question-input template``, not the
paper's protocol) is the question with the linked names replaced by ``{head}`` and ``{tail}``
in that order, the year by ``{time}`` and every other entity it names by ``{other}``. Both
need the names the builder records in ``timeline.names``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, NamedTuple

from chronoprobe.errors import UserError
from chronoprobe.time import TimePoint

# timeline kind -> the CronQuestions type the KGQA models read it as
ANSWERED: dict[str, str] = {
    "start": "simple_time",
    "end": "simple_time",
    "at_time": "simple_entity",
    "during_fact": "time_join",
    "ranking": "first_last",
}
ANSWER_SPACE = "one answer among the KG's entities and years"
REASONS: dict[str, str] = {
    "time range": "a time range (two dates), not " + ANSWER_SPACE,
    "duration": "a duration, not " + ANSWER_SPACE,
    "allen relation": "an Allen relation, not " + ANSWER_SPACE,
    "yes/no": "yes or no, not " + ANSWER_SPACE,
    "ranked list": "an ordered list, not " + ANSWER_SPACE,
}
FINER = "a time point asked to the {precision}, finer than the years CronKGQA ranks"


class Refusal(NamedTuple):
    """A timeline question the KGQA models cannot answer: its category and why."""

    category: str  # the kind, and the precision where that is the reason
    kind: str
    answer_type: str
    reason: str


def is_timeline_row(row: object) -> bool:
    """A row of ``build timeline`` (its ``timeline`` object, no CronQuestions ``type``)."""
    return isinstance(row, dict) and isinstance(row.get("timeline"), dict) and "type" not in row


def refusal(timeline: dict) -> Refusal | None:
    """Why the KGQA models cannot answer a timeline question (None: they can)."""
    kind, answer_type = str(timeline.get("kind")), str(timeline.get("answer_type"))
    if kind in ANSWERED:
        precision = timeline.get("precision")
        if answer_type == "time point" and precision != "year":
            return Refusal(
                f"{kind} ({precision})", kind, answer_type, FINER.format(precision=precision)
            )
        return None
    reason = REASONS.get(answer_type, f"a {answer_type}, not {ANSWER_SPACE}")
    return Refusal(kind, kind, answer_type, reason)


def convert(row: dict, where: str) -> dict | Refusal:
    """A timeline row as a CronQuestions-shaped row (``id``, ``question``, ``type``,
    ``answer_type``, ``answers``, ``entities``, ``times``, ``relations``, ``annotation``,
    ``template`` and the timeline labels), or why it cannot be answered."""
    from chronoprobe.probes.timeline_judging import timeline_key

    timeline = row["timeline"]
    refused = refusal(timeline)
    if refused is not None:
        return refused
    kind, asks, facts = timeline["kind"], timeline.get("asks"), timeline.get("facts")
    if not isinstance(facts, list) or not facts or not isinstance(asks, dict):
        raise UserError(f"{where}: a timeline row needs timeline.facts and timeline.asks")
    if kind in ("start", "end"):
        fact = facts[0]
        year = TimePoint.parse(str(timeline["gold"]["point"])).year
        linked, time, relation = [fact["subject"], fact["object"]], None, fact["relation"]
        answers, answer_type = [str(year)], "time"
        annotation = {"head": fact["subject"], "tail": fact["object"]}
    else:
        if "given" not in asks:
            raise UserError(
                f"{where}: timeline.asks names no entity given; rebuild the questions with "
                "`chronoprobe build timeline`"
            )
        given, relation = str(asks["given"]), str(asks["relation"])
        answers, answer_type = [str(e) for e in timeline["gold"]["entities"]], "entity"
        # the slot of the given entity in the relation asked about: subject when the object is
        slot = "head" if asks.get("asked") == "object" else "tail"
        annotation = {slot: given}
        time = TimePoint.parse(str(asks["time"])) if kind == "at_time" else None
        linked = [given]
        if kind == "during_fact":  # the other fact, whose span the question reads
            linked += [facts[0]["subject"], facts[0]["object"]]
        if time is not None:
            annotation["time"] = time.year
    names = timeline.get("names")
    if not isinstance(names, dict):
        raise UserError(
            f"{where}: timeline.names is missing (questions written before it was recorded), "
            "so the question's entities cannot be ordered as it names them, nor its template "
            "written; rebuild the questions with `chronoprobe build timeline` (--no-cache where "
            "a cached step holds them)"
        )
    entities = named_order(str(row["question"]), list(dict.fromkeys(map(str, linked))), names)
    return {
        "id": row["id"],
        "question": row["question"],
        "type": ANSWERED[kind],
        "answer_type": answer_type,
        "answers": answers,
        "entities": entities,
        "times": [time.year] if time is not None else [],
        "relations": [relation],
        "annotation": annotation,
        "timeline": timeline_key(timeline),
        "template": template(str(row["question"]), entities, names, time),
    }


def named_order(question: str, entities: list[str], names: dict) -> list[str]:
    """``entities`` in the order ``question`` names them, as CronKGQA's code orders a
    question's entities (the first is the head the models score with, the second the tail),
    never by the slots of the facts they fill. Longer names are found first and blanked, so a
    name inside another ("President of X" in "Vice President of X") is not found there; an
    entity the question does not name goes last, in the order given."""
    text, place = question, {}
    for entity in sorted(entities, key=lambda e: len(str(names.get(e, ""))), reverse=True):
        name = str(names.get(entity, ""))
        at = text.find(name) if name else -1
        if at >= 0:
            place[entity] = at
            text = text[:at] + "\0" * len(name) + text[at + len(name) :]
    return sorted(entities, key=lambda e: (e not in place, place.get(e, 0)))


def template(question: str, entities: list[str], names: dict, time: TimePoint | None) -> str:
    """The question with its linked head and tail as ``{head}`` and ``{tail}``, every other
    entity it names as ``{other}`` and the time asked as ``{time}``; longer names first, so
    that a name inside another is not cut out of it."""
    linked = zip(entities[:2], ("{head}", "{tail}")[: len(entities)], strict=True)
    slots = {str(names[e]): slot for e, slot in linked if e in names}
    for name in names.values():
        slots.setdefault(str(name), "{other}")
    text = question
    for name in sorted(slots, key=len, reverse=True):
        if name:
            text = text.replace(name, slots[name])
    if time is not None:
        text = text.replace(time.words(), "{time}")
    return text


class NotAnswered:
    """Counts of the questions refused, by category, as metrics.json lists them."""

    def __init__(self) -> None:
        self.counts: Counter = Counter()
        self.refusals: dict[str, Refusal] = {}

    def add(self, refused: Refusal) -> None:
        self.counts[refused.category] += 1
        self.refusals[refused.category] = refused

    def __len__(self) -> int:
        return sum(self.counts.values())

    def to_json(self) -> dict[str, dict]:
        return {
            category: {
                "kind": self.refusals[category].kind,
                "answer_type": self.refusals[category].answer_type,
                "questions": n,
                "reason": self.refusals[category].reason,
            }
            for category, n in sorted(self.counts.items())
        }


def describe(not_answered: dict[str, dict], answered: int) -> str:
    """One line: how many timeline questions were not answered, by category, and why."""
    total = sum(entry["questions"] for entry in not_answered.values())
    parts = ", ".join(f"{category} {e['questions']}" for category, e in not_answered.items())
    return (
        f"not answered: {total:,} of {total + answered:,} timeline questions ({parts}): they "
        "ask for a range, duration, Allen relation, yes/no or list, or a date finer than a "
        "year, and these models rank one entity or year"
    )


def figures(ranks, timeline: list[dict | None]) -> dict[str, Any]:
    """Hits@1 (as ``accuracy``, the share answered right first) and Hits@10 by timeline
    complexity, capability, answer type, kind and the complexity x capability grid, each with
    n and its Wilson 95% interval; {} for questions that are not timeline questions."""
    from chronoprobe.metrics.uncertainty import proportion, summary
    from chronoprobe.probes.timeline_judging import timeline_groups

    rows = [
        {"timeline": labels, "rank": int(rank)}
        for labels, rank in zip(timeline, ranks, strict=True)
        if labels is not None
    ]
    if not rows:
        return {}

    def summarize(group: list[dict]) -> dict[str, Any]:
        hits = {
            "accuracy": proportion([r["rank"] <= 1 for r in group]),
            "hits@10": proportion([r["rank"] <= 10 for r in group]),
        }
        return summary(len(group), hits)

    return timeline_groups(rows, summarize)
