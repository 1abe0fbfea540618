"""What a view is: the registry of views, and the params every view shares.

A view turns probe rows into adapter requests, hands the whole list to the adapter (which sorts
and batches it), and turns the answers into one prediction row per probe row; a row it cannot
answer comes back as ``{**key, "skipped": reason}``. Each view is one :class:`View` in
:data:`VIEWS`, and that is all the ``probe`` operation needs: ``chronoprobe probe VIEW ...`` and
a ``probe`` step with ``view: VIEW`` take the view's params (its own options beside the shared
:class:`ProbeParams`), and write the columns it declares.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BeforeValidator, Field, field_validator
from pydantic_core import PydanticCustomError

from chronoprobe.errors import UserError
from chronoprobe.models.registry import ADAPTERS
from chronoprobe.models.spec import LoadOptions, ModelSpec
from chronoprobe.params import NOT_ECHOED, Cli, DeviceParams, Params, choice_of
from chronoprobe.probes.rows import read_rows
from chronoprobe.registry import Registry
from chronoprobe.set_files import EXAMPLES

Progress = Callable[[int, int], None] | None
SKIPPED = "skipped"  # the field of a row a view did not answer; its value says why
# the split of rows whose answers ended before their period: a test of forgetting, left out of
# a drift view's overall and per-period figures unless it keeps them (``DriftMatrix``)
DELETED = "deleted"
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # a name a shell can export


def _one_or_more(value: Any) -> Any:
    """``model: package:smollm2`` in a config is a list of one spec."""
    return value if value is None or isinstance(value, list | tuple) else [value]


class ModelOptions(DeviceParams):
    """Which models, and how they load."""

    panel: ClassVar[str] = "Model loading"
    renamed: ClassVar[dict[str, str]] = {"models": "model"}

    model: Annotated[list[ModelSpec] | None, Cli(short="-m"), BeforeValidator(_one_or_more)] = (
        Field(
            None,
            description="Model specs to probe, in order: a Hugging Face id, a local "
            "save_pretrained directory, a .gguf file, package:smollm2 (offline), or openai:MODEL "
            "(a model behind an OpenAI-compatible server, see --base-url); in a config, one spec "
            "or a list. Leave out when --series or --trained gives the models.",
        )
    )
    family: choice_of(ADAPTERS) | None = Field(
        None, description="Model family, when the model's config does not tell (it usually does)."
    )
    device_map: str | None = Field(
        None,
        description="Spread a model too large for one GPU over the GPUs of this machine, "
        "layer by layer, then the CPU: auto, balanced or sequential (transformers' device_map; "
        "needs accelerate). --device then only picks bf16 (GPU) or fp32 (CPU).",
    )
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = Field(
        "auto",
        description="Precision of the weights: auto (bfloat16 on a GPU, float32 on the CPU), "
        "float32, bfloat16 or float16 (lm-evaluation-harness's dtype; float16 overflows in some "
        "models). Another dtype is another model to the answer cache. Example: --dtype float32.",
    )
    revision: str | None = Field(
        None,
        description="Branch, tag or commit of a Hugging Face model (default: its main branch); "
        "pin a commit to probe the same weights next year. Example: --revision "
        "0d2f2a3 (hub ids only).",
    )
    trust_remote_code: bool = Field(
        False,
        description="Let a Hugging Face model run the Python code its repository ships (models "
        "whose architecture transformers lacks). That code runs with your rights as the model "
        "loads, and can do anything you can: turn it on only for a repository you have read, "
        "pinned with --revision to that commit. Off: only transformers' own classes load.",
    )
    batch_size: int = Field(64, ge=1, description="Sequences per forward pass.")


class ServedOptions(Params):
    """How an ``openai:`` spec's server is asked (see :mod:`chronoprobe.models.served`)."""

    panel: ClassVar[str] = "Served models (openai:)"

    base_url: str | None = Field(
        None,
        description="The OpenAI-compatible server an openai:MODEL spec is asked at (default: "
        "OPENAI_BASE_URL, else OpenAI's API), e.g. --base-url http://127.0.0.1:8000/v1 for "
        "vLLM, SGLang, llama.cpp's server or transformers serve.",
    )
    api_key_env: str = Field(
        "OPENAI_API_KEY",
        description="The environment variable holding the server's key (openai: specs). The "
        "key itself is never written to a run, a log or the answer cache.",
    )
    concurrency: int = Field(
        8, ge=1, description="Requests in flight at once to the server (openai: specs)."
    )
    request_timeout: float = Field(
        60.0,
        gt=0,
        description="Seconds one request may take as a whole (connecting, the headers and the "
        "whole reply, however slowly it comes) before it is tried again.",
    )
    retries: int = Field(
        5,
        ge=0,
        description="Tries again after a 429, a 5xx, a timeout or a broken connection, waiting "
        "1, 2, 4... seconds (or the server's Retry-After) between them.",
    )
    requests_per_minute: int | None = Field(
        None, ge=1, description="Send at most this many requests in any minute (openai: specs)."
    )
    tokens_per_minute: int | None = Field(
        None,
        ge=1,
        description="Send at most this many tokens in any minute, estimated before sending as "
        "characters / 4 plus the tokens a request may generate (openai: specs).",
    )
    price_prompt: float | None = Field(
        None,
        ge=0,
        description="Price of a million prompt tokens, for the cost in metrics.json, e.g. "
        "--price-prompt 0.15 --price-completion 0.6.",
    )
    price_completion: float | None = Field(
        None, ge=0, description="Price of a million generated tokens, for the cost."
    )

    @field_validator("api_key_env")
    @classmethod
    def _a_variable_name(cls, name: str) -> str:
        """The name of a variable, never the key itself: a key given here would be repeated in
        messages and written with the params, so it is refused without being quoted."""
        if not ENV_NAME.fullmatch(name):
            raise PydanticCustomError(
                NOT_ECHOED,
                "takes the name of an environment variable holding the key (e.g. "
                "OPENAI_API_KEY), not the key itself; the value given is not repeated here",
            )
        return name

    @field_validator("base_url")
    @classmethod
    def _a_base_url(cls, url: str | None) -> str | None:
        return base_url_field(url)


