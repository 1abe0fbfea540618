"""The span-perplexity view of ECBD: how well a model predicts a masked span about an entity.

Every example is scored under the paper's input conditions: ORIGINAL (the sentence as it is),
NO ENT (the mention replaced by "the entity"), RANDOM DEF (another entity's definition
prepended) and DEFINITION (the entity's own definition prepended). Each condition only changes
the text around the span, so one ``score`` request per (example, condition) covers every model
family: the adapter decides what log p(span | context) means (causal: left context; T5: the
sentinel target; BART: the decoder after the left context; masked: pseudo-log-likelihood), and
all requests of a shard go to it in one pool, so it can sort and batch them. A sentence (with its
definition) longer than the model's positions loses the context farthest from the span; an
example whose span does not fit even so is skipped, all its conditions together.

Perplexity is token-normalised and averaged per entity first, then over entities (ECBD's
aggregation, in :mod:`chronoprobe.metrics.perplexity`), so entities with many sentences do not
dominate a subset. Its 95% interval (``perplexity_ci95``) resamples entities for the same
reason, each with all its sentences.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import msgspec
import numpy as np
from pydantic import Field

from chronoprobe.datasets.row_checks import offsets_problem
from chronoprobe.errors import UserError
from chronoprobe.jsonl import numbered_lines
from chronoprobe.metrics.perplexity import entity_averaged_perplexity
from chronoprobe.metrics.uncertainty import (
    Estimate,
    cluster_sums,
    estimate,
    proportion,
    summary,
    weighted_mean,
)
from chronoprobe.metrics.uncertainty import median as median_estimate
from chronoprobe.models.requests import NO_BEAM_SPANS, Cloze, ScoreRequest
from chronoprobe.params import seed_field
from chronoprobe.probes.coverage import answered_part, one_model_figures
from chronoprobe.probes.view import SKIPPED, ProbeParams, RowsFormat, View
from chronoprobe.set_files import EXAMPLES

CONDITIONS = ("original", "no-ent", "random-def", "definition")
Condition = Literal["original", "no-ent", "random-def", "definition"]
RECALL_K = 10  # ECBD's Recall@10: the gold span among the top ten beam-search spans
GENERIC_MENTION = "the entity"
POPULAR = "popular"
RANDOM_DEF = "random-def"
TOO_FEW_DEFINITIONS = "random-def needs the definitions of at least two entities in the file"


class SpanPplParams(ProbeParams):
    conditions: list[Condition] = Field(
        default_factory=lambda: list(CONDITIONS),
        min_length=1,
        description="ECBD input conditions to score: original, no-ent (the mention replaced by "
        "'the entity'), random-def (another entity's definition prepended), definition (the "
        "entity's own).",
    )
    cutoff_year: int | None = Field(
        None,
        description="Last year of the models' training data: splits the years into seen and "
        "unseen groups.",
    )
    cutoff_years: dict[str, int] = Field(
        default_factory=dict,
        description="Per model spec (MODEL=YEAR), a cutoff year overriding the one for all.",
    )
    seed: int | None = seed_field("RANDOM DEF's draw of definitions")
    recall_beams: int = Field(
        0,
        ge=0,
        description="T5-style models: also beam-search each gap with this many beams and "
        "report Recall@10, as the ECBD paper's appendix (it used 100; 0: off).",
    )


class _Line(msgspec.Struct):
    id: str
    entity: str
    year: str | int
    span_type: str
    sentence: str
    mention_start: int
    mention_end: int
    span_start: int
    span_end: int
    span: str
    definition: str = ""
    split: str | None = None


@dataclass(frozen=True)
class DefinitionPool:
    """Every entity's definition in a probe file, for RANDOM DEF's draw of another entity's.

    It is built from the whole file (not a shard), so the draw does not depend on sharding.
    """

    entities: tuple[str, ...]
    definitions: tuple[str, ...]
    index: dict[str, int] = field(repr=False)

    @classmethod
    def of(cls, definitions: dict[str, str]) -> DefinitionPool:
        kept = sorted((e, d) for e, d in definitions.items() if d.strip())
        entities = tuple(e for e, _ in kept)
        return cls(entities, tuple(d for _, d in kept), {e: i for i, e in enumerate(entities)})

    @property
    def why_no_draw(self) -> str | None:
        """Why RANDOM DEF cannot run on this file (None: it can). It runs for every example or
        for none: with one entity's definition, that entity's own examples would have no other
        to draw and every other example would draw the same one."""
        if len(self.entities) >= 2:
            return None
        return f"{RANDOM_DEF} not scored: {TOO_FEW_DEFINITIONS} (it holds {len(self.entities)})"

    def draw(self, entity: str, key: str, seed: int) -> tuple[str, str]:
        """(entity, definition) of an entity other than ``entity``, fixed by ``key`` and seed."""
        own = self.index.get(entity)
        choices = len(self.entities) - (own is not None)
        if choices < 1:
            raise UserError(TOO_FEW_DEFINITIONS)
        digest = hashlib.blake2b(f"{seed}:{key}".encode(), digest_size=8).digest()
        pick = int.from_bytes(digest, "big") % choices
        if own is not None and pick >= own:
            pick += 1
        return self.entities[pick], self.definitions[pick]


KEYS = ("id", "entity", "year", "span_type", "split")  # what every prediction repeats of its row


@dataclass(frozen=True)
class ECBDExample:
    id: str
    entity: str
    year: str  # an origination year, or "popular"
    span_type: str
    sentence: str
    mention: tuple[int, int]
    span: tuple[int, int]
    definition: str
    split: str | None
    pool: DefinitionPool = field(repr=False, compare=False)

    def key(self) -> dict:
        """The fields every prediction repeats, so results group without the data file."""
        return {k: getattr(self, k) for k in KEYS}


def _check(line: _Line) -> str | None:
    """Why a row's offsets cannot be scored, or None (the rule the importers check by)."""
    mention, span = (line.mention_start, line.mention_end), (line.span_start, line.span_end)
    return offsets_problem(line.sentence, mention, span, line.span)


