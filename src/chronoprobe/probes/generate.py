"""The generate view: ask a causal or seq2seq model in words and read its free-text answers.

Each probe row (a drift or TempLAMA row: a statement with one ``[MASK]``, its period and
answers) becomes a prompt through a template, "In {period}, {statement}" by default, where
``{statement}`` is the statement up to the gap ("In 2019, Alice Smith works for") and ``{query}``
the whole statement with the gap as ``___``. With ``shots`` > 0 the prompt starts with that many
exemplars, other facts of the same relation and period rendered by the same template with
their answers, one per line; each of ``exemplar_sets`` draws its own exemplars (seeded by the
row and the set), and never the asked subject. Every set gets one greedy answer; ``samples``
more answers are sampled (temperature, top-p), sample ``j`` with exemplar set ``j`` modulo the
sets. Answers stop at the first newline or sentence end and are matched against the answer
labels and their aliases (:mod:`chronoprobe.probes.answers`); the raw text is kept.

Per row, the knowledge category of ChroKnowledge (Park et al., 2024, arXiv:2410.09870):
Correct, Partial or Incorrect (:mod:`chronoprobe.probes.categories`). Metrics: the share of
rows whose first greedy answer matches (``accuracy``), exact matches, and the category shares,
overall, per period, per split and per relation; and each fact's class over the periods.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator

from chronoprobe.models.requests import Cloze, PromptRequest
from chronoprobe.probes.answers import MATCHES, accepted, match_kind
from chronoprobe.probes.categories import CATEGORIES, category, category_shares, fact_timelines
from chronoprobe.probes.rows import probe_lines
from chronoprobe.probes.view import SKIPPED, ProbeParams, Progress, View, mean

KEYS = ("id", "period", "split", "relation", "subject", "query", "answer_labels")
PLACEHOLDERS = ("period", "statement", "query")
GAP_FIRST = "the gap comes first: {statement} would leave nothing of the question to ask"
NO_PERIOD = "the row has no period for the template's {period}"


class GenerateParams(ProbeParams):
    template: str = Field(
        "In {period}, {statement}",
        description="The prompt: {period}, {statement} (the statement up to the gap) and "
        "{query} (the statement with the gap as ___), e.g. 'Q: In {period}, {query} What fills "
        "the blank? A:'.",
    )
    shots: int = Field(
        0, ge=0, description="Exemplars before each prompt: facts of the same relation and period."
    )
    exemplar_sets: int = Field(
        1, ge=1, description="Draws of exemplars per row, one greedy answer each (with shots)."
    )
    samples: int = Field(0, ge=0, description="Sampled answers per row besides the greedy ones.")
    temperature: float = Field(0.7, gt=0, description="Sampling temperature.")
    top_p: float = Field(0.95, gt=0, le=1, description="Nucleus sampling's probability mass.")
    max_tokens: int = Field(12, ge=1, description="Longest answer, in tokens.")
    chat: bool = Field(
        False, description="Wrap each prompt in the model's chat template (instruct models)."
    )
    match: Literal["exact", "alias", "leads", "contains"] = Field(
        "leads",
        description="The loosest match that counts: exact (a label), alias (or another name of "
        "an answer), leads (the answer begins with a label or alias: 'Microsoft, and he...'), "
        "contains (a label or alias anywhere in the answer; loose: 'Vice President of the "
        "United States' contains 'President of the United States').",
    )
    seed: int | None = Field(
        None, description="Seed of exemplar draws and sampling (default: the run's seed)."
    )
    include_deleted: bool = Field(
        False,
        description="Count deleted rows (they carry the previous period's answers) in the "
        "overall and per-period figures too.",
    )

    @field_validator("template")
    @classmethod
    def _known_placeholders(cls, template: str) -> str:
        import string

        used = {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
        unknown = sorted(used - set(PLACEHOLDERS))
        if unknown:
            raise ValueError(f"unknown placeholder {{{unknown[0]}}}; use {', '.join(PLACEHOLDERS)}")
        if not used & {"statement", "query"}:
            raise ValueError("the template must hold {statement} or {query}")
        return template


@dataclass(frozen=True)
class AskedRow:
    id: str
    query: str
    cloze: Cloze
    labels: list[str]
    aliases: list[list[str]]
    period: str | None
    split: str | None
    relation: str | None
    subject: str | None
    pool: ExemplarPool = field(repr=False, compare=False)

    def key(self) -> dict:
        return {
            "id": self.id,
            "period": self.period,
            "split": self.split,
            "relation": self.relation,
            "subject": self.subject,
            "query": self.query,
            "answer_labels": self.labels,
        }


def render(template: str, row: AskedRow) -> str | None:
    """The row's prompt, or None when the template needs what the row lacks."""
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
    if "{period}" in template and not row.period:
        return NO_PERIOD
    if "{statement}" in template and not row.cloze.left.strip():
        return GAP_FIRST
    return None


