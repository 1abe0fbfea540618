"""Matching generated text against a row's answers: normalised, by label, alias or containment.

Normalising lowercases, turns punctuation into spaces, drops the articles a, an and the, and
collapses white space (as SQuAD's answer normalisation does; Rajpurkar et al., 2016, "SQuAD:
100,000+ Questions for Machine Comprehension of Text", EMNLP, arXiv:1606.05250). A generation
matches ``exact`` when it is a label, ``alias`` when it is another name of an answer, ``leads``
when it begins with a label or alias as whole words ("Microsoft, and he is its CEO": a model
that goes on after naming the answer), and ``contains`` when a label or alias occurs anywhere in
it as whole words ("a reporter at the New York Times"; loose: "Vice President of the United
States" contains "President of the United States").
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence

MATCHES = ("exact", "alias", "leads", "contains")  # strictest first
ARTICLES = frozenset({"a", "an", "the"})


def normalize(text: str) -> str:
    spaced = "".join(" " if unicodedata.category(c).startswith("P") else c for c in text.lower())
    return " ".join(w for w in spaced.split() if w not in ARTICLES)


def match_kind(
    text: str, labels: Sequence[str], aliases: Iterable[Sequence[str]] = ()
) -> str | None:
    """How ``text`` matches the answers (one of :data:`MATCHES`), or None."""
    answer = normalize(text)
    if not answer:
        return None
    names = {normalize(label) for label in labels} - {""}
    others = {normalize(a) for group in aliases for a in group} - names - {""}
    if answer in names:
        return "exact"
    if answer in others:
        return "alias"
    padded = f" {answer} "
    if any(padded.startswith(f" {name} ") for name in names | others):
        return "leads"
    if any(f" {name} " in padded for name in names | others):
        return "contains"
    return None


def accepted(kind: str | None, loosest: str) -> bool:
    """Whether a match of ``kind`` counts when ``loosest`` is the loosest kind accepted."""
    return kind is not None and MATCHES.index(kind) <= MATCHES.index(loosest)
