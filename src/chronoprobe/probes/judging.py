"""Judging a generated answer against a row's gold answers, by five rules side by side.

Every rule reads the answer's first non-blank line (as ChroKnowledge reads its answers) and
compares it with the gold answers' names: each label and its aliases, normalised alike for
every rule (:mod:`chronoprobe.probes.names`: accents, case, abbreviations, articles).

The rules, strictest first:

``exact``
    The normalised answer is a gold label.
``alias``
    The normalised answer is a gold label or alias.
``names``
    The answer *names* a gold answer, as a person reads names: a gold name occurs in it as
    whole words, in one of the forms a name is said in (:func:`~chronoprobe.probes.names.
    name_forms`: as written; without a legal form, club abbreviation or type word; reordered
    ("Cambridge University"); by its initials ("LSE", "VP of the US"); a party by its
    members' name ("the Democrats"); a person by some of their given names and their family
    name, with given names or initials added, in the other order, or, where the question
    asks for a person (:data:`PERSON_RELATIONS`), with family names added after it
    ("Mauricio Roberto Pochettino Trossero"), and, there or where a title comes first, by the
    family name alone); a word or a space more or less inside a name (a hyphen: "Chan-o-cha",
    "Co-operation") does not matter. And

    - it ends at the end of the answer, at a boundary, or before a connective word (and, or,
      who, which, since, until, in, from, as, ...: :data:`CONNECTIVES`), after at most a legal
      form, a club abbreviation or a type word (Inc, F.C., Football Club, University, Party,
      ...: :data:`~chronoprobe.probes.names.TYPE_SUFFIXES`): "Juventus, since 2001" names
      Juventus, "Inter Miami" does not name Inter, "Democratic Party of Japan" does not name
      the Democratic Party, "President of the United States Senate" does not name the
      President of the United States. One lower-case generic noun (:data:`GENERIC_HEADS`:
      team, club, side, party, company, ...) may follow the name, unless a gold name is a
      country of the demonym table: "the Atletico Madrid team" names Atletico Madrid, "the
      France team" does not name France. After such a country one noun of
      :data:`COUNTRY_HEADS` (citizen, national, nationality, government, ...) may follow
      instead: "a UK citizen" names the United Kingdom. A possessive followed by a word names
      a thing or a person of the owner's, not the owner: "Toyota's Lexus brand" and "Toyota's
      headquarters" do not name Toyota, "Theresa May's successor" does not name Theresa May;
    - a party may be said with its country ("the Democratic Party of the United States",
      "the French Socialist Party") where the KG's name for it holds no country, unless that
      tells it from nothing: the gold's own names name another country ("Liberal Party
      (UK)" is no "Liberal Party of Canada"), or the KG knows another entity of the same
      name and none of the gold's names says this country (which of the KG's four
      "Democratic Party" entities the country picks is not known); a longer name of another
      entity the KG knows is never the gold ("Liberal Party of Canada" when the KG knows it);
    - it starts the answer, follows a boundary or a connective, or follows "of" that follows
      a lower-case word ("a member of the Democratic Party"); articles, numbers (years),
      ordinals and a few lower-case words saying the holder holds it at the time
      (:data:`ORDINAL_WORDS`, :data:`QUALIFIERS`) may come first: "the 2022 US President",
      "the 21st US President" and "the current US President" name "US President", while
      "Vice President of the United States", "the acting US President" and "the former US
      President" do not name the President of the United States (another office, another
      time's holder; a capitalised word before "of" makes a longer name). Before a name with
      no title word of its own (a person's), a title, rank or honorific may come first
      (:data:`~chronoprobe.probes.names.TITLES`, with the words of
      :data:`~chronoprobe.probes.names.TITLE_MODIFIERS` and demonyms before it): "Prime
      Minister Justin Trudeau", "General Prayut Chan-o-cha" and "former German Chancellor
      Angela Merkel" name the person;
    - a period the answer gives for the name must overlap the period asked: a year before it
      ("the 2014 Prime Minister of Canada"), or right after it ("Mayor of London (2008-2012)",
      "Chelsea, until 2012", "Juventus since 2018", "in 2008"), or opening the answer ("As of
      2019, Chelsea"); "Conte, Italy's 2018 prime minister" gives no period for Conte;
    - another entity's name or reading that the answer says as well covers the gold one:
      a gold mention inside a longer mention of another entity does not count ("Democratic
      Party (Japan)" when the KG knows that party), a mention of both at once goes to the
      one whose name it covers more of, then to a written name over a reading ("George Bush"
      is George H. W. Bush's alias before it is a reading of George W. Bush), and two
      readings alike name neither ("Le Pen" for Marine Le Pen when the KG knows Jean-Marie
      Le Pen); two written names alike go to the gold answer (the KG's homonyms).

    When the answer names several entities, the first one named is its answer ("Juventus,
    after Real Madrid" names Juventus). A name the rule does not know counts too when it is
    two or more capitalised words that open a clause and end at a comma, bracket or dash:
    "Olaf Scholz, the German Chancellor" names a person, not the office; words of the
    question are no such name ("Eden Hazard, the Belgian, plays for Chelsea"). The first name
    is no answer where words before it in its clause deny it (:data:`NEGATIONS`: "I don't
    think it is Angela Merkel"; "I'm not sure, but I think it is Angela Merkel" does not) or
    name everyone but it (:data:`EXCLUSIONS`, :data:`ALL_BUT`: "Someone
    other than Angela Merkel", "Anyone but Angela Merkel"), nor where it is offered among
    candidates (:data:`ALTERNATIVES`: "Either Theresa May or Boris Johnson", "Boris Johnson
    or Theresa May"); "or" before another name of a gold answer is no such offer ("Either
    Antonio Conte or Bortolo Mutti" where both coached the team that year). What
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
(:attr:`Gold.distractors`: the entities of the row's KG named like the answer or like a gold
answer, never the file's other rows, so a verdict depends on the row, its KG and the answer
alone). For ``token_f1`` and ``fuzzy``, the best other entity beats the best gold name by its
score, then by the number of words shared, then by the share of its name the answer covers
("Manchester" shares all of the city's name but a third of Manchester United F.C.'s). Ties go
to the gold answer. An answer equal to a gold name is never beaten, so ``alias`` needs no
other entity. ``token_f1`` and ``fuzzy`` are left as the literature defines them otherwise:
they read no name forms and no periods.

A row with no gold answer (a deleted row: its answers ended in an earlier period) is judged
against nothing current, and no answer to it is correct on any rule.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

from chronoprobe.probes.names import (
    _ADJECTIVES,
    _COUNTRIES,
    _TITLE_WORDS,
    COUNTRY_NAMES,
    GENERATIONAL,
    NAME_SUFFIXES,
    PARTICLES,
    TITLES,
    TYPE_SUFFIXES,
    WRITTEN,
    Form,
    Words,
    family_start,
    first_line,
    name_forms,
    normalize,
    split_words,
)
from chronoprobe.time import Period

RULES: tuple[str, ...] = ("exact", "alias", "names", "token_f1", "fuzzy")
DEFAULT_RULE = "names"  # the rule that sorts rows into Correct / Partial / Incorrect
TOKEN_F1_THRESHOLD = 0.5
FUZZY_THRESHOLD = 70.0
PARAPHRASE_SHARE = 0.5  # the least share of a name's words a demonym paraphrase keeps
LONGEST_SPAN = 12  # the most words of the answer one name is looked for in
MOST_ADDED = 3  # given names or initials an answer may add to a person's name
MOST_FAMILY = 2  # family names an answer may add after a person's name

# Wikidata properties whose values are people: a family name alone names a gold answer of
# these (head of government or state, head coach, chairperson, spouse, parents, children,
# founder, CEO, director, author...)
PERSON_RELATIONS = frozenset(
    "P6 P35 P286 P488 P26 P22 P25 P40 P3373 P451 P50 P57 P58 P86 P112 P169 P170 P175 P184 "
    "P185 P1037 P1066 P1308 P802 P737".split()
)
CONNECTIVES = frozenset(
    "and or but nor as at by for from in into on onto to with within under over since until "
    "till during after before when while where whereas who whom whose which that than then "
    "is was are were be been being has have had became become becomes also now still via "
    "plus either neither whether".split()
)
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
# Punctuation that ends a sentence, and with it the reach of a negation before a name
SENTENCE_ENDS = frozenset(".;!?")
# Words that give a period for the name right after it: "(since 2021)", "until 2012", "in 2008"
SINCE = frozenset("since from".split())
UNTIL = frozenset("until till to through".split())
AT = frozenset("in during".split())
MONTHS = frozenset(
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec".split()
)
_YEAR = re.compile(r"1\d{3}|20\d{2}")
_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th)")
_OTHER_NAMES = frozenset(name for names in COUNTRY_NAMES.values() for name in names)
_TYPE_WORDS = frozenset(w for phrase in TYPE_SUFFIXES for w in phrase)
# Capitalised words that are no given name an answer adds before a person's
_NO_GIVEN = _TITLE_WORDS | GENERIC_HEADS | _TYPE_WORDS | CONNECTIVES | NEGATIONS | QUALIFIERS


@dataclass(frozen=True)
class Gold:
    """What an answer is judged against: the gold labels (none for a deleted row), each
    label's other names, the names (label first, then aliases) of other entities the answer
    may name instead, the question (the gap as ___), the period asked and the relation
    (a Wikidata property id, when known)."""

    labels: Sequence[str]
    aliases: Sequence[Sequence[str]] = ()
    distractors: Sequence[Sequence[str]] = ()
    question: str | None = None
    period: str | None = None
    relation: str | None = None


class Mention(NamedTuple):
    start: int
    end: int
    share: float  # of the name's words said, or of the words said that are the name's
    gold: bool
    titled: bool  # whether a title may stand before it: its name holds no title word
    strength: int  # WRITTEN or READ (see names.Form)
    surname: bool  # a person's family name alone


class Said:
    """An answer's words, and where each run of them (its words joined, without spaces) is."""

    def __init__(self, text: Words) -> None:
        self.text = text
        self.runs: dict[str, list[tuple[int, int]]] = {}
        words = text.words
        for i in range(len(words)):
            joined = ""
            for j in range(i, min(len(words), i + LONGEST_SPAN)):
                joined += words[j]
                self.runs.setdefault(joined, []).append((i, j + 1))

    @cached_property
    def initials(self) -> dict[str, list[tuple[int, int]]]:
        """Where capitalised words in a row spell each string of initials."""
        out: dict[str, list[tuple[int, int]]] = {}
        text = self.text
        for i in range(len(text.words)):
            letters = ""
            for j in range(i, min(len(text.words), i + 6)):
                if not text.capital[j] or (j > i and text.hard[j]):
                    break
                letters += text.words[j][0]
                out.setdefault(letters, []).append((i, j + 1))
        return out


