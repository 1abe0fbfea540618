"""Readers for the released ECBD files and the entity-knowledge-propagation follow-up's, into
the span-ppl rows ``build ecbd`` writes.

ECBD (Onoe et al., NAACL 2022 Findings) rows hold a sentence with its span masked as T5's
``<extra_id_0>``, the span (``answer_d``, and ``answer_str`` as ``<extra_id_0> span
<extra_id_1>``), the mention (``entity_span_str`` at word positions ``entity_span_loc``, words
split at whitespace), the entity's first paragraph as a list of sentences with the name
between ``[ENT_START]`` and ``[ENT_END]``, and the origination ``year``. Each becomes one row:
the sentence rebuilt with its span, the mention's and the span's character offsets computed
and checked, and the first definition sentence, markers removed, as the definition.

Entity knowledge propagation (Onoe et al., ACL 2023) rows hold an entity (``ent_str``), its
definition with a masked span of its own (``def_target``) and probe sentences, each masked
with its ``label``; each probe sentence becomes one row, the definition filled in. They carry
no origination date: their ids are ECBD's (``{title}_{pageid}_{paragraph}_{sentence}``), and
ECBD's rows carry the year of their entity's Wikipedia page (the first of its Wikidata start,
announcement, discovery, inception or introduction dates, as Onoe et al., 2022, describe it),
so ECBD's release files, given beside them, date them (:func:`page_years`). A row left
undated says why in ``year_missing``.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from functools import partial
from pathlib import Path

from chronoprobe.datasets import row_checks
from chronoprobe.datasets.released import (
    JSON_SUFFIXES,
    converted,
    release_files,
    report,
    split_from_name,
)
from chronoprobe.errors import UserError
from chronoprobe.kg.io.checks import Invalid
from chronoprobe.kg.io.problems import Problems

GAP, END = "<extra_id_0>", "<extra_id_1>"
MARKERS = re.compile(r"\[ENT_(?:START|END)\]")
_WORD = re.compile(r"\S+")


def span_of_target(target: object, field: str) -> str:
    """The span of a T5 target ``<extra_id_0> span <extra_id_1>``."""
    if not isinstance(target, str):
        raise UserError(f"{field} must be a string")
    text = target.strip()
    if not (text.startswith(GAP) and text.endswith(END)):
        raise UserError(f"{field} {target!r} is not '{GAP} span {END}'")
    return text[len(GAP) : -len(END)].strip()


def fill(masked: object, span: str, field: str) -> tuple[str, int]:
    """The text with its one gap filled by ``span``, and where the span starts."""
    if not isinstance(masked, str) or masked.count(GAP) != 1:
        raise UserError(f"{field} must hold {GAP} exactly once")
    at = masked.index(GAP)
    return masked[:at] + span + masked[at + len(GAP) :], at


def _unmarked(text: str) -> str:
    return " ".join(MARKERS.sub("", text).split())


def first_definition_sentence(definition: object) -> str:
    """The first sentence of a released definition (a list of sentences, or one string),
    without the entity markers."""
    if isinstance(definition, list):
        definition = next((s for s in definition if isinstance(s, str) and s.strip()), "")
    if not isinstance(definition, str):
        raise UserError("definition must be a list of sentences or a string")
    return _unmarked(definition)


def _mention_by_words(masked: str, location: object, mention: str, gap: int) -> tuple[int, int]:
    """Character offsets of the mention at word positions ``location`` (end exclusive) of the
    masked sentence, narrowed to ``mention`` when the words carry punctuation."""
    if not (
        isinstance(location, list)
        and len(location) == 2
        and all(isinstance(i, int) and not isinstance(i, bool) for i in location)
    ):
        raise UserError(f"entity_span_loc must be [first word, end word], not {location!r}")
    words = list(_WORD.finditer(masked))
    first, end = location
    if not 0 <= first < end <= len(words):
        raise UserError(f"entity_span_loc {location} is outside the sentence's {len(words)} words")
    start, stop = words[first].start(), words[end - 1].end()
    inside = masked[start:stop].find(mention) if mention else -1
    if inside < 0:
        raise UserError(
            f"entity_span_loc {location} holds {masked[start:stop]!r}, not entity_span_str "
            f"{mention!r}"
        )
    start += inside
    if start + len(mention) > gap:
        raise UserError("the mention must come before the masked span")
    return start, start + len(mention)


def ecbd_row(record: dict, split: str | None, year: str | None) -> dict:
    """The span-ppl row of one released ECBD record, checked as every ECBD row is
    (:func:`~chronoprobe.datasets.row_checks.check_ecbd_row`); ValueError says why there is
    none."""
    span = span_of_target(record["answer_str"], "answer_str")
    given = record.get("answer_d")
    if isinstance(given, dict) and GAP in given and str(given[GAP]).strip() != span:
        raise UserError(f"answer_d {given[GAP]!r} and answer_str {span!r} differ")
    if not span:
        raise UserError("the masked span is empty")
    masked = record["masked_sentence"]
    sentence, at = fill(masked, span, "masked_sentence")
    mention = row_checks.text(record["entity_span_str"], "entity_span_str")
    m_start, m_end = _mention_by_words(masked, record["entity_span_loc"], mention, at)
    ex_id = row_checks.row_id(record["ex_id"], "ex_id")
    span_type = row_checks.text(record.get("span_type", ""), "span_type", empty=True)
    row = {
        "id": ex_id,
        "entity": _title(ex_id) or mention,
        "year": year or row_checks.year(record["year"]),
        "span_type": _span_kind(span_type),
        "sentence": sentence,
        "mention_start": m_start,
        "mention_end": m_end,
        "span_start": at,
        "span_end": at + len(span),
        "span": span,
        "definition": first_definition_sentence(record["definition"]),
        "split": split,
        "released_span_type": span_type,
    }
    return row_checks.check_ecbd_row(row)


def _title(ex_id: str) -> str | None:
    """The Wikipedia title of an id ``{title}_{pageid}_{paragraph}_{sentence}``."""
    parts = ex_id.rsplit("_", 3)
    if len(parts) == 4 and all(p.isdigit() for p in parts[1:]):
        return parts[0]
    return None


def _page(ex_id: str) -> str | None:
    """The Wikipedia page id of an id ``{title}_{pageid}_{paragraph}_{sentence}``."""
    parts = ex_id.rsplit("_", 3)
    if len(parts) == 4 and all(p.isdigit() for p in parts[1:]):
        return parts[1]
    return None


def _page_year(record: dict) -> tuple[str | None, str]:
    return _page(row_checks.row_id(record["ex_id"], "ex_id")), row_checks.year(record["year"])


def page_years(paths: Sequence[Path], problems: Problems) -> dict[str, set[str]]:
    """The origination years ECBD's released rows give each Wikipedia page (by page id, from
    the rows' ``ex_id``), popular ones included: the rows' own ``year``, whatever group their
    folder makes them. A row whose id names no page dates nothing."""
    years: dict[str, set[str]] = defaultdict(set)
    for path in release_files(paths, JSON_SUFFIXES):
        for _, _, (page, year) in converted(path, problems, "ecbd", _page_year):
            if page is not None:
                years[page].add(year)
    return dict(years)


UNDATED = "unknown"  # the year of a row that has none


def dating(ex_id: str, years: dict[str, set[str]] | None) -> tuple[str, str | None]:
    """(year, why it is missing) of an entity-knowledge-propagation row: its page's year in
    ``years`` (ECBD's, :func:`page_years`; None when no ECBD file was given)."""
    page = _page(ex_id)
    if years is None:
        return UNDATED, (
            "the release gives no origination date; give ECBD's release files (`years_from`) to "
            "date its entities by their Wikipedia page"
        )
    if page is None:
        return UNDATED, f"its id {ex_id!r} names no Wikipedia page id to find in ECBD's rows"
    found = sorted(years.get(page, ()), key=int)
    if not found:
        return UNDATED, f"its Wikipedia page ({page}) is in none of ECBD's rows given"
    if len(found) > 1:
        return UNDATED, f"ECBD's rows of its Wikipedia page ({page}) give {', '.join(found)}"
    return found[0], None


def _span_kind(released: str) -> str:
    """The builder's span types: NP-COMMON and NP-PROPER are np spans, the others random."""
    lowered = released.lower()
    for kind in ("np", "random"):
        if lowered.startswith(kind):
            return kind
    return lowered


def read_ecbd(
    paths: Sequence[Path], problems: Problems, split: str | None = None, year: str | None = None
) -> list[dict]:
    """Span-ppl rows of released ECBD files, one per row, in file order. The split is
    ``split`` or the file name's (``np_spans_dev.json``: dev); rows of a file in a folder
    named ``popular`` are the POPULAR group (``year``, when given, overrides both). Ids are
    per sentence in the release; several spans of one sentence get ``~2``, ``~3``."""
    rows: list[dict] = []
    ids = row_checks.UniqueIds()
    for path in release_files(paths, JSON_SUFFIXES):
        file_split = split or split_from_name(path)
        file_year = year or ("popular" if path.parent.name.lower() == "popular" else None)
        convert = partial(ecbd_row, split=file_split, year=file_year)
        for where, _, row in converted(path, problems, "ecbd", convert):
            row["id"] = ids.unused(row["id"])
            ids.claim([row["id"]], where)
            rows.append(row)
    return rows


def ekp_rows(
    record: dict,
    split: str | None,
    year: str | None,
    span_type: str,
    years: dict[str, set[str]] | None = None,
) -> list[dict]:
    """One span-ppl row per probe sentence of an entity-knowledge-propagation record, of the
    year given, or else of its page's year in ``years`` (:func:`dating`)."""
    entity = row_checks.text(record["ent_str"], "ent_str")
    definition, _ = fill(
        record["definition"], span_of_target(record["def_target"], "def_target"), "definition"
    )
    probes = record["probe_sentences"]
    if not isinstance(probes, dict) or not probes:
        raise UserError("probe_sentences must map template names to {probe_sentence, label}")
    ex_id = row_checks.row_id(record["ex_id"], "ex_id")
    missing = None
    if year is None:
        year, missing = dating(ex_id, years)
    rows = []
    for name, probe in probes.items():
        if not isinstance(probe, dict) or not {"probe_sentence", "label"} <= set(probe):
            raise UserError(f"probe_sentences.{name} must hold probe_sentence and label")
        span = span_of_target(probe["label"], f"probe_sentences.{name}.label")
        sentence, at = fill(probe["probe_sentence"], span, f"probe_sentences.{name}")
        mention = sentence.rfind(entity, 0, at)
        if mention < 0 or not span:
            why = "the span is empty" if not span else f"{entity!r} is not mentioned before it"
            raise UserError(f"probe_sentences.{name}: {why}")
        rows.append(
            {
                "id": f"{ex_id}/{name}",
                "entity": _title(ex_id) or entity,
                "year": year,
                "span_type": span_type,
                "sentence": sentence,
                "mention_start": mention,
                "mention_end": mention + len(entity),
                "span_start": at,
                "span_end": at + len(span),
                "span": span,
                "definition": _unmarked(definition),
                "split": split,
                "category": record.get("category"),
                **({"year_missing": missing} if missing else {}),
            }
        )
    return [row_checks.check_ecbd_row(row) for row in rows]


def read_ekp(
    paths: Sequence[Path],
    problems: Problems,
    split: str | None = None,
    year: str | None = None,
    span_type: str | None = None,
    years_from: Sequence[Path] = (),
) -> list[dict]:
    """Span-ppl rows of released entity-knowledge-propagation files: one per probe sentence.
    The span type is ``span_type`` or the file name's (``..._np_...``, ``..._random_...``);
    the year ``year``, or else the one ECBD's release files ``years_from`` give the row's
    Wikipedia page (``unknown`` where they give none, with the reason in ``year_missing``)."""
    years = page_years(years_from, problems) if years_from and year is None else None
    rows: list[dict] = []
    ids = row_checks.UniqueIds()
    for path in release_files(paths, JSON_SUFFIXES):
        words = set(re.findall(r"[a-z]+", path.stem.lower()))
        kind = span_type or ("np" if "np" in words else "random" if "random" in words else "")
        file_split = split or split_from_name(path)
        convert = partial(
            ekp_rows, split=file_split, year=year, span_type=kind or "unknown", years=years
        )
        for where, _, probes in converted(path, problems, "ecbd-ekp", convert):
            try:
                ids.claim([row["id"] for row in probes], where)
            except Invalid as err:
                report(problems, where, str(err), err.kind)
                continue
            rows += probes
    return rows


def undated(rows: Sequence[dict]) -> dict[str, int]:
    """The rows without a year, counted by why."""
    return dict(Counter(row["year_missing"] for row in rows if row.get("year_missing")))
