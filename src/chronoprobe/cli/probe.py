"""`chronoprobe probe`: run one evaluation view of a model over a probe set."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from chronoprobe.cli.errors import user_errors

console = Console(stderr=True)


class ViewName(StrEnum):
    single_token = "single-token"
    multi_token = "multi-token"
    pll = "pll"
    span_ppl = "span-ppl"


class ConditionName(StrEnum):
    original = "original"
    no_ent = "no-ent"
    random_def = "random-def"
    definition = "definition"


class FamilyName(StrEnum):
    masked = "masked"
    causal = "causal"
    seq2seq = "seq2seq"


@user_errors
def probe(
    data: Path = typer.Argument(
        ..., help="Probe set JSONL (e.g. examples.jsonl from build drift)."
    ),
    model: str = typer.Option(
        ...,
        "--model",
        "-m",
        help="Hugging Face id, local save_pretrained directory, .gguf file, or package:smollm2.",
    ),
    view: ViewName = typer.Option(..., "--view", help="Which evaluation view to run."),
    out: Path = typer.Option(..., "--out", "-o", help="Directory for predictions and metrics."),
    batch_size: int = typer.Option(64, min=1, help="Sequences per forward pass."),
    device: str = typer.Option("auto", help="auto (cuda if available), cpu, cuda, cuda:1, mps."),
    top_k: int = typer.Option(10, min=1, help="single-token: predictions listed per row."),
    max_tokens: int = typer.Option(5, min=1, help="multi-token: longest filling tried (M)."),
    family: FamilyName | None = typer.Option(
        None, help="Model family, when the config does not tell (it usually does)."
    ),
    condition: list[ConditionName] | None = typer.Option(
        None,
        "--condition",
        help="span-ppl: ECBD input condition; repeat for several (default: all four).",
    ),
    cutoff_year: int | None = typer.Option(
        None, help="span-ppl: last year of the model's training data (seen vs unseen groups)."
    ),
    seed: int = typer.Option(0, help="span-ppl: seed of RANDOM DEF's choice of definitions."),
    recall_beams: int = typer.Option(
        0,
        min=0,
        help="span-ppl, T5-style models: also beam-search each gap with this many beams and "
        "report Recall@10 (the ECBD paper used 100; 0: off).",
    ),
    include_deleted: bool = typer.Option(
        False,
        "--include-deleted",
        help="Count deleted rows (they carry the previous period's answers) in the overall and "
        "per-period metrics too; by default only the deleted split's own metrics hold them.",
    ),
) -> None:
    """Probe a model with one view; write DIR/predictions.jsonl and DIR/metrics.json.

    Views: **single-token** ranks the vocabulary at the gap (rows with a one-token gold label;
    P@1/10/50/100, MRR); **multi-token** fills 1..M tokens greedily and keeps the most likely
    per token (exact match, token F1, ROUGE-L; labels longer than M tokens are left out, rows
    with no label left are skipped and counted); **pll** scores every gold label in its
    sentence (masked LMs: pseudo-log-likelihood; causal: log p(label + right context | left
    context); seq2seq: decoder scoring). Metrics are reported overall, per period and per split;
    deleted rows count in their split only unless --include-deleted. A causal model reads no
    question when the gap comes first: the command warns, single-token and multi-token skip
    those rows. **span-ppl** reads ECBD examples
    (build ecbd) and scores each masked span under the paper's conditions: original, no-ent
    (mention replaced by "the entity"), random-def (another entity's definition prepended),
    definition (the entity's own definition prepended); perplexity is averaged per entity first,
    per year, seen/unseen group (--cutoff-year), span type and condition. An interrupted run
    resumes from its finished shards when rerun with the same arguments. bf16 on a GPU, fp32
    on the CPU. With --recall-beams, T5-style models also get the paper's Recall@10: is the
    gold span among the ten best distinct spans beam search fills the gap with?

    Example: chronoprobe probe drift/examples.jsonl --model package:smollm2 --view pll -o out/
    """
    from chronoprobe.models.spec import load_model
    from chronoprobe.probes import ViewOptions, run_probe

    if not data.is_file():
        raise FileNotFoundError(f"{data}: no such probe file")
    with console.status(f"loading {model}"):
        adapter = load_model(
            model,
            family=family.value if family else None,
            device=device,
            batch_size=batch_size,
        )
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task(f"{view.value} rows", total=None)

        def advance(done: float, total: float) -> None:
            progress.update(task, completed=int(done), total=total)

        metrics = run_probe(
            data,
            adapter,
            view.value,
            out,
            ViewOptions(
                top_k=top_k,
                max_tokens=max_tokens,
                conditions=tuple(c.value for c in condition or ConditionName),
                cutoff_year=cutoff_year,
                seed=seed,
                recall_beams=recall_beams,
            ),
            progress=advance,
            include_deleted=include_deleted,
            warn=lambda message: console.print(f"[yellow]warning:[/] {message}"),
        )
    overall = ", ".join(
        f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}"
        for k, v in metrics["overall"].items()
        if not isinstance(v, dict)
    ) or ", ".join(  # span-ppl: one summary per condition
        f"{k} perplexity {v['perplexity']:.4g}"
        + (f" Recall@10 {v['recall@10']:.3f}" if "recall@10" in v else "")
        for k, v in metrics["overall"].items()
    )
    console.print(f"[green]wrote[/] {out / 'predictions.jsonl'} and metrics.json: {overall}")
    if metrics.get("overall_excludes"):
        console.print(f"overall and per period leave out: {', '.join(metrics['overall_excludes'])}")
    for reason, count in metrics.get("skipped", {}).items():
        console.print(f"skipped {count:,} of {metrics['rows']:,} rows: {reason}")