def _written_as(text: Words, start: int, end: int, form: Form) -> bool:
    """Whether answer words ``start..end`` are ``form``'s words one for one, its initials
    written in capitals."""
    return end - start == len(form.words) and all(
        text.caps[start + k] >= min(2, len(form.words[k])) for k in form.initials
    )


def _spans(said: Said, form: Form) -> Iterator[tuple[int, int, float]]:
    """Where ``form`` is said: its words in a row (a space or a hyphen more or less inside
    them, initials it made written in capitals); a person's with given names or initials
    added; with a word it writes as initials spelled out; or (with a lead) its lead, then
    some of its words in order up to its last, covering at least :data:`PARAPHRASE_SHARE`."""
    text = said.text
    if form.lead:
        yield from _paraphrased(text, form)
        return
    for start, end in said.runs.get("".join(form.words), ()):
        if form.initials and not _written_as(text, start, end, form):
            continue
        yield start, end, 1.0
    if form.person:
        yield from _with_given_names(said, form)
    if form.spelled:
        yield from _spelled_out(said, form)


def _paraphrased(text: Words, form: Form) -> Iterator[tuple[int, int, float]]:
    said, size = text.words, len(form.words)
    for start in range(len(said)):
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


def _added(text: Words, i: int) -> bool:
    """Whether answer word ``i`` may be a given name or initial added to a person's name: a
    capitalised word (or a family name's particle) that is no title, type or common word."""
    word = text.words[i]
    if word in PARTICLES:
        return True
    return text.capital[i] and word.isalpha() and word not in _NO_GIVEN


