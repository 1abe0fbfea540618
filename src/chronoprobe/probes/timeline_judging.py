"""Judging answers to timeline questions (``build timeline``) by their answer type.

A row's ``timeline.gold`` is its typed answer. The model's first line is read as that type
(a ranked list may run over several lines), as a careful person reads it: what the answer
denies ("not 2003", "2004, not 2003", "10 years, not 11 years", "not before") is not what it
says, up to the end of its clause (a comma, semicolon, colon, "but", ...); "it was not until
1969 that" says 1969.

- time point: the first date said, right when it names the gold date at the gold's precision:
  a coarser date is wrong, a finer one is cut to the gold's precision (the gold is known no
  finer). Read: "4 March 2009", "March 4, 2009", "Sept. 12, 1953" (months in full, in three
  letters or as "Sept", with or without a dot), "2009-03-04", "1969/10/21" (year first),
  "March 2009", "2009"; a year of fewer digits with its era, "14 AD", "AD 14", "52 BC", "52
  BCE"; signed ISO years, "-0052", as BCE, as Wikidata writes them. A day and month in
  digits before the year ("21/10/1969") are read only where one reading is a date (21 is no
  month) or both readings agree; otherwise only the year is read (neither is guessed). A
  decade ("the 1990s", "1990's") is no date: it is coarser than any gold. No date is the
  answer where the first one is a bound ("before 2003", "by 2003", "between 1906 and 1907")
  or is offered with another ("1906 or 1907", "59 BC or 58 BC"): "around 2003" is 2003;
- time range: the first two dates said, each judged as a time point, wrong where one is
  offered with another. "1990-2000" and "2018-19" are two years (the second in the first's
  century or the next); "59-44 BC" and "59 to 44 BC" give both years the era; "2009-10" is
  ISO, October 2009, but with an en dash or spaces around the hyphen it is two years;
- duration: an amount and a unit ("7 years", "2865 days", "three years", "a decade", "8
  years and 2 months": amounts in falling units, side by side, add up); numbers in words up to
  ninety-nine; a bare number counts in the question's unit only where no amount has a unit
  ("8"), so that the years in "1354 days (from 1990 to 1994)" are no amount. Of a sum the
  result is read ("3 + 3 + 4 = 10 years": after the last "="). A range of amounts ("9 to 10
  years", "4-6 years", "9 or 10 years", "between 9 and 10 years") is not exact, and a bound
  ("more than 10 years") is no amount. Exact in the question's unit; leniently (the
  ``lenient`` figure) within :data:`DURATION_TOLERANCE` of it, a range where all of it is;
- Allen relation: the first relation named and not denied, by its name or a synonym
  (:data:`SYNONYMS`), or as "A ended before B started" (before), "A started after B ended"
  (after), "A ended when B started" (meets), "A started when B ended" (met by);
- yes/no: the first yes or no said ("yes", "yeah", "yep", "correct", "true", "no", "nope",
  "incorrect", "false", "not at all"; "not true" is no; "I think yes" is yes; the "no" of "no
  doubt" is none); else a short reply ("It did.", "It did not.") by its negation. No answer
  where a hedge comes first ("maybe yes") or the answer says it does not know ("no idea");
- ranked list: the order in which the answer first names each gold item (names rule of
  :mod:`chronoprobe.probes.judging`), read from its first numbered or bulleted list of two
  or more lines where it gives one, else from its first line; right in that order, and
  leniently when every item is named in any order;
- entity: the names rule against every correct answer (any one of them is right).
"""

from __future__ import annotations

import re
from itertools import pairwise
from typing import Any, NamedTuple

from chronoprobe.errors import UserError
from chronoprobe.probes.judging import Gold, first_line, judge, normalize
from chronoprobe.time import MONTH_NAMES, TimePoint

DURATION_TOLERANCE = 0.1  # lenient durations: within 10% of the gold, and at least one unit off
MONTHS = {name.lower(): i + 1 for i, name in enumerate(MONTH_NAMES)}
MONTHS |= {name[:3]: number for name, number in list(MONTHS.items())} | {"sept": 9}
_ERA = r"(?:B\.?C\.?E\.?|B\.?C\.?|A\.?D\.?|C\.?E\.?)(?![A-Za-z])"
# a year: "AD 14", "14 AD", "52 BC", or four digits without an era
_YEAR = rf"(?:\bA\.?D\.?\s*\d{{1,4}}(?!\d)|\d{{1,4}}\s*{_ERA}|\d{{4}}(?!\d))"


