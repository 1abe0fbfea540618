"""Unique, plausible names for a synthetic world, from seeded syllable and word lists.

People draw a first name and a surname made of two syllables (hundreds of thousands of unique
combinations, more with middle initials); places and organisations are built from invented
place names, so nothing collides with a real entity.
"""

from __future__ import annotations

import numpy as np

from chronoprobe.errors import UserError

FIRST = (
    "Aaron Abel Ada Adele Adrian Agnes Aiden Alan Alba Alice Alma Amara Amir Ana Anders Andrea "
    "Anika Anton Ari Arlo Astrid Aurora Ava Axel Beatrix Ben Bianca Boris Bruno Calla Carl Carmen "
    "Cecil Celia Chloe Clara Colin Cora Dalia Damon Dana Daniel Daria Dario Dean Delia Diego Dora "
    "Edgar Edith Eero Elena Eli Elise Elio Ella Elmer Emil Emma Enzo Erik Esme Ethan Eva Ezra "
    "Felix Fiona Flora Frida Gabriel Gemma Gideon Greta Gus Hana Hannah Hector Helga Henrik Hugo "
    "Ida Igor Ilse Imani Ines Ingrid Iris Isaac Isla Ivan Ivy Jakob Jana Jasper Jonas Jude Julia "
    "Juno Kai Kamala Karl Kasper Kira Lara Lars Laura Lea Leif Lena Leo Levi Liam Lila Linus Liv "
    "Lorenzo Luca Lucia Luna Lydia Malik Mara Marco Maren Mateo Maya Mila Milo Mina Mira Nadia "
    "Nils Nina Noah Nora Oda Olaf Olga Oliver Omar Orla Oscar Otto Paula Pavel Petra Pia Quinn "
    "Rafael Rana Remy Rhea Rosa Rowan Ruben Ruth Sami Sara Selma Simon Sofia Stella Sven Talia "
    "Tariq Tess Theo Tobias Uma Ursula Valentin Vera Victor Viggo Vilma Wanda Wren Xavier Yara "
    "Yusuf Zane Zara Zoe"
).split()

_ONSET = (
    "Al Ash Bar Bel Bran Brook Cal Car Cas Chal Cor Dal Dar Del Dun Eld Ell Fal Fen Gal Gar Gil "
    "Glen Hal Har Hol Kel Ken Kir Lan Lor Mar Mel Mor Nor Ol Pem Pen Ral Ran Red Ros Sal Sel Ston "
    "Tal Tam Thorn Val Var Wal Wes Wil Win Wyn Yor Zel"
).split()
_CODA = (
    "brook bury by croft dale den don field ford gate grove ham hart hill holm hurst ley low mere "
    "more ridge rock ton ville wick wood worth wyn stead shaw"
).split()
CLUB_SUFFIXES = ("Rovers", "United", "City", "Athletic", "Wanderers", "Albion", "Rangers", "FC")
COMPANY_SUFFIXES = ("Industries", "Systems", "Holdings", "Labs", "Group", "Works", "Energy")
PORTFOLIOS = (
    "Finance",
    "Defence",
    "Health",
    "Education",
    "Transport",
    "Justice",
    "Foreign Affairs",
    "Agriculture",
    "Culture",
    "Energy",
    "Labour",
    "Trade",
)
FIELDS = ("Physics", "Chemistry", "Medicine", "Literature", "Economics", "Mathematics", "Peace")
SPORT_AWARDS = ("Footballer of the Year", "Golden Boot", "Player of the Season")
COUNTRY_ENDINGS = ("ia", "ria", "land", "mark", "stan", "ovia", "ora", "enia")


def place_names(rng: np.random.Generator, n: int) -> list[str]:
    """``n`` unique invented place names such as "Northbury" or "Valdale"."""
    combos = [o + c for o in _ONSET for c in _CODA]
    if n > len(combos):
        prefixes = (
            "North",
            "South",
            "East",
            "West",
            "New",
            "Upper",
            "Lower",
            "Old",
            "Great",
            "Port",
        )
        combos += [f"{a} {b}" for a in prefixes for b in combos]
    if n > len(combos):
        raise UserError(f"cannot make {n} unique place names")
    return [combos[i] for i in rng.permutation(len(combos))[:n]]


def country_names(rng: np.random.Generator, n: int) -> list[str]:
    stems = [o for o in _ONSET]
    combos = [s + e for s in stems for e in COUNTRY_ENDINGS]
    return [combos[i] for i in rng.permutation(len(combos))[:n]]


def person_names(rng: np.random.Generator, n: int) -> list[str]:
    """``n`` unique full names; middle initials extend the space when needed."""
    surnames = [o + c.lower() for o in _ONSET for c in _CODA]
    space = len(FIRST) * len(surnames)
    if n <= space:
        picks = rng.choice(space, size=n, replace=False)
        return [f"{FIRST[i // len(surnames)]} {surnames[i % len(surnames)]}" for i in picks]
    initials = "ABCDEFGHJKLMNPRSTVW"
    if n > space * len(initials):
        raise UserError(f"cannot make {n} unique person names")
    picks = rng.choice(space * len(initials), size=n, replace=False)
    out = []
    for p in picks:
        base, initial = divmod(int(p), len(initials))
        first, last = FIRST[base // len(surnames)], surnames[base % len(surnames)]
        out.append(f"{first} {initials[initial]}. {last}")
    return out


def person_aliases(name: str) -> tuple[str, ...]:
    """ "Alice Smith" -> ("A. Smith",)."""
    parts = name.split()
    return (f"{parts[0][0]}. {parts[-1]}",)