def _initial_before(text: Words, i: int) -> bool:
    """Whether word ``i`` follows a letter and its full stop ("H. Powell"): one name."""
    return text.punct[i] == "." and len(text.words[i - 1]) == 1


def _joined(text: Words, i: int) -> bool:
    """Whether answer words ``i`` and ``i + 1`` are said as one name: no boundary between
    them but an initial's full stop ("Jerome H. Powell")."""
    if not text.hard[i + 1]:
        return True
    return text.punct[i + 1] == "." and len(text.words[i]) == 1 and text.capital[i]


def _with_given_names(said: Said, form: Form) -> Iterator[tuple[int, int, float]]:
    """A person's name with up to :data:`MOST_ADDED` given names or initials added before
    its family name ("Angela Dorothea Merkel", "James Gordon Brown", "Jerome H. Powell"), or
    with one of its given names said by its initial ("William H. Gates III"), not both; the
    added words count against its share."""
    text, words = said.text, form.words
    given = words[:-1]
    for end in (e for s, e in said.runs.get(words[-1], ()) if e - s == 1):
        at, k, added, initials = end - 2, len(given) - 1, 0, 0
        while at >= 0 and _joined(text, at) and (k >= 0 or added < MOST_ADDED):
            word = text.words[at]
            if k >= 0 and word == given[k]:
                k -= 1
            elif k >= 0 and len(word) == 1 and text.capital[at] and word == given[k][0]:
                k, initials = k - 1, initials + 1
            elif _added(text, at) and added < MOST_ADDED:
                added += 1
            else:
                break
            at -= 1
        start = at + 1
        # a given name by its initial only where the others are said in full and none added
        # ("William H. Gates III"; "Lyndon B. Johnson" is no Boris Johnson)
        if initials and (added or initials == family_start(words)):
            continue
        if k < 0 and (added or initials):
            while start < end - len(words) and text.words[start] in PARTICLES:
                start += 1  # a particle opens no name
            yield start, end, len(words) / (end - start + initials)