def _month(name: str) -> str:
    """A month in words, whole or cut ("Sept."), as the named group ``name``."""
    words = "|".join(sorted(MONTHS, key=len, reverse=True))
    return rf"(?<![A-Za-z])(?P<{name}>{words})(?![A-Za-z])\.?"


_DATE = re.compile(
    # a decade: read, so that its year is not, but no date
    r"(?P<decade>(?<![\w-])\d{3}0['\u2019]?s\b)"
    r"|(?P<ymd>(?<![\d/])(?P<ymd_y>\d{4})/(?P<ymd_m>\d{1,2})/(?P<ymd_d>\d{1,2})(?![\d/]))"
    r"|(?P<num>(?<![\d/])(?P<num_a>\d{1,2})/(?P<num_b>\d{1,2})/(?P<num_y>\d{4})(?![\d/]))"
    # two years, the second cut to two digits: "2018-19" (never an ISO month), "2009 - 10"
    r"|(?P<short>(?<![\w-])(?P<short_y>\d{4})(?:\s*\u2013\s*|\s+-\s*|-(?=00|1[3-9]|[2-9]\d))"
    r"(?P<short_e>\d{2})(?![\d-]))"
    # two years with one era: "59-44 BC", "14 to 37 AD"
    rf"|(?P<span>(?<![\w.-])(?P<span_a>\d{{1,4}})\s*(?:[-\u2013]|to)\s*(?P<span_b>\d{{1,4}})\s*"
    rf"(?P<span_era>{_ERA}))"
    r"|(?P<iso>(?<![\w-])-\d{4}-\d{2}(?:-\d{2})?(?!\d)|(?<!\d)\d{4}-\d{2}(?:-\d{2})?(?!\d))"
    rf"|(?P<dmy>(?<!\d)(?P<dmy_d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_month('dmy_m')}\s*,?"
    rf"\s+(?P<dmy_y>{_YEAR}))"
    rf"|(?P<mdy>{_month('mdy_m')}\s+(?P<mdy_d>\d{{1,2}})(?:st|nd|rd|th)?\s*,?\s+"
    rf"(?P<mdy_y>{_YEAR}))"
    rf"|(?P<my>{_month('my_m')}\s*,?\s+(?:of\s+)?(?P<my_y>{_YEAR}))"
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
_ENDED = r"(?:ended|ends|end|finished|finishes)"
_STARTED = r"(?:started|starts|start|began|begins|begin)"
_THE_OTHER = r"(?:\s+\w+){1,4}?\s+"  # "the second", "the other one" (articles are dropped)
# a bound of one interval said against a bound of the other: "A ended before B started"
BOUND_PHRASES: dict[str, str] = {
    "before": rf"{_ENDED}\s+(?:before|earlier than|prior to){_THE_OTHER}{_STARTED}",
    "after": rf"{_STARTED}\s+(?:after|later than){_THE_OTHER}{_ENDED}",
    "meets": rf"{_ENDED}\s+(?:when|as|just as|exactly when){_THE_OTHER}{_STARTED}",
    "met by": rf"{_STARTED}\s+(?:when|as|just as|exactly when){_THE_OTHER}{_ENDED}",
}
_RELATIONS = [
    *((name, re.compile(rf"(?<!\S){re.escape(normalize(w))}(?!\S)")) for name, words in
      SYNONYMS.items() for w in words),
    *((name, re.compile(rf"(?<!\S){phrase}(?!\S)")) for name, phrase in BOUND_PHRASES.items()),
]  # fmt: skip
_MONTHS_IN = {"century": 1200, "decade": 120, "year": 12, "month": 1}  # exact
_DAYS_IN = {"century": 36524.25, "decade": 3652.425, "year": 365.2425, "month": 30.436875}
_DAYS_IN |= {"week": 7, "day": 1}  # on average
# where a clause ends: what a "not" before it denies goes no further
_CLAUSE_BREAK = re.compile(r"[;:!?,()\[\]]|\.(?!\d)|\b(?:but|instead|rather)\b", re.IGNORECASE)
_NEGATION = re.compile(r"\b(?:not|never|neither|nor|cannot)\b|n['\u2019]t\b", re.IGNORECASE)
# "it was not until 1969 that ...": the negation does not deny the date after "until"
_NOT_UNTIL = re.compile(r"\b(?:until|till)\s+(?:(?:on|in)\s+)?(?:the\s+)?$", re.IGNORECASE)
# a date said as a bound, not as the date: "before 2003", "by 2003"
_DATE_BOUND = re.compile(
    r"\b(?:before|after|by|prior to|earlier than|later than|as early as|as late as|between)"
    r"\s+(?:(?:on|in)\s+)?(?:the\s+)?(?:year\s+)?$",
    re.IGNORECASE,
)
_AMOUNT_BOUND = re.compile(
    r"\b(?:more|less|fewer|longer|shorter|greater)\s+than\s+$|\b(?:at least|at most|over|under"
    r"|up to)\s+$",
    re.IGNORECASE,
)


def _negated(text: str, start: int) -> bool:
    """Does its clause deny what is said at ``start`` ("not 2003", "2004, not 2003")?"""
    clause = _CLAUSE_BREAK.split(text[:start])[-1]
    return bool(_NEGATION.search(clause)) and not _NOT_UNTIL.search(clause)


class Said(NamedTuple):
    """A date said, and where in the text (both years of "2018-19" share one place)."""

    point: TimePoint
    start: int
    end: int


def dates(text: str) -> list[TimePoint]:
    """Every date said in ``text``, in order, at the precision it is said (denied or not)."""
    return [s.point for s in _said(text)]


def _said(text: str) -> list[Said]:
    out = []
    for match in _DATE.finditer(text):
        try:
            out += [Said(p, match.start(), match.end()) for p in _points(match)]
        except ValueError:
            continue  # 31 February: no date
    return out


def _points(m: re.Match) -> list[TimePoint]:
    """The dates one match says (none for a decade, two for "2018-19")."""
    if m["decade"]:
        return []
    if m["ymd"]:
        return [TimePoint(int(m["ymd_y"]), int(m["ymd_m"]), int(m["ymd_d"]))]
    if m["num"]:
        return [_day_or_month_first(int(m["num_a"]), int(m["num_b"]), int(m["num_y"]))]
    if m["short"]:
        first = int(m["short_y"])
        second = first - first % 100 + int(m["short_e"])
        return [TimePoint(first), TimePoint(second if second > first else second + 100)]
    if m["span"]:
        return [TimePoint(_year(f"{m[g]} {m['span_era']}")) for g in ("span_a", "span_b")]
    if m["iso"]:
        return [TimePoint.parse(m["iso"])]
    if m["dmy"]:
        return [TimePoint(_year(m["dmy_y"]), MONTHS[m["dmy_m"].lower()], int(m["dmy_d"]))]
    if m["mdy"]:
        return [TimePoint(_year(m["mdy_y"]), MONTHS[m["mdy_m"].lower()], int(m["mdy_d"]))]
    if m["my"]:
        return [TimePoint(_year(m["my_y"]), MONTHS[m["my_m"].lower()])]
    return [TimePoint(_year(m["y"]))]


def _day_or_month_first(a: int, b: int, year: int) -> TimePoint:
    """ "21/10/1969" or "10/21/1969": the day where only one reading is a date or both readings
    agree; else only the year (which of day and month comes first is not guessed)."""
    readings = set()
    for month, day in ((b, a), (a, b)):
        try:
            readings.add(TimePoint(year, month, day))
        except ValueError:
            continue
    if not readings:
        raise UserError(f"no date in {a}/{b}/{year}")
    return readings.pop() if len(readings) == 1 else TimePoint(year)


def _year(text: str) -> int:
    """A year as said: "2009", "AD 14", "52 BC" (Wikidata's -52), "-0052"."""
    number = int(re.search(r"\d+", text)[0])  # type: ignore[index]
    bce = text.startswith("-") or re.search(r"B\.?C", text, re.IGNORECASE)
    return -number if bce else number


def answered_dates(text: str, count: int, bounds: bool = False) -> list[TimePoint] | None:
    """The first ``count`` dates ``text`` asserts (denied ones left out); None where fewer are
    said, one of them is offered with another ("1906 or 1907"), or, with ``bounds``, the first
    is a bound ("before 2003")."""
    said = [s for s in _said(text) if not _negated(text, s.start)]
    if len(said) < count or (bounds and _DATE_BOUND.search(text[: said[0].start])):
        return None
    for a, b in pairwise(said[: count + 1]):
        offered = re.search(r"\bor\b", text[a.end : b.start], re.IGNORECASE)
        if offered and not (same_at(a.point, b.point) or same_at(b.point, a.point)):
            return None
    return [s.point for s in said[:count]]


def same_at(said: TimePoint, gold: TimePoint) -> bool:
    """Does ``said`` name ``gold`` at the gold's precision (never coarser)?"""
    if said.precision < gold.precision:
        return False
    return said._key()[: _parts(gold)] == gold._key()[: _parts(gold)]


def _parts(point: TimePoint) -> int:
    return {9: 1, 10: 2, 11: 3}[int(point.precision)]


_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen"
).split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_WORDS = sorted(_ONES, key=len, reverse=True)  # "seventeen" before "seven"
_WORD_NUMBER = rf"(?:{'|'.join(_TENS)})(?:[\s-](?:{'|'.join(_ONES[1:10])}))?|{'|'.join(_WORDS)}|an?"
# atomic: "twenty-one" is never "twenty" to "one"
_NUMBER = rf"(?>\d+(?:\.\d+)?|(?:{_WORD_NUMBER})(?![A-Za-z]))"
_UNIT = r"(?:years?|yrs?|months?|weeks?|days?|decades?|centur(?:y|ies))"
_QUANTITY = re.compile(
    rf"(?<![\w.])(?:(?:between\s+(?P<lo2>{_NUMBER})\s+and|(?P<lo>{_NUMBER})\s*(?:-|\u2013|to|or))"
    rf"\s*(?P<hi>{_NUMBER})\s*(?P<range_unit>{_UNIT})\b"
    rf"|(?P<n>{_NUMBER})(?:\s*(?P<unit>{_UNIT})\b)?)",
    re.IGNORECASE,
)