@dataclass(frozen=True)
class ExemplarPool:
    """The rows of a probe file that can serve as exemplars, by (relation, period).

    Built from the whole file (not a shard), so draws do not depend on sharding. Deleted rows
    carry the previous period's answers and are never exemplars.
    """

    groups: dict[tuple[str | None, str | None], list[AskedRow]]

    def draw(
        self, row: AskedRow, index: int, shots: int, seed: int, template: str
    ) -> list[AskedRow]:
        """``shots`` rows of the row's relation and period about other subjects that
        ``template`` can render, fixed by the seed, the row and the exemplar set ``index``
        (fewer when the group is smaller)."""
        if shots == 0:
            return []
        others = [
            r
            for r in self.groups.get((row.relation, row.period), [])
            if r.subject != row.subject and r.id != row.id and render(template, r) is not None
        ]
        digest = hashlib.blake2b(f"{seed}:{row.id}:{index}".encode(), digest_size=8).digest()
        return random.Random(int.from_bytes(digest, "big")).sample(others, min(shots, len(others)))


def read_asked_rows(path: str | Path) -> list[AskedRow]:
    """Rows of a drift or TempLAMA file; a bad line raises ValueError naming file and line."""
    groups: dict[tuple[str | None, str | None], list[AskedRow]] = defaultdict(list)
    pool = ExemplarPool(groups)
    rows = []
    for item, cloze in probe_lines(path):
        row = AskedRow(
            item.id,
            item.query,
            cloze,
            item.answer_labels,
            item.answer_aliases,
            item.period,
            item.split,
            item.relation,
            item.subject,
            pool,
        )
        rows.append(row)
        if item.split != "deleted" and item.answer_labels:
            groups[(item.relation, item.period)].append(row)
    return rows


def prompt_for(row: AskedRow, params: GenerateParams, index: int, seed: int) -> str:
    """The row's prompt with exemplar set ``index`` before it (one exemplar per line)."""
    shots = row.pool.draw(row, index, params.shots, seed, params.template)
    lines = [f"{render(params.template, shot)} {shot.labels[0]}" for shot in shots]
    return "\n".join([*lines, render(params.template, row) or ""])