def _with_family_names(
    text: Words, start: int, end: int, share: float
) -> tuple[int, int, float] | None:
    """A person's name said from word ``start`` to before word ``end`` with up to
    :data:`MOST_FAMILY` more family names after it, and their particles ("Mauricio Roberto
    Pochettino Trossero", "Xavier Trias i Vidal de Llobatera"); None where none follows. A
    generation (Jr, III) or a word in capitals is no family name. Only where the question
    asks for a person (:data:`PERSON_RELATIONS`): "Real Madrid Castilla" is no Real Madrid."""
    at, added, last = end, 0, end
    while at < len(text.words) and not text.hard[at]:
        word = text.words[at]
        if word in PARTICLES:
            at += 1
            continue
        acronym_like = text.caps[at] == len(word) > 1
        if added == MOST_FAMILY or word in GENERATIONAL or acronym_like or not _added(text, at):
            break
        at, added, last = at + 1, added + 1, at + 1
    if last == end:
        return None
    return start, last, share * (end - start) / (last - start)


def _spelled_out(said: Said, form: Form) -> Iterator[tuple[int, int, float]]:
    """The name with a word it writes as initials spelled out ("Los Angeles Galaxy")."""
    text, words = said.text, form.words
    first = words[0]
    starts = said.initials.get(first, []) if 0 in form.spelled else said.runs.get(first, [])
    for start, at in starts:
        if 0 not in form.spelled and at - start != 1:
            continue
        for k in range(1, len(words)):
            if k in form.spelled:
                found = [e for s, e in said.initials.get(words[k], ()) if s == at]
                at = found[-1] if found else -1
            elif at < len(text.words) and text.words[at] == words[k]:
                at += 1
            else:
                at = -1
            if at < 0:
                break
        if at > 0:
            yield start, at, len(words) / (at - start)


