"""Generation metrics against a set of acceptable answers (the best over answers counts).

Normalisation follows the SQuAD convention the drift paper uses: lower case, no punctuation,
no articles, single spaces.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)


def normalize(text: str) -> str:
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_PUNCT)).split())


def exact_match(prediction: str, answers: Sequence[str]) -> float:
    target = normalize(prediction)
    return float(any(target == normalize(answer) for answer in answers))


def _f1(prediction: list[str], answer: list[str]) -> float:
    common = sum((Counter(prediction) & Counter(answer)).values())
    if not prediction or not answer:
        return float(prediction == answer)
    if common == 0:
        return 0.0
    precision, recall = common / len(prediction), common / len(answer)
    return 2 * precision * recall / (precision + recall)


def token_f1(prediction: str, answers: Sequence[str]) -> float:
    tokens = normalize(prediction).split()
    return max((_f1(tokens, normalize(a).split()) for a in answers), default=0.0)


def _lcs(a: list[str], b: list[str]) -> int:
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b, start=1):
            current.append(previous[j - 1] + 1 if x == y else max(previous[j], current[-1]))
        previous = current
    return previous[-1]


def rouge_l(prediction: str, answers: Sequence[str]) -> float:
    """ROUGE-L F1 (longest common subsequence of normalised tokens), best over answers."""
    tokens = normalize(prediction).split()
    best = 0.0
    for answer in answers:
        reference = normalize(answer).split()
        lcs = _lcs(tokens, reference)
        if lcs:
            precision, recall = lcs / len(tokens), lcs / len(reference)
            best = max(best, 2 * precision * recall / (precision + recall))
    return best
