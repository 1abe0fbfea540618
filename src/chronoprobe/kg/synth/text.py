"""Texts of the synthetic world: dated snippets (the corpus models are trained on, period by
period) and one Wikipedia-style article per entity with several facts.

Snippets say what holds at a date in the words the drift probes use ("X plays for Y."), plus
the changes ("In March 2019, X joined Y."), so a model trained on one period's snippets can know
that period's facts and not later ones. Strings are built with Arrow's vectorised kernels.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from chronoprobe.kg.graph import TemporalKG
from chronoprobe.kg.io.jsonl import iso_column
from chronoprobe.time import MONTH_NAMES

# relation -> (state sentence, change sentence at the start, sentence at the end); {s} {o}.
PHRASES = {
    "P54": ("{s} plays for {o}.", "{s} joined {o}.", "{s} left {o}."),
    "P39": ("{s} holds the position of {o}.", "{s} became {o}.", "{s} stepped down as {o}."),
    "P108": ("{s} works for {o}.", "{s} started working for {o}.", "{s} left {o}."),
    "P102": ("{s} is a member of the {o}.", "{s} joined the {o}.", "{s} left the {o}."),
    "P69": ("{s} attended {o}.", "{s} enrolled at {o}.", "{s} graduated from {o}."),
    "P26": ("{s} is married to {o}.", "{s} married {o}.", "{s} and {o} divorced."),
    "P27": (
        "{s} is {o} citizen.",
        "{s} became a citizen of {o}.",
        "{s} gave up citizenship of {o}.",
    ),
    "P6": (
        "{o} is the head of the government of {s}.",
        "{o} took office as head of the government of {s}.",
        "{o} left office as head of the government of {s}.",
    ),
    "P286": (
        "{o} is the head coach of {s}.",
        "{o} was appointed head coach of {s}.",
        "{o} left as head coach of {s}.",
    ),
    "P488": (
        "{o} is the chair of {s}.",
        "{o} became chair of {s}.",
        "{o} stepped down as chair of {s}.",
    ),
    "P166": (None, "{s} received {o}.", None),
}
# Past tense for articles narrating closed spans: "From 2003 to 2009, X played for Y."
PAST = {
    "P54": "{s} played for {o}",
    "P39": "{s} held the position of {o}",
    "P108": "{s} worked for {o}",
    "P102": "{s} was a member of the {o}",
    "P69": "{s} studied at {o}",
    "P26": "{s} was married to {o}",
    "P27": "{s} was a citizen of {o}",
    "P6": "{o} was the head of the government of {s}",
    "P286": "{o} was the head coach of {s}",
    "P488": "{o} was the chair of {s}",
}
STATE_YEARS = 4  # present-tense snippets per fact, spread over the years it holds


def _labels(kg: TemporalKG, column: str) -> pa.Array:
    ids = kg.facts.column(column)
    index = pc.index_in(ids, value_set=kg.entities.column("id"))
    labels = pc.take(kg.entities.column("label"), index)
    return pc.coalesce(labels, ids).combine_chunks()


def _fill(pattern: str, subjects: pa.Array, objects: pa.Array) -> pa.Array:
    """Vectorised pattern filling: "{s} plays for {o}." over label arrays."""
    parts: list = []
    rest = pattern
    while rest:
        cut = min((rest.find(k) for k in ("{s}", "{o}") if k in rest), default=-1)
        if cut < 0:
            parts.append(rest)
            break
        if cut:
            parts.append(rest[:cut])
        parts.append(subjects if rest[cut + 1] == "s" else objects)
        rest = rest[cut + 3 :]
    return pc.binary_join_element_wise(*parts, "")


def _text(values: np.ndarray) -> pa.Array:
    return pc.cast(pa.array(values), pa.string())


def _date_prefix(years: np.ndarray, months: np.ndarray) -> pa.Array:
    """ "In March 2019, " or "In 2019, " per row."""
    month_names = pa.array(["", *MONTH_NAMES]).take(pa.array(months))
    with_month = pc.binary_join_element_wise(month_names, _text(years), " ")
    when = pc.if_else(pa.array(months > 0), with_month, _text(years))
    return pc.binary_join_element_wise("In ", when, ", ", "")


def _iso(years: np.ndarray, months: np.ndarray) -> pa.Array:
    padded = pc.utf8_lpad(_text(months), 2, "0")
    with_month = pc.binary_join_element_wise(_text(years), padded, "-")
    return pc.if_else(pa.array(months > 0), with_month, _text(years))


def write_snippets(kg: TemporalKG, seed: int = 0) -> pa.Table:
    """Dated snippets: the start and end of every fact, and what holds in some of its years.

    Each says which fact's relation it tells (``relation``) and how (``kind``: ``start``,
    ``end`` or ``state``), so texts can be grouped by what they are about."""
    first, last = kg.year_range()
    facts = kg.facts
    subjects, objects = _labels(kg, "subject"), _labels(kg, "object")
    relation = facts.column("relation").to_numpy(zero_copy_only=False)
    start_y = facts.column("start_year").fill_null(first).to_numpy()
    start_m = facts.column("start_month").fill_null(0).to_numpy().astype(np.int64)
    end_known = facts.column("end_precision").is_valid().to_numpy(zero_copy_only=False)
    end_y = facts.column("end_year").fill_null(last).to_numpy()
    end_m = facts.column("end_month").fill_null(0).to_numpy().astype(np.int64)
    entity = facts.column("subject").combine_chunks()
    pieces = []
    for rel, (state, begin, finish) in PHRASES.items():
        rows = np.flatnonzero(relation == rel)
        if not len(rows):
            continue
        s, o = subjects.take(rows), objects.take(rows)
        if begin:
            text = pc.binary_join_element_wise(
                _date_prefix(start_y[rows], start_m[rows]), _fill(begin, s, o), ""
            )
            pieces.append((rows, _iso(start_y[rows], start_m[rows]), start_y[rows], text, "start"))
        if finish:
            done = rows[end_known[rows]]
            text = pc.binary_join_element_wise(
                _date_prefix(end_y[done], end_m[done]),
                _fill(finish, subjects.take(done), objects.take(done)),
                "",
            )
            pieces.append((done, _iso(end_y[done], end_m[done]), end_y[done], text, "end"))
        if state:
            span = np.maximum(end_y[rows] - start_y[rows] + 1, 1)
            count = np.minimum(span, STATE_YEARS)
            which = np.repeat(np.arange(len(rows)), count)
            step = np.arange(len(which)) - np.repeat(np.cumsum(count) - count, count)
            offset = np.where(
                count[which] > 1, step * (span[which] - 1) // np.maximum(count[which] - 1, 1), 0
            )
            years = start_y[rows][which] + offset
            text = _fill(state, s.take(which), o.take(which))
            pieces.append((rows[which], _text(years), years, text, "state"))
    index = np.concatenate([p[0] for p in pieces])
    order = np.lexsort((index, np.concatenate([p[2] for p in pieces])))
    kinds = np.concatenate([np.full(len(p[0]), p[4]) for p in pieces])
    table = pa.table(
        {
            "entity": entity.take(pa.array(index[order])),
            "date": pa.concat_arrays([p[1] for p in pieces]).take(pa.array(order)),
            "year": pa.array(np.concatenate([p[2] for p in pieces])[order], pa.int32()),
            "text": pa.concat_arrays([p[3] for p in pieces]).take(pa.array(order)),
            "relation": pa.array(relation[index[order]], pa.string()),
            "kind": pa.array(kinds[order], pa.string()),
        }
    )
    ids = pc.binary_join_element_wise("s", _text(np.arange(table.num_rows)), "")
    return table.add_column(0, "id", ids)


def write_articles(kg: TemporalKG, min_facts: int = 3) -> pa.Table:
    """One article per subject with ``min_facts`` facts: a definition paragraph, then its facts
    in time order, a few sentences a paragraph."""
    counts = pc.value_counts(kg.facts.column("subject"))
    frequent = counts.field("values").filter(pc.greater_equal(counts.field("counts"), min_facts))
    keep = pc.is_in(kg.facts.column("subject"), frequent).to_numpy(zero_copy_only=False)
    rows = kg.facts.filter(pa.array(keep))
    order = np.lexsort((kg.start_days[keep], rows.column("subject").to_numpy(zero_copy_only=False)))
    rows = rows.take(pa.array(order))
    columns = {
        "subject": rows.column("subject").to_pylist(),
        "relation": rows.column("relation").to_pylist(),
        "object": pc.take(
            kg.entities.column("label"),
            pc.index_in(rows.column("object"), kg.entities.column("id")),
        ).to_pylist(),
        "start": iso_column(rows, "start").to_pylist(),
        "end": iso_column(rows, "end").to_pylist(),
    }
    entities = {
        e["id"]: e
        for e in kg.entities.select(
            ["id", "label", "aliases", "description", "start_year", "end_year"]
        ).to_pylist()
    }
    ids, titles, texts = [], [], []
    sentences: list[str] = []
    current = None
    for n, (subject, relation, obj, start, end) in enumerate(zip(*columns.values(), strict=True)):
        if subject != current:
            if current is not None:
                _finish(entities[current], sentences, ids, titles, texts)
            current, sentences, first = subject, [], n
        info = entities[subject]
        name = info["aliases"][0] if info["aliases"] and (n - first) % 3 == 2 else info["label"]
        sentences.append(_narrate(name, relation, obj or "", start, end))
    if current is not None:
        _finish(entities[current], sentences, ids, titles, texts)
    return pa.table({"id": ids, "title": titles, "text": texts})


def _finish(info: dict, sentences: list[str], ids: list, titles: list, texts: list) -> None:
    body = [" ".join(sentences[i : i + 4]) for i in range(0, len(sentences), 4)]
    ids.append(info["id"])
    titles.append(info["label"])
    texts.append("\n".join([_definition(info), *body]))


def _definition(info: dict) -> str:
    born, died = info.get("start_year"), info.get("end_year")
    life = ""
    if born and info.get("description") in ("athlete", "politician", "business person"):
        life = f" (born {born}" + (f", died {died}" if died else "") + ")"
    kind = info.get("description") or "entity"
    article = "an" if kind[0] in "aeiou" else "a"
    return f"{info['label']}{life} is {article} {kind} in the synthetic world."


def _narrate(name: str, relation: str, obj: str, start: str | None, end: str | None) -> str:
    """One sentence about a fact, dated as precisely as the fact is."""
    state, begin, _ = PHRASES.get(relation, ("{s} is linked to {o}.", None, None))
    sentence = (begin if state is None else state).format(s=name, o=obj).rstrip(".")
    if start is None:
        return f"{sentence}" + (f" until {end}." if end else ".")
    if state is None or end == start:
        return f"{'On' if len(start) == 10 else 'In'} {start}, {sentence}."
    if end is None:
        return f"Since {start}, {sentence}."
    past = PAST.get(relation, "{s} was linked to {o}").format(s=name, o=obj)
    return f"From {start} to {end}, {past}."
