"""The generate view: ask a causal or seq2seq model in words and judge its free-text answers.

Each probe row (a drift or TempLAMA row: a statement with one ``[MASK]``, its period and
answers) becomes a prompt through a template, "In {period}, {statement}" by default, where
``{statement}`` is the statement up to the gap ("In 2019, Alice Smith works for") and ``{query}``
the whole statement with the gap as ``___``. A row the template cannot ask, its gap first
("[MASK] is the head coach of X."), is asked by its relation's question instead
(``templates/questions.yaml``: "Who was the head coach of X in 2019?"), as is every row with
``form: question``: an instruct or chat model (its tokenizer has a chat template; a served
model) gets the question as one chat turn, a base model "Question: ...\nAnswer:", a prompt that
ends where the answer starts. Each prediction says how it was asked (``form``); metrics give
the share asked each way and every figure per form. With ``shots`` > 0 the prompt starts
with that many exemplars, other facts of the same relation and period asked the same way with
their answers, one per line; each of ``exemplar_sets`` draws its own exemplars (seeded by the
row and the set), never the asked subject and never a row sharing an answer with the asked one
(its answer would be in the prompt). Every set gets one greedy answer; ``samples`` more answers
are sampled (temperature, top-p), sample ``j`` with exemplar set ``j`` modulo the sets. Answers
stop at the first newline or sentence end; the raw text is kept. ``responses`` judges answers
produced elsewhere instead (:mod:`chronoprobe.probes.responses`).

Every answer is judged by each rule of :mod:`chronoprobe.probes.judging`, against the row's
answers and the other entities it may name instead (:mod:`chronoprobe.probes.known_answers`);
a deleted row has no current answer and is never correct. The ``match`` rule gives each row its
knowledge category of ChroKnowledge (Park et al., 2024, arXiv:2410.09870): Correct, Partial or
Incorrect (:mod:`chronoprobe.probes.categories`). Metrics: the share of rows whose first greedy
answer is correct, by the ``match`` rule (``accuracy``) and by each rule (``accuracy_<rule>``),
the share naming another period's answer of the subject instead (``other_period``), the share
of empty answers (``empty``: a model that stops at once; more than 5% is warned of), and the
category shares, overall, per period, per split, per relation and per form; and each fact's
class over the periods.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import Literal, NamedTuple

import msgspec
from pydantic import Field, PrivateAttr, field_validator, model_validator

from chronoprobe.errors import UserError
from chronoprobe.metrics.uncertainty import proportion, summary
from chronoprobe.models.requests import Cloze, PromptRequest
from chronoprobe.params import ExistingPath, seed_field
from chronoprobe.probes.categories import CATEGORIES, category, fact_timelines
from chronoprobe.probes.coverage import answered_part, one_model_figures, splits_left_out
from chronoprobe.probes.judging import (
    DEFAULT_RULE,
    RULES,
    Gold,
    first_line,
    judge,
    normalize,
    split_words,
)
from chronoprobe.probes.known_answers import History, KnownAnswers, answer_keys
from chronoprobe.probes.model_judge import JUDGE_RULE, Asked
from chronoprobe.probes.responses import Responses, ResponsesSpec
from chronoprobe.probes.rows import ProbeLine, probe_lines
from chronoprobe.probes.timeline_judging import (
    TIMELINE_FIELDS,
    judge_timeline,
    judged_rules,
    timeline_key,
    timeline_metrics,
)
from chronoprobe.probes.view import (
    SKIPPED,
    ProbeParams,
    Progress,
    RowsFormat,
    View,
    base_url_field,
)
from chronoprobe.set_files import NAMES_FILE
from chronoprobe.templates import MASK, ClozeTemplate, load_cloze_templates, load_question_templates
from chronoprobe.time import Granularity, Period

KEYS = ("id", "period", "split", "relation", "subject", "query", "answer_labels", "timeline")
PLACEHOLDERS = ("period", "statement", "query")
GAP_FIRST = (
    "the gap comes first: {statement} would leave nothing of the question to ask "
    "(`gap_first: question` asks it as its relation's question)"
)
NO_PERIOD = "the row has no period for the template's {period}"
DELETED = "deleted"
TEMPLATE, QUESTION = "template", "question"  # how a row is asked: its ``form``
# a prompt's longest answer unless max_tokens says: a continuation names its answer at once, a
# chat model answers a question in a sentence ("The head coach of X in 2019 was ...")
MAX_TOKENS = {TEMPLATE: 12, QUESTION: 32}
PLAIN_QUESTION = "Question: {question}\nAnswer:"  # a base model's question: the answer follows
FILL_IN = "Fill in the blank: {statement}"  # the question of a row no question template asks
EMPTY_WARNING = 0.05  # more empty answers than this share is warned of
# ChroKnowledge's protocol (Park et al., 2024): 5 greedy answers, each after its own draw of 4
# exemplars, and 5 answers sampled at temperature 0.7 with top-p 1, at most 50 new tokens
PROTOCOLS: dict[str, dict[str, float | int]] = {
    "chroknowledge": {
        "shots": 4,
        "exemplar_sets": 5,
        "samples": 5,
        "temperature": 0.7,
        "top_p": 1.0,
        "max_tokens": 50,
    }
}
# the options of asking a model, which judging --responses does not take
GENERATION = (
    "template",
    "shots",
    "exemplar_sets",
    "samples",
    "temperature",
    "top_p",
    "max_tokens",
    "chat",
    "protocol",
    "form",
    "gap_first",
    "question_prompt",
)


def checked_template(template: str) -> str:
    """``template`` if it names only the placeholders a row fills, one of them the question;
    shared by ``probe generate`` and ``export lm-eval``, which render prompts alike."""
    import string

    used = {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
    unknown = sorted(used - set(PLACEHOLDERS))
    if unknown:
        raise UserError(f"unknown placeholder {{{unknown[0]}}}; use {', '.join(PLACEHOLDERS)}")
    if not used & {"statement", "query"}:
        raise UserError("the template must hold {statement} or {query}")
    return template


class GenerateParams(ProbeParams):
    template: str = Field(
        "In {period}, {statement}",
        description="The prompt: {period}, {statement} (the statement up to the gap) and "
        "{query} (the statement with the gap as ___). A row it cannot ask (its gap first) is "
        "asked as --gap-first says; to ask questions, use --form question.",
    )
    form: Literal["template", "question"] = Field(
        "template",
        description="How rows are asked: template (through --template) or question (every row "
        "by its relation's question, e.g. 'Who was the head coach of X in 2019?', see "
        "--question-prompt).",
    )
    gap_first: Literal["question", "skip"] = Field(
        "question",
        description="Rows whose gap comes first ('[MASK] is the head coach of X.'), which a "
        "{statement} template cannot ask: question (ask the relation's question instead; "
        "counted per form in metrics.json) or skip (leave them out, counted in skipped).",
    )
    shots: int = Field(
        0,
        ge=0,
        description="Exemplars before each prompt: facts of the same relation and period "
        "about other subjects, none sharing an answer with the asked row.",
    )
    exemplar_sets: int = Field(
        1, ge=1, description="Draws of exemplars per row, one greedy answer each (with shots)."
    )
    samples: int = Field(0, ge=0, description="Sampled answers per row besides the greedy ones.")
    temperature: float = Field(0.7, gt=0, description="Sampling temperature.")
    top_p: float = Field(0.95, gt=0, le=1, description="Nucleus sampling's probability mass.")
    max_tokens: int | None = Field(
        None,
        ge=1,
        description="Longest answer, in tokens (default: 12 for a --template prompt, 32 for a "
        "question, which chat models answer in a sentence).",
    )
    chat: bool = Field(
        False,
        description="Wrap each --template prompt in the model's chat template (instruct "
        "models; questions are put as --question-prompt says).",
    )
    question_prompt: Literal["auto", "chat", "plain"] = Field(
        "auto",
        description="How a question is put: chat (one user turn of the model's chat "
        "template), plain ('Question: ...' then 'Answer:', a prompt ending where the answer "
        "starts, for base models) or auto (chat where the model's tokenizer has a chat "
        "template, and for openai: models; else plain).",
    )
    protocol: Literal["chroknowledge"] | None = Field(
        None,
        description="A published protocol's settings: chroknowledge (Park et al., 2024) is 4 "
        "shots, 5 exemplar sets (5 greedy answers), 5 answers sampled at temperature 0.7, "
        "top-p 1, at most 50 tokens, so that Partial can occur. Without it: one greedy answer "
        "per row, Correct or Incorrect.",
    )
    match: Literal[(*RULES, JUDGE_RULE)] = Field(  # type: ignore[valid-type]
        DEFAULT_RULE,
        description="The rule that makes a row Correct, Partial or Incorrect and gives the "
        "headline accuracy (every rule is reported): exact (a label), alias (a label or "
        "alias), names (the answer names a gold answer in a form people write it: 'LSE', "
        "'Cambridge University', 'the 2022 US President', not 'Inter Miami' for Inter), "
        "token_f1 (SQuAD token F1 >= 0.5), fuzzy (ChroKnowledge's token-set ratio >= 70), "
        "judge (the --judge model's verdict).",
    )
    judge: str | None = Field(
        None,
        description="A model judging every answer, as a rule beside the others (judge): any "
        "model spec, openai:NAME included; asked whether the answer is correct for the "
        "period, given the question and the gold answers with their aliases; its answers "
        "are cached. Measure a judge first: chronoprobe probe judge-agreement. Example: "
        "--judge openai:gpt-4o-mini.",
    )
    judge_base_url: str | None = Field(
        None,
        description="The OpenAI-compatible server an openai: --judge is asked at (default: "
        "--base-url).",
    )
    responses: ExistingPath | None = Field(
        None,
        description="Judge answers produced elsewhere instead of asking a model: a JSONL file "
        'of {"id": ROW_ID, "answer": TEXT}; the first answer of an id is its greedy answer, '
        "further ones its samples, e.g. --responses gpt.jsonl.",
    )
    name: str | None = Field(
        None, description="The model name of --responses (default: the file's stem)."
    )
    seed: int | None = seed_field("exemplar draws and sampling")
    include_deleted: bool = Field(
        False,
        description="Count deleted rows (they carry the previous period's answers) in the "
        "overall and per-period figures too.",
    )
    _judge: object = PrivateAttr(None)  # the --judge model, loaded once per probed model

    @field_validator("template")
    @classmethod
    def _known_placeholders(cls, template: str) -> str:
        return checked_template(template)

    @field_validator("judge")
    @classmethod
    def _a_model_spec(cls, judge: str | None) -> str | None:
        """A judge that names no model is refused before anything runs."""
        if judge is not None:
            from chronoprobe.models.spec import parse_spec

            parse_spec(judge)
        return judge

    @field_validator("judge_base_url")
    @classmethod
    def _a_judge_base_url(cls, url: str | None) -> str | None:
        """Checked as --base-url is, before the probed models run (a validator of another
        name: one named as ServedOptions' would take its place, leaving --base-url
        unchecked)."""
        return base_url_field(url)

    @model_validator(mode="after")
    def _protocol_and_responses(self) -> GenerateParams:
        """A protocol sets its options (a different value given for one is an error); judged
        responses take no generation options."""
        fields = type(self).model_fields
        if self.responses is not None:
            given = [f for f in GENERATION if getattr(self, f) != fields[f].default]
            if given:
                raise UserError(
                    f"`{given[0]}` applies to asking a model, not to judging `responses`"
                )
            if self.engine != "local":
                raise UserError("`responses` are judged here: give `engine: local`")
        elif self.name is not None:
            raise UserError("`name` applies to `responses` only (a model is named by its spec)")
        if self.form == QUESTION and self.gap_first != fields["gap_first"].default:
            raise UserError(
                "`gap_first` applies to rows asked by the template; with `form: question` "
                "every row is asked as a question"
            )
        if self.match == JUDGE_RULE and self.judge is None:
            raise UserError("`match: judge` needs a judge model: give one with `judge`")
        if self.judge is not None and self.engine != "local":
            raise UserError("a `judge` model judges here: give `engine: local`")
        for key, value in PROTOCOLS.get(self.protocol or "", {}).items():
            if getattr(self, key) not in (value, fields[key].default):
                raise UserError(
                    f"`protocol: {self.protocol}` sets `{key}` to {value}, not "
                    f"{getattr(self, key)}: leave `{key}` out, or give no `protocol`"
                )
            setattr(self, key, value)
        return self


@dataclass(frozen=True)
class AskedRow:
    id: str
    query: str
    cloze: Cloze
    labels: list[str]
    aliases: list[list[str]]
    keys: list[str]  # the answers' ids (or normalised labels), see known_answers
    period: str | None
    split: str | None
    relation: str | None
    subject: str | None
    source: ProbeFile = field(repr=False, compare=False)
    # a timeline question's labels and typed gold (build timeline), judged by its answer type
    timeline: dict | None = field(default=None, compare=False)

    @property
    def pool(self) -> ExemplarPool:
        return self.source.pool

    @cached_property
    def answers_said(self) -> frozenset[str]:
        """What tells this row's answers apart from another row's: keys and labels (none for
        a timeline question's typed answer: a 'yes' is no clue to another row's 'yes')."""
        if self.timeline and self.timeline["answer_type"] != "entity":
            return frozenset()
        return frozenset([*self.keys, *(normalize(label) for label in self.labels)])

    def key(self) -> dict:
        return {
            "id": self.id,
            "period": self.period,
            "split": self.split,
            "relation": self.relation,
            "subject": self.subject,
            "query": self.query,
            "answer_labels": self.labels,
            "timeline": timeline_key(self.timeline),
        }


def _template_for(template: str, row: AskedRow) -> str:
    """A question row (build timeline) has no period: a template naming one asks it as it is."""
    return "{statement}" if row.timeline is not None and "{period}" in template else template


def render(template: str, row: AskedRow) -> str | None:
    """The row's prompt, or None when the template needs what the row lacks."""
    template = _template_for(template, row)
    statement = row.cloze.left.strip()
    if "{statement}" in template and not statement:
        return None
    if "{period}" in template and not row.period:
        return None
    return template.format(
        period=row.period or "",
        statement=statement,
        query=row.cloze.filled("___").strip(),
    )