def _sample_seed(seed: int, row_id: str, index: int) -> int:
    digest = hashlib.blake2b(f"{seed}:{row_id}:sample:{index}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % (2**63)


def predict_generate(
    model, rows: Sequence[AskedRow], params: GenerateParams, progress: Progress
) -> list[dict]:
    """Greedy answers per exemplar set and sampled answers, every request in one pool."""
    seed = params.seed or 0
    sets = params.exemplar_sets if params.shots else 1
    reasons = [skip_reason(params.template, r) for r in rows]
    kept = [i for i, why in enumerate(reasons) if why is None]
    prompts = {i: [prompt_for(rows[i], params, e, seed) for e in range(sets)] for i in kept}
    requests = []
    for i in kept:
        for e in range(sets):
            requests.append(
                PromptRequest(Cloze(prompts[i][e] + " ", ""), params.max_tokens, chat=params.chat)
            )
        for j in range(params.samples):
            requests.append(
                PromptRequest(
                    Cloze(prompts[i][j % sets] + " ", ""),
                    params.max_tokens,
                    temperature=params.temperature,
                    top_p=params.top_p,
                    seed=_sample_seed(seed, rows[i].id, j),
                    chat=params.chat,
                )
            )
    answers = iter(model.complete(requests, progress=progress))
    out = []
    for i, (row, why) in enumerate(zip(rows, reasons, strict=True)):
        if why is not None:
            out.append({**row.key(), SKIPPED: why})
            continue
        greedy = [next(answers) for _ in range(sets)]
        sampled = [next(answers) for _ in range(params.samples)]
        if any(a is None for a in (*greedy, *sampled)):  # a prompt too long for the model
            out.append({**row.key(), SKIPPED: model.unfit_reason})
            continue
        greedy_match = [match_kind(a.text, row.labels, row.aliases) for a in greedy]
        sample_match = [match_kind(a.text, row.labels, row.aliases) for a in sampled]
        out.append(
            {
                **row.key(),
                "prompt": prompts[i][0],
                "prediction": greedy[0].text,
                "match": greedy_match[0],
                "greedy": [a.text for a in greedy],
                "greedy_raw": [a.raw for a in greedy],
                "greedy_match": greedy_match,
                "samples": [a.text for a in sampled],
                "samples_raw": [a.raw for a in sampled],
                "sample_match": sample_match,
                "category": category(
                    [accepted(k, params.match) for k in greedy_match],
                    [accepted(k, params.match) for k in sample_match],
                ),
            }
        )
    return out


def _summarize(loosest: str):
    def summarize(predictions: Sequence[dict]) -> dict[str, float | None]:
        return {
            "n": len(predictions),
            "accuracy": mean([accepted(p["match"], loosest) for p in predictions]),
            "exact": mean([p["match"] == "exact" for p in predictions]),
            **category_shares(predictions),
        }

    return summarize


summarize_generate = _summarize("leads")


def generate_metrics(predictions: Sequence[dict], params: GenerateParams) -> dict:
    """Accuracy and category shares overall, per period, split and relation; fact timelines."""
    from chronoprobe.probes.runner import _grouped, metrics_by_group

    summarize = _summarize(params.match)
    view = dataclasses.replace(GENERATE, summarize=summarize)
    grouped = metrics_by_group(view, predictions, include_deleted=params.include_deleted)
    return {
        "accuracy": grouped["overall"]["accuracy"],
        "match": params.match,
        **grouped,
        "by_relation": {k[0]: summarize(g) for k, g in _grouped(predictions, "relation").items()},
        "timelines": fact_timelines(predictions, include_deleted=params.include_deleted),
    }


def _aggregate(per_model: dict[str, dict], params: GenerateParams) -> dict:
    values = [m["accuracy"] for m in per_model.values() if m.get("accuracy") is not None]
    return {"metric": "accuracy", "accuracy": mean(values)}


def _figures(metrics: dict) -> dict:
    overall = metrics["overall"]
    return {k: overall.get(k) for k in ("accuracy", "exact", *CATEGORIES)}


def _columns() -> list[tuple]:
    import pyarrow as pa

    strings = pa.list_(pa.string())
    keys = [(k, strings if k == "answer_labels" else pa.string()) for k in KEYS]
    return [
        *keys,
        ("prompt", pa.string()),
        ("prediction", pa.string()),
        ("match", pa.string()),
        ("greedy", strings),
        ("greedy_raw", strings),
        ("greedy_match", strings),
        ("samples", strings),
        ("samples_raw", strings),
        ("sample_match", strings),
        ("category", pa.string()),
    ]


def _warnings(model, rows: Sequence[AskedRow]) -> list[str]:
    if model.family not in ("causal", "seq2seq"):
        raise ValueError(
            f"{model.name}: the generate view needs a causal or seq2seq model, not a "
            f"{model.family} one"
        )
    return []


GENERATE = View(
    name="generate",
    help="Ask in words: prompts (optionally k-shot, chat-framed), greedy and sampled answers "
    "matched against answers and aliases; accuracy and ChroKnowledge's Correct / Partial / "
    "Incorrect per period, split and relation.",
    params=GenerateParams,
    predict=predict_generate,
    summarize=summarize_generate,
    keys=KEYS,
    columns=_columns,
    metrics=generate_metrics,
    aggregate=_aggregate,
    figures=_figures,
    read=read_asked_rows,
    drift_rows=False,
    selection="the first greedy answer (exemplar set 0), cut at the first newline or sentence "
    "end; match: " + ", ".join(MATCHES),
    warnings=_warnings,
)
