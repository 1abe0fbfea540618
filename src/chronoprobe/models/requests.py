"""The plain requests every view sends to a model adapter, and the answers it gets back.

Views speak text (a cloze's left and right context, a label); adapters turn that into their own
token ids, mask tokens or sentinels. A request is a frozen dataclass so that lists of them can be
sorted, batched and cached inside the adapter without the views ever seeing a tensor.
"""

from __future__ import annotations

from dataclasses import dataclass

from chronoprobe.errors import UserError

MASK = "[MASK]"
# The longest answer judged (characters): far above any model's answer, which stops at the first
# newline or sentence end, and far below what a step's files hold (an answer is stored twice,
# as its text and its raw text, in lines of at most the record limit).
MAX_ANSWER_CHARS = 65_536


def split_query(query: str) -> tuple[str, str]:
    """(left, right) context around the one ``[MASK]`` placeholder of a probe query."""
    count = query.count(MASK)
    if count != 1:
        raise UserError(f"query must hold exactly one {MASK}, found {count}: {query!r}")
    left, right = query.split(MASK)
    return left, right


@dataclass(frozen=True)
class Cloze:
    """A sentence with one gap: ``left + <gap> + right``."""

    left: str
    right: str

    @classmethod
    def from_query(cls, query: str) -> Cloze:
        return cls(*split_query(query))

    def filled(self, span: str) -> str:
        return self.left + span + self.right


@dataclass(frozen=True)
class RankRequest:
    """Rank the vocabulary at the gap; ``candidates`` are token ids whose full rank is wanted.

    ``mentions`` are the entity ids the text names, for models that read entities as symbols
    (:mod:`chronoprobe.train.lamatk.symbolic`); word-level models ignore them.
    """

    cloze: Cloze
    candidates: tuple[int, ...] = ()
    mentions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Ranking:
    token_ids: list[int]
    logprobs: list[float]
    candidate_ranks: list[int]  # 1-based rank over the whole (or restricted) vocabulary


@dataclass(frozen=True)
class ScoreRequest:
    """Score ``span`` in the gap of ``cloze`` (see each adapter for what the score means).

    ``right_context`` also scores the tokens after the span: a causal model then gives
    log p(span + right | left), the log-likelihood of the whole continuation (as lm-eval's
    ``loglikelihood``), so a sentence whose gap comes first is still read. Masked and seq2seq
    models read the right context in any case; for them the score stays the span's.
    """

    cloze: Cloze
    span: str
    right_context: bool = False


@dataclass(frozen=True)
class SpanScore:
    logprob: float  # summed over the scored tokens: the span's, plus the right context's if asked
    n_tokens: int  # the tokens summed


@dataclass(frozen=True)
class GenerateRequest:
    """Fill the gap greedily with up to ``max_tokens`` tokens."""

    cloze: Cloze
    max_tokens: int = 5


@dataclass(frozen=True)
class PromptRequest:
    """Continue a prompt with free text: greedy when ``temperature`` is 0, else sampled.

    The prompt is ``cloze.left``; a seq2seq encoder also reads the gap and ``cloze.right`` (a
    causal model reads the left context only). Decoding stops at an end token, at the first
    newline, at a sentence end (``.``, ``!`` or ``?`` before a space) or after ``max_tokens``
    tokens. Sampling keeps the smallest set of tokens whose probability reaches ``top_p``
    (nucleus sampling, Holtzman et al., 2020) and draws with a generator seeded by ``seed``, so a
    request's answer does not depend on the batch it was answered in. ``chat`` wraps the prompt
    in the tokenizer's chat template as one user turn (instruct models), where it has one.
    """

    cloze: Cloze
    max_tokens: int = 16
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int = 0
    chat: bool = False


@dataclass(frozen=True)
class Completion:
    """A prompt's continuation: the answer text (cut at the stop), the raw text decoded, the
    generated ids and their summed log-probability (untempered). A served model's answer has
    no ids, NaN for the log-probability, and in ``served`` the model name and system
    fingerprint its server reported."""

    text: str
    raw: str
    token_ids: list[int]
    logprob: float
    served: dict[str, str | None] | None = None


@dataclass(frozen=True)
class Candidate:
    """One filling of the gap: its text, its token ids and its summed log-probability.

    ``n_scored`` counts the tokens summed in ``logprob``: the filling's, plus the closing ids
    a decoder scores after it (see ``decoding``). Fillings of different lengths are compared by
    ``mean_logprob``, so that a short one does not win merely by having fewer terms.
    """

    text: str
    token_ids: list[int]
    logprob: float
    n_scored: int

    @property
    def mean_logprob(self) -> float:
        return self.logprob / self.n_scored


# Why only T5-style models answer beam-search span requests (ECBD's Recall@10); kept here, with
# the requests, so that probe code can name it without importing the models (and torch).
NO_BEAM_SPANS = (
    "span predictions by beam search need a T5-style model (sentinel tokens): as the ECBD "
    "paper's appendix says, BART's rewritten sentence and a causal or masked model's filling "
    "do not mark where a predicted span ends"
)