class Amount(NamedTuple):
    """An amount said (low and high: equal unless a range), its unit and where it is."""

    low: float
    high: float
    unit: str | None
    start: int
    end: int


def _number(text: str) -> float:
    """A number in digits or words ("7", "2.5", "twenty-one", "a")."""
    if text[0].isdigit():
        return float(text)
    words = re.split(r"[\s-]+", text.lower())
    if words[0] in ("a", "an"):
        return 1
    tens = 20 + 10 * _TENS.index(words[0]) if words[0] in _TENS else 0
    return tens + (_ONES.index(words[-1]) if words[-1] in _ONES else 0)


def _unit_of(text: str) -> str:
    word = text.lower()
    return {"yr": "year", "yrs": "year", "centuries": "century"}.get(word, word.rstrip("s"))


def _amounts(text: str) -> list[Amount]:
    """The amounts ``text`` says and does not deny; a number in words only with its unit."""
    out = []
    for m in _QUANTITY.finditer(text):
        if _negated(text, m.start()):
            continue
        if m["hi"]:
            low = _number(m["lo"] or m["lo2"])
            out.append(Amount(low, _number(m["hi"]), _unit_of(m["range_unit"]), *m.span()))
        elif m["unit"] or m["n"][0].isdigit():
            unit = _unit_of(m["unit"]) if m["unit"] else None
            out.append(Amount(_number(m["n"]), _number(m["n"]), unit, *m.span()))
    return out


