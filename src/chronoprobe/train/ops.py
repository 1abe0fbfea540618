"""The ``series`` and ``pretrain`` operations: masked LMs trained in-tool on a world's text.

``series`` (DynamicTempLAMA's model series, offline: one masked LM per period, each continuing
the last) and ``pretrain`` (a stand-in for RoBERTa, for LAMA-TK's pretrained start) share one
masked-LM training recipe (:mod:`chronoprobe.train.mlm`): whole-word and salient-span masking,
AdamW with a linear schedule, a byte-level BPE tokenizer trained on the same text.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from chronoprobe.atomic import atomic_write_text
from chronoprobe.errors import UserError
from chronoprobe.step_context import SHARDS_DIR, StepContext
from chronoprobe.steps import Input, read_step_record, step_kind
from chronoprobe.train.params import MemorizeParams, PretrainParams, SeriesParams

KG_WITH_TEXT = Input("kg", "A KG directory with text: `kg synth` writes its snippets and articles.")


def show_series(out: Path):
    from rich.table import Table

    series = json.loads((out / "series.json").read_text(encoding="utf-8"))
    table = Table(title=f"model series in {out}")
    for column in ("period", "parent", "sentences", "final loss"):
        table.add_column(column, justify="left" if column in ("period", "parent") else "right")
    for p in series["periods"]:
        loss = "-" if p["final_loss"] is None else f"{p['final_loss']:.3f}"
        table.add_row(p["period"], p["parent"] or "-", f"{p['examples']:,}", loss)
    return table


@step_kind(
    "series",
    SeriesParams,
    inputs=(KG_WITH_TEXT,),
    command=("train", "series"),
    show=show_series,
    trains=True,
)
def run_series(ctx: StepContext, params: SeriesParams, inputs: dict[str, Path]) -> None:
    """Train one masked LM per period, each starting from the previous period's model.

    Offline stand-in for TimeLMs: model 1 reads all text up to the end of the first period,
    each later model continues from its predecessor on its own period's text, so it knows its
    period's facts and not later ones. Text: the KG's dated snippets, plus (by default) every
    fact holding in the period in the words of the drift probes ("X plays for Y.").

    Writes OUT/<period>/ (a Hugging Face model directory with its tokenizer: give it to
    `chronoprobe probe VIEW -m`, or the whole series with `--series OUT`), OUT/tokenizer/,
    OUT/series.json and metrics.json. An interrupted run resumes after its last finished
    period.

    Example: chronoprobe train series kg/world --first 2016 --last 2020 -o series/
    """
    from chronoprobe.train.series import train_series

    if params.seed is None:
        params = params.model_copy(update={"seed": ctx.seed})
    work = ctx.out_dir / SHARDS_DIR / "series"
    result = train_series(inputs["kg"], params.periods(), work, params, progress=ctx.progress)
    for entry in sorted(work.iterdir()):
        if not entry.name.startswith("."):
            os.replace(entry, ctx.out_dir / entry.name)
    metrics = {
        "final_loss": {p.period: p.final_loss for p in result.periods},
        "sentences": {p.period: p.examples for p in result.periods},
    }
    atomic_write_text(ctx.out_dir / "metrics.json", json.dumps(metrics, indent=2) + "\n")
    ctx.log.info(f"trained {len(result.periods)} models: {', '.join(metrics['final_loss'])}")


MODEL_DIR = "model"
TEXT_FILES = {"articles": "articles.parquet", "snippets": "snippets.parquet"}


def text_lines(kg_dir: Path, sources: list[str]) -> list[str]:
    """The non-empty lines of each source's ``text`` column, in file order.

    Articles are split at line breaks (one paragraph a line) so that a line fits the model.
    """
    import pyarrow.parquet as pq

    lines: list[str] = []
    for source in sources:
        path = kg_dir / TEXT_FILES[source]
        if not path.is_file():
            raise UserError(
                f"{kg_dir}: no {path.name}; pretraining on {source} needs a KG with text "
                "(`kg synth` with text on)"
            )
        schema = pq.read_schema(path)
        if "text" not in schema.names:
            raise UserError(f"{path}: has no column 'text' (columns: {', '.join(schema.names)})")
        for text in pq.read_table(path, columns=["text"]).column("text").to_pylist():
            lines.extend(line.strip() for line in (text or "").splitlines() if line.strip())
    if not lines:
        raise UserError(f"{kg_dir}: the {' and '.join(sources)} hold no text to pretrain on")
    return lines


@step_kind(
    "pretrain", PretrainParams, inputs=(KG_WITH_TEXT,), command=("train", "pretrain"), trains=True
)
def run_pretrain(ctx: StepContext, params: PretrainParams, inputs: dict[str, Path]) -> None:
    """Pretrain a masked LM on a world's own text, a stand-in for RoBERTa offline.

    The LAMA-TK paper compares a randomly initialised model with one pretrained on natural text
    (Zhao et al., 2022, Table 5). Offline there is no roberta-base to start from, so this
    trains one on the KG's articles (one line per paragraph) and, if asked, its dated snippets,
    with a byte-level BPE tokenizer trained on the same text. Writes OUT/model/ (Hugging Face
    layout with its tokenizer, which `train memorize --init` or a memorize step's input `init`
    starts from) and metrics.json (lines, loss per epoch, seconds).

    Example: chronoprobe train pretrain kg/world --epochs 1 -o pretrained/
    """
    from chronoprobe.kg.graph import TemporalKG
    from chronoprobe.train.mlm import MentionFinder, text_tokenizer
    from chronoprobe.train.series import start_model, train_period

    if params.seed is None:
        params = params.model_copy(update={"seed": ctx.seed})
    lines = text_lines(inputs["kg"], params.sources)
    began = time.perf_counter()
    tokenizer = text_tokenizer(lines, params.vocab_size)
    labels = TemporalKG.load(inputs["kg"]).entities.column("label").to_pylist()
    model = start_model(None, tokenizer, params)
    losses = train_period(
        model,
        tokenizer,
        lines,
        params,
        params.seed,
        progress=ctx.progress,
        label=ctx.step_id,
        mentions=MentionFinder(tokenizer, labels),
    )
    target = ctx.out_dir / MODEL_DIR
    model.save_pretrained(target)
    tokenizer.save_pretrained(target)
    metrics = {
        "lines": len(lines),
        "sources": params.sources,
        "preset": params.preset,
        "parameters": sum(p.numel() for p in model.parameters()),
        "word_vocab": len(tokenizer),
        "epochs": len(losses),
        "losses": [round(loss, 6) for loss in losses],
        "final_loss": round(losses[-1], 6) if losses else None,
        "seconds": round(time.perf_counter() - began, 3),
    }
    atomic_write_text(ctx.out_dir / "metrics.json", json.dumps(metrics, indent=2) + "\n")
    loss = "-" if metrics["final_loss"] is None else f"{metrics['final_loss']:.4f}"
    ctx.log.info(f"pretrained on {len(lines):,} lines, final loss {loss}")


# --- memorize (LAMA-TK) -----------------------------------------------------------------------


MEMORIZE_INPUTS = (
    Input(
        "statements",
        "A LAMA-TK set: a `build lamatk` directory, or its statements.jsonl.",
        required=False,
        file_param="rows",
    ),
    Input("kg", "A KG directory to build the statements from.", required=False, option=True),
    Input(
        "pretrained",
        "A step whose model/ (e.g. `train pretrain`) is the masked LM to start from.",
        required=False,
        option=True,
    ),
)


def _memorize_check(params: MemorizeParams, inputs: frozenset[str]) -> list[str]:
    problems = []
    if len({"statements", "kg"} & inputs) != 1:
        problems.append(
            "inputs: give the statements (a `build lamatk` step) or a `kg`, one of them"
        )
    if "pretrained" in inputs and params.init is not None:
        problems.append("init: give `init` or the input `pretrained`, not both")
    return problems


def _statements_file(ctx: StepContext, params: MemorizeParams, inputs: dict[str, Path]) -> Path:
    if "statements" in inputs:
        path = inputs["statements"] / (params.rows or "statements.jsonl")
        if not path.is_file():
            raise UserError(f"{path}: no such file; input `statements` is a LAMA-TK set")
        return path
    from chronoprobe.datasets.writers import write_lamatk
    from chronoprobe.kg.graph import TemporalKG

    write_lamatk(
        TemporalKG.load(inputs["kg"]),
        ctx.out_dir,
        task=params.task,
        conflicts=params.conflicts,
        sample=params.sample,
        seed=params.seed,
    )
    return ctx.out_dir / "statements.jsonl"


def show_memorize(out: Path) -> str:
    training = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    return (
        f"trained {training['epochs']} epochs on {training['statements']:,} statements, final "
        f"loss {training['final_loss']:.4f}; recite it with `{recite_command(out)}`"
    )


def recite_command(out: Path) -> str:
    """The command that recites the statements a memorize step's output in ``out`` was fed:
    the statements file it was given (its step.json names it), or the one it built into
    ``out`` from a KG."""
    import shlex

    record = read_step_record(out) or {}
    given = (record.get("inputs") or {}).get("statements")
    rows = (record.get("params") or {}).get("rows") or "statements.jsonl"
    data = Path(given) / rows if isinstance(given, str) else out / "statements.jsonl"
    recited = out.with_name(f"{out.name}-recited") if out.name else Path("recited")
    words = ["chronoprobe", "probe", "recite", data, "--trained", out, "-o", recited]
    return shlex.join(map(str, words))


@step_kind(
    "memorize",
    MemorizeParams,
    inputs=MEMORIZE_INPUTS,
    check=_memorize_check,
    command=("train", "memorize"),
    show=show_memorize,
    trains=True,
)
def run_memorize(ctx: StepContext, params: MemorizeParams, inputs: dict[str, Path]) -> None:
    """Feed temporal knowledge into a masked LM whose vocabulary holds every entity and year.

    LAMA-TK (Zhao et al., 2022): each statement's masked slot is one mask token; the model
    learns to predict it as one symbol among all entities and years. With --time-masking k, a
    start or end statement is shown without its other time ("S held the position of O from
    [MASK].") with probability k, in each of the --duplicates copies of the data. A checkpoint
    (safetensors) is kept after every epoch, so an interrupted run resumes from its last one.

    Writes OUT/model/ (the trained model), the statements it was fed (with input `kg`) and
    metrics.json (the training record). Recite it with the recite view: `chronoprobe probe
    recite STATEMENTS --trained OUT -o RECITED` (the command prints it with your paths), or a
    `probe` step with `view: recite` and input `trained`.

    Example: chronoprobe train memorize lamatk/statements.jsonl --preset tiny --epochs 30 -o mem/
    """
    import shutil

    from chronoprobe.train.lamatk.memorize import TrainOptions, train
    from chronoprobe.train.lamatk.statements import load_statements

    if params.seed is None:
        params = params.model_copy(update={"seed": ctx.seed})
    statements = _statements_file(ctx, params, inputs)
    init = str(_model_dir(inputs["pretrained"])) if "pretrained" in inputs else params.init
    options = TrainOptions(
        preset=params.preset,
        init=init,
        epochs=params.epochs,
        batch_size=params.batch_size,
        lr=params.learning_rate,
        time_masking=params.time_masking,
        duplicates=params.duplicates,
        seed=params.seed,
    )
    runs = ctx.out_dir / SHARDS_DIR / "train"
    result = train(statements, runs, options, device=params.device, progress=ctx.progress)
    resumed = f" (resumed after epoch {result.resumed_from})" if result.resumed_from else ""
    ctx.log.info(f"trained {result.epochs_run} epochs{resumed}")
    shutil.copytree(result.checkpoint, ctx.out_dir / MODEL_DIR)
    history = result.history
    metrics = {
        "statements": len(load_statements(statements)),
        "epochs": len(history),
        "final_loss": history[-1]["loss"] if history else None,
        "statements_per_s": history[-1]["statements_per_s"] if history else None,
        "losses": [h["loss"] for h in history],
        "time_masking": params.time_masking,
        "duplicates": params.duplicates,
        "preset": params.preset if init is None else init,
    }
    stats = statements.parent / "stats.json"
    if stats.is_file() and "sample" in (drawn := json.loads(stats.read_text(encoding="utf-8"))):
        metrics["sample"] = drawn["sample"]
    atomic_write_text(ctx.out_dir / "metrics.json", json.dumps(metrics, indent=2) + "\n")


def _model_dir(step: Path) -> Path:
    """A step's model/ directory, or the step directory itself when it is the model."""
    return step / MODEL_DIR if (step / MODEL_DIR).is_dir() else step
