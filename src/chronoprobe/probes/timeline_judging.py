"""Judging answers to timeline questions (``build timeline``) by their answer type.

A row's ``timeline.gold`` is its typed answer; the model's first line is read as that type:

- time point: the first date said ("4 March 2009", "March 4, 2009", "2009-03-04", "March
  2009", "2009"; a year of fewer digits with its era, "14 AD", "AD 14", "52 BC", "52 BCE";
  signed ISO years, "-0052", as BCE, as Wikidata writes them), right when it names the gold
  date at the gold's precision: a coarser date is wrong, a finer one is cut to the gold's
  precision (the gold is known no finer);
- time range: the first two dates said, each judged as a time point;
- duration: a number and a unit ("7 years", "2865 days", "8 years and 2 months"; a bare number
  counts in the question's unit); exact in the question's unit, and leniently within
  :data:`DURATION_TOLERANCE` of it (the ``lenient`` figure);
- Allen relation: the first relation named, by its name or a synonym (:data:`SYNONYMS`);
- yes/no: the first word (yes, no, true, false);
- ranked list: the order in which the answer first names each gold item (names rule of
  :mod:`chronoprobe.probes.judging`); right in that order, and leniently when every item is
  named in any order;
- entity: the names rule against every correct answer (any one of them is right).
"""

from __future__ import annotations

import re
from typing import Any

from chronoprobe.probes.judging import Gold, first_line, judge, normalize
from chronoprobe.time import MONTH_NAMES, TimePoint

DURATION_TOLERANCE = 0.1  # lenient durations: within 10% of the gold, and at least one unit off
MONTHS = {name.lower(): i + 1 for i, name in enumerate(MONTH_NAMES)}
MONTHS |= {name[:3]: number for name, number in list(MONTHS.items())}
_MONTH = "(" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_ERA = r"(?:B\.?C\.?E\.?|B\.?C\.?|A\.?D\.?|C\.?E\.?)(?![A-Za-z])"
# a year: "AD 14", "14 AD", "52 BC", or four digits without an era
_YEAR = rf"(?:\bA\.?D\.?\s*\d{{1,4}}(?!\d)|\d{{1,4}}\s*{_ERA}|\d{{4}}(?!\d))"
_DATE = re.compile(
    rf"(?P<iso>(?<![\w-])-\d{{4}}-\d{{2}}(?:-\d{{2}})?(?!\d)|(?<!\d)\d{{4}}-\d{{2}}(?:-\d{{2}})?(?!\d))"
    rf"|(?P<dmy>(?<!\d)(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}\s*,?\s+({_YEAR}))"
    rf"|(?P<mdy>{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?\s*,?\s+({_YEAR}))"
    rf"|(?P<my>{_MONTH}\s*,?\s+(?:of\s+)?({_YEAR}))"
    # a year after a hyphen is read where the hyphen joins it to a number: "1990-2000"
    rf"|(?P<y>(?<![\w-])-\d{{4}}(?!\d)|(?<!\d)(?<![^\d]-){_YEAR})",
    re.IGNORECASE,
)
SYNONYMS: dict[str, tuple[str, ...]] = {
    "before": ("before", "precedes", "preceded", "earlier than"),
    "after": ("after", "is preceded by", "follows", "later than"),
    "meets": ("meets", "met", "immediately before", "just before", "ends when"),
    "met by": ("met by", "immediately after", "just after", "starts when"),
    "overlaps": ("overlaps", "overlapped"),
    "overlapped by": ("overlapped by", "is overlapped by"),
    "starts": ("starts", "started"),
    "started by": ("started by", "is started by"),
    "during": ("during", "within", "inside", "contained in", "included in"),
    "contains": ("contains", "includes", "encloses"),
    "finishes": ("finishes", "finished", "ends", "ended"),
    "finished by": ("finished by", "is finished by", "ended by"),
    "equals": ("equals", "equal", "same time", "same period", "simultaneous", "coincides"),
}
_MONTHS_IN = {"year": 12, "month": 1}  # exact
_DAYS_IN = {"year": 365.2425, "month": 30.436875, "week": 7, "day": 1}  # on average


def dates(text: str) -> list[TimePoint]:
    """Every date said in ``text``, in order, at the precision it is said."""
    out = []
    for match in _DATE.finditer(text):
        groups = match.groups()
        try:
            if match["iso"]:
                out.append(TimePoint.parse(match["iso"]))
            elif match["dmy"]:
                out.append(TimePoint(_year(groups[4]), MONTHS[groups[3].lower()], int(groups[2])))
            elif match["mdy"]:
                out.append(TimePoint(_year(groups[8]), MONTHS[groups[6].lower()], int(groups[7])))
            elif match["my"]:
                out.append(TimePoint(_year(groups[11]), MONTHS[groups[10].lower()]))
            else:
                out.append(TimePoint(_year(match["y"])))
        except ValueError:
            continue  # 31 February: no date
    return out


def _year(text: str) -> int:
    """A year as said: "2009", "AD 14", "52 BC" (Wikidata's -52), "-0052"."""
    number = int(re.search(r"\d+", text)[0])  # type: ignore[index]
    bce = text.startswith("-") or re.search(r"B\.?C", text, re.IGNORECASE)
    return -number if bce else number


def same_at(said: TimePoint, gold: TimePoint) -> bool:
    """Does ``said`` name ``gold`` at the gold's precision (never coarser)?"""
    if said.precision < gold.precision:
        return False
    return said._key()[: _parts(gold)] == gold._key()[: _parts(gold)]


def _parts(point: TimePoint) -> int:
    return {9: 1, 10: 2, 11: 3}[int(point.precision)]