def base_url_field(url: str | None) -> str | None:
    """A base URL option (``base_url``, ``judge_base_url``), refused before anything is
    written: a key in the URL would be written with the params, a CR or LF would split the
    request's headers (see ``checked_base_url``). The key's variable is not known here
    (``api_key_env`` comes after): the advice names the option."""
    from chronoprobe.models.served import checked_base_url

    if url is None:
        return None
    try:
        return checked_base_url(url, None)
    except ValueError as err:
        raise PydanticCustomError(NOT_ECHOED, str(err)) from None


class EngineOptions(Params):
    """Where the models run: this process, or Ray actors."""

    panel: ClassVar[str] = "Engine"

    engine: Literal["local", "ray"] = Field(
        "local",
        description="Where models run: local (this process) or ray (Ray actors, each holding "
        "a model on one GPU of the cluster of --address, or of a local Ray instance; several "
        "models spread one per actor, one model's rows are shared by all; needs pip install "
        "'chronoprobe[ray]').",
    )
    address: str | None = Field(
        None,
        description="Ray cluster address with engine ray, e.g. auto or ray://head:10001 "
        "(default: RAY_ADDRESS, else a Ray instance started on this machine).",
    )
    workers: int | None = Field(
        None,
        ge=1,
        description="Ray actors with engine ray (default: one per GPU of the cluster, else 1).",
    )


class ProbeParams(ModelOptions, ServedOptions, EngineOptions):
    """What every view takes: which models, how they load and are asked, where they run, and
    which rows (each view's own options beside these)."""

    renamed: ClassVar[dict[str, str]] = {"limit": "sample"}

    sample: int | None = Field(
        None, ge=1, description="Probe only the first N rows, in file order (a quick look)."
    )
    rows: str | None = Field(
        None,
        description="Which file of the data directory holds the rows (default: the view's, "
        "e.g. examples.jsonl).",
    )
    reuse_answers: bool = Field(
        True,
        description="Keep each request's answer in the cache's requests.sqlite and reuse it, so "
        "another view or run asking the same of the same weights costs nothing (off: always "
        "ask the model).",
    )

    def load_options(self) -> LoadOptions:
        """How each model of a probe step loads (every option of :class:`ModelOptions` that
        :class:`LoadOptions` takes), and how a served one is asked, here and in a Ray actor
        alike."""
        loading = {f.name for f in dataclasses.fields(LoadOptions)} - {"served"}
        served = {name: getattr(self, name) for name in ServedOptions.model_fields}
        return LoadOptions(**{name: getattr(self, name) for name in loading}, served=served)


@dataclass(frozen=True)
class RowsFormat:
    """What a view reads: its rows file in a probe set, the fields that tell its rows from
    other files' and how to read them (cloze rows by default: a query with one [MASK] and
    its answer labels); ``also``: other sets of fields its reader takes as well (rows of
    another view's kind, which are named as that view's)."""

    file: str = EXAMPLES
    fields: tuple[str, ...] = ("query", "answer_labels")
    read: Callable[[Path], Sequence[Any]] = read_rows
    also: tuple[tuple[str, ...], ...] = ()

    def takes(self, row: dict) -> bool:
        return any(all(f in row for f in fields) for fields in (self.fields, *self.also))