def skip_reason(template: str, row: AskedRow) -> str | None:
    """Why ``template`` cannot ask ``row`` (None: it can)."""
    template = _template_for(template, row)
    if "{period}" in template and not row.period:
        return NO_PERIOD
    if "{statement}" in template and not row.cloze.left.strip():
        return GAP_FIRST
    return None


def row_form(params: GenerateParams, row: AskedRow) -> str:
    """How ``row`` is asked, :data:`TEMPLATE` or :data:`QUESTION`, or why it is not (a skip
    reason). A timeline question is a question already: the template asks it as it is."""
    if params.form == QUESTION and row.timeline is None:
        return QUESTION
    why = skip_reason(params.template, row)
    if why is None:
        return TEMPLATE
    if why == GAP_FIRST and params.gap_first == QUESTION and row.timeline is None:
        return QUESTION
    return why


@cache
def _questions() -> dict:
    return load_question_templates()


@cache
def _subject_patterns() -> dict[str, re.Pattern]:
    """Relation -> a pattern of its shipped cloze statement (``drift.yaml``, which TempLAMA's
    templates word alike) that reads the subject out of a row's query."""
    return {
        relation: _statement_pattern(template)
        for relation, template in load_cloze_templates("drift").items()
        if template.mask == "object"
    }


def _statement_pattern(template: ClozeTemplate) -> re.Pattern:
    text = template.template.removesuffix(".")
    parts = re.split(r"(<subject>|<object>)", text)
    slots = {"<subject>": "(?P<subject>.+)", "<object>": re.escape(MASK)}
    return re.compile("^" + "".join(slots.get(p, re.escape(p)) for p in parts) + r"\.?$")