def read_examples(path: str | Path) -> list[ECBDExample]:
    """ECBD rows (``chronoprobe build ecbd``); a bad line raises ValueError naming file and line."""
    lines: list[_Line] = []
    for number, line in numbered_lines(path, _Line, "not an ECBD example"):
        problem = _check(line)
        if problem:
            raise UserError(f"{path}:{number}: {problem}")
        lines.append(line)
    pool = DefinitionPool.of({line.entity: line.definition for line in lines})
    return [
        ECBDExample(
            line.id,
            line.entity,
            str(line.year),
            line.span_type,
            line.sentence,
            (line.mention_start, line.mention_end),
            (line.span_start, line.span_end),
            line.definition,
            line.split,
            pool,
        )
        for line in lines
    ]


def condition_request(
    example: ECBDExample, condition: str, seed: int = 0
) -> tuple[ScoreRequest, str | None]:
    """The span in its gap as ``condition`` frames it, and whose definition was prepended.

    NO ENT capitalises the generic mention when the entity starts the sentence, so the only
    change is the missing name, not a typographic slip. A prepended definition is followed by
    one space.
    """
    text, (m_start, m_end), (s_start, s_end) = example.sentence, example.mention, example.span
    left, prefix, source = text[:s_start], "", None
    if condition == "no-ent":
        generic = GENERIC_MENTION.capitalize() if m_start == 0 else GENERIC_MENTION
        left = text[:m_start] + generic + text[m_end:s_start]
    elif condition == "definition":
        prefix, source = example.definition.strip(), example.entity
    elif condition == "random-def":
        source, prefix = example.pool.draw(example.entity, example.id, seed)
        prefix = prefix.strip()
    elif condition != "original":
        raise UserError(f"unknown condition {condition!r}; choose from {', '.join(CONDITIONS)}")
    if prefix:
        left = f"{prefix} {left}"
    return ScoreRequest(Cloze(left, text[s_end:]), text[s_start:s_end]), source


def _spaced(text: str) -> str:
    return " ".join(text.split())