CLOZE_ROWS = RowsFormat()


def _no_deleted(params: Any) -> bool:
    return False


@dataclass(frozen=True)
class DriftMatrix:
    """A view over drift rows (a query and answer labels, per period and split: drift sets,
    TempLAMA), whose answer depends on the query and its labels alone: each distinct query is
    answered once, and the models x periods matrix is written (matrix.json).

    ``metrics``: the matrix's metrics, its default first (empty: every figure ``summarize``
    gives). ``prepare(predictions)``: the predictions with what a metric needs from all of
    them at once (the PLL's temporal ranks compare a query's labels across periods).
    ``cell_metrics``: figures of a cell that ``summarize`` does not give, name -> (rows,
    resamples) -> Estimate. ``keeps_deleted(params)``: whether deleted rows, which carry the
    previous period's answers, count in the overall and per-period figures (no by default)."""

    metrics: tuple[str, ...] = ()
    prepare: Callable[[Sequence[dict]], list[dict]] | None = None
    cell_metrics: dict[str, Callable[[Sequence[dict], int], Any]] = field(
        default_factory=dict, hash=False, compare=False
    )
    keeps_deleted: Callable[[Any], bool] = _no_deleted


@dataclass(frozen=True)
class View:
    """One view. ``predict(model, rows, params, progress)`` answers rows;
    ``summarize(predictions, resamples=...)`` is its figures over any group of them, as
    metrics.json holds them: ``n`` (the rows) and each figure with its 95% interval beside it
    (``name`` and ``name_ci95``, see :func:`chronoprobe.metrics.uncertainty.summary`);
    ``columns()`` names every prediction field (pyarrow types), the row's ``keys`` first.
    Everything else has a default: one model's metrics.json entry is ``summarize`` over its
    predictions, there are no figures over all models, the command line shows every figure,
    the rows are cloze rows (``examples.jsonl``) and the view is no drift view.

    The hooks a view owns its options through, so that the probe step names none of them:
    ``check(params, inputs)`` gives the problems of the view's own options (in the command
    line's words), ``answered_by(params)`` the models its own options name, as (name, spec)
    (answers read from a file, say), and ``for_model(params, model, say)`` the params to probe
    one model with.

    Its report section is the one registered for ``probe:NAME`` in
    :data:`chronoprobe.report.sections.SECTIONS`, else the generic section of any view (each
    model's figures with their intervals)."""

    name: str
    help: str
    params: type[ProbeParams]
    predict: Callable[..., list[dict]]
    summarize: Callable[..., dict[str, Any]]
    columns: Callable[[], list[tuple[str, Any]]]
    keys: tuple[str, ...] = ("id", "period", "split")  # what every prediction repeats of its row
    rows: RowsFormat = CLOZE_ROWS
    drift: DriftMatrix | None = None
    # (predictions, params) -> one model's metrics.json entry (default: ``summarize``)
    metrics: Callable[[Sequence[dict], Any], dict] | None = None
    # (per-model entries, params) -> the figures over all models (default: none)
    aggregate: Callable[[dict[str, dict], Any], dict] | None = None
    # one model's metrics.json entry -> the few figures the command line shows for it
    # (default: every figure, with its interval)
    figures: Callable[[dict], dict[str, Any]] | None = None
    selection: str | None = None  # how the view picks its prediction, for metrics.json
    check: Callable[[Any, frozenset[str]], list[str]] | None = None
    answered_by: Callable[[Any], list[tuple[str, ModelSpec]]] | None = None
    for_model: Callable[[Any, Any, Callable[[str], None]], Any] | None = None
    # (model, rows, params) -> what a user should know before the work starts
    warnings: Callable[[Any, Sequence[Any], Any], list[str]] | None = None

    def keeps_deleted(self, params: Any) -> bool:
        return self.drift is not None and self.drift.keeps_deleted(params)

    def model_metrics(self, predictions: Sequence[dict], params: Any) -> dict:
        """One model's metrics.json entry: the view's ``metrics``, else ``summarize`` over its
        predictions. A drift view's deleted rows carry the previous period's answers, so by
        default they are left out of its figures (as out of its matrix, and as the built-in
        drift views do) unless the view keeps them."""
        if self.metrics:
            return self.metrics(predictions, params)
        if self.drift is None:
            return self.summarize(predictions)
        left_out = [] if self.keeps_deleted(params) else [DELETED]
        kept = [p for p in predictions if p.get("split") not in left_out]
        return {**self.summarize(kept), "overall_excludes": left_out}

    def overall(self, per_model: dict[str, dict], params: Any) -> dict:
        """The figures over all models, beside their entries in metrics.json."""
        return self.aggregate(per_model, params) if self.aggregate else {}

    def shown(self, entry: dict) -> dict[str, Any]:
        """What the command line shows of one model's entry."""
        if self.figures:
            return self.figures(entry)
        return {k: v for k, v in entry.items() if figure_name(k, entry) is not None}

    def metric_names(self, predictions: Sequence[dict]) -> tuple[str, ...]:
        """The metrics a matrix of these predictions can show, the default first: the drift
        matrix's ``metrics``, else each figure its ``summarize`` gives (a key with an
        interval)."""
        if self.drift is not None and self.drift.metrics:
            return self.drift.metrics
        summary = self.summarize(predictions, resamples=0)
        return tuple(k for k in summary if figure_name(k, summary) == k)