def subject_of(row: AskedRow) -> str | None:
    """The subject as ``row``'s statement names it ("Philadelphia Eagles" of "[MASK] is the
    head coach of Philadelphia Eagles."), or None where the statement is not its relation's
    shipped template. A full stop after the subject is the statement's, unless the subject's
    last word holds a stop of its own ("F.C.": the label's stop ends the sentence), or is
    doubled ("Blackpool F.C..", as TempLAMA writes it)."""
    pattern = _subject_patterns().get(row.relation or "")
    match = pattern.match(row.query.strip()) if pattern else None
    if not match:
        return None
    subject = match["subject"].strip()
    last = subject.rsplit(" ", 1)[-1]
    if subject.endswith("..") or (subject.endswith(".") and "." not in last[:-1]):
        subject = subject[:-1]
    return subject or None


def when_words(period: str | None) -> str | None:
    """A period as a question says it: "in 2019", "in July 2021", "on 24 July 2019"."""
    if not period:
        return None
    try:
        parsed = Period.parse(period)
    except ValueError:
        return f"in {period}"
    return ("on " if parsed.granularity == Granularity.DAY else "in ") + parsed.words()


def question_of(row: AskedRow) -> str:
    """The row's question: its relation's (``templates/questions.yaml``) about the subject its
    statement names, else the statement itself with a blank to fill ("Fill in the blank: In
    2019, ___ is the head coach of X.")."""
    template = _questions().get(row.relation or "")
    subject = subject_of(row) if template else None
    when = when_words(row.period)
    if template and subject:
        return template.ask(subject, when)
    statement = " ".join(row.cloze.filled("___").split())
    dated = f"{when[0].upper()}{when[1:]}, {statement}" if when else statement
    return FILL_IN.format(statement=dated)


