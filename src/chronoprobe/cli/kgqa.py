"""`chronoprobe kgqa ...`: question answering over a temporal KG (CronKGQA, EmbedKGQA, LM)."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from chronoprobe.cli.errors import user_errors

app = typer.Typer(
    help=(
        "Temporal KG question answering: train CronKGQA, EmbedKGQA or an LM-only baseline on a "
        "CronQuestions directory (`chronoprobe build cronq`) with the embeddings of a TKG "
        "checkpoint (`chronoprobe tkg train`), and report Hits@1/10 as the CronQuestions paper "
        "does (simple vs complex, per reasoning type, entity vs time answers)."
    ),
    no_args_is_help=True,
)
console = Console(stderr=True)


class ModelName(StrEnum):
    cronkgqa = "cronkgqa"
    embedkgqa = "embedkgqa"
    lm = "lm"


class Select(StrEnum):
    best_valid = "best-valid"
    last = "last"


class Split(StrEnum):
    train = "train"
    valid = "valid"
    test = "test"


class QuestionInput(StrEnum):
    auto = "auto"
    template = "template"
    question = "question"


def _say(message: str) -> None:
    console.print(message, highlight=False)


@app.command()
@user_errors
def train(
    cronq_dir: Path = typer.Argument(
        ..., help="Question directory with train/valid/test.jsonl (`chronoprobe build cronq`)."
    ),
    tkg: Path = typer.Option(
        ..., "--tkg", help="TKG checkpoint directory (`chronoprobe tkg train`) of the same KG."
    ),
    out: Path = typer.Option(..., "--out", "-o", help="Checkpoint directory to write (or resume)."),
    model: ModelName = typer.Option(
        ModelName.cronkgqa,
        help="cronkgqa: TComplEx scoring with the question as relation; embedkgqa: ComplEx "
        "scoring, learned years; lm: the encoder and a classifier, no KG embeddings.",
    ),
    encoder: str = typer.Option(
        "tiny",
        help="Question encoder: a Hugging Face id or local path (bert-base-uncased, "
        "distilbert-base-uncased, roberta-base), or tiny: a 2-layer BERT built here, with a "
        "WordPiece tokenizer trained on the training questions (offline).",
    ),
    epochs: int = typer.Option(10, min=0, help="Epochs in total, resumed ones included."),
    batch_size: int = typer.Option(128, min=2, help="Questions per training step."),
    lr: float = typer.Option(
        1e-3, help="Adam learning rate (1e-3 suits tiny; use 2e-5 to 2e-4 for pretrained ones)."
    ),
    dropout: float = typer.Option(0.1, min=0.0, max=1.0, help="Dropout on the question vector."),
    seed: int = typer.Option(0, help="Seed of the initialisation, shuffles and dropout."),
    device: str = typer.Option("auto", help="auto (CUDA when present), cpu, cuda, cuda:N, mps."),
    resume: bool = typer.Option(
        True, "--resume/--no-resume", help="Continue from the checkpoint in --out if there is one."
    ),
    select: Select = typer.Option(
        Select.best_valid,
        help="Which epoch's model is tested (and `kgqa eval` uses): the best on the valid "
        "split by Hits@1, as the CronKGQA code keeps it, or the last.",
    ),
    answer_type_given: bool = typer.Option(
        False,
        "--answer-type-given",
        help="Not the paper's protocol: tell the model each question's gold answer type, and "
        "run the softmax over that type's candidates only (entities or years). Off: one "
        "softmax over entities and years together, as the paper.",
    ),
    question_input: QuestionInput = typer.Option(
        QuestionInput.auto,
        help="What the encoder reads: the question's template (its wording with {head}, "
        "{tail}, {time}... placeholders) or the question text with names. auto: the template "
        "for tiny, whose vocabulary would otherwise learn the training questions' names; the "
        "text for a pretrained encoder.",
    ),
) -> None:
    """Train a QA model, checkpoint it every epoch, and rank the test questions' answers.

    Entity linking is perfect, as in the paper: each question's annotated entities and time
    give the head, tail and time the model scores with, and one softmax runs over every
    entity and year. The TKG tables stay frozen. After training, --out holds the checkpoint,
    metrics.json (with the oracle-relation ceiling of the TKG on the simple questions) and
    predictions.parquet (top 10 per test question). Run the same command again after an
    interruption to continue after the last finished epoch.

    Example: chronoprobe kgqa train cronq/ --tkg emb/ --model cronkgqa --epochs 10 --out qa/
    """
    from chronoprobe.kgqa.train import TrainConfig
    from chronoprobe.kgqa.train import train as train_model

    config = TrainConfig(
        model=model.value,
        encoder=encoder,
        epochs=epochs,
        batch_size=batch_size,
        learning_rate=lr,
        dropout=dropout,
        seed=seed,
        device=device,
        select=select.value,
        answer_type_given=answer_type_given,
        question_input=question_input.value,
    )
    result = train_model(cronq_dir, tkg, config, out, resume=resume, log=_say)
    console.print(f"[green]wrote[/] {out}")
    print_metrics(result.metrics, f"{model.value}, test split, epoch {result.epoch}")


def print_metrics(metrics: dict, title: str) -> None:
    """The paper's Tables 5-6 layout: one row per question group, Hits@1 and Hits@10, then the
    oracle relation's rows, and the protocol under the title."""
    from chronoprobe.kgqa.train import describe_protocol

    caption = describe_protocol(metrics["answer_type_given"])
    caption += f"; the encoder read the {metrics['question_input']}"
    oracle = metrics.get("oracle_relation", {}).get("types", {})
    if oracle:
        caption += (
            ". Oracle relation (TKG ceiling): the TKG's tables with the true relation in the "
            "question's place, ranking the candidates of the answer type"
        )
    table = Table(title=title, caption=caption)
    for column in ("questions", "n", "Hits@1", "Hits@10", "MRR"):
        table.add_column(column, justify="left" if column == "questions" else "right")
    groups = [("overall", metrics), ("simple", metrics["simple"]), ("complex", metrics["complex"])]
    groups += [(f"  {t}", m) for t, m in metrics.get("types", {}).items()]
    groups += [(f"{a} answers", m) for a, m in metrics.get("answer_types", {}).items()]
    groups += [(f"  {t}, oracle relation", m) for t, m in oracle.items()]
    for name, m in groups:
        table.add_row(
            name,
            f"{m['questions']:,}",
            f"{m['hits@1']:.3f}",
            f"{m['hits@10']:.3f}",
            f"{m['mrr']:.3f}",
        )
    Console().print(table)