def amount(text: str, unit: str) -> tuple[float, float] | None:
    """The duration said in ``unit`` (years, months or days), as (low, high): equal unless a
    range is said; None when none is said or the first is a bound. Years and months convert
    exactly; days, weeks and the rest through average lengths."""
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text).rsplit("=", 1)[-1]  # 1,354; a sum's result
    said = _amounts(text)
    with_unit = [a for a in said if a.unit]
    # a bare number counts in the question's unit, where no amount has a unit
    said = with_unit or [a._replace(unit=unit.rstrip("s")) for a in said[:1]]
    if not said or _AMOUNT_BOUND.search(text[: said[0].start]):
        return None
    parts = [said[0]]
    for a in said[1:]:  # "8 years and 2 months": falling units side by side add up
        joined = re.fullmatch(r"\s*,?\s*(?:and\s+)?", text[parts[-1].end : a.start])
        if parts[0].low != parts[0].high or not joined or not _finer(a.unit, parts[-1].unit):
            break
        parts.append(a)
    target = unit.rstrip("s")
    exact = target in _MONTHS_IN and all(p.unit in _MONTHS_IN for p in parts)
    scale = _MONTHS_IN if exact else _DAYS_IN
    low = sum(p.low * scale[p.unit] for p in parts) / scale[target]
    high = sum(p.high * scale[p.unit] for p in parts) / scale[target]
    return low, high


def _finer(unit: str | None, than: str | None) -> bool:
    return _DAYS_IN[unit or "day"] < _DAYS_IN[than or "day"]


def duration(text: str, unit: str) -> float | None:
    """The exact duration said in ``unit``; None when none is said, or a range."""
    said = amount(text, unit)
    return said[0] if said and said[0] == said[1] else None