_AMOUNT = re.compile(r"(\d+(?:\.\d+)?)\s*(years?|months?|weeks?|days?)?", re.IGNORECASE)


def duration(text: str, unit: str) -> float | None:
    """The duration said, in ``unit`` (years, months or days); None when none is said. Years
    and months convert exactly; days, weeks and the rest through average lengths."""
    found = [
        (float(a), (u or unit).lower().rstrip("s"))
        for a, u in _AMOUNT.findall(text.replace(",", ""))
    ]
    if not found:
        return None
    target = unit.rstrip("s")
    if target in _MONTHS_IN and all(u in _MONTHS_IN for _, u in found):
        return sum(a * _MONTHS_IN[u] for a, u in found) / _MONTHS_IN[target]
    return sum(a * _DAYS_IN[u] for a, u in found) / _DAYS_IN[target]


def relation(text: str) -> str | None:
    """The first Allen relation named in ``text`` (a longer phrase before one it holds)."""
    said = f" {normalize(text)} "
    best: tuple[int, int, str] | None = None
    for name, words in SYNONYMS.items():
        for word in words:
            at = said.find(f" {normalize(word)} ")
            if at >= 0:
                key = (at, -len(word), name)
                best = key if best is None or key < best else best
    return best[2] if best else None


def yes_no(text: str) -> bool | None:
    """The answer's first word as yes or no ("no idea" is neither)."""
    words = normalize(text).split()
    if not words or words[:2] in (["no", "idea"], ["no", "one"]):
        return None
    return {"yes": True, "true": True, "no": False, "false": False}.get(words[0])


def _order(text: str, names: list[list[str]]) -> list[int] | None:
    """The gold items in the order the answer first names them (None: one is not named)."""
    said = f" {normalize(text)} "
    at = []
    for i, item in enumerate(names):
        found = [said.find(f" {normalize(n)} ") for n in item if normalize(n)]
        found = [f for f in found if f >= 0]
        if not found:
            return None
        at.append((min(found), i))
    return [i for _, i in sorted(at)]


def judge_timeline(
    text: str, timeline: dict[str, Any], labels: list[str], aliases: list[list[str]]
) -> tuple[bool, bool]:
    """(right, leniently right) of the answer ``text`` to a timeline row."""
    line = first_line(text)
    gold, kind = timeline["gold"], timeline["answer_type"]
    if kind == "entity":
        names = [*aliases, *([] for _ in labels)]
        right = judge(line, Gold(labels, [list(a) for a in names[: len(labels)]], []))["names"]
        return right, right
    if kind == "time point":
        said = dates(line)
        right = bool(said) and same_at(said[0], TimePoint.parse(gold["point"]))
        return right, right
    if kind == "time range":
        said = dates(line)
        ends = [TimePoint.parse(p) for p in gold["range"]]
        right = len(said) >= 2 and all(same_at(s, g) for s, g in zip(said, ends, strict=False))
        return right, right
    if kind == "duration":
        said = duration(line, gold["unit"])
        if said is None:
            return False, False
        exact = abs(said - gold["duration"]) < 1e-9
        return exact, abs(said - gold["duration"]) <= max(1, DURATION_TOLERANCE * gold["duration"])
    if kind == "allen relation":
        right = relation(line) == gold["relation"]
        return right, right
    if kind == "yes/no":
        right = yes_no(line) == gold["yes"]
        return right, right
    if kind == "ranked list":
        gold_names = [[label] for label in gold["labels"]]
        order = _order(line, gold_names)
        return order == list(range(len(gold_names))), order is not None
    raise ValueError(f"unknown answer type {kind!r} in a timeline row")


TIMELINE_FIELDS = ("kind", "complexity", "capability", "answer_type", "precision")


def timeline_key(timeline: dict[str, Any] | None) -> dict[str, Any] | None:
    """The labels every prediction of a timeline row repeats (not its gold)."""
    return None if timeline is None else {f: timeline.get(f) for f in TIMELINE_FIELDS}


def judged_rules(right: bool, rules: tuple[str, ...]) -> dict[str, bool]:
    """A typed verdict under every entity rule's name: typed answers have one reading."""
    return dict.fromkeys(rules, right)


def timeline_metrics(predictions: list[dict], summarize) -> dict[str, Any]:
    """Figures by complexity, capability, answer type and kind, the complexity x capability
    grid, and the lenient accuracy (durations within the tolerance, lists in any order); each
    with its 95% interval."""
    from chronoprobe.metrics.uncertainty import proportion, summary

    rows = [p for p in predictions if p.get("timeline")]
    if not rows:
        return {}
    lenient = [bool(p["timeline"].get("lenient")) for p in rows]
    return {
        "timeline": {
            "lenient": summary(len(rows), {"accuracy": proportion(lenient)}),
            "duration_tolerance": f"within {DURATION_TOLERANCE:.0%} of the answer, at least "
            "one unit of the question (lenient figure); exact otherwise",
            **timeline_groups(rows, summarize),
        }
    }


def timeline_groups(rows: list[dict], summarize) -> dict[str, Any]:
    """``summarize(rows of a group)`` by complexity, capability, answer type and kind, and over
    the complexity x capability ``grid``: each row's labels are its ``timeline`` dict."""

    def by(*fields: str) -> dict[str, Any]:
        groups: dict[str, list[dict]] = {}
        for p in rows:
            key = " x ".join(str(p["timeline"][f]) for f in fields)
            groups.setdefault(key, []).append(p)
        return {k: summarize(g) for k, g in sorted(groups.items())}

    return {
        **{f"by_{f}": by(f) for f in ("complexity", "capability", "answer_type", "kind")},
        "grid": by("complexity", "capability"),
    }