@app.command("eval")
@user_errors
def evaluate(
    checkpoint_dir: Path = typer.Argument(..., help="Checkpoint directory from `kgqa train`."),
    cronq_dir: Path = typer.Argument(..., help="Question directory to answer."),
    split: Split = typer.Option(Split.test, help="Which question file to answer."),
    as_json: bool = typer.Option(False, "--json", help="Print the metrics as JSON."),
    predictions: Path | None = typer.Option(
        None, help="Also write each question's top 10 answers and rank to this Parquet file."
    ),
    batch_size: int = typer.Option(256, min=1, help="Questions scored at once."),
    device: str = typer.Option("auto", help="auto (CUDA when present), cpu, cuda, cuda:N, mps."),
    answer_type_given: bool | None = typer.Option(
        None,
        "--answer-type-given/--no-answer-type-given",
        help="Give the model the gold answer type (softmax over that type only), or not (one "
        "softmax over entities and years, the paper's protocol). Default: as it was trained.",
    ),
    oracle_relation: bool = typer.Option(
        False,
        "--oracle-relation",
        help="Also score the simple questions with the true relation in the question vector's "
        "place, using the TKG checkpoint's own tables: the embeddings' link-prediction ceiling "
        "through the same data path.",
    ),
    tkg: Path | None = typer.Option(
        None,
        "--tkg",
        help="TKG checkpoint for --oracle-relation (default: the one the model was trained "
        "over, as its config.json records it).",
    ),
) -> None:
    """Answer a split's questions with a trained model: Hits@1/10 and MRR, overall, simple
    (simple_entity, simple_time) vs complex (before_after, first_last, time_join), per type
    and per answer type. A question counts as hit when any of its answers is in the top k.

    Example: chronoprobe kgqa eval qa/ cronq/ --split valid --oracle-relation --json
    """
    from chronoprobe.atomic import atomic_path
    from chronoprobe.kgqa import checkpoint
    from chronoprobe.kgqa.data import load_split
    from chronoprobe.kgqa.evaluate import evaluate as run_eval
    from chronoprobe.kgqa.oracle import load_tkg, oracle_ranks
    from chronoprobe.kgqa.train import protocol_of
    from chronoprobe.tkg.train import resolve_device

    target = resolve_device(device)
    saved = checkpoint.load(checkpoint_dir, target, selected=True)
    protocol = protocol_of(saved.config.get("train", {}))
    if answer_type_given is not None:
        protocol["answer_type_given"] = answer_type_given
    questions = load_split(cronq_dir, split.value, saved.vocab, protocol["question_input"])
    _say(f"{split.value}: {questions.summary()}")
    metrics, table = run_eval(
        saved.model,
        questions,
        saved.vocab,
        batch_size,
        target,
        answer_type_given=protocol["answer_type_given"],
    )
    if oracle_relation:
        tkg_dir = tkg or saved.config.get("data", {}).get("tkg")
        if tkg_dir is None:
            raise ValueError(f"{checkpoint_dir}: records no TKG checkpoint; pass --tkg")
        model, relations = load_tkg(Path(tkg_dir), saved.vocab, target)
        ranked = oracle_ranks(model, relations, questions, batch_size, target)
        metrics["oracle_relation"] = ranked.metrics(questions)
    if predictions is not None:
        import pyarrow.parquet as pq

        with atomic_path(predictions) as tmp:
            pq.write_table(table, tmp)
    name = saved.model.name
    embeddings = saved.config.get("data", {}).get("embeddings")
    epoch = checkpoint.selected_epoch(saved.config)
    header = {"model": name, "embeddings": embeddings, "split": split.value, "epoch": epoch}
    if as_json:
        typer.echo(json.dumps({**header, **protocol, **metrics}))
    else:
        print_metrics({**protocol, **metrics}, f"{name}, {split.value} split, epoch {epoch}")