# negations as normalize() leaves them ("doesn't" is "doesnt")
_NEGATED_WORDS = re.compile(
    r"\b(?:not|never|neither|nor|cannot|isnt|arent|wasnt|werent|doesnt|dont|didnt|hasnt|"
    r"havent|hadnt|cant|couldnt|wont|wouldnt)\b"
)


def relation(text: str) -> str | None:
    """The first Allen relation named in ``text`` and not denied (a longer phrase before one
    it holds)."""
    for clause in _CLAUSE_BREAK.split(text):
        said = f" {normalize(clause)} "
        best: tuple[int, int, str] | None = None
        for name, pattern in _RELATIONS:
            for m in pattern.finditer(said):
                if not _NEGATED_WORDS.search(said[: m.start()]):
                    key = (m.start(), m.start() - m.end(), name)
                    best = key if best is None or key < best else best
        if best:
            return best[2]
    return None


YES = ("yes", "yeah", "yep", "yup", "true", "correct", "indeed", "certainly", "definitely",
       "absolutely", "of course", "affirmative")  # fmt: skip
NO = ("no", "nope", "nah", "false", "incorrect", "not at all", "not really", "never",
      "negative")  # fmt: skip
LEAD_INS = ("no doubt about it", "no doubt")  # a "no" that is no answer
HEDGES = ("maybe", "perhaps", "possibly")
UNKNOWN = ("no idea", "no one", "not sure", "unsure", "dont know", "do not know", "unknown",
           "cannot tell", "cant tell", "cannot say", "cant say")  # fmt: skip
# a short reply: "It did.", "He was not."
_SHORT_REPLY = re.compile(
    r"(?:it|he|she|they|this|that|there)\s+(?:did|does|do|was|were|is|are|had|has|have"
    r"|could|would|will|can)(?P<not>\s+not|nt)?"
)


def yes_no(text: str) -> bool | None:
    """The first yes or no the answer says ("I think yes"; "not true" is no; the "no" of "no
    doubt" is none), else a short reply ("It did not."); None where a hedge ("maybe") or not
    knowing ("no idea") comes first."""
    words = normalize(text).split()
    i = 0
    while i < len(words):
        rest = " ".join(words[i:]) + " "
        if any(rest.startswith(f"{p} ") for p in (*UNKNOWN, *HEDGES)):
            return None
        lead = next((p for p in LEAD_INS if rest.startswith(f"{p} ")), None)
        if lead:
            i += len(lead.split())
            continue
        for value, phrases in ((False, NO), (True, YES)):
            said = next((p for p in phrases if rest.startswith(f"{p} ")), None)
            if said:
                return value != (i > 0 and words[i - 1] == "not" and " " not in said)
        i += 1
    for clause in _CLAUSE_BREAK.split(text):
        reply = _SHORT_REPLY.fullmatch(normalize(clause))
        if reply:
            return not reply["not"]
    return None


_LIST_ITEM = re.compile(r"^\s*(?:\d+\s*[.):]|[-*\u2022\u2013])\s+(?P<item>\S.*)$")


def listed(text: str) -> str:
    """The answer to a ranked list: its first numbered or bulleted list of two or more lines,
    its items joined by "; "; else its first line."""
    items: list[str] = []
    for line in text.splitlines():
        item = _LIST_ITEM.match(line)
        if item:
            items.append(item["item"].strip())
        elif items and line.strip():
            break
    return "; ".join(items) if len(items) >= 2 else first_line(text)


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
        said = answered_dates(line, 1, bounds=True)
        right = said is not None and same_at(said[0], TimePoint.parse(gold["point"]))
        return right, right
    if kind == "time range":
        said = answered_dates(line, 2)
        ends = [TimePoint.parse(p) for p in gold["range"]]
        right = said is not None and all(same_at(s, g) for s, g in zip(said, ends, strict=True))
        return right, right
    if kind == "duration":
        said = amount(line, gold["unit"])
        if said is None:
            return False, False
        off = max(abs(s - gold["duration"]) for s in said)
        return off < 1e-9, off <= max(1, DURATION_TOLERANCE * gold["duration"])
    if kind == "allen relation":
        right = relation(line) == gold["relation"]
        return right, right
    if kind == "yes/no":
        right = yes_no(line) == gold["yes"]
        return right, right
    if kind == "ranked list":
        gold_names = [[label] for label in gold["labels"]]
        order = _order(listed(text), gold_names)
        return order == list(range(len(gold_names))), order is not None
    raise UserError(f"unknown answer type {kind!r} in a timeline row")


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