def _mentions(said: Said, names: Sequence[str], gold: bool, persons: bool) -> list[Mention]:
    """Where each name of ``names`` is said, in each of its forms; where the answer is known to
    be a person (``persons``), a person's name with family names added too."""
    out = []
    for name in names:
        for form in name_forms(name):
            spans = list(_spans(said, form))
            if persons and form.person:
                spans += [
                    longer for span in spans if (longer := _with_family_names(said.text, *span))
                ]
            titled = not _TITLE_WORDS.intersection(form.words)
            out += [
                Mention(start, end, share, gold, titled, form.strength, form.surname)
                for start, end, share in spans
            ]
    return out


def _premodifier(text: Words, i: int) -> bool:
    """Whether word ``i`` may stand before a name without making a longer one: a number (a
    year), an ordinal, or a lower-case word of :data:`ORDINAL_WORDS` or :data:`QUALIFIERS`
    (capitalised, it may begin a longer name: "First Secretary", "Present Day")."""
    word = text.words[i]
    if word.isdigit() or _ORDINAL.fullmatch(word):
        return True
    return not text.capital[i] and (word in ORDINAL_WORDS or word in QUALIFIERS)


def _titled_start(text: Words, start: int) -> int:
    """Where a title before word ``start`` begins ("former German Chancellor"), or ``start``."""
    if start > 0 and not text.hard[start] and text.words[start - 1] in TITLES:
        while start > 0 and not text.hard[start] and text.words[start - 1] in _TITLE_WORDS:
            start -= 1
    return start


def _lead_start(text: Words, start: int, titled: bool) -> int:
    """Where what belongs to a mention starting at word ``start`` begins: past a title before
    it (``titled``: see :data:`~chronoprobe.probes.names.TITLES`), then past years, ordinals
    and qualifiers."""
    if titled:
        start = _titled_start(text, start)
    while start > 0 and not text.hard[start] and _premodifier(text, start - 1):
        start -= 1
    return start


def _starts_free(text: Words, start: int) -> bool:
    """Whether a mention whose words (title and premodifiers included) start at word
    ``start`` begins a name of its own."""
    if start == 0 or (text.hard[start] and not _initial_before(text, start)):
        return True
    before = start - 1
    if text.words[before] in CONNECTIVES:
        return True
    if text.words[before] == "of":
        return before == 0 or text.hard[before] or not text.capital[before - 1]
    return False


def _name_end(text: Words, end: int, heads: frozenset[str]) -> int:
    """Where a mention ending before word ``end`` ends with a legal form, a club abbreviation
    or a type word after it (:data:`~chronoprobe.probes.names.TYPE_SUFFIXES`), and a
    lower-case noun of ``heads`` after that."""
    size = len(text.words)
    suffixes = NAME_SUFFIXES if heads is COUNTRY_HEADS else _TYPE_WORDS
    while end < size and not text.hard[end] and text.words[end] in suffixes:
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


def _named_before(text: Words, first: int, question: frozenset[str]) -> bool:
    """Whether the answer names something of its own before word ``first``: two or more
    capitalised words in a row, not all of the question, that start a clause (or follow a
    connective) and end at a comma, bracket or dash. "Aleksandr Putin, a Russian President"
    names a person, and the office only describes him. One capitalised word is not enough
    ("Yes, ...", "Sure, ..."), nor a label before a colon ("Final Answer: ...")."""
    run: list[str] = []
    for i in range(first + 1):
        if i and text.hard[i]:
            if len(run) >= 2 and text.punct[i] not in (":", "'s") and not question >= set(run):
                return True
            run = []
        if i == first:
            break
        opens = i == 0 or text.hard[i] or text.words[i - 1] in CONNECTIVES or run
        named = text.capital[i] and text.words[i] not in CONNECTIVES
        run = [*run, text.words[i]] if named and opens else []
    return False


