"""The doc-cutoff view: a model's effective cutoff the documents' way, after Cheng et al.
(2024, "Dated Data: Tracing Knowledge Cutoffs in Large Language Models", COLM).

Dated Data estimates a resource's effective cutoff as the dated version of it that the model
finds least perplexing: every version of every document is scored by its per-token
perplexity, and the version date of lowest perplexity is the resource's cutoff. Here a
resource is a *family* of dated texts (one column of the file says which: the synthetic
world's snippets by ``relation``, a user's own ``family``) and its version of a period is the
family's texts dated in that period.

Each text is one ``score`` request for the whole text, so every family of model answers:
a causal model gives log p(text) token by token after its start token, a masked model the
pseudo-log-likelihood (each token masked alone, Salazar et al., 2020, "Masked Language Model
Scoring"), a seq2seq model the text as the target of an empty input. A text longer than
``max_tokens`` (Dated Data scores a version's first 512 tokens) or than the model's positions
is cut to its first tokens, and the prediction says so.

Per family and period the perplexity is exp of the mean, over the period's documents, of each
document's per-token negative log-likelihood (Dated Data's figure of a version, so each
document counts once whatever its length); with ``pool_tokens`` it is exp of minus the summed
log-probability over the summed tokens instead. The estimate is the period of lowest
perplexity. Its 95% interval resamples the documents within each period (a seeded bootstrap,
each period its own draws), recomputes every period's perplexity and the argmin, and takes the
2.5th and 97.5th percentiles of the argmin's place in the calendar; ``cutoff_share`` is the
share of resamples whose argmin is the estimate.

What the data cannot give as Dated Data had it: its versions are the same documents at every
date (documents that lack a version are dropped), so a period's perplexity differs only by
what changed in them. Dated texts of other kinds (a synthetic world's snippets, ECBD's
sentences under their entity's origination year, a user's articles) hold other documents in
each period, and a period can be easier or harder for reasons of its own.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import Field, field_validator

from chronoprobe.errors import UserError
from chronoprobe.jsonl import numbered_lines
from chronoprobe.metrics.uncertainty import RESAMPLES, resample_counts
from chronoprobe.models.requests import Cloze, ScoreRequest
from chronoprobe.params import seed_field
from chronoprobe.probes.view import SKIPPED, ProbeParams, Progress, RowsFormat, View
from chronoprobe.time import Granularity, Period, TimePoint

SNIPPETS = "snippets.parquet"  # the synthetic world's dated texts, beside its KG
KEYS = ("id", "period", "family")
# the column a file's families are read from when none is named: the first of these it has
FAMILY_COLUMNS = ("family", "relation", "kind")
POPULAR = "popular"  # ECBD's group of popular entities, which has no origination year
DATED_DATA_TOKENS = 512  # Dated Data scores the first 512 tokens of each version
METHOD = (
    "Dated Data's: per family and period, the perplexity of the period's documents; the "
    "effective cutoff is the period of lowest perplexity, its 95% interval the percentiles of "
    "that period over bootstrap resamples of the documents within each period"
)


class DocCutoffParams(ProbeParams):
    family_by: str | None = Field(
        None,
        description="The column (field) of the file that groups its texts into families, each "
        "with its own estimate (default: the first of family, relation, kind the file has; "
        "the synthetic world's snippets are grouped by relation). Example: --family-by kind.",
    )
    granularity: Literal["year", "quarter", "month"] = Field(
        "year",
        description="Period length the texts are grouped by: year, quarter or month (Dated "
        "Data's versions are monthly). A text dated less precisely than this is skipped.",
    )
    first: str | None = Field(
        None, description="First period scored, e.g. 2011 (default: the earliest text's)."
    )
    last: str | None = Field(
        None, description="Last period scored, e.g. 2022 (default: the latest text's)."
    )
    max_tokens: int = Field(
        DATED_DATA_TOKENS,
        ge=1,
        description="Score each text's first N tokens (Dated Data scores 512); a longer text "
        "is cut, and so is one longer than the model's positions.",
    )
    pool_tokens: bool = Field(
        False,
        description="A period's perplexity from its summed log-probability over its summed "
        "tokens, so longer texts weigh more (off: each text's per-token perplexity counts "
        "once, as Dated Data's per-version figure does).",
    )
    resamples: int = Field(
        RESAMPLES, ge=0, description="Bootstrap resamples of the documents (0: no intervals)."
    )
    seed: int | None = seed_field("the bootstrap's resamples")

    @field_validator("first", "last")
    @classmethod
    def _a_period(cls, value: str | None) -> str | None:
        if value is not None:
            Period.parse(value)  # a ValueError names what a period looks like
        return value


@dataclass(frozen=True)
class DatedText:
    """One text of the file: its id, words and date (None: it has none, as ECBD's popular
    group), the row's other text fields (any of which can name its family), the column its
    family is read from unless the user names another, and the id of an earlier row with the
    same text and date (one document, given twice)."""

    id: str
    text: str
    date: TimePoint | None
    fields: dict[str, str]
    family_column: str | None
    same_as: str | None = None


def _date(value: Any) -> TimePoint:
    if isinstance(value, int) and not isinstance(value, bool):
        return TimePoint(value)
    if not isinstance(value, str):
        raise UserError(f"the date must be an ISO date such as 2019 or 2019-03, not {value!r}")
    return TimePoint.parse(value)


def _texts(where: Iterator[tuple[str, dict]]) -> list[tuple[dict, str]]:
    """(row, place) of each (place, row) given: the row's id, text, date and other text
    fields; a row that is no dated text raises ValueError naming its place."""
    out = []
    for place, row in where:
        if "text" in row:
            text, date = row.get("text"), row.get("date", row.get("year"))
        elif "sentence" in row and "year" in row:  # an ECBD row: a sentence about an entity
            text, date = row["sentence"], row["year"]
        else:
            raise UserError(
                f"{place}: a dated text needs the fields text and date (or an ECBD row's "
                f"sentence and year); it has {', '.join(sorted(row)) or 'none'}"
            )
        if not isinstance(text, str) or not text.strip():
            raise UserError(f"{place}: the text is empty")
        if date is None:
            raise UserError(f"{place}: the text has no date")
        try:
            point = None if date == POPULAR and "sentence" in row else _date(date)
        except ValueError as err:
            raise UserError(f"{place}: {err}") from None
        taken = {"id", "text", "date", "year", "sentence"}
        fields = {k: v for k, v in row.items() if k not in taken and isinstance(v, str)}
        out.append(({"id": row.get("id"), "text": text, "date": point, "fields": fields}, place))
    return out


def _jsonl_rows(path: Path) -> Iterator[tuple[str, dict]]:
    for number, row in numbered_lines(path):
        if not isinstance(row, dict):
            raise UserError(f"{path}:{number}: expected a JSON object")
        yield f"{path}:{number}", row


def _parquet_rows(path: Path) -> Iterator[tuple[str, dict]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError) as err:
        raise UserError(f"{path}: not a readable Parquet file ({err})") from None
    if "text" not in table.column_names or not {"date", "year"} & set(table.column_names):
        raise UserError(
            f"{path}: dated texts need the columns text and date (or year); it has "
            f"{', '.join(table.column_names)}"
        )
    for number, row in enumerate(table.to_pylist(), start=1):
        yield f"{path}: row {number}", row


def read_dated_texts(path: str | Path) -> list[DatedText]:
    """The dated texts of a Parquet file (the synthetic world's ``snippets.parquet``: text,
    date) or a JSON Lines file (``{"text", "date", "family"?}``, or ECBD rows, whose sentence
    is dated by its entity's origination year); a bad row raises ValueError naming the file
    and its line (a Parquet file's row)."""
    path = Path(path)
    rows = _parquet_rows(path) if path.suffix == ".parquet" else _jsonl_rows(path)
    found = _texts(rows)
    columns = {k for row, _ in found for k in row["fields"]}
    family_column = next((c for c in FAMILY_COLUMNS if c in columns), None)
    seen_ids: set[str] = set()
    first_of: dict[tuple, str] = {}
    out = []
    for number, (row, place) in enumerate(found, start=1):
        given = row["id"]
        name = str(given) if given is not None else f"row-{number}"
        if name in seen_ids:
            raise UserError(f"{place}: duplicate id {name!r}")
        seen_ids.add(name)
        same = first_of.setdefault((row["text"], row["date"]), name)
        out.append(
            DatedText(
                name,
                row["text"],
                row["date"],
                row["fields"],
                family_column,
                None if same == name else same,
            )
        )
    return out


def _period(text: DatedText, granularity: Granularity) -> tuple[str | None, str | None]:
    """(the text's period, why it has none)."""
    point = text.date
    if point is None:
        return None, f"no date (the year is {POPULAR!r}: ECBD's group of popular entities)"
    if granularity == Granularity.MONTH and point.month is None:
        return None, "dated to the year only, and the periods are months"
    if granularity == Granularity.QUARTER and point.month is None:
        return None, "dated to the year only, and the periods are quarters"
    return Period.containing(point, granularity).label(), None


def _within(period: str, params: DocCutoffParams) -> bool:
    at = Period.parse(period).first_day()
    after_first = params.first is None or at >= Period.parse(params.first).first_day()
    return after_first and (params.last is None or at <= Period.parse(params.last).last_day())


def _token_budget(model: Any, max_tokens: int) -> int:
    """The most tokens of a text the model scores whole: ``max_tokens``, or fewer where its
    positions, less the special tokens around a text, hold fewer."""
    positions = getattr(model, "max_positions", None)
    if not positions:
        return max_tokens
    framing = len(getattr(model, "lead", ())) + len(getattr(model, "trail", ())) + 1
    return max(1, min(max_tokens, positions - framing))


def _first_tokens(model: Any, texts: Sequence[str], budget: int) -> tuple[list[str], list[bool]]:
    """Each text cut to its first ``budget`` tokens as the model's tokenizer reads them, and
    whether it was cut. A text of at most ``budget`` bytes has at most as many tokens (every
    tokenizer here reads bytes, or characters, into at least one token each), so only longer
    ones are tokenized; a model without a tokenizer (served) gets every text whole."""
    tokenizer = getattr(model, "tokenizer", None)
    long = [i for i, t in enumerate(texts) if len(t.encode("utf-8")) > budget]
    out, cut = list(texts), [False] * len(texts)
    if tokenizer is None or not long or not getattr(tokenizer, "is_fast", False):
        return out, cut
    encoded = tokenizer(
        [texts[i] for i in long], add_special_tokens=False, return_offsets_mapping=True
    )
    for i, offsets in zip(long, encoded["offset_mapping"], strict=True):
        if len(offsets) > budget:
            out[i], cut[i] = texts[i][: offsets[budget - 1][1]], True
    return out, cut


def predict_doc_cutoff(
    model, rows: Sequence[DatedText], params: DocCutoffParams, progress: Progress
) -> list[dict]:
    """One prediction per text: its period, family and score (summed log-probability, tokens
    and per-token NLL); a text without a period of the range, or given twice, is skipped with
    the reason."""
    granularity = Granularity[params.granularity.upper()]
    keyed, scored = [], []
    for row in rows:
        column = params.family_by or row.family_column
        family = row.fields.get(column) if column else None
        key = {"id": row.id, "family": family, "family_by": column if family else None}
        period, why = _period(row, granularity)
        key["period"] = period
        if why is None and not _within(period, params):
            why = f"dated outside {params.first or '...'}..{params.last or '...'}"
        if why is None and row.same_as is not None:
            why = "the same text and date as an earlier row (one document, scored once)"
        keyed.append((key, why))
        if why is None:
            scored.append(row.text)
    texts, cut = _first_tokens(model, scored, _token_budget(model, params.max_tokens))
    requests = [ScoreRequest(Cloze("", ""), text) for text in texts]
    scores = iter(zip(model.score(requests, progress=progress), cut, strict=True))
    out = []
    for key, why in keyed:
        if why is not None:
            out.append({**key, SKIPPED: why})
            continue
        score, was_cut = next(scores)
        if score is None or score.n_tokens == 0:
            out.append({**key, SKIPPED: model.unfit_reason if score is None else "no tokens"})
            continue
        out.append(
            {
                **key,
                "tokens": score.n_tokens,
                "logprob": score.logprob,
                "nll": -score.logprob / score.n_tokens,
                "cut": was_cut,
            }
        )
    return out


# ----- the estimate ---------------------------------------------------------------------------


def _period_order(periods: Sequence[str]) -> list[str]:
    return sorted(set(periods), key=lambda p: Period.parse(p).first_day())


def _perplexities(
    logprobs: np.ndarray, tokens: np.ndarray, pool: bool, resamples: int, seed: int
) -> tuple[float, np.ndarray]:
    """A period's perplexity and its value in each bootstrap resample of its documents."""
    nll = -logprobs / tokens
    value = float(np.exp(-logprobs.sum() / tokens.sum() if pool else nll.mean()))
    if resamples <= 0:
        return value, np.empty(0)
    blocks = []
    for counts in resample_counts(len(nll), resamples, seed):
        if pool:
            blocks.append(-(counts @ logprobs) / (counts @ tokens))
        else:
            blocks.append(counts @ nll / counts.sum(axis=1))
    return value, np.exp(np.concatenate(blocks))


def _interval(values: np.ndarray) -> list[float] | None:
    if not len(values):
        return None
    low, high = np.percentile(values, [2.5, 97.5])
    return [float(low), float(high)]


def lowest_perplexity(predictions: Sequence[dict], params: DocCutoffParams, seed: int = 0) -> dict:
    """The effective cutoff of one group of scored texts: the period of lowest perplexity,
    its 95% interval over resamples of the documents within each period, the share of
    resamples that agree, the documents and tokens it rests on, and the perplexity curve by
    period, each point with its interval and its documents."""
    by_period: dict[str, list[dict]] = defaultdict(list)
    for p in predictions:
        by_period[p["period"]].append(p)
    order = _period_order(list(by_period))
    if not order:
        return {"cutoff": None, "why": "no scored text", "documents": 0, "curve": []}
    values, draws, curve = [], [], []
    for place, period in enumerate(order):
        group = by_period[period]
        logprobs = np.array([p["logprob"] for p in group], dtype=np.float64)
        tokens = np.array([p["tokens"] for p in group], dtype=np.float64)
        value, drawn = _perplexities(
            logprobs, tokens, params.pool_tokens, params.resamples, seed + place
        )
        values.append(value)
        draws.append(drawn)
        curve.append(
            {
                "period": period,
                "perplexity": value,
                "perplexity_ci95": _interval(drawn),
                "documents": len(group),
                "tokens": int(tokens.sum()),
            }
        )
    best = int(np.argmin(values))
    estimate: dict[str, Any] = {"cutoff": order[best], "cutoff_ci95": None, "cutoff_share": None}
    if params.resamples > 0:
        argmins = np.argmin(np.stack(draws, axis=1), axis=1)
        low = int(np.percentile(argmins, 2.5, method="lower"))
        high = int(np.percentile(argmins, 97.5, method="higher"))
        estimate["cutoff_ci95"] = [order[low], order[high]]
        estimate["cutoff_share"] = float(np.mean(argmins == best))
    return {
        **estimate,
        "perplexity": values[best],
        "documents": len(predictions),
        "tokens": sum(point["tokens"] for point in curve),
        "periods": len(order),
        "curve": curve,
    }


def summarize_doc_cutoff(predictions: Sequence[dict], resamples: int = RESAMPLES) -> dict:
    """The effective cutoff of any group of predictions, at the default options."""
    params = DocCutoffParams(resamples=resamples)
    return {"n": len(predictions), **lowest_perplexity(predictions, params)}


def doc_cutoff_metrics(predictions: Sequence[dict], params: DocCutoffParams) -> dict:
    """One model's effective cutoff over all its scored texts and per family, with what each
    rests on and its perplexity curve, and the options the estimate was made with."""
    seed = params.seed or 0
    families = Counter(p["family"] for p in predictions if p.get("family") is not None)
    overall = lowest_perplexity(predictions, params, seed)
    return {
        "n": len(predictions),
        "method": METHOD,
        "family_by": next((p["family_by"] for p in predictions if p.get("family_by")), None),
        "granularity": params.granularity,
        "periods": _period_order([p["period"] for p in predictions]),
        "perplexity_of_a_period": "exp(-summed log-probability / summed tokens)"
        if params.pool_tokens
        else "exp(mean over documents of each document's per-token NLL)",
        "departures": _departures(params),
        "max_tokens": params.max_tokens,
        "cut_texts": sum(bool(p.get("cut")) for p in predictions),
        "resamples": params.resamples,
        "cutoff": overall["cutoff"],
        "cutoff_ci95": overall.get("cutoff_ci95"),
        "overall": overall,
        "by_family": {
            family: lowest_perplexity(
                [p for p in predictions if p.get("family") == family], params, seed
            )
            for family in sorted(families)
        },
    }


def _departures(params: DocCutoffParams) -> list[str]:
    """The options that depart from Dated Data, as metrics.json names them."""
    out = []
    if params.pool_tokens:
        out.append("pool_tokens: a period's perplexity pools its tokens (longer texts weigh more)")
    if params.max_tokens != DATED_DATA_TOKENS:
        out.append(f"max_tokens {params.max_tokens}: Dated Data scores a version's first 512")
    return out


def _said(group: dict) -> str:
    """An estimate as the terminal shows it: the period and its 95% interval."""
    if group.get("cutoff") is None:
        return group.get("why", "none")
    interval = group.get("cutoff_ci95")
    return f"{group['cutoff']} [{interval[0]}, {interval[1]}]" if interval else group["cutoff"]


def _figures(metrics: dict) -> dict:
    figures = {
        "cutoff": _said(metrics["overall"]),
        "documents": metrics["overall"].get("documents"),
    }
    for family, group in metrics.get("by_family", {}).items():
        figures[f"cutoff {family}"] = f"{_said(group)} ({group.get('documents')} documents)"
    return figures


def _columns() -> list[tuple]:
    import pyarrow as pa

    return [
        *((k, pa.string()) for k in KEYS),
        ("family_by", pa.string()),
        ("tokens", pa.int64()),
        ("logprob", pa.float64()),
        ("nll", pa.float64()),
        ("cut", pa.bool_()),
    ]


def _warnings(model, rows: Sequence[DatedText], params: DocCutoffParams) -> list[str]:
    """A named family column that no row has is refused before any text is scored."""
    if params.family_by and not any(params.family_by in row.fields for row in rows):
        fields = sorted({k for row in rows for k in row.fields})
        raise UserError(
            f"--family-by {params.family_by}: no row has a text field of that name; the rows' "
            f"text fields: {', '.join(fields) or 'none'}"
        )
    return []


DOC_CUTOFF = View(
    name="doc-cutoff",
    help="Effective cutoff the documents' way (Cheng et al., 2024, Dated Data): each dated "
    "text scored by the model's per-token perplexity, and per family of texts the period of "
    "lowest perplexity, with a bootstrap interval over documents and the perplexity curve by "
    "period. Reads the synthetic world's snippets.parquet (by relation), ECBD rows or a JSON "
    "Lines file of {text, date, family}.\n\nExample: chronoprobe probe doc-cutoff kg/world "
    "--rows snippets.parquet -m package:smollm2 --first 2011 --last 2022 -o doc-cutoff-smol/",
    params=DocCutoffParams,
    predict=predict_doc_cutoff,
    summarize=summarize_doc_cutoff,
    keys=KEYS,
    columns=_columns,
    metrics=doc_cutoff_metrics,
    figures=_figures,
    rows=RowsFormat(SNIPPETS, ("text", "date"), read_dated_texts, also=(("sentence", "year"),)),
    warnings=_warnings,
)