def question_prompt(row: AskedRow, params: GenerateParams, index: int, seed: int) -> str:
    """The row's question with exemplar set ``index`` before it (other rows' questions, each
    with its answer), put as ``params.question_prompt`` says (chat: the questions and answers
    one per line, the turn ending with the question; plain: "Question: ..." and "Answer: ..."
    lines, ending with "Answer:")."""
    shots = row.pool.draw(row, index, params.shots, seed, None)
    if params.question_prompt == "chat":
        lines = [f"{question_of(shot)} {shot.labels[0]}" for shot in shots]
        return "\n".join([*lines, question_of(row)])
    lines = [f"{PLAIN_QUESTION.format(question=question_of(s))} {s.labels[0]}" for s in shots]
    return "\n".join([*lines, PLAIN_QUESTION.format(question=question_of(row))])


def speaks_chat(model) -> bool:
    """Is ``model`` an instruct or chat model: its tokenizer has a chat template, or it is
    served (asked through the server's chat completions)?"""
    return bool(getattr(model, "speaks_chat", False))


@dataclass(frozen=True)
class ExemplarPool:
    """The rows of a probe file that can serve as exemplars, by (relation, period).

    Built from the whole file (not a shard), so draws do not depend on sharding. Deleted rows
    carry the previous period's answers and are never exemplars.
    """

    groups: dict[tuple[str | None, str | None], list[AskedRow]]
    _available: dict[tuple[str, str | None], list[AskedRow]] = field(
        default_factory=dict, repr=False, compare=False
    )
    _renderable: dict[tuple, list[AskedRow]] = field(
        default_factory=dict, repr=False, compare=False
    )

    def available(self, row: AskedRow, template: str | None) -> list[AskedRow]:
        """The rows ``row`` may draw exemplars from: same relation and period, another
        subject, no answer in common, and one ``template`` can render (None: the question
        form, which asks every row)."""
        cached = self._available.get((row.id, template))
        if cached is None:
            said = row.answers_said
            cached = [
                r
                for r in self._rendered(row.relation, row.period, template)
                if r.subject != row.subject and r.id != row.id and not (r.answers_said & said)
            ]
            self._available[(row.id, template)] = cached
        return cached

    def _rendered(self, relation: str | None, period: str | None, template: str | None) -> list:
        """The rows of a group that ``template`` can render (each group rendered once; None:
        the question form, every row)."""
        group = self.groups.get((relation, period), [])
        if template is None:
            return group
        key = (relation, period, template)
        rows = self._renderable.get(key)
        if rows is None:
            rows = self._renderable[key] = [r for r in group if render(template, r) is not None]
        return rows

    def draw(
        self, row: AskedRow, index: int, shots: int, seed: int, template: str | None
    ) -> list[AskedRow]:
        """``shots`` of the :meth:`available` rows, fixed by the seed, the row and the exemplar
        set ``index`` (fewer when there are fewer)."""
        if shots == 0:
            return []
        others = self.available(row, template)
        digest = hashlib.blake2b(f"{seed}:{row.id}:{index}".encode(), digest_size=8).digest()
        return random.Random(int.from_bytes(digest, "big")).sample(others, min(shots, len(others)))


@dataclass
class ProbeFile:
    """What every row of one probe file shares: its exemplars, its KG's answers (to judge by:
    the names file beside it), each subject's answers in the file's periods (to tell a stale
    answer) and its row ids (to check responses against)."""

    path: Path
    pool: ExemplarPool
    known: KnownAnswers
    history: History = field(default_factory=History)
    ids: set[str] = field(default_factory=set)


class AskedLine(ProbeLine):
    answers: list[str] = msgspec.field(default_factory=list)  # the answers' ids, if kept
    timeline: dict | None = None  # a timeline question's labels and typed gold


def read_asked_rows(path: str | Path) -> list[AskedRow]:
    """Rows of a drift or TempLAMA file; a bad line (of it or of the names file beside it)
    raises ValueError naming file and line."""
    path = Path(path)
    groups: dict[tuple[str | None, str | None], list[AskedRow]] = {}
    names = path.parent / NAMES_FILE
    known = KnownAnswers.read(names) if names.is_file() else KnownAnswers()
    rows: list[AskedRow] = []
    source = ProbeFile(path, ExemplarPool(groups), known)
    for item, cloze in probe_lines(path, AskedLine):
        keys = answer_keys(item.answers, item.answer_labels)
        row = AskedRow(
            item.id,
            item.query,
            cloze,
            item.answer_labels,
            item.answer_aliases,
            keys,
            item.period,
            item.split,
            item.relation,
            item.subject,
            source,
            item.timeline,
        )
        rows.append(row)
        source.ids.add(row.id)
        source.history.add_row(row.subject, row.relation, row.period, keys, row.labels, row.aliases)
        if item.split != DELETED and item.answer_labels:
            groups.setdefault((item.relation, item.period), []).append(row)
    return rows