def _inside(inner: Mention, outer: Mention) -> bool:
    return (
        outer.start <= inner.start
        and inner.end <= outer.end
        and (outer.start, outer.end) != (inner.start, inner.end)
    )


def _clause_start(text: Words, at: int) -> int:
    """Where the clause holding word ``at`` begins: after the last "but" or end of a sentence
    (:data:`SENTENCE_ENDS`) before it."""
    start = 0
    for i in range(1, at + 1):
        if SENTENCE_ENDS.intersection(text.punct[i]) or text.words[i - 1] == "but":
            start = i
    return start


def _denied(text: Words, lead: int) -> bool:
    """Whether the words before the answer's first name (its title and premodifiers start at
    word ``lead``) deny it (:data:`NEGATIONS`, in its own clause: "I'm not sure, but I think
    it is Angela Merkel" does not deny her) or name everyone but it (:data:`EXCLUSIONS`,
    :data:`ALL_BUT`); words that affirm it (:data:`AFFIRMATIONS`) do neither."""
    before = text.words[:lead]
    if before[-3:] in AFFIRMATIONS:
        before = before[:-3]
    if NEGATIONS.intersection(before[_clause_start(text, lead) :]):
        return True
    if before[-1:] in (("of",), ("from",)):
        before = before[:-1]
    if before[-1:] == ("but",):
        return len(before) > 1 and before[-2] in ALL_BUT
    return bool(before) and before[-1] in EXCLUSIONS


def _hedged(text: Words, lead: int, end: int, gold_starts: set[int]) -> bool:
    """Whether the answer offers its first name (from word ``lead`` to before word ``end``) as
    one of several candidates: "or" after it and before anything but another gold name, or
    else "either", "whether" or "or" before it ("Either Antonio Conte or Bortolo Mutti", both
    gold answers, offers no wrong candidate)."""
    if end < len(text.words) and text.words[end] == "or":
        return end + 1 not in gold_starts
    return bool(ALTERNATIVES.intersection(text.words[:lead]))


def _country_at(words: Sequence[str], start: int) -> int | None:
    """Where a country's name, another name of it or its adjective said from word ``start``
    ends."""
    for size in range(min(4, len(words) - start), 0, -1):
        part = tuple(words[start : start + size])
        known = part in _COUNTRIES or part in COUNTRY_NAMES or part in _OTHER_NAMES
        if known or (size == 1 and part[0] in _ADJECTIVES):
            return start + size
    return None


def _country_of(words: Sequence[str]) -> str | None:
    """The country a name's words hold (its name, another name or its adjective), as one key."""
    for start in range(len(words)):
        end = _country_at(words, start)
        if end is not None:
            return _canonical(tuple(words[start:end]))
    return None


def _canonical(part: tuple[str, ...]) -> tuple[str, ...]:
    """A country's name (of the demonym table) for its name, adjective or other name."""
    for country, adjectives in _COUNTRIES.items():
        if part == country or part in adjectives:
            return country
    for country, others in COUNTRY_NAMES.items():
        if part == country or part in others:
            return next((c for c in (country, *others) if c in _COUNTRIES), country)
    return part