def predict_span_ppl(
    model,
    rows: Sequence[ECBDExample],
    params: SpanPplParams,
    progress: Callable[[int, int], None] | None,
) -> list[dict]:
    """One prediction per (example, condition); every request of the shard in one pool.

    With ``params.recall_beams`` the model also fills each gap by beam search (T5-style
    seq2seq models only), and the prediction lists its top ten spans and whether the gold span
    is among them (whitespace-normalised exact match). RANDOM DEF on a file with fewer than two
    entities' definitions is not scored: each example gets a skipped row saying so instead.
    """
    no_draw = rows[0].pool.why_no_draw if rows and RANDOM_DEF in params.conditions else None
    conditions = tuple(c for c in params.conditions if not (no_draw and c == RANDOM_DEF))
    seed = 0 if params.seed is None else params.seed
    framed = [condition_request(r, c, seed) for r in rows for c in conditions]
    requests = [request for request, _ in framed]
    phases = 2 if params.recall_beams else 1

    def phase(index: int):
        if progress is None:
            return None
        return lambda done, total: progress(index * total + done, phases * total)

    beamed = None
    if params.recall_beams:  # first, so a model that cannot do it fails before any scoring
        if not model.fills_spans:
            raise UserError(f"{model.name}: {NO_BEAM_SPANS}")
        clozes = [r.cloze for r in requests]
        beamed = model.beam_spans(clozes, params.recall_beams, RECALL_K, progress=phase(0))
    scores = model.score(requests, progress=phase(phases - 1))
    unfit = {i // len(conditions) for i, score in enumerate(scores) if score is None}
    out = []
    for i, ((request, source), score) in enumerate(zip(framed, scores, strict=True)):
        row = rows[i // len(conditions)]
        if i // len(conditions) in unfit:
            if i % len(conditions) == 0:
                out.append({**row.key(), SKIPPED: model.unfit_reason})
            continue
        if no_draw and i % len(conditions) == 0:
            out.append({**row.key(), SKIPPED: no_draw})
        prediction = {
            **row.key(),
            "condition": conditions[i % len(conditions)],
            "span": request.span,
            "n_tokens": score.n_tokens,
            "logprob": score.logprob,
            "nll": -score.logprob / score.n_tokens,  # token-normalised
            "definition_of": source,
        }
        if beamed is not None:
            prediction["top10"] = beamed[i]
            gold = _spaced(request.span)
            prediction["recall_at_10"] = any(_spaced(s) == gold for s in beamed[i])
        out.append(prediction)
    return out


def _entity_means(predictions: Sequence[dict], field: str = "nll") -> np.ndarray:
    """Each entity's mean token-normalised NLL over its examples (entities in first order)."""
    sums, sizes = cluster_sums([p[field] for p in predictions], [p["entity"] for p in predictions])
    return sums / sizes


def _perplexity(counts: np.ndarray, entity_means: np.ndarray) -> np.ndarray:
    """Entity-averaged perplexity of each resample of entities."""
    return np.exp(weighted_mean(counts, entity_means))


def summarize_span_ppl(predictions: Sequence[dict]) -> dict[str, float | None]:
    """Entity-averaged perplexity of one group of one condition's predictions; its interval
    resamples entities (each with all its examples), the unit the average is taken over.
    Recall@10 gets Wilson's interval."""
    if not predictions:
        return {"n": 0, "entities": 0, "tokens": 0, "perplexity": None, "perplexity_ci95": None}
    ppl = entity_averaged_perplexity(
        (p["entity"], p["logprob"], p["n_tokens"]) for p in predictions
    )
    means = _entity_means(predictions)
    estimates = {
        "perplexity": estimate(
            ppl, lambda c: _perplexity(c, means), len(means), len(predictions), unit="entity"
        )
    }
    hits = [p["recall_at_10"] for p in predictions if p.get("recall_at_10") is not None]
    if hits:
        estimates[f"recall@{RECALL_K}"] = proportion(hits)
    return summary(
        len(predictions),
        estimates,
        entities=len(means),
        tokens=sum(p["n_tokens"] for p in predictions),
    )


def year_group(year: str, cutoff_year: int | None) -> str | None:
    """The year's group: popular, seen (originated by the cutoff year) or unseen (after it)."""
    if year == POPULAR:
        return POPULAR
    if cutoff_year is None or not year.lstrip("-").isdigit():
        return None
    return "seen" if int(year) <= cutoff_year else "unseen"


def _year_order(year: str) -> tuple[bool, int, str]:
    numeric = year.lstrip("-").isdigit()
    return (not numeric, int(year) if numeric else 0, year)


def _by(predictions: Sequence[dict], key: Callable[[dict], str | None], order=None) -> dict:
    """{subset: {condition: summary}} for the subsets ``key`` names (None: in no subset)."""
    groups: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for p in predictions:
        subset = key(p)
        if subset is not None:
            groups[subset][p["condition"]].append(p)
    return {
        subset: {c: summarize_span_ppl(g) for c, g in groups[subset].items()}
        for subset in sorted(groups, key=order)
    }


def sensitivity(predictions: Sequence[dict]) -> dict[str, float | int | None]:
    """The span-sensitivity check: how much worse spans get when the mention is replaced.

    ``gap`` is NO ENT minus ORIGINAL entity-averaged perplexity; ``median_increase`` is the
    paper's figure, the median over spans of ppl(NO ENT) / ppl(ORIGINAL) - 1.
    """
    pairs: dict[str, dict[str, dict]] = defaultdict(dict)
    for p in predictions:
        if p["condition"] in ("original", "no-ent"):
            pairs[p["id"]][p["condition"]] = p
    both = [v for v in pairs.values() if len(v) == 2]
    original = summarize_span_ppl([v["original"] for v in both])["perplexity"]
    no_ent = summarize_span_ppl([v["no-ent"] for v in both])["perplexity"]
    ratios = [math.exp(v["no-ent"]["nll"] - v["original"]["nll"]) for v in both]
    # intervals resample entities, both conditions of an entity's spans together (paired)
    before = _entity_means([v["original"] for v in both])
    after = _entity_means([v["no-ent"] for v in both])

    def paired(value: float | None, statistic) -> Estimate:
        return estimate(value, statistic, len(before), len(both), unit="entity")

    estimates = {
        "original": paired(original, lambda c: _perplexity(c, before)),
        "no-ent": paired(no_ent, lambda c: _perplexity(c, after)),
        "gap": paired(
            no_ent - original if both else None,
            lambda c: _perplexity(c, after) - _perplexity(c, before),
        ),
        "relative_gap": paired(
            no_ent / original - 1 if both else None,
            lambda c: _perplexity(c, after) / _perplexity(c, before) - 1,
        ),
    }
    entities = [v["original"]["entity"] for v in both]  # resampled as the figures above
    increase = median_estimate([r - 1 for r in ratios], entities, unit="entity")
    out = summary(len(both), {**estimates, "median_increase": increase})
    out.update(proportion([r > 1 for r in ratios]).fields("share_increased", len(both)))
    return out


def span_ppl_metrics(predictions: Sequence[dict], params: SpanPplParams) -> dict:
    """Perplexity per condition overall, per year, per seen/unseen/popular group, per span type
    and per split; plus the span-sensitivity check when ORIGINAL and NO ENT were both run."""
    cutoff = params.cutoff_year
    # RANDOM DEF asked for and scored for no example while others were: the file has too few
    # definitions (see predict_span_ppl)
    scored = {p["condition"] for p in predictions}
    unscored = bool(predictions) and RANDOM_DEF in params.conditions and RANDOM_DEF not in scored
    metrics: dict = {
        "conditions": [c for c in params.conditions if not (unscored and c == RANDOM_DEF)],
        **({"skipped_conditions": {RANDOM_DEF: TOO_FEW_DEFINITIONS}} if unscored else {}),
        "cutoff_year": cutoff,
        "overall": _by(predictions, lambda p: "all")["all"] if predictions else {},
        "by_year": _by(predictions, lambda p: p["year"], _year_order),
        "by_group": _by(predictions, lambda p: year_group(p["year"], cutoff)),
        "by_span_type": _by(predictions, lambda p: p["span_type"]),
        "by_split": _by(predictions, lambda p: p["split"]),
        "by_group_span_type": _by(
            predictions,
            lambda p: (g := year_group(p["year"], cutoff)) and f"{g}/{p['span_type']}",
        ),
    }
    for condition, group in metrics["overall"].items():  # the headline: each condition's
        metrics.update(_headline(condition, group))
    metrics["coverage"] = answered_part([f"ppl_{c}" for c in metrics["overall"]], predictions)
    if {"original", "no-ent"} <= set(params.conditions):
        subsets: dict[str, list[dict]] = defaultdict(list)
        for p in predictions:
            subsets["all"].append(p)
            group = year_group(p["year"], cutoff)
            if group:
                subsets[group].append(p)
        metrics["sensitivity"] = {name: sensitivity(group) for name, group in subsets.items()}
    return metrics


def _cutoffs_of_probed_models(params: SpanPplParams, inputs: frozenset[str]) -> list[str]:
    """Each model a cutoff year is given for is one of the models probed."""
    unknown = sorted(set(params.cutoff_years) - {str(spec) for spec in params.model or ()})
    if unknown and params.model:
        return [f"`cutoff_years` names models not in `model`: {', '.join(unknown)}"]
    return []


def _headline(condition: str, group: dict) -> dict:
    """A condition's overall perplexity as the headline ``ppl_<condition>``: its value,
    interval (or why it has none) and the examples it counts."""
    name = f"ppl_{condition}"
    out = {name: group.get("perplexity"), f"{name}_ci95": group.get("perplexity_ci95")}
    if "perplexity_no_interval" in group:
        out[f"{name}_no_interval"] = group["perplexity_no_interval"]
    return {**out, f"{name}_n": group["n"]}


def _for_model(params: SpanPplParams, model, say) -> SpanPplParams:
    """The options one model is probed with: its own cutoff year, and Recall@10 only where
    the model can fill spans by beam search."""
    beams = params.recall_beams if model.fills_spans else 0
    if params.recall_beams and not beams:
        say(f"{model.name}: perplexity only, no Recall@10 ({NO_BEAM_SPANS})")
    cutoff = params.cutoff_years.get(model.name, params.cutoff_year)
    return params.model_copy(update={"recall_beams": beams, "cutoff_year": cutoff})


def _aggregate(per_model: dict[str, dict], params: SpanPplParams) -> dict:
    """Each condition's overall perplexity over the models: of one model, its own, with its
    interval, n and coverage; over several, their mean (see :func:`one_model_figures`)."""
    return one_model_figures(per_model, [f"ppl_{c}" for c in params.conditions])


def _figures(metrics: dict) -> dict:
    """What the command line shows of one model: each condition's perplexity, with its
    interval."""
    out: dict = {}
    for condition, group in metrics["overall"].items():
        for key, value in group.items():
            if key.startswith("perplexity"):
                out[key.replace("perplexity", f"ppl {condition}")] = value
    return out


def _columns() -> list[tuple]:
    import pyarrow as pa

    return [
        *((k, pa.string()) for k in KEYS),
        ("condition", pa.string()),
        ("span", pa.string()),
        ("n_tokens", pa.int64()),
        ("logprob", pa.float64()),
        ("nll", pa.float64()),
        ("definition_of", pa.string()),
        ("top10", pa.list_(pa.string())),  # with recall_beams: the ten best beam-search spans
        ("recall_at_10", pa.bool_()),
    ]


SPAN_PPL = View(
    name="span-ppl",
    help="ECBD span perplexity of each masked span under the paper's input conditions, averaged "
    "per entity first, per year, seen/unseen group and span type.\n\nExample: chronoprobe "
    "probe span-ppl ecbd/ -m package:smollm2 --cutoff-year 2019 -o ecbd-smol/",
    params=SpanPplParams,
    predict=predict_span_ppl,
    summarize=summarize_span_ppl,
    keys=KEYS,
    columns=_columns,
    figures=_figures,
    metrics=span_ppl_metrics,
    aggregate=_aggregate,
    rows=RowsFormat(EXAMPLES, ("sentence", "span_start", "span_end", "span"), read_examples),
    for_model=_for_model,
    check=_cutoffs_of_probed_models,
)
