"""A language model as a judge of generated answers: the ``judge`` rule, beside the others.

``--judge MODEL`` (any model spec: a Hugging Face id, a local directory, ``package:smollm2``,
``openai:NAME`` behind an OpenAI-compatible server) asks the model, for each answer, one
question, :data:`PROMPT`: is the answer correct for the period asked, given the question and
the gold answers with their aliases? The model's first word is its verdict: yes or no (a
reply that begins with neither is counted apart, and counts as incorrect). The prompt is sent
as one user turn of the model's chat template (an instruct model's, or a served chat
model's), greedily, for at most :data:`MAX_TOKENS` tokens. Its answers are kept in the answer
cache of every view (:mod:`chronoprobe.models.request_cache`), so judging the same answers
again asks nothing. A row with no current answer (a deleted row) is not asked: every answer
to it is incorrect.

How far to trust a judge is measured, not assumed: ``chronoprobe probe judge-agreement``
(:mod:`chronoprobe.probes.judge_agreement`) asks it the shipped hand-judged answers and
reports its agreement with the person.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from chronoprobe.errors import UserError
from chronoprobe.models.requests import Cloze, PromptRequest

JUDGE_RULE = "judge"
MAX_TOKENS = 4
PROMPT = """You are checking an answer to a question about a fact at a given time.

Question: {question}
Time asked: {period}
Correct answers for that time: {gold}

Answer to check: {answer}

The answer is correct if it names one of the correct answers, in any wording: another name of \
it (a short name, initials, a nickname, its name in another language, the name it had at that \
time, its full official name) or a description of that very thing. It is incorrect if it names \
something else, an answer true at another time, several candidates without choosing, nothing \
at all, or if it gives a time that contradicts the time asked. Judge only the first line of \
the answer.

Is the answer correct? Reply with one word: yes or no."""


@dataclass(frozen=True)
class Asked:
    """One answer to judge: the question (the gap as ___), the period, the gold answers'
    names (label first, then aliases) and the answer."""

    question: str
    period: str | None
    gold: Sequence[Sequence[str]]
    answer: str


def prompt(item: Asked) -> str:
    """The judge's prompt for ``item`` (:data:`PROMPT` filled in)."""
    gold = "; ".join(
        names[0] + (f" (also: {', '.join(names[1:])})" if len(names) > 1 else "")
        for names in item.gold
    )
    first = next((line.strip() for line in item.answer.splitlines() if line.strip()), "")
    return PROMPT.format(
        question=item.question,
        period=item.period or "not given",
        gold=gold,
        answer=first or "(no answer)",
    )


def verdict(reply: str | None) -> bool | None:
    """The judge's verdict in ``reply``: True for yes, False for no, None for anything else."""
    words = (reply or "").strip().lstrip("*\"'`").lower().split()
    first = words[0].strip(".,!:;*\"'`") if words else ""
    return {"yes": True, "no": False}.get(first)


def ask(model: Any, items: Sequence[Asked], progress=None) -> list[bool | None]:
    """The judge's verdict on each of ``items``, in one batch of requests; an item with no
    gold answer is False without asking, a reply that is neither yes nor no None."""
    asked = [i for i, item in enumerate(items) if item.gold]
    requests = [PromptRequest(Cloze(prompt(items[i]), ""), MAX_TOKENS, chat=True) for i in asked]
    replies = model.complete(requests, progress=progress) if requests else []
    out: list[bool | None] = [False] * len(items)
    for i, reply in zip(asked, replies, strict=True):
        out[i] = verdict(None if reply is None else reply.raw or reply.text)
    return out


def load_judge(spec: Any, params: Any) -> Any:
    """The judge model of ``spec`` (a :class:`~chronoprobe.models.spec.ModelSpec` or its
    text), loaded as the probed models are (``params``: a view's
    :class:`~chronoprobe.probes.view.ProbeParams`: their device, precision and batches, its
    own weights and family; ``judge_base_url`` names another server for an ``openai:``
    judge), answering from and into the answer cache unless ``reuse_answers`` is off."""
    from dataclasses import asdict, replace

    from chronoprobe.models import load_model
    from chronoprobe.models.spec import LoadOptions, parse_spec

    chosen = spec if not isinstance(spec, str) else parse_spec(spec)
    options = params.load_options()
    served = dict(options.served)
    if getattr(params, "judge_base_url", None):
        served["base_url"] = params.judge_base_url
    if chosen.served:
        options = LoadOptions(served=served)
    else:
        options = replace(
            options, family=None, revision=None, trust_remote_code=False, device_map=None
        )
    model = load_model(chosen, **asdict(options))
    if model.family not in ("causal", "seq2seq"):
        raise UserError(f"--judge {chosen}: a {model.family} model cannot answer in words")
    if not params.reuse_answers or not chosen.answers_cached:
        return model
    from chronoprobe.core.cache_dir import default_cache_dir
    from chronoprobe.models.request_cache import answer_cache

    return answer_cache(chosen, model, default_cache_dir(), options)