def _qualified(text: Words, mention: Mention, gold: Gold, names: Sequence[str]) -> Mention:
    """A gold party's mention with the country the answer says it with ("the Democratic Party
    of the United States", "the French Socialist Party"), where that may be the gold party
    (see ``names`` in the module docstring); the mention as it is otherwise."""
    start, end = mention.start, mention.end
    said = text.words[start:end]
    if not said or said[-1] != "party" or _country_of(said):
        return mention
    country = None
    if end + 1 < len(text.words) and text.words[end] == "of" and not text.hard[end]:
        after = _country_at(text.words, end + 1)
        if after is not None and not text.hard[end + 1]:
            country, end = _canonical(tuple(text.words[end + 1 : after])), after
    before = start - 1  # "the French Socialist Party"
    preceded = before >= 0 and not text.hard[start] and _country_at(text.words, before) == start
    if country is None and preceded:
        country, start = _canonical((text.words[before],)), before
    if country is None:
        return mention
    known = {c for n in names if (c := _country_of(split_words(n).words))}
    homonym = any(normalize(n) == " ".join(said) for group in gold.distractors for n in group)
    if known - {country} or (homonym and country not in known):
        return mention
    return mention._replace(start=start, end=end)


def _period_years(period: str | None) -> tuple[int, int] | None:
    if not period:
        return None
    try:
        year = Period.parse(period).year
    except ValueError:
        return None
    return year, year


def _year(word: str) -> int | None:
    return int(word) if _YEAR.fullmatch(word) else None


def _stated_period(text: Words, lead: int, start: int, end: int) -> tuple[int, int] | None:
    """The years the answer gives for the name from word ``start`` to before word ``end``
    (its title and premodifiers start at ``lead``): a year before it, a time right after it,
    or a time opening the answer (see ``names`` in the module docstring); None if none."""
    words = text.words
    for i in range(lead, start):
        year = _year(words[i])
        if year is not None:
            return year, year
    after = _time_at(text, end)
    if after is not None:
        return after
    if lead > 0 and words[0] in AT | {"as", "by"}:
        opening = _time_at(text, 0, leading=True)
        if opening is not None:
            return opening
    return None


def _time_at(text: Words, at: int, leading: bool = False) -> tuple[int, int] | None:
    """The period said from word ``at``: "(2008-2012)", "since 2015", "until January 2001",
    "in 2008", "(2019)"; at the answer's start ("As of 2019, ..."), the point it opens with."""
    words, n = text.words, len(text.words)
    if at >= n:
        return None
    bracket = text.punct[at][-1:] == "(" if at else False
    word = words[at]
    low, high = -(10**4), 10**4
    if word == "as" and at + 1 < n and words[at + 1] == "of":
        kind, at = "at", at + 2
    elif word in SINCE or word in UNTIL or word in AT or (leading and word == "by"):
        kind, at = ("since" if word in SINCE else "until" if word in UNTIL else "at"), at + 1
    elif bracket or not leading:
        kind = "at" if bracket else None
    else:
        return None
    if kind is None:
        return None
    while at < n and (words[at] in MONTHS or (words[at].isdigit() and len(words[at]) <= 2)):
        at += 1
    first = _year(words[at]) if at < n else None
    if first is None:
        return None
    second = _year(words[at + 1]) if at + 1 < n and not text.hard[at + 1] else None
    if second is None and at + 2 < n and words[at + 1] in UNTIL | {"and"}:
        second = _year(words[at + 2])
    if kind == "since":
        return first, second if second is not None else high
    if kind == "until":
        return low, first
    return first, second if second is not None else first