def prompt_for(row: AskedRow, params: GenerateParams, index: int, seed: int) -> str:
    """The row's template prompt with exemplar set ``index`` before it (one exemplar per
    line)."""
    shots = row.pool.draw(row, index, params.shots, seed, params.template)
    lines = [f"{render(params.template, shot)} {shot.labels[0]}" for shot in shots]
    return "\n".join([*lines, render(params.template, row) or ""])


def _sample_seed(seed: int, row_id: str, index: int) -> int:
    digest = hashlib.blake2b(f"{seed}:{row_id}:sample:{index}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % (2**63)


class Answered(NamedTuple):
    """A row's answers, each as (text, raw text), before judging."""

    prompt: str | None
    greedy: list[tuple[str, str]]
    sampled: list[tuple[str, str]]
    exemplars: int  # the fewest exemplars any of the row's prompts holds
    form: str | None = None  # how it was asked (None: answered elsewhere)


def with_question_prompt(params: GenerateParams, model) -> GenerateParams:
    """``params`` with ``question_prompt`` auto made chat or plain for ``model``."""
    if params.question_prompt != "auto":
        return params
    style = "chat" if speaks_chat(model) else "plain"
    return params.model_copy(update={"question_prompt": style})


def _prompts(row: AskedRow, form: str, params: GenerateParams, sets: int, seed: int):
    """The row's prompt per exemplar set, whether they are chat turns, and their longest
    answer."""
    if form == QUESTION:
        prompts = [question_prompt(row, params, e, seed) for e in range(sets)]
        chat = params.question_prompt == "chat"
    else:
        prompts, chat = [prompt_for(row, params, e, seed) for e in range(sets)], params.chat
    return prompts, chat, params.max_tokens or MAX_TOKENS[form]


def _ask_model(
    model, rows: Sequence[AskedRow], params: GenerateParams, progress: Progress
) -> list[Answered | str]:
    """Greedy answers per exemplar set and sampled answers, every request in one pool; a
    row that cannot be asked gets the reason instead."""
    params = with_question_prompt(params, model)
    seed = params.seed or 0
    sets = params.exemplar_sets if params.shots else 1
    forms = [row_form(params, r) for r in rows]
    kept = [i for i, form in enumerate(forms) if form in (TEMPLATE, QUESTION)]
    asked = {i: _prompts(rows[i], forms[i], params, sets, seed) for i in kept}
    requests = []
    for i in kept:
        prompts, chat, longest = asked[i]
        for e in range(sets):
            requests.append(PromptRequest(Cloze(prompts[e] + " ", ""), longest, chat=chat))
        for j in range(params.samples):
            requests.append(
                PromptRequest(
                    Cloze(prompts[j % sets] + " ", ""),
                    longest,
                    temperature=params.temperature,
                    top_p=params.top_p,
                    seed=_sample_seed(seed, rows[i].id, j),
                    chat=chat,
                )
            )
    answers = iter(model.complete(requests, progress=progress))
    out: list[Answered | str] = []
    for i, (row, form) in enumerate(zip(rows, forms, strict=True)):
        if form not in (TEMPLATE, QUESTION):
            out.append(form)
            continue
        greedy = [next(answers) for _ in range(sets)]
        sampled = [next(answers) for _ in range(params.samples)]
        if any(a is None for a in (*greedy, *sampled)):  # a prompt too long for the model
            out.append(model.unfit_reason)
            continue
        # without shots no exemplar is drawn, and the pool is not searched
        template = params.template if form == TEMPLATE else None
        shots = params.shots and min(params.shots, len(row.pool.available(row, template)))
        out.append(
            Answered(
                asked[i][0][0],
                [(a.text, a.raw) for a in greedy],
                [(a.text, a.raw) for a in sampled],
                shots,
                form,
            )
        )
    return out


def _read_responses(responses: Responses, rows: Sequence[AskedRow]) -> list[Answered | str]:
    out: list[Answered | str] = []
    for row in rows:
        given = responses.answers.get(row.id)
        if not given:
            out.append(f"no answer in {responses.path.name}")
            continue
        texts = [(answer.strip(), answer) for answer in given]
        out.append(Answered(None, texts[:1], texts[1:], 0))
    return out


def _current(row: AskedRow) -> tuple[set[str], list[list[str]]]:
    """The keys and the names (label, then aliases) of the row's current answers: none for a
    deleted row, whose answers ended in an earlier period."""
    if row.split == DELETED:
        return set(), []
    aliases = [*row.aliases, *([] for _ in row.labels)]  # rows may lack aliases
    return set(row.keys), [[label, *aliases[i]] for i, label in enumerate(row.labels)]


def _gold(row: AskedRow, text: str) -> Gold:
    """The row's current answers and the entities of its KG that ``text`` may name instead:
    answers of the relation named like it, and those named exactly as a gold answer."""
    known = row.source.known
    keys, names = _current(row)
    if keys and all(k.startswith("=") for k in keys):  # no ids: the KG's namesakes are they
        keys = keys | set(known.homonyms(row.relation, [n[0] for n in names], set()))
    similar = known.similar(row.relation, text, keys)
    same = known.homonyms(row.relation, [n for group in names for n in group], keys | set(similar))
    return Gold(
        [n[0] for n in names],
        [n[1:] for n in names],
        known.named(similar + same),
        question=row.cloze.filled("___"),
        period=row.period,
        relation=row.relation,
    )


def _names_other_period(row: AskedRow, text: str, rule: str) -> bool:
    """Whether ``text`` names, by ``rule``, an answer the subject has in another period of the
    file and not in this one: stale knowledge, or knowledge from later."""
    history = row.source.history
    keys, names = _current(row)
    others = history.other_periods(row.subject, row.relation, row.period, keys)
    if not others:
        return False
    then = history.named(others)
    said = set(split_words(first_line(text)).words)
    if rule != "fuzzy" and not any(said & set(split_words(n).words) for g in then for n in g):
        return False  # no word of theirs said: no rule but fuzzy can find them named
    similar = row.source.known.named(row.source.known.similar(row.relation, text, set(others)))
    gold = Gold([n[0] for n in then], [n[1:] for n in then], [*names, *similar])
    return judge(text, gold, (rule,))[rule]


def _judge(row: AskedRow, text: str) -> dict[str, bool]:
    if row.timeline is None:
        return judge(text, _gold(row, text))
    right, _ = judge_timeline(text, row.timeline, row.labels, row.aliases)
    return judged_rules(right, RULES)


def _judged(
    row: AskedRow,
    answered: Answered,
    rule: str,
    greedy: list[dict[str, bool]],
    sampled: list[dict[str, bool]],
    unclear: int = 0,
) -> dict:
    first = answered.greedy[0][0]
    timeline = {}
    if row.timeline is not None:
        _, lenient = judge_timeline(first, row.timeline, row.labels, row.aliases)
        timeline = {"timeline": {**timeline_key(row.timeline), "lenient": lenient}}
    return {
        **row.key(),
        **timeline,
        "form": answered.form,
        "prompt": answered.prompt,
        "prediction": first,
        "correct": greedy[0][rule],
        "judged": greedy[0],
        # another period's answers are named by the rule, by `names` for the model judge
        "other_period": _names_other_period(
            row, first, DEFAULT_RULE if rule == JUDGE_RULE else rule
        ),
        "exemplars": answered.exemplars,
        "greedy": [text for text, _ in answered.greedy],
        "greedy_raw": [raw for _, raw in answered.greedy],
        "greedy_judged": greedy,
        "samples": [text for text, _ in answered.sampled],
        "samples_raw": [raw for _, raw in answered.sampled],
        "sample_judged": sampled,
        "category": category([j[rule] for j in greedy], [j[rule] for j in sampled]),
        "gold_aliases": sum(len(a) for a in row.aliases) if row.split != DELETED else 0,
        "judge_unclear": unclear,
    }


def _asked(row: AskedRow, text: str) -> Asked:
    """What the model judge is told of one answer: the question, the period, the gold."""
    _, names = _current(row)
    return Asked(row.cloze.filled("___").strip(), row.period, names, text)


def _with_judge(model, rows, answers, judged, progress: Progress) -> list[int]:
    """The model judge's verdict added to each answer's (``judged``, in place) as the rule
    ``judge``; per row, how many answers got no clear yes or no (counted incorrect)."""
    from chronoprobe.probes.model_judge import ask

    items, where = [], []
    for i, (row, got) in enumerate(zip(rows, answers, strict=True)):
        if isinstance(got, str):
            continue
        for text, _ in [*got.greedy, *got.sampled]:
            items.append(_asked(row, text))
        where.append(i)
    verdicts = iter(ask(model, items, progress))
    unclear = [0] * len(rows)
    for i in where:
        greedy, sampled = judged[i]
        for verdict in [*greedy, *sampled]:
            said = next(verdicts)
            verdict[JUDGE_RULE] = bool(said)
            unclear[i] += said is None
    return unclear


def predict_generate(
    model, rows: Sequence[AskedRow], params: GenerateParams, progress: Progress
) -> list[dict]:
    """Each row's answers (asked of ``model``, or read from a :class:`Responses`), judged
    by every rule (and by the ``--judge`` model, loaded by :func:`with_judge`)."""
    if isinstance(model, Responses):
        answers = _read_responses(model, rows)
    else:
        answers = _ask_model(model, rows, params, progress)
    judged = [
        None
        if isinstance(got, str)
        else (
            [_judge(row, text) for text, _ in got.greedy],
            [_judge(row, text) for text, _ in got.sampled],
        )
        for row, got in zip(rows, answers, strict=True)
    ]
    unclear = [0] * len(rows)
    if params._judge is not None:
        unclear = _with_judge(params._judge, rows, answers, judged, progress)
    return [
        {**row.key(), SKIPPED: got}
        if isinstance(got, str)
        else _judged(row, got, params.match, *judged[i], unclear[i])
        for i, (row, got) in enumerate(zip(rows, answers, strict=True))
    ]


def with_judge(params: GenerateParams, model, log) -> GenerateParams:
    """The params to probe ``model`` with: with ``--judge``, the judge model loaded once
    (answering from the answer cache); as they are otherwise."""
    if params.judge is None:
        return params
    from chronoprobe.probes.model_judge import load_judge

    log(f"judge: {params.judge}")
    mine = params.model_copy()
    mine._judge = load_judge(params.judge, params)
    return mine


def _rules(predictions: Sequence[dict]) -> list[str]:
    """The rules that judged these predictions: every rule, and the model judge if one did."""
    judged = any(p["judged"].get(JUDGE_RULE) is not None for p in predictions)
    return [*RULES, *([JUDGE_RULE] if judged else [])]


def _summarize(rule: str):
    def summarize(predictions: Sequence[dict]) -> dict[str, float | None]:
        """Accuracy by ``rule`` and by every rule, the share naming another period's answer,
        the share of empty answers and the category shares; each with its Wilson 95%
        interval (``<share>_ci95``)."""
        rules = _rules(predictions)
        shares = {
            "accuracy": proportion([bool(p["judged"].get(rule)) for p in predictions]),
            **{f"accuracy_{r}": proportion([p["judged"][r] for p in predictions]) for r in rules},
            "other_period": proportion([p["other_period"] for p in predictions]),
            "empty": proportion([not (p["prediction"] or "").strip() for p in predictions]),
            **{c: proportion([p["category"] == c for p in predictions]) for c in CATEGORIES},
        }
        return summary(len(predictions), shares)

    return summarize


summarize_generate = _summarize(DEFAULT_RULE)


def _form_of(prediction: dict) -> str | None:
    return prediction.get("form")  # None: an answer produced elsewhere (--responses)


def empty_warning(empty: dict) -> list[str]:
    """What a user should know of a model whose answers are empty too often (more than
    :data:`EMPTY_WARNING` of them): the accuracy then says little of what it knows."""
    share, n = empty.get("empty"), empty.get("n") or 0
    if share is None or share <= EMPTY_WARNING:
        return []
    return [
        f"{round(share * n):,} of {n:,} first answers ({share:.0%}) are empty: the model "
        "stopped at once (a newline or an end token first), and an empty answer is judged "
        "wrong; read the prompts (`prompt` in predictions.parquet): a prompt ending in 'A:' "
        "often draws a newline first"
    ]


def generate_metrics(predictions: Sequence[dict], params: GenerateParams) -> dict:
    """Accuracy by every rule and category shares overall, per period, split, relation and
    form (per relation and form, as overall, without the deleted rows unless
    ``include_deleted``); fact timelines; how the rows were asked; the share of empty answers
    (warned of above :data:`EMPTY_WARNING`); with shots, how many rows got fewer exemplars than
    asked."""
    from chronoprobe.probes.grouping import grouped, metrics_by_group, outside_all

    summarize = _summarize(params.match)
    view = dataclasses.replace(GENERATE, summarize=summarize)
    groups = metrics_by_group(view, predictions, include_deleted=params.include_deleted)
    left_out = outside_all(params.include_deleted)
    kept = [p for p in predictions if p.get("split") not in left_out]
    overall = groups["overall"]
    coverage = answered_part(["accuracy"], predictions, splits_left_out(left_out), _form_of)
    by_form = {form: summarize(g) for (form,), g in grouped(kept, "form").items()}
    if any(_form_of(p) == QUESTION for p in kept):
        coverage["question_prompt"] = params.question_prompt
    out = {
        "accuracy": overall["accuracy"],
        "accuracy_ci95": overall["accuracy_ci95"],
        "accuracy_n": overall["n"],
        "empty": overall["empty"],
        "empty_ci95": overall["empty_ci95"],
        "match": params.match,
        "rules": _rules(predictions),
        "judged_with": judged_with(predictions, params),
        "coverage": coverage,
        # the share asked each way, of the rows the figures count
        "forms": {
            form: {"rows": n, "share": n / len(kept)} for form, n in coverage["forms"].items()
        },
        "warnings": empty_warning(overall),
    }
    if params.shots:
        counts = [p["exemplars"] for p in predictions]
        out["exemplars"] = {
            "shots": params.shots,
            "rows_short": sum(c < params.shots for c in counts),
            "fewest": min(counts, default=None),
        }
    return {
        **out,
        **groups,
        "by_form": by_form,
        # as overall and per period: deleted rows (the previous period's answers) left out
        "by_relation": {k[0]: summarize(g) for k, g in grouped(kept, "relation").items()},
        "timelines": fact_timelines(predictions, include_deleted=params.include_deleted),
        **timeline_metrics(predictions, summarize),
    }


def judged_with(predictions: Sequence[dict], params: GenerateParams) -> dict:
    """What the answers were judged against: how many rows' gold answers have aliases (a
    release without them is judged by its labels alone, and ``note`` says so), whether the
    probe set has a KG of other entities (its names file), and the model judge."""
    rows = [p for p in predictions if p.get("split") != DELETED]
    aliased = sum(p.get("gold_aliases", 0) > 0 for p in rows)
    out: dict = {"rows": len(rows), "rows_with_aliases": aliased}
    if rows and not aliased:
        out["note"] = (
            "no gold answer has aliases: answers were judged by the answers' labels alone "
            "(import with --aliases KG, or build from a KG with aliases, to add them)"
        )
    if params.judge is not None:
        unclear = sum(p.get("judge_unclear", 0) for p in predictions)
        out["judge"] = {"model": str(params.judge), "unclear_replies": unclear}
    return out


def _aggregate(per_model: dict[str, dict], params: GenerateParams) -> dict:
    """The accuracy over the models: of one model, its own figure, with its n, interval and
    coverage; over several, their mean (see :func:`one_model_figures`)."""
    return {"metric": "accuracy", **one_model_figures(per_model, ["accuracy"])}


def _figures(metrics: dict) -> dict:
    """What the command line shows of one model: accuracy by every rule, the share of empty
    answers and the categories, each with its interval."""
    overall = metrics["overall"]
    rules = metrics.get("rules", RULES)
    names = {**{rule: f"accuracy_{rule}" for rule in rules}, "empty": "empty"}
    names.update({c: c for c in CATEGORIES})
    out: dict = {}
    for shown, key in names.items():
        out[shown] = overall.get(key)
        out[f"{shown}_ci95"] = overall.get(f"{key}_ci95")
    return out


def _columns() -> list[tuple]:
    import pyarrow as pa

    strings = pa.list_(pa.string())
    judged = pa.struct([(rule, pa.bool_()) for rule in (*RULES, JUDGE_RULE)])
    timeline = pa.struct([*((f, pa.string()) for f in TIMELINE_FIELDS), ("lenient", pa.bool_())])
    types = {"answer_labels": strings, "timeline": timeline}
    keys = [(k, types.get(k, pa.string())) for k in KEYS]
    return [
        *keys,
        ("form", pa.string()),
        ("prompt", pa.string()),
        ("prediction", pa.string()),
        ("correct", pa.bool_()),
        ("judged", judged),
        ("other_period", pa.bool_()),
        ("exemplars", pa.int32()),
        ("greedy", strings),
        ("greedy_raw", strings),
        ("greedy_judged", pa.list_(judged)),
        ("samples", strings),
        ("samples_raw", strings),
        ("sample_judged", pa.list_(judged)),
        ("category", pa.string()),
        ("gold_aliases", pa.int32()),
        ("judge_unclear", pa.int32()),
    ]


def exemplar_shortage(rows: Sequence[AskedRow], params: GenerateParams) -> tuple[int, int]:
    """How many askable rows have fewer than ``shots`` exemplars to draw, and the fewest."""
    forms = [(r, row_form(params, r)) for r in rows]
    counts = [
        len(r.pool.available(r, params.template if form == TEMPLATE else None))
        for r, form in forms
        if form in (TEMPLATE, QUESTION)
    ]
    short = [c for c in counts if c < params.shots]
    return len(short), min(short, default=params.shots)


def _warnings(model, rows: Sequence[AskedRow], params: GenerateParams) -> list[str]:
    return [*_judging_warnings(rows), *_asking_warnings(model, rows, params)]


def _judging_warnings(rows: Sequence[AskedRow]) -> list[str]:
    """What the answers are judged without: a KG of other entities, aliases."""
    out = []
    if rows and not rows[0].source.known.names:
        out.append(
            f"no {NAMES_FILE} beside {rows[0].source.path.name}: answers are judged without "
            "the KG's other entities (a longer name of another entity is not refused); "
            "`build drift` and `import templama` write it"
        )
    current = [r for r in rows if r.split != DELETED and r.timeline is None]
    if current and not any(any(a) for r in current for a in r.aliases):
        out.append(
            "no gold answer has aliases: answers are judged by the answers' labels alone "
            "(`import templama --aliases KG` adds a KG's); metrics.json says so"
        )
    return out


def _asking_warnings(model, rows: Sequence[AskedRow], params: GenerateParams) -> list[str]:
    if isinstance(model, Responses):
        if rows:
            model.check_ids(rows[0].source.ids, rows[0].source.path)
        missing = model.missing([r.id for r in rows])
        if not missing:
            return []
        return [f"{missing:,} of {len(rows):,} rows have no answer in {model.path} (skipped)"]
    if model.family not in ("causal", "seq2seq"):
        raise UserError(
            f"{model.name}: the generate view needs a causal or seq2seq model, not a "
            f"{model.family} one"
        )
    if not params.shots:
        return []
    short, fewest = exemplar_shortage(rows, params)
    if not short:
        return []
    return [
        f"{short:,} of {len(rows):,} rows have fewer than {params.shots} exemplars to draw "
        f"(same relation and period, another subject, no answer in common; fewest: {fewest}); "
        "their prompts hold fewer shots (exemplars in metrics.json)"
    ]


def _for_model(params: GenerateParams, model, say) -> GenerateParams:
    """The options one model is asked with: how its questions are put (auto made chat or
    plain by its tokenizer's chat template), said where any row is asked as a question; and
    the ``--judge`` model, loaded once."""
    if not isinstance(model, Responses):
        params = with_question_prompt(params, model)
    return with_judge(params, model, say)


def _answered_by(params: GenerateParams) -> list[tuple[str, ResponsesSpec]]:
    """With ``responses``, the answers read from the file stand in for a model."""
    if params.responses is None:
        return []
    return [(params.name or params.responses.stem, ResponsesSpec(str(params.responses)))]


GENERATE = View(
    name="generate",
    help="Ask in words: prompts (optionally k-shot, chat-framed), greedy and sampled answers "
    "(or answers produced elsewhere, --responses) judged by five rules against the answers, "
    "their aliases and the other entities they may be mistaken for; accuracy by rule and "
    "ChroKnowledge's Correct / Partial / Incorrect per period, split and relation.\n\n"
    "Example: chronoprobe probe generate drift/ -m package:smollm2 --sample 50 -o generated/",
    params=GenerateParams,
    predict=predict_generate,
    summarize=summarize_generate,
    keys=KEYS,
    columns=_columns,
    metrics=generate_metrics,
    aggregate=_aggregate,
    figures=_figures,
    rows=RowsFormat(read=read_asked_rows),
    selection="the first greedy answer (exemplar set 0), cut at the first newline or sentence "
    "end; judged by each rule: " + ", ".join(RULES),
    warnings=_warnings,
    answered_by=_answered_by,
    for_model=_for_model,
)
