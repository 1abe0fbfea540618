"""How names are written and read: the normalised words of a text, and the forms a name takes.

Text is normalised the same way for every judging rule (:mod:`chronoprobe.probes.judging`):
Unicode accents folded, letters that have no accent to fold spelled as English text spells
them ("Solskjær" is "solskjaer", "Łódź" "lodz"), case folded, dotted abbreviations joined
("U.S." is "us", "F.C." is "fc"), an ampersand inside a word dropped ("P&G" is "pg", "Texas
A&M" "texas am") and a spaced one read as "and", a possessive "'s" is a boundary, other
apostrophes inside a word vanish ("O'Neill" is "oneill"), the articles a, an and the dropped
(as SQuAD's answer normalisation does: Rajpurkar et al., 2016, "SQuAD: 100,000+ Questions for
Machine Comprehension of Text", EMNLP), and the rest split into words of letters and digits.
Punctuation between words (a comma, a full stop, a bracket, a spaced dash) is remembered as
a *boundary*; a hyphen inside a word ("Saint-Germain") is not one.

:func:`name_forms` gives the ways one name may be said, each a general reading of names
(never a table of particular entities):

- as written, and without its legal form or club abbreviation (:data:`NAME_SUFFIXES`,
  :data:`NAME_PREFIXES`: "Juventus" for "Juventus F.C.", "Barcelona" for "FC Barcelona");
- with a country's adjective (:data:`DEMONYMS`): "the Italian national team" for "Italy
  national association football team", "the Italian Prime Minister" for "Prime Minister of
  Italy", "American" for the United States;

and, *read* rather than written (a reading loses a tie to another entity's name, see
:class:`Form`):

- without a trailing type word (:data:`TYPE_SUFFIXES`: University, Party, County Cricket
  Club, Football Club, Foundation, Company, ...) and an "and" before it: "Harvard" for
  "Harvard University", "Lancashire" for "Lancashire County Cricket Club", "Dow Jones" for
  "Dow Jones & Company";
- a country's senior national football team by the country: "England" for "England national
  association football team" (never a youth, Olympic, women's or other sport's team);
- reordered: "X University" for "University of X" and back, "London Mayor" and "London's
  Mayor" for "Mayor of London", "Labour leader" for "Leader of the Labour Party", "Attorney
  General of the United States" for "United States Attorney General";
- with another name of a country it holds (:data:`COUNTRY_NAMES`: US, USA, UK, Britain,
  Russian Federation): "US Vice President", "President of the USA";
- by its initials (an initialism said in capitals: "LSE", "UKIP", "OECD", "P&G"), or with a
  run of its capitalised words said by their initials ("LA Lakers", "AC Milan", "VP of the
  US"), also after a country said first ("UK PM", "the Turkish PM", "US VP"); a word the
  name writes as initials may be spelled out ("Los Angeles Galaxy" for "LA Galaxy", "United
  Kingdom Independence Party");
- a party by its members' name ("Republican", "the Democrats", "the Conservatives");
- a person (a name of two to five capitalised words and none of an organisation's or an
  office's) by a subset of their given names and their family name ("Ronna McDaniel" for
  "Ronna Romney McDaniel"), their family name alone ("Merkel", "van Gaal"), in the other order
  ("Abe Shinzo"), without an honorific the label holds ("Howard Davies" for "Sir Howard
  Davies"), or with given names or initials added (matched, not listed:
  :attr:`Form.person`).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from itertools import combinations
from typing import NamedTuple

ARTICLES = frozenset({"a", "an", "the"})
# Words that say what kind of organisation a name is, which a name may go without: legal forms
# and club abbreviations at its end ("Acme Corp" is Acme, "Juventus F.C." Juventus), club
# abbreviations at its start ("FC Barcelona" is Barcelona)
NAME_SUFFIXES = frozenset(
    "inc incorporated corp corporation co ltd limited llc plc gmbh ag sa spa fc afc cf sc".split()
)
NAME_PREFIXES = frozenset("fc afc ac as ss sc sv cd cf ssc".split())
# Type words a name may be said without, read from its end: "Harvard" for Harvard University,
# "Lancashire" for Lancashire County Cricket Club, "Likud" for "Likud Party"; and that an
# answer may add after a name ("the Quilliam Foundation", "Arsenal Football Club")
TYPE_SUFFIXES: tuple[tuple[str, ...], ...] = tuple(
    tuple(phrase.split())
    for phrase in (
        "county cricket club",
        "cricket club",
        "association football club",
        "football club",
        "soccer club",
        "sports club",
        "ccc",
        "university",
        "party",
        "foundation",
        "company",
        "group",
        "holdings",
        "holding",
        "se",
        "nv",
        "ab",
        "asa",
        *NAME_SUFFIXES,
    )
)
TITLES = frozenset(
    "mr mrs ms miss mx dr sir dame lord lady baron baroness prof professor president "
    "chancellor minister premier pm taoiseach king queen prince princess emperor empress tsar "
    "sultan emir sheikh pope cardinal archbishop bishop rabbi imam ayatollah reverend rev fr "
    "senator sen governor gov mayor speaker general gen admiral adm commander colonel col "
    "major maj captain capt lieutenant lt sergeant sgt marshal brigadier judge justice "
    "secretary ambassador commissioner chairman chairwoman chairperson chair ceo director "
    "coach manager boss hon representative rep congressman congresswoman".split()
)
# Words that may stand before such a title, as part of it: "former Prime Minister", "German
# Chancellor", "head coach", "Vice President"
TITLE_MODIFIERS = frozenset(
    "prime vice deputy acting interim former ex late then head chief field us uk".split()
)
# Words of a name that say it is an organisation's or an office's, not a person's
NOT_PERSON = frozenset(
    "party university college school institute academy club team united city county state "
    "states national international republic kingdom federation union league association "
    "council committee ministry department office government parliament assembly congress "
    "senate court bank group company corporation foundation society church army navy force "
    "police agency authority board commission organisation organization museum hospital "
    "times news post journal media records airlines studios motors systems technologies labs "
    "laboratory centre center network channel orchestra".split()
)
# What may follow a person's family name: "Jr", "III"
GENERATIONAL = frozenset("jr sr ii iii iv".split())
# Small words that a family name may hold ("van Gaal", "de Villepin", "Le Pen", "bin Salman")
PARTICLES = frozenset(
    "de del della der den di da das do dos du la le van von ten ter bin ibn al el y i".split()
)
# Words an initialism skips ("London School of Economics" is LSE), or keeps in its other form
# ("Economic Community of West African States" is ECOWAS)
FUNCTION_WORDS = frozenset(
    "of and for the at in on to de la le du des del di da en et und der die das von y e".split()
)
# Other names of countries, said in place of the country's name inside a longer name
COUNTRY_NAMES: dict[tuple[str, ...], tuple[tuple[str, ...], ...]] = {
    tuple(country.split()): tuple(tuple(name.split()) for name in names)
    for country, names in {
        "united states": ("us", "usa", "united states of america", "america"),
        "united states of america": ("united states", "us", "usa", "america"),
        "united kingdom": ("uk", "britain", "great britain"),
        "russia": ("russian federation",),
        "russian federation": ("russia",),
        "netherlands": ("holland",),
        "czech republic": ("czechia",),
        "south korea": ("republic of korea", "korea"),
    }.items()
}

# Countries and the adjectives a name may be said with; names as normalised words.
DEMONYMS: dict[str, tuple[str, ...]] = {
    "afghanistan": ("afghan",),
    "albania": ("albanian",),
    "algeria": ("algerian",),
    "andorra": ("andorran",),
    "angola": ("angolan",),
    "argentina": ("argentine", "argentinian"),
    "armenia": ("armenian",),
    "australia": ("australian",),
    "austria": ("austrian",),
    "azerbaijan": ("azerbaijani",),
    "bahrain": ("bahraini",),
    "bangladesh": ("bangladeshi",),
    "belarus": ("belarusian",),
    "belgium": ("belgian",),
    "benin": ("beninese",),
    "bhutan": ("bhutanese",),
    "bolivia": ("bolivian",),
    "bosnia and herzegovina": ("bosnian",),
    "brazil": ("brazilian",),
    "brunei": ("bruneian",),
    "bulgaria": ("bulgarian",),
    "burkina faso": ("burkinabe",),
    "cambodia": ("cambodian",),
    "cameroon": ("cameroonian",),
    "canada": ("canadian",),
    "chile": ("chilean",),
    "china": ("chinese",),
    "colombia": ("colombian",),
    "costa rica": ("costa rican",),
    "croatia": ("croatian",),
    "cuba": ("cuban",),
    "cyprus": ("cypriot",),
    "czech republic": ("czech",),
    "denmark": ("danish",),
    "dominican republic": ("dominican",),
    "east timor": ("timorese", "east timorese"),
    "ecuador": ("ecuadorian",),
    "egypt": ("egyptian",),
    "el salvador": ("salvadoran", "salvadorian"),
    "england": ("english",),
    "estonia": ("estonian",),
    "ethiopia": ("ethiopian",),
    "fiji": ("fijian",),
    "finland": ("finnish",),
    "france": ("french",),
    "gabon": ("gabonese",),
    "georgia": ("georgian",),
    "germany": ("german",),
    "ghana": ("ghanaian",),
    "greece": ("greek",),
    "guatemala": ("guatemalan",),
    "haiti": ("haitian",),
    "honduras": ("honduran",),
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
    "jamaica": ("jamaican",),
    "japan": ("japanese",),
    "jordan": ("jordanian",),
    "kazakhstan": ("kazakh",),
    "kenya": ("kenyan",),
    "kosovo": ("kosovar",),
    "kuwait": ("kuwaiti",),
    "kyrgyzstan": ("kyrgyz",),
    "laos": ("laotian",),
    "latvia": ("latvian",),
    "lebanon": ("lebanese",),
    "liberia": ("liberian",),
    "libya": ("libyan",),
    "lithuania": ("lithuanian",),
    "luxembourg": ("luxembourgish",),
    "madagascar": ("malagasy",),
    "malaysia": ("malaysian",),
    "mali": ("malian",),
    "malta": ("maltese",),
    "mauritius": ("mauritian",),
    "mexico": ("mexican",),
    "moldova": ("moldovan",),
    "monaco": ("monegasque",),
    "mongolia": ("mongolian",),
    "montenegro": ("montenegrin",),
    "morocco": ("moroccan",),
    "mozambique": ("mozambican",),
    "myanmar": ("burmese",),
    "namibia": ("namibian",),
    "nepal": ("nepalese", "nepali"),
    "netherlands": ("dutch",),
    "new zealand": ("new zealand",),
    "nicaragua": ("nicaraguan",),
    "nigeria": ("nigerian",),
    "north korea": ("north korean",),
    "north macedonia": ("macedonian",),
    "northern ireland": ("northern irish",),
    "norway": ("norwegian",),
    "oman": ("omani",),
    "pakistan": ("pakistani",),
    "panama": ("panamanian",),
    "papua new guinea": ("papua new guinean",),
    "paraguay": ("paraguayan",),
    "peru": ("peruvian",),
    "philippines": ("filipino", "philippine"),
    "poland": ("polish",),
    "portugal": ("portuguese",),
    "qatar": ("qatari",),
    "romania": ("romanian",),
    "russia": ("russian",),
    "rwanda": ("rwandan",),
    "san marino": ("sammarinese",),
    "saudi arabia": ("saudi", "saudi arabian"),
    "scotland": ("scottish",),
    "senegal": ("senegalese",),
    "serbia": ("serbian",),
    "sierra leone": ("sierra leonean",),
    "singapore": ("singaporean",),
    "slovakia": ("slovak",),
    "slovenia": ("slovenian",),
    "somalia": ("somali",),
    "south africa": ("south african",),
    "south korea": ("south korean",),
    "spain": ("spanish",),
    "sri lanka": ("sri lankan",),
    "sudan": ("sudanese",),
    "sweden": ("swedish",),
    "switzerland": ("swiss",),
    "syria": ("syrian",),
    "taiwan": ("taiwanese",),
    "tajikistan": ("tajik",),
    "tanzania": ("tanzanian",),
    "thailand": ("thai",),
    "togo": ("togolese",),
    "trinidad and tobago": ("trinidadian",),
    "tunisia": ("tunisian",),
    "turkey": ("turkish",),
    "turkmenistan": ("turkmen",),
    "uganda": ("ugandan",),
    "ukraine": ("ukrainian",),
    "united arab emirates": ("emirati",),
    "united kingdom": ("british",),
    "united states": ("american",),
    "united states of america": ("american",),
    "uruguay": ("uruguayan",),
    "uzbekistan": ("uzbek",),
    "venezuela": ("venezuelan",),
    "vietnam": ("vietnamese",),
    "wales": ("welsh",),
    "yemen": ("yemeni",),
    "zambia": ("zambian",),
    "zimbabwe": ("zimbabwean",),
}
_COUNTRIES = {
    tuple(country.split()): tuple(tuple(adjective.split()) for adjective in adjectives)
    for country, adjectives in DEMONYMS.items()
}
_LONGEST_COUNTRY = max(len(c) for c in _COUNTRIES)
_ADJECTIVES = {a[0] for adjectives in _COUNTRIES.values() for a in adjectives if len(a) == 1}
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
_TITLE_WORDS = TITLES | TITLE_MODIFIERS | _ADJECTIVES  # "German Chancellor Angela Merkel"
_LONGEST_NAME = max(len(c) for c in COUNTRY_NAMES)
_OTHER_NAMES = frozenset(name for names in COUNTRY_NAMES.values() for name in names)
_NOT_NAMES = NOT_PERSON | NAME_SUFFIXES | NAME_PREFIXES | (FUNCTION_WORDS - PARTICLES)
# The words between a country and "team" in the name of its senior national football team
_SENIOR_TEAM = frozenset("national association football soccer men mens".split())
_INNER_AMPERSAND = re.compile(r"(?<=[^\W_])&(?=[^\W_])")
_SPACED_AMPERSAND = re.compile(r"\s&\s")


class Words(NamedTuple):
    """Normalised words; ``capital[i]``: word i began with a capital letter; ``hard[i]``:
    punctuation stands between word i - 1 and word i; ``punct[i]``: that punctuation, without
    spaces ("'s" for a possessive; "" where there is none); ``caps[i]``: how many capital
    letters word i was written with ("UKIP" 4, "AfD" 2)."""

    words: tuple[str, ...]
    capital: tuple[bool, ...]
    hard: tuple[bool, ...]
    punct: tuple[str, ...]
    caps: tuple[int, ...] = ()


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.translate(_LETTERS))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _hard(gap: str) -> bool:
    """Whether the text between two words is a boundary: not for spaces, a plus, or dashes
    inside a word."""
    bare = gap.strip()
    if bare in ("", "+"):
        return False
    return not (bare == gap and all(unicodedata.category(c) == "Pd" for c in gap))


@lru_cache(maxsize=1 << 16)
def split_words(text: str) -> Words:
    """The normalised words of ``text`` (see the module's docstring), with what tells names
    apart: capitals and boundaries."""
    text = _ABBREVIATION.sub(lambda m: m.group().replace(".", ""), _fold(text))
    text = _SPACED_AMPERSAND.sub(" and ", _INNER_AMPERSAND.sub("", text))
    text = _INNER_APOSTROPHE.sub("", _POSSESSIVE.sub(_POSSESSIVE_MARK, text))
    words: list[str] = []
    capital: list[bool] = []
    punct: list[str] = []
    caps: list[int] = []
    end, pending = 0, ""
    for match in _WORD.finditer(text):
        gap = text[end : match.start()]
        if words and _hard(gap):
            pending += "".join(gap.split()).replace(_POSSESSIVE_MARK, "'s")
        end = match.end()
        written = match.group()
        word = written.casefold()
        if word in ARTICLES:
            continue
        words.append(word)
        capital.append(written[0].isupper())
        caps.append(sum(c.isupper() for c in written))
        punct.append(pending)
        pending = ""
    hard = tuple(bool(p) for p in punct)
    return Words(tuple(words), tuple(capital), hard, tuple(punct), tuple(caps))


def normalize(text: str) -> str:
    """The normalised words of ``text`` joined by spaces: what ``exact`` and ``alias`` compare."""
    return " ".join(split_words(text).words)


def first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


WRITTEN = 2  # a form the name is written in (or without its legal form, or by a demonym)
READ = 1  # a reading of the name (a short form, an initialism, a person's family name...)


class Form(NamedTuple):
    """One way to say a name: its words; how many leading words (a country or its adjective)
    must be said before inner words may be left out (0: every word is said); whether it is
    how the name is written (:data:`WRITTEN`) or a reading of it (:data:`READ`), which an
    equally good written name of another entity beats, and which ties with another entity's
    reading, so that it names neither; the positions of words that are initials the form
    made, which the answer must write in capitals (``initials``), and of words the name
    writes as initials, which the answer may spell out (``spelled``); and whether the name is
    a person's, to whom an answer may give more given names or initials (``person``), or
    that person's family name alone, which names them only where the answer is known to be
    a person (``surname``)."""

    words: tuple[str, ...]
    lead: int = 0
    strength: int = WRITTEN
    initials: frozenset[int] = frozenset()
    spelled: frozenset[int] = frozenset()
    person: bool = False
    surname: bool = False  # a person's family name alone: only where the answer is a person


def acronym(written: Words, i: int) -> bool:
    """Whether word ``i`` is written as initials: two or more letters, all capitals."""
    word = written.words[i]
    return len(word) >= 2 and word.isalpha() and written.caps[i] == len(word)


def _core(words: tuple[str, ...]) -> tuple[str, ...]:
    """A name's words without its legal form or club abbreviations (never all of them)."""
    start, end = 0, len(words)
    while end - start > 1 and words[end - 1] in NAME_SUFFIXES:
        end -= 1
    while end - start > 1 and words[start] in NAME_PREFIXES:
        start += 1
    return words[start:end]


def _without_type(words: tuple[str, ...]) -> tuple[str, ...]:
    """``words`` without the type words at their end, and an "and" before them ("Dow Jones"
    for "Dow Jones & Company"), never all of them."""
    cut = True
    while cut:
        cut = False
        for phrase in TYPE_SUFFIXES:
            if len(words) > len(phrase) and words[-len(phrase) :] == phrase:
                words, cut = words[: -len(phrase)], True
                if len(words) > 1 and words[-1] == "and":
                    words = words[:-1]
                break
    return words


def is_person(written: Words) -> bool:
    """Whether a name reads as a person's: two to five words, each capitalised (or a family
    name's particle), no digits, none of an organisation's or an office's words, no title
    word beyond a leading honorific, no country."""
    words = written.words
    if not 2 <= len(words) <= 5 or words in _COUNTRIES or words in COUNTRY_NAMES:
        return False
    for i, word in enumerate(words):
        if i == len(words) - 1 and word in GENERATIONAL and len(words) > 2:
            return True  # "William Henry Gates III", "Martin Luther King Jr"
        if not word.isalpha() or word in _NOT_NAMES or acronym(written, i):
            return False
        if word in TITLES and i > 0:
            return False
        if not written.capital[i] and word not in PARTICLES:
            return False
    return written.capital[-1] and words[-1] not in PARTICLES


def family_start(words: tuple[str, ...]) -> int:
    """Where a person's family name starts: the last word (before Jr, III...), with the
    particles before it."""
    start = len(words) - 1 - (words[-1] in GENERATIONAL and len(words) > 2)
    while start > 1 and words[start - 1] in PARTICLES:
        start -= 1
    return start


def _person_forms(words: tuple[str, ...]) -> list[Form]:
    if words[0] in TITLES and len(words) > 2:  # "Sir Howard Davies": the title is no name
        words = words[1:]
        forms = [Form(words, strength=READ, person=True)]
    else:
        forms = []
    family = family_start(words)
    given, surname = words[:family], words[family:]
    forms.append(Form(surname, strength=READ, surname=True))
    for size in range(1, len(given)):
        for kept in combinations(given, size):
            forms.append(Form((*kept, *surname), strength=READ, person=True))
    if len(given) == 1:
        forms.append(Form((*surname, *given), strength=READ))  # "Abe Shinzo"
    return forms


def _initials(written: Words, end: int, keep_function: bool) -> str:
    """The initials of words ``0..end`` of a name: a word written as initials gives them all."""
    letters = []
    for i in range(end):
        word = written.words[i]
        if word in FUNCTION_WORDS and not keep_function:
            continue
        letters.append(word if acronym(written, i) else word[0])
    return "".join(letters)


def _initialisms(written: Words) -> list[Form]:
    """The name by its initials ("London School of Economics" is LSE), of the whole name, of
    its part before a comma or a bracket, and without a trailing "of" and a country; and with
    one or two runs of its capitalised words by their initials ("LA Lakers", "VP of the US")."""
    words = written.words
    ends = {len(words)}
    for i in range(1, len(words)):
        if written.hard[i] and written.punct[i][:1] in ",(":
            ends.add(i)
        if words[i] == "of" and _country_at(words, i + 1) == len(words):
            ends.add(i)
    forms = []
    for end in ends:
        if end < 2:
            continue
        for keep in (False, True):
            letters = _initials(written, end, keep)
            if len(letters) >= 2:
                forms.append(Form((letters,), strength=READ, initials=frozenset({0})))
    runs = []
    i = 0
    while i < len(words):
        j = i
        while j < len(words) and written.capital[j] and words[j] not in FUNCTION_WORDS:
            j += 1
        if j - i >= 2:
            runs.append((i, j))
        i = max(j, i + 1)
    for count in (1, 2):
        for chosen in combinations(runs, count):
            for cut in _shortened(chosen):
                forms.append(_abbreviated(written, cut))
    return [f for f in forms if len(f.words) > 1 or f.initials]


def _country_initialisms(written: Words, forms: list[Form]) -> list[Form]:
    """A form that says a country first (its name, another name or its adjective) with the
    capitalised words after it by their initials: "UK PM", "the Turkish PM", "US VP"."""
    capitalised = {w for w, c in zip(written.words, written.capital, strict=True) if c}
    out = []
    for form in forms:
        if form.lead or form.initials:
            continue
        words = form.words
        end = _country_at(words, 0)
        if end is None and words[0] in _ADJECTIVES:
            end = 1
        rest = words[end:] if end else ()
        if 2 <= len(rest) <= 3 and set(rest) <= capitalised and not FUNCTION_WORDS & set(rest):
            letters = "".join(w[0] for w in rest)
            out.append(Form((*words[:end], letters), strength=READ, initials=frozenset({end})))
    return out


def _shortened(runs: tuple[tuple[int, int], ...]) -> list[tuple[tuple[int, int], ...]]:
    """Each run whole, or its first two or more words ("Los Angeles" of "Los Angeles Lakers")."""
    options = [[(i, k) for k in range(i + 2, j + 1)] for i, j in runs]
    out: list[tuple[tuple[int, int], ...]] = [()]
    for choices in options:
        out = [(*prefix, choice) for prefix in out for choice in choices]
    return out


def _abbreviated(written: Words, runs: tuple[tuple[int, int], ...]) -> Form:
    words, initials = [], set()
    at = 0
    for i, j in runs:
        words += written.words[at:i]
        initials.add(len(words))
        words.append(
            "".join(w if acronym(written, k) else w[0] for k, w in enumerate(written.words[i:j], i))
        )
        at = j
    words += written.words[at:]
    return Form(tuple(words), strength=READ, initials=frozenset(initials))


def _country_at(words: tuple[str, ...], start: int) -> int | None:
    """Where a country's name (or another name of it) said from word ``start`` ends."""
    for size in range(min(max(_LONGEST_COUNTRY, _LONGEST_NAME), len(words) - start), 0, -1):
        part = words[start : start + size]
        if part in _COUNTRIES or part in COUNTRY_NAMES or part in _OTHER_NAMES:
            return start + size
    return None


def _reordered(words: tuple[str, ...]) -> list[tuple[str, ...]]:
    """ "P H" for "H of P" ("London Mayor", "Cambridge University", and without a type word
    of P: "Labour leader"), "H of P" for a country's
    "P H" ("Attorney General of the United States"), "University of X" for "X University"."""
    out = []
    if words.count("of") == 1:
        at = words.index("of")
        head, place = words[:at], words[at + 1 :]
        if 1 <= len(head) <= 3 and 1 <= len(place) <= 3 and not FUNCTION_WORDS & set(place):
            out.append((*place, *head))
            if _without_type(place) != place:  # "Labour leader" for "Leader of the Labour Party"
                out.append((*_without_type(place), *head))
    country = _country_at(words, 0)
    if country is not None and 0 < country < len(words):
        out.append((*words[country:], "of", *words[:country]))
    if len(words) >= 2 and words[-1] == "university" and "of" not in words:
        out.append(("university", "of", *words[:-1]))
    return out


def _country_names(words: tuple[str, ...]) -> list[tuple[str, ...]]:
    """``words`` with a country they hold said by its other names ("US President")."""
    out = []
    for start in range(len(words)):
        for size in range(min(_LONGEST_NAME, len(words) - start), 0, -1):
            part = words[start : start + size]
            for other in COUNTRY_NAMES.get(part, ()):
                out.append((*words[:start], *other, *words[start + size :]))
    return out


def _members(words: tuple[str, ...]) -> list[tuple[str, ...]]:
    """A party by its members' name: "Republican(s)" for "Republican Party", "Democrat(s)"
    for "Democratic Party", "Scottish Greens" for "Scottish Green Party"."""
    if not 2 <= len(words) <= 4 or words[-1] != "party" or "of" in words:
        return []
    base, last = words[:-2], words[-2]
    stems = [last, *([last[:-2]] if last.endswith("ic") and len(last) > 4 else [])]
    return [(*base, stem + ending) for stem in stems for ending in ("", "s")]


def _national_team(words: tuple[str, ...]) -> list[tuple[str, ...]]:
    """A country's senior national football team by the country's name ("England" for
    "England national association football team", "Switzerland" for "Swiss national football
    team"); never a youth, Olympic, women's or other sport's team, whose country names
    another team."""
    if len(words) < 3 or words[-1] != "team" or "national" not in words:
        return []
    for size in range(min(_LONGEST_COUNTRY, len(words) - 2), 0, -1):
        said, rest = words[:size], words[size:-1]
        country = next((c for c, adjs in _COUNTRIES.items() if said == c or said in adjs), None)
        if country is not None and set(rest) <= _SENIOR_TEAM:
            return [country]
    return []


@lru_cache(maxsize=1 << 16)
def name_forms(name: str) -> tuple[Form, ...]:
    """The ways ``name`` may be said (see the module docstring), each once, written forms
    first."""
    written = split_words(name)
    if not written.words:
        return ()
    words = _core(written.words)
    spelled = frozenset(i for i in range(len(written.words)) if acronym(written, i))
    forms = [Form(written.words, spelled=spelled, person=is_person(written))]
    if words != written.words:
        forms.append(Form(words))
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
    read = [_without_type(words), *_reordered(words), *_members(words), *_national_team(words)]
    read += [w for form in [words, *read] for w in _country_names(form)]
    read += _country_names(words) if words in COUNTRY_NAMES else []
    forms += [Form(w, strength=READ) for w in read]
    if forms[0].person:
        forms += _person_forms(written.words)
    forms += _initialisms(written)
    forms += _country_initialisms(written, forms)
    seen: dict[tuple[tuple[str, ...], int], Form] = {}
    for form in forms:
        key = (form.words, form.lead)
        if key not in seen or form.strength > seen[key].strength:
            seen[key] = form
    return tuple(seen.values())