VIEWS: Registry[View] = Registry(
    "view",
    {
        "single-token": "chronoprobe.probes.cloze_views:SINGLE_TOKEN",
        "multi-token": "chronoprobe.probes.cloze_views:MULTI_TOKEN",
        "pll": "chronoprobe.probes.cloze_views:PLL",
        "span-ppl": "chronoprobe.probes.span_ppl:SPAN_PPL",
        "recite": "chronoprobe.probes.recite:RECITE",
        "generate": "chronoprobe.probes.generate:GENERATE",
        "date-context": "chronoprobe.probes.date_consistency:DATE_CONTEXT",
        "cutoff": "chronoprobe.probes.cutoff:CUTOFF",
        "doc-cutoff": "chronoprobe.probes.doc_cutoff:DOC_CUTOFF",
        "judge-agreement": "chronoprobe.probes.judge_agreement:JUDGE_AGREEMENT",
    },
)


# rows no view reads, told by their fields, and what reads them
OTHER_ROWS = (
    ("CronQuestions questions", ("question", "answer_type", "times"), "`chronoprobe kgqa`"),
)


def no_rows_file(path: Path, reads: str) -> str:
    """Why the rows file ``path`` of input `data` cannot be read, which holds ``reads``: a KG
    given in place of a probe set is named so, with how to build one from it."""
    folder = path.parent
    if (folder / "manifest.json").is_file():
        return (
            f"{folder}: a KG (it holds manifest.json), not a probe set; build a probe set from "
            f"it first, e.g. chronoprobe build drift {folder} --out drift/ (chronoprobe build "
            "--help lists the builders), and give that"
        )
    return (
        f"{path}: no such file; input `data` must hold {reads} ({path.name}; another file of "
        "it with `rows`)"
    )


def check_rows_kind(view: View, path: Path) -> None:
    """Stop at once when the first row of ``path`` lacks the fields ``view`` reads but has
    another kind's: the error names the views (or the command) that read such rows."""
    from chronoprobe.jsonl import numbered_lines

    try:
        number, first = next(iter(numbered_lines(path)), (0, None))
    except ValueError:
        return  # broken JSON: the view's reader names the line
    if not isinstance(first, dict) or view.rows.takes(first):
        return
    fits = [v.name for _, v in VIEWS.items() if all(f in first for f in v.rows.fields)]
    if fits:
        names = fits[0] if len(fits) == 1 else f"{', '.join(fits[:-1])} or {fits[-1]}"
        kind, reader = (
            f"rows for the {names} view",
            f"probe them with `chronoprobe probe {fits[0]}`"
            if len(fits) == 1
            else "probe them with `chronoprobe probe VIEW`, VIEW one of those",
        )
    else:
        found = [(k, r) for k, fields, r in OTHER_ROWS if all(f in first for f in fields)]
        if not found:
            return  # unknown: the view's reader names what is missing
        kind, reader = found[0][0], f"they are read by {found[0][1]}"
    raise UserError(
        f"{path}:{number}: these are {kind} (fields {', '.join(sorted(first)[:8])}), not "
        f"the {view.name} view's (it needs {', '.join(view.rows.fields)}); {reader}"
    )


def figure_name(key: str, entry: dict) -> str | None:
    """The figure ``key`` of a metrics.json group is or belongs to (``accuracy`` for
    ``accuracy`` and ``accuracy_ci95``), None for a key that is no figure's: a figure is a key
    with its interval beside it."""
    name = key.removesuffix("_ci95")
    return name if f"{name}_ci95" in entry else None


def mean(values: Sequence[float]) -> float | None:
    """None for an empty group, so metrics.json stays valid JSON (no NaN)."""
    return float(sum(values) / len(values)) if values else None
