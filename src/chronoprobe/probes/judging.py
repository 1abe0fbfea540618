"""Judging a generated answer against a row's gold answers, by five rules side by side.

Every rule reads the answer's first non-blank line (as ChroKnowledge reads its answers) and
compares it with the gold answers' names: each label and its aliases. Text is normalised the
same way for every rule: Unicode accents folded, case folded, dotted abbreviations joined
("U.S." is "us", "F.C." is "fc"), a possessive "'s" is a boundary, other apostrophes inside a
word vanish ("O'Neill" is "oneill"), the articles a, an and the dropped (as SQuAD's answer
normalisation does: Rajpurkar et al., 2016, "SQuAD: 100,000+ Questions for Machine
Comprehension of Text", EMNLP), and the rest split into words of letters and digits.
Punctuation between words (a comma, a full stop, a bracket, a spaced dash) is remembered as
a *boundary*; a hyphen inside a word ("Saint-Germain") or an ampersand is not one.

The rules, strictest first:

``exact``
    The normalised answer is a gold label.
``alias``
    The normalised answer is a gold label or alias.
``names``
    The answer *names* a gold answer: a gold name occurs in it as whole words, and

    - it ends at the end of the answer, at a boundary, or before a connective word (and, or,
      who, which, since, until, in, from, as, ...: :data:`CONNECTIVES`), after at most a legal
      form or club abbreviation (Inc, Corp, F.C., ...: :data:`NAME_SUFFIXES`): "Juventus,
      since 2001" names Juventus, "Inter Miami" does not name Inter, "Democratic Party of
      Japan" does not name the Democratic Party, "President of the United States Senate" does
      not name the President of the United States. One lower-case generic noun
      (:data:`GENERIC_HEADS`: team, club, side, party, company, ...) may follow the name,
      unless a gold name is a country of the demonym table: "the Atletico Madrid team" names
      Atletico Madrid, "the France team" does not name France. A possessive followed by a
      capitalised word or a number names a thing of the owner's, not the owner: "Toyota's
      Lexus brand" does not name Toyota, "Toyota's headquarters" does;
    - a gold name may be said without its legal form or club abbreviation (a suffix, or a
      prefix of :data:`NAME_PREFIXES`): "Juventus" names "Juventus F.C.", "Barcelona" names
      "FC Barcelona";
    - it starts the answer, follows a boundary or a connective, or follows "of" that follows
      a lower-case word ("a member of the Democratic Party"); articles, numbers (years),
      ordinals and a few lower-case words saying the holder holds it at the time
      (:data:`ORDINAL_WORDS`, :data:`QUALIFIERS`) may come first: "the 2022 US President",
      "the 21st US President" and "the current US President" name "US President", while
      "Vice President of the United States", "the acting US President" and "the former US
      President" do not name the President of the United States (another office, another
      time's holder; a capitalised word before "of" makes a longer name);
    - a name that starts with a country of the demonym table (:data:`DEMONYMS`, a small
      table of countries and their adjectives) may be said with the adjective and without
      some of its inner words, keeping its first and last word and at least half of its
      words: "the Italian national team" names "Italy national association football team";
      a name that ends with "of" and such a country may be said as adjective + the rest:
      "the Italian Prime Minister" names "Prime Minister of Italy".

    When the answer names several entities, the first one named is its answer ("Juventus,
    after Real Madrid" names Juventus). A name the rule does not know counts too when it is
    two or more capitalised words that open a clause and end at a comma, bracket or dash:
    "Olaf Scholz, the German Chancellor" names a person, not the office.
``token_f1``
    SQuAD's token F1 between the answer's words and a gold name's words is at least
    :data:`TOKEN_F1_THRESHOLD` (0.5: half the words of each side shared, the usual cut for
    a partly right span).
``fuzzy``
    ChroKnowledge's rule (Park et al., 2024, "ChroKnowledge: Unveiling Chronological Knowledge
    of Language Models in Multiple Domains", arXiv:2410.09870): rapidfuzz's
    ``token_set_ratio`` between the lower-cased first line and a lower-cased gold name is at
    least :data:`FUZZY_THRESHOLD` (70).

Every rule but ``exact`` knows the other entities the answer may name instead
(:attr:`Gold.distractors`: the subject's answers of other periods, similarly named entities of
the KG). An answer that names another entity better than every gold name is not correct:
for ``names``, a gold mention inside a longer mention of another entity does not count
("Democratic Party (Japan)" when the KG knows that party), and a mention of both at once
goes to the one whose name it covers more of; for ``token_f1`` and ``fuzzy``, the best other
entity beats the best gold name by its score, then by the number of words shared, then by
the share of its name the answer covers ("Manchester" shares all of the city's name but a
third of Manchester United F.C.'s). Ties go to the gold answer. An answer equal to a gold
name is never beaten, so ``alias`` needs no other entity.

A row with no gold answer (a deleted row: its answers ended in an earlier period) is judged
against nothing current, and no answer to it is correct on any rule.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

RULES: tuple[str, ...] = ("exact", "alias", "names", "token_f1", "fuzzy")
DEFAULT_RULE = "names"  # the rule that sorts rows into Correct / Partial / Incorrect
TOKEN_F1_THRESHOLD = 0.5
FUZZY_THRESHOLD = 70.0
PARAPHRASE_SHARE = 0.5  # the least share of a name's words a demonym paraphrase keeps

ARTICLES = frozenset({"a", "an", "the"})
CONNECTIVES = frozenset(
    "and or but nor as at by for from in into on onto to with within under over since until "
    "till during after before when while where whereas who whom whose which that than then "
    "is was are were be been being has have had became become becomes also now still via "
    "plus".split()
)
# Words that say what kind of organisation a name is, which a name may go without: legal forms
# and club abbreviations at its end ("Acme Corp" is Acme, "Juventus F.C." Juventus), club
# abbreviations at its start ("FC Barcelona" is Barcelona)
NAME_SUFFIXES = frozenset(
    "inc incorporated corp corporation co ltd limited llc plc gmbh ag sa spa fc afc cf sc".split()
)
NAME_PREFIXES = frozenset("fc afc ac as ss sc sv cd cf".split())
# Lower-case words that may stand between an answer's start and the name, as a year may: they
# say which holder or when, not which entity. Ordinals ("the 21st President", "the
# twenty-first President": a wrong ordinal is a wrong detail of the right office) and words
# saying the holder holds it at the time. Not here, so they still make another name: former,
# ex, late, future, next, last (another time's holder), acting, interim, designate (not the
# office itself), vice, deputy, assistant, shadow (another office). "then" and "now" are
# connectives already.
ORDINAL_WORDS = frozenset(
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth "
    "thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth "
    "thirtieth fortieth fiftieth sixtieth seventieth eightieth ninetieth hundredth "
    "twenty thirty forty fifty sixty seventy eighty ninety".split()  # twenty-first, ...
)
QUALIFIERS = frozenset("current currently incumbent sitting present reigning serving".split())
# Lower-case nouns that may follow an organisation's name without making a longer name: "the
# Atletico Madrid team" names Atletico Madrid. Never after a country: "the France team" is
# France's national team, not France.
GENERIC_HEADS = frozenset(
    "team club side squad franchise outfit party company firm organisation organization".split()
)
# Countries and the adjectives a name may be said with; names as normalised words.
DEMONYMS: dict[str, tuple[str, ...]] = {
    "albania": ("albanian",),
    "algeria": ("algerian",),
    "argentina": ("argentine", "argentinian"),
    "australia": ("australian",),
    "austria": ("austrian",),
    "belgium": ("belgian",),
    "brazil": ("brazilian",),
    "bulgaria": ("bulgarian",),
    "cameroon": ("cameroonian",),
    "canada": ("canadian",),
    "chile": ("chilean",),
    "china": ("chinese",),
    "colombia": ("colombian",),
    "croatia": ("croatian",),
    "czech republic": ("czech",),
    "denmark": ("danish",),
    "ecuador": ("ecuadorian",),
    "egypt": ("egyptian",),
    "england": ("english",),
    "finland": ("finnish",),
    "france": ("french",),
    "germany": ("german",),
    "ghana": ("ghanaian",),
    "greece": ("greek",),
    "hungary": ("hungarian",),
    "iceland": ("icelandic",),
    "india": ("indian",),
    "iran": ("iranian",),
    "ireland": ("irish",),
    "israel": ("israeli",),
    "italy": ("italian",),
    "ivory coast": ("ivorian",),
    "japan": ("japanese",),
    "mexico": ("mexican",),
    "morocco": ("moroccan",),
    "netherlands": ("dutch",),
    "nigeria": ("nigerian",),
    "northern ireland": ("northern irish",),
    "norway": ("norwegian",),
    "paraguay": ("paraguayan",),
    "peru": ("peruvian",),
    "poland": ("polish",),
    "portugal": ("portuguese",),
    "romania": ("romanian",),
    "russia": ("russian",),
    "scotland": ("scottish",),
    "senegal": ("senegalese",),
    "serbia": ("serbian",),
    "slovakia": ("slovak",),
    "slovenia": ("slovenian",),
    "south africa": ("south african",),
    "south korea": ("south korean",),
    "spain": ("spanish",),
    "sweden": ("swedish",),
    "switzerland": ("swiss",),
    "tunisia": ("tunisian",),
    "turkey": ("turkish",),
    "ukraine": ("ukrainian",),
    "united kingdom": ("british",),
    "united states": ("american",),
    "united states of america": ("american",),
    "uruguay": ("uruguayan",),
    "venezuela": ("venezuelan",),
    "wales": ("welsh",),
}
_COUNTRIES = {
    tuple(country.split()): tuple(tuple(adjective.split()) for adjective in adjectives)
    for country, adjectives in DEMONYMS.items()
}
_LONGEST_COUNTRY = max(len(c) for c in _COUNTRIES)

_ABBREVIATION = re.compile(r"(?<!\w)(?:[^\W\d_]\.){2,}|(?<!\w)(?:[^\W\d_]\.)+[^\W\d_](?!\w)")
_POSSESSIVE = re.compile(r"(?<=\w)['\u2019]s(?!\w)")
_POSSESSIVE_MARK = "\ue000"  # a private-use character: a boundary that remembers it was "'s"
_INNER_APOSTROPHE = re.compile(r"(?<=\w)['\u2019`](?=\w)")
_WORD = re.compile(r"[^\W_]+")
_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th)")


@dataclass(frozen=True)
class Gold:
    """What an answer is judged against: the gold labels (none for a deleted row), each
    label's other names, and the names (label first, then aliases) of other entities the
    answer may name instead."""

    labels: Sequence[str]
    aliases: Sequence[Sequence[str]] = ()
    distractors: Sequence[Sequence[str]] = ()


class Words(NamedTuple):
    """Normalised words; ``capital[i]``: word i began with a capital letter; ``hard[i]``:
    punctuation stands between word i - 1 and word i; ``punct[i]``: that punctuation, without
    spaces ("'s" for a possessive; "" where there is none)."""

    words: tuple[str, ...]
    capital: tuple[bool, ...]
    hard: tuple[bool, ...]
    punct: tuple[str, ...]


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _hard(gap: str) -> bool:
    """Whether the text between two words is a boundary: not for spaces, an ampersand, a
    plus, or dashes inside a word."""
    bare = gap.strip()
    if bare in ("", "&", "+"):
        return False
    return not (bare == gap and all(unicodedata.category(c) == "Pd" for c in gap))


@lru_cache(maxsize=1 << 16)
def split_words(text: str) -> Words:
    """The normalised words of ``text`` (see the module's docstring), with what tells names
    apart: capitals and boundaries."""
    text = _ABBREVIATION.sub(lambda m: m.group().replace(".", ""), _fold(text))
    text = _INNER_APOSTROPHE.sub("", _POSSESSIVE.sub(_POSSESSIVE_MARK, text))
    words: list[str] = []
    capital: list[bool] = []
    punct: list[str] = []
    end, pending = 0, ""
    for match in _WORD.finditer(text):
        gap = text[end : match.start()]
        if words and _hard(gap):
            pending += "".join(gap.split()).replace(_POSSESSIVE_MARK, "'s")
        end = match.end()
        word = match.group().casefold()
        if word in ARTICLES:
            continue
        words.append(word)
        capital.append(match.group()[0].isupper())
        punct.append(pending)
        pending = ""
    return Words(tuple(words), tuple(capital), tuple(bool(p) for p in punct), tuple(punct))


def normalize(text: str) -> str:
    """The normalised words of ``text`` joined by spaces: what ``exact`` and ``alias`` compare."""
    return " ".join(split_words(text).words)


def first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


class Form(NamedTuple):
    """One way to say a name: its words, and how many leading words (a country or its
    adjective) must be said before inner words may be left out (0: every word is said)."""

    words: tuple[str, ...]
    lead: int = 0


def _core(words: tuple[str, ...]) -> tuple[str, ...]:
    """A name's words without its legal form or club abbreviations (never all of them)."""
    start, end = 0, len(words)
    while end - start > 1 and words[end - 1] in NAME_SUFFIXES:
        end -= 1
    while end - start > 1 and words[start] in NAME_PREFIXES:
        start += 1
    return words[start:end]


@lru_cache(maxsize=1 << 16)
def name_forms(name: str) -> tuple[Form, ...]:
    """The name as written and its demonym paraphrases (see ``names`` in the docstring)."""
    written = split_words(name).words
    if not written:
        return ()
    words = _core(written)
    forms = [Form(written), *([Form(words)] if words != written else [])]
    for size in range(min(_LONGEST_COUNTRY, len(words) - 1), 0, -1):
        country, rest = words[:size], words[size:]
        if country in _COUNTRIES:
            lead = size if len(rest) >= 2 else 0
            forms.append(Form(words, lead))
            forms += [Form(d + rest, len(d) if lead else 0) for d in _COUNTRIES[country]]
            break
    for size in range(min(_LONGEST_COUNTRY, len(words) - 2), 0, -1):
        country, head = words[-size:], words[: -size - 1]
        if country in _COUNTRIES and words[-size - 1] == "of":
            forms += [Form(d + head) for d in _COUNTRIES[country]]
            break
    return tuple(forms)


class Mention(NamedTuple):
    start: int
    end: int
    share: float  # of the name's words said
    gold: bool


def _spans(said: tuple[str, ...], form: Form) -> Iterator[tuple[int, int, float]]:
    """Where ``form`` is said: its words in a row, or (with a lead) its lead, then some of
    its words in order up to its last, covering at least :data:`PARAPHRASE_SHARE`."""
    size = len(form.words)
    for start in range(len(said)):
        if not form.lead:
            if said[start : start + size] == form.words:
                yield start, start + size, 1.0
            continue
        if said[start : start + form.lead] != form.words[: form.lead]:
            continue
        end, next_word = start + form.lead, form.lead
        while end < len(said) and said[end] in form.words[next_word:]:
            at = form.words.index(said[end], next_word)
            end, next_word = end + 1, at + 1
            if at == size - 1:
                share = (end - start) / size
                if share >= PARAPHRASE_SHARE:
                    yield start, end, share
                break


def _mentions(said: tuple[str, ...], names: Iterable[str], gold: bool) -> list[Mention]:
    return [
        Mention(start, end, share, gold)
        for name in names
        for form in name_forms(name)
        for start, end, share in _spans(said, form)
    ]


def _premodifier(text: Words, i: int) -> bool:
    """Whether word ``i`` may stand before a name without making a longer one: a number (a
    year), an ordinal, or a lower-case word of :data:`ORDINAL_WORDS` or :data:`QUALIFIERS`
    (capitalised, it may begin a longer name: "First Secretary", "Present Day")."""
    word = text.words[i]
    if word.isdigit() or _ORDINAL.fullmatch(word):
        return True
    return not text.capital[i] and (word in ORDINAL_WORDS or word in QUALIFIERS)


def _starts_free(text: Words, start: int) -> bool:
    """Whether a mention starting at word ``start`` begins a name of its own."""
    while start > 0 and not text.hard[start] and _premodifier(text, start - 1):
        start -= 1
    if start == 0 or text.hard[start]:
        return True
    before = start - 1
    if text.words[before] in CONNECTIVES:
        return True
    if text.words[before] == "of":
        return before == 0 or text.hard[before] or not text.capital[before - 1]
    return False


def _ends_free(text: Words, end: int, heads: bool) -> bool:
    """Whether a mention ending before word ``end`` ends a name of its own; ``heads``: whether
    a generic noun (:data:`GENERIC_HEADS`) may follow it."""
    size = len(text.words)
    while end < size and not text.hard[end] and text.words[end] in NAME_SUFFIXES:
        end += 1
    generic = end < size and text.words[end] in GENERIC_HEADS
    if heads and generic and not (text.hard[end] or text.capital[end]):
        end += 1
    if end == size or text.words[end] in CONNECTIVES:
        return True
    if text.punct[end] == "'s":  # "X's Ligue 1 team" names a thing of X's; "X's board" is X
        return not (text.capital[end] or text.words[end][0].isdigit())
    return text.hard[end]


def _named_before(text: Words, first: int) -> bool:
    """Whether the answer names something of its own before word ``first``: two or more
    capitalised words in a row that start a clause (or follow a connective) and end at a comma,
    bracket or dash. "Aleksandr Putin, a Russian President" names a person, and the office
    only describes him. One capitalised word is not enough ("Yes, ...", "Sure, ..."), nor a
    label before a colon ("Final Answer: ...")."""
    run = 0
    for i in range(first + 1):
        if i and text.hard[i]:
            if run >= 2 and text.punct[i] not in (":", "'s"):
                return True
            run = 0
        if i == first:
            break
        opens = i == 0 or text.hard[i] or text.words[i - 1] in CONNECTIVES or run > 0
        named = text.capital[i] and text.words[i] not in CONNECTIVES
        run = run + 1 if named and opens else 0
    return False


def _inside(inner: Mention, outer: Mention) -> bool:
    return (
        outer.start <= inner.start
        and inner.end <= outer.end
        and (outer.start, outer.end) != (inner.start, inner.end)
    )


def _names(text: Words, gold: Sequence[str], others: Sequence[str]) -> bool:
    mentions = _mentions(text.words, gold, True)
    if not mentions:
        return False
    mentions += _mentions(text.words, others, False)
    # a country's team is not the country; another entity's mention is kept either way
    country = any(split_words(n).words in _COUNTRIES for n in gold)
    kept = [
        m
        for m in mentions
        if not any(_inside(m, o) for o in mentions)
        and _starts_free(text, m.start)
        and _ends_free(text, m.end, heads=not (m.gold and country))
    ]
    if not kept:
        return False
    first = min(m.start for m in kept)
    if _named_before(text, first):
        return False
    at_first = [m for m in kept if m.start == first]  # one span: shorter ones lay inside
    best_gold = max((m.share for m in at_first if m.gold), default=None)
    best_other = max((m.share for m in at_first if not m.gold), default=None)
    return best_gold is not None and (best_other is None or best_gold >= best_other)


def _f1(said: Sequence[str], name: Sequence[str]) -> tuple[float, int, float]:
    common = sum((Counter(said) & Counter(name)).values())
    if not common:
        return 0.0, 0, 0.0
    precision, recall = common / len(said), common / len(name)
    return 2 * precision * recall / (precision + recall), common, recall


def _fuzzy(line: str, said: Sequence[str], name: str) -> tuple[float, int, float]:
    from rapidfuzz import fuzz

    words = split_words(name).words
    common = len(set(said) & set(words))
    return fuzz.token_set_ratio(line.lower(), name.lower()), common, common / max(len(words), 1)


def _beats(gold: list[tuple], others: list[tuple], threshold: float) -> bool:
    """Whether the best gold score reaches ``threshold`` and no other entity's is better
    (score, then words shared, then the share of its name covered)."""
    best = max(gold)
    return best[0] >= threshold and best >= max(others, default=best)


def judge(answer: str, gold: Gold) -> dict[str, bool]:
    """Whether ``answer`` is correct for ``gold``, by each rule of :data:`RULES`."""
    line = first_line(answer)
    text = split_words(line)
    labels = [label for label in gold.labels if normalize(label)]
    if not labels or not text.words:
        return dict.fromkeys(RULES, False)
    names = list(dict.fromkeys([*labels, *(a for group in gold.aliases for a in group)]))
    names = [n for n in names if normalize(n)]
    others = [n for n in dict.fromkeys(n for group in gold.distractors for n in group)]
    others = [n for n in others if normalize(n)]
    said = " ".join(text.words)
    f1 = [_f1(text.words, split_words(n).words) for n in names]
    f1_others = [_f1(text.words, split_words(n).words) for n in others]
    fuzzy = [_fuzzy(line, text.words, n) for n in names]
    fuzzy_others = [_fuzzy(line, text.words, n) for n in others]
    return {
        "exact": said in {normalize(label) for label in labels},
        "alias": said in {normalize(n) for n in names},
        "names": _names(text, names, others),
        "token_f1": _beats(f1, f1_others, TOKEN_F1_THRESHOLD),
        "fuzzy": _beats(fuzzy, fuzzy_others, FUZZY_THRESHOLD),
    }