def _names(text: Words, gold: Gold, names: Sequence[str], others: Sequence[str]) -> bool:
    said = Said(text)
    persons = gold.relation in PERSON_RELATIONS
    mentions = _mentions(said, names, True, persons)
    if not mentions:
        return False
    mentions += _mentions(said, others, False, persons)
    question = frozenset(split_words(gold.question).words) if gold.question else frozenset()
    # a country's team is not the country, its citizen or government is; another entity's
    # mention may end either way
    country = any(split_words(n).words in _COUNTRIES for n in names)
    heads = {True: COUNTRY_HEADS if country else GENERIC_HEADS}
    heads[False] = GENERIC_HEADS | COUNTRY_HEADS
    theirs = {(m.start, m.end) for m in mentions if not m.gold}
    placed = []
    for m in mentions:
        if m.gold and m.strength == WRITTEN:
            qualified = _qualified(text, m, gold, names)
            if (qualified.start, qualified.end) not in theirs:  # another entity's longer name
                m = qualified
        placed.append(m)
    kept = [
        m
        for m in placed
        if not any(_inside(m, o) for o in placed)
        and _starts_free(text, _lead_start(text, m.start, m.titled))
        and _ends_free(text, m.end, heads[m.gold])
        and (not m.surname or persons or _titled_start(text, m.start) < m.start)
    ]
    if not kept:
        return False
    first = min(m.start for m in kept)
    # one span at the first start (shorter ones lay inside); the best share, then a written
    # name over a reading; a tie of written names goes to the gold answer, of readings to none
    at_first = [m for m in kept if m.start == first]
    best = max((m.share, m.strength) for m in at_first)
    tied = {m.gold for m in at_first if (m.share, m.strength) == best}
    if tied != {True} and not (best[1] == WRITTEN and True in tied):
        return False
    answer = next(m for m in at_first if m.gold and (m.share, m.strength) == best)
    lead = _lead_start(text, first, answer.titled)
    gold_starts = {_lead_start(text, m.start, m.titled) for m in kept if m.gold}
    end = _name_end(text, answer.end, heads[True])
    if _named_before(text, lead, question) or _denied(text, lead):
        return False
    if _hedged(text, lead, end, gold_starts):
        return False
    asked = _period_years(gold.period)
    stated = _stated_period(text, lead, answer.start, end) if asked else None
    return stated is None or (stated[0] <= asked[1] and asked[0] <= stated[1])


def _f1(said: Counter, size: int, name: Sequence[str]) -> tuple[float, int, float]:
    """SQuAD's token F1 of the answer's words (``said``, counted; ``size`` of them) and a
    name's, then the words shared and the share of the name's words said."""
    common = sum(min(count, said[word]) for word, count in Counter(name).items() if word in said)
    if not common:
        return 0.0, 0, 0.0
    precision, recall = common / size, common / len(name)
    return 2 * precision * recall / (precision + recall), common, recall


def _fuzzy(line: str, said: set[str], name: str) -> tuple[float, int, float]:
    from rapidfuzz import fuzz

    words = split_words(name).words
    common = len(said.intersection(words))
    return fuzz.token_set_ratio(line, name.lower()), common, common / max(len(words), 1)


def _beats(score, names: Sequence[str], others: Sequence[str], threshold: float) -> bool:
    """Whether the best gold name's ``score`` reaches ``threshold`` and no other entity's
    is better (score, then words shared, then the share of its name covered)."""
    best = max(score(n) for n in names)
    if best[0] < threshold:
        return False
    return all(score(n) <= best for n in others)


def judge(answer: str, gold: Gold, rules: Sequence[str] = RULES) -> dict[str, bool]:
    """Whether ``answer`` is correct for ``gold``, by each rule of ``rules`` (of
    :data:`RULES`)."""
    line = first_line(answer)
    text = split_words(line)
    labels = [label for label in gold.labels if normalize(label)]
    if not labels or not text.words:
        return dict.fromkeys(rules, False)
    names = list(dict.fromkeys([*labels, *(a for group in gold.aliases for a in group)]))
    names = [n for n in names if normalize(n)]
    others = [n for n in dict.fromkeys(n for group in gold.distractors for n in group)]
    others = [n for n in others if normalize(n)]
    said = " ".join(text.words)
    counted, lower, words = Counter(text.words), line.lower(), set(text.words)
    verdicts = {
        "exact": lambda: said in {normalize(label) for label in labels},
        "alias": lambda: said in {normalize(n) for n in names},
        "names": lambda: _names(text, gold, names, others),
        "token_f1": lambda: _beats(
            lambda n: _f1(counted, len(text.words), split_words(n).words),
            names,
            others,
            TOKEN_F1_THRESHOLD,
        ),
        "fuzzy": lambda: _beats(lambda n: _fuzzy(lower, words, n), names, others, FUZZY_THRESHOLD),
    }
    return {rule: verdicts[rule]() for rule in rules}
