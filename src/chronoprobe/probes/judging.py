"""Judging a generated answer against a row's gold answers, by five rules side by side.

Every rule reads the answer's first non-blank line (as ChroKnowledge reads its answers) and
compares it with the gold answers' names: each label and its aliases. Text is normalised the
same way for every rule: Unicode accents folded, letters that have no accent to fold spelled
as English text spells them ("Solskjær" is "solskjaer", "Łódź" "lodz"), case folded, dotted
abbreviations joined ("U.S." is "us", "F.C." is "fc"), a possessive "'s" is a boundary, other
apostrophes inside a word vanish ("O'Neill" is "oneill"), the articles a, an and the dropped
(as SQuAD's answer normalisation does: Rajpurkar et al., 2016, "SQuAD: 100,000+ Questions for
Machine Comprehension of Text", EMNLP), and the rest split into words of letters and digits.
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
      Atletico Madrid, "the France team" does not name France. After such a country one noun
      of :data:`COUNTRY_HEADS` (citizen, national, nationality, government, ...) may follow
      instead: "a UK citizen" names the United Kingdom. A possessive followed by a word names
      a thing or a person of the owner's, not the owner: "Toyota's Lexus brand" and "Toyota's
      headquarters" do not name Toyota, "Theresa May's successor" does not name Theresa May;
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
      time's holder; a capitalised word before "of" makes a longer name). Before a name with
      no title word of its own (a person's), a title may come first (:data:`TITLES`, with
      the words of :data:`TITLE_MODIFIERS` and demonyms before it): "Prime Minister Justin
      Trudeau" and "former German Chancellor Angela Merkel" name the person;
    - the answer may add middle initials inside a name: "Jerome H. Powell" names "Jerome
      Powell", unless another entity's name holds the initial ("George W. Bush" names him
      better than "George Bush");
    - a name that starts with a country of the demonym table (:data:`DEMONYMS`, a small
      table of countries and their adjectives) may be said with the adjective and without
      some of its inner words, keeping its first and last word and at least half of its
      words: "the Italian national team" names "Italy national association football team";
      a name that ends with "of" and such a country may be said as adjective + the rest:
      "the Italian Prime Minister" names "Prime Minister of Italy". A country itself may be
      said by its adjective alone: "American" and "an American citizen" name the United
      States; the adjective names no other gold answer.

    When the answer names several entities, the first one named is its answer ("Juventus,
    after Real Madrid" names Juventus). A name the rule does not know counts too when it is
    two or more capitalised words that open a clause and end at a comma, bracket or dash:
    "Olaf Scholz, the German Chancellor" names a person, not the office. The first name is
    no answer where words before it deny it (:data:`NEGATIONS`: "I don't think it is Angela
    Merkel") or name everyone but it (:data:`EXCLUSIONS`, :data:`ALL_BUT`: "Someone other
    than Angela Merkel", "Anyone but Angela Merkel"), nor where it is offered among
    candidates (:data:`ALTERNATIVES`: "Either Theresa May or Boris Johnson", "Boris Johnson
    or Theresa May"); "or" before another name of a gold answer is no such offer. What
    follows the first name does not change it ("Angela Merkel, but not in 2022").
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
# Lower-case nouns that may follow a country's name or adjective when the gold answer is that
# country: "a British citizen", "a UK national", "the French government" name the country.
COUNTRY_HEADS = frozenset(
    "citizen citizens citizenship national nationals nationality passport government".split()
)
# Titles that may stand before a person's name without making another name: "Prime Minister
# Justin Trudeau" and "Chancellor Angela Merkel" name the person. Only before a name with no
# title word of its own, so that "Vice President of the United States" stays another office
# than "President of the United States".
TITLES = frozenset(
    "mr mrs ms miss mx dr sir dame lord lady prof professor president chancellor minister "
    "premier taoiseach king queen prince princess emperor empress tsar sultan emir sheikh pope "
    "senator governor mayor general admiral commander judge justice secretary ambassador "
    "commissioner chairman chairwoman chairperson chair ceo director coach manager boss".split()
)
# Words that may stand before such a title, as part of it: "former Prime Minister", "German
# Chancellor", "head coach", "Vice President"
TITLE_MODIFIERS = frozenset(
    "prime vice deputy acting interim former ex late then head chief us uk".split()
)
# Words before the answer's first name that deny it or leave it open: "I don't think it is
# Angela Merkel", "Neither Theresa May nor ...". Contractions have lost their apostrophe.
NEGATIONS = frozenset(
    "not no never neither nor none nobody nothing cannot dont doesnt didnt isnt arent wasnt "
    "werent cant couldnt wont wouldnt shouldnt hasnt havent hadnt aint".split()
)
# Words right before a name (past "of" or "from") that name everyone but it: "Someone other
# than Angela Merkel", "instead of", "apart from"; and the pronouns before "but" that do the
# same: "Anyone but Angela Merkel", "all but"
EXCLUSIONS = frozenset("than except excluding besides unlike without instead apart aside".split())
ALL_BUT = frozenset("anyone anybody anything everyone everybody everything all".split())
# Words that offer the name as one of several candidates: "Either Theresa May or Boris
# Johnson", "Boris Johnson or Theresa May"
ALTERNATIVES = frozenset("either whether or".split())
# Before a name these affirm it, with words that deny elsewhere: "none other than Angela Merkel"
AFFIRMATIONS = (("none", "other", "than"), ("no", "other", "than"))
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
    "cuba": ("cuban",),
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
    "indonesia": ("indonesian",),
    "iran": ("iranian",),
    "iraq": ("iraqi",),
    "ireland": ("irish",),
    "israel": ("israeli",),
    "italy": ("italian",),
    "ivory coast": ("ivorian",),
    "japan": ("japanese",),
    "mexico": ("mexican",),
    "morocco": ("moroccan",),
    "netherlands": ("dutch",),
    "nigeria": ("nigerian",),
    "north korea": ("north korean",),
    "northern ireland": ("northern irish",),
    "norway": ("norwegian",),
    "pakistan": ("pakistani",),
    "paraguay": ("paraguayan",),
    "peru": ("peruvian",),
    "poland": ("polish",),
    "portugal": ("portuguese",),
    "romania": ("romanian",),
    "russia": ("russian",),
    "saudi arabia": ("saudi", "saudi arabian"),
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
    "taiwan": ("taiwanese",),
    "tunisia": ("tunisian",),
    "turkey": ("turkish",),
    "ukraine": ("ukrainian",),
    "united kingdom": ("british",),
    "united states": ("american",),
    "united states of america": ("american",),
    "uruguay": ("uruguayan",),
    "venezuela": ("venezuelan",),
    "vietnam": ("vietnamese",),
    "wales": ("welsh",),
}
_COUNTRIES = {
    tuple(country.split()): tuple(tuple(adjective.split()) for adjective in adjectives)
    for country, adjectives in DEMONYMS.items()
}
_LONGEST_COUNTRY = max(len(c) for c in _COUNTRIES)
_ADJECTIVES = {a[0] for adjectives in _COUNTRIES.values() for a in adjectives if len(a) == 1}
_TITLE_WORDS = TITLES | TITLE_MODIFIERS | _ADJECTIVES  # "German Chancellor Angela Merkel"
# Letters that Unicode does not decompose into a base letter and an accent, as they are
# spelled in English text: "Solskjær" is "Solskjaer", "Łódź" is "Lodz", "Straße" "Strasse"
_LETTERS = str.maketrans(
    {"æ": "ae", "Æ": "Ae", "œ": "oe", "Œ": "Oe", "ø": "o", "Ø": "O", "ł": "l", "Ł": "L",
     "đ": "d", "Đ": "D", "ð": "d", "Ð": "D", "þ": "th", "Þ": "Th", "ß": "ss", "\u0131": "i",
     "ħ": "h", "Ħ": "H"}
)  # fmt: skip

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
    decomposed = unicodedata.normalize("NFKD", text.translate(_LETTERS))
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
    forms += [Form(adjective) for adjective in _COUNTRIES.get(words, ())]  # "American"
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
    share: float  # of the name's words said, or of the words said that are the name's
    gold: bool
    titled: bool  # whether a title may stand before it: its name holds no title word


def _initial(text: Words, i: int) -> bool:
    """Whether word ``i`` is a middle initial: one capital letter ("H" of "Jerome H. Powell")."""
    return len(text.words[i]) == 1 and text.capital[i] and text.words[i].isalpha()


def _said_whole(text: Words, start: int, words: tuple[str, ...]) -> int | None:
    """Where ``words`` said in a row from word ``start`` end, past middle initials the answer
    adds between them ("Jerome H. Powell" says "Jerome Powell"); None where they are not."""
    at = start
    for k, word in enumerate(words):
        while k and at < len(text.words) and text.words[at] != word and _initial(text, at):
            at += 1
        if at == len(text.words) or text.words[at] != word:
            return None
        at += 1
    return at


def _spans(text: Words, form: Form) -> Iterator[tuple[int, int, float]]:
    """Where ``form`` is said: its words in a row (past middle initials, whose words count
    against its share), or (with a lead) its lead, then some of its words in order up to its
    last, covering at least :data:`PARAPHRASE_SHARE`."""
    said = text.words
    size = len(form.words)
    for start in range(len(said)):
        if not form.lead:
            end = _said_whole(text, start, form.words)
            if end is not None:
                yield start, end, size / (end - start)
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


def _mentions(text: Words, names: Iterable[str], gold: bool) -> list[Mention]:
    return [
        Mention(start, end, share, gold, not _TITLE_WORDS.intersection(form.words))
        for name in names
        for form in name_forms(name)
        for start, end, share in _spans(text, form)
    ]


def _premodifier(text: Words, i: int) -> bool:
    """Whether word ``i`` may stand before a name without making a longer one: a number (a
    year), an ordinal, or a lower-case word of :data:`ORDINAL_WORDS` or :data:`QUALIFIERS`
    (capitalised, it may begin a longer name: "First Secretary", "Present Day")."""
    word = text.words[i]
    if word.isdigit() or _ORDINAL.fullmatch(word):
        return True
    return not text.capital[i] and (word in ORDINAL_WORDS or word in QUALIFIERS)


def _lead_start(text: Words, start: int, titled: bool) -> int:
    """Where what belongs to a mention starting at word ``start`` begins: past a title before
    it (``titled``: see :data:`TITLES`), then past years, ordinals and qualifiers."""
    if titled and start > 0 and not text.hard[start] and text.words[start - 1] in TITLES:
        while start > 0 and not text.hard[start] and text.words[start - 1] in _TITLE_WORDS:
            start -= 1
    while start > 0 and not text.hard[start] and _premodifier(text, start - 1):
        start -= 1
    return start


def _starts_free(text: Words, start: int) -> bool:
    """Whether a mention whose words (title and premodifiers included) start at word
    ``start`` begins a name of its own."""
    if start == 0 or text.hard[start]:
        return True
    before = start - 1
    if text.words[before] in CONNECTIVES:
        return True
    if text.words[before] == "of":
        return before == 0 or text.hard[before] or not text.capital[before - 1]
    return False


def _name_end(text: Words, end: int, heads: frozenset[str]) -> int:
    """Where a mention ending before word ``end`` ends with a legal form or club abbreviation
    (:data:`NAME_SUFFIXES`) and a lower-case noun of ``heads`` after it."""
    size = len(text.words)
    while end < size and not text.hard[end] and text.words[end] in NAME_SUFFIXES:
        end += 1
    head = end < size and text.words[end] in heads
    return end + 1 if head and not (text.hard[end] or text.capital[end]) else end


def _ends_free(text: Words, end: int, heads: frozenset[str]) -> bool:
    """Whether a mention ending before word ``end`` ends a name of its own; ``heads``: the
    nouns that may follow it (:data:`GENERIC_HEADS`, :data:`COUNTRY_HEADS`)."""
    end = _name_end(text, end, heads)
    if end == len(text.words):
        return True
    if text.punct[end] == "'s":  # "X's successor" is someone else, "X's Ligue 1 team" X's team
        return False
    return text.words[end] in CONNECTIVES or text.hard[end]


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


def _denied(text: Words, lead: int) -> bool:
    """Whether the words before the answer's first name (its title and premodifiers start at
    word ``lead``) deny it (:data:`NEGATIONS`) or name everyone but it (:data:`EXCLUSIONS`,
    :data:`ALL_BUT`); words that affirm it (:data:`AFFIRMATIONS`) do neither."""
    before = text.words[:lead]
    if before[-3:] in AFFIRMATIONS:
        before = before[:-3]
    if NEGATIONS.intersection(before):
        return True
    if before[-1:] in (("of",), ("from",)):
        before = before[:-1]
    if before[-1:] == ("but",):
        return len(before) > 1 and before[-2] in ALL_BUT
    return bool(before) and before[-1] in EXCLUSIONS


def _hedged(text: Words, lead: int, end: int, gold_starts: set[int]) -> bool:
    """Whether the answer offers its first name (from word ``lead`` to before word ``end``) as
    one of several candidates: "either", "whether" or "or" before it, or "or" after it and
    before anything but another gold name."""
    if ALTERNATIVES.intersection(text.words[:lead]):
        return True
    return end < len(text.words) and text.words[end] == "or" and end + 1 not in gold_starts


def _names(text: Words, gold: Sequence[str], others: Sequence[str]) -> bool:
    mentions = _mentions(text, gold, True)
    if not mentions:
        return False
    mentions += _mentions(text, others, False)
    # a country's team is not the country, its citizen or government is; another entity's
    # mention may end either way
    country = any(split_words(n).words in _COUNTRIES for n in gold)
    heads = {True: COUNTRY_HEADS if country else GENERIC_HEADS}
    heads[False] = GENERIC_HEADS | COUNTRY_HEADS
    kept = [
        m
        for m in mentions
        if not any(_inside(m, o) for o in mentions)
        and _starts_free(text, _lead_start(text, m.start, m.titled))
        and _ends_free(text, m.end, heads[m.gold])
    ]
    if not kept:
        return False
    first = min(m.start for m in kept)
    # one span at the first start (shorter ones lay inside); a tie goes to the gold answer
    answer = max((m for m in kept if m.start == first), key=lambda m: (m.share, m.gold))
    lead = _lead_start(text, first, answer.titled)
    gold_starts = {_lead_start(text, m.start, m.titled) for m in kept if m.gold}
    return (
        answer.gold
        and not _named_before(text, first)
        and not _denied(text, lead)
        and not _hedged(text, lead, _name_end(text, answer.end, heads[True]), gold_starts)
    )


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
