"""``chronoprobe export lm-eval DATA --out DIR``: a probe set as lm-evaluation-harness tasks.

lm-evaluation-harness (Gao et al., "A framework for few-shot language model evaluation",
Zenodo, 2021-2024) runs tasks written as YAML; ``lm_eval --include_path DIR --tasks NAME``
runs the ones this writes, each request once:

- ``NAME_<period>`` (``generate_until``), one task per period (``NAME_undated`` for rows
  without one): each row's prompt as ``probe generate`` renders it (template, shots and
  exemplars drawn with the same seed), greedy up to ``max_tokens`` tokens or the first newline;
  the answer is judged by chronoprobe's rules, so ``accuracy`` (by the ``match`` rule) and
  ``accuracy_<rule>`` equal the generate view's ``by_period`` figures for the same model;
- ``NAME``, the group of them: every metric's mean weighted by the tasks' sizes, which is the
  generate view's overall figure (the group asks nothing of its own);
- ``NAME_loglikelihood`` (``loglikelihood``): one doc per (row, gold label), the context before
  the gap and the label with the rest of the sentence, as the pll view scores a causal model;
  ``mean_label_logprob`` equals pll's, and ``perplexity`` is exp(-mean_label_logprob).

Rows the generate view would skip (no period for the template's ``{period}``, a gap first where
the template reads ``{statement}``) are left out of the generation tasks, and deleted rows out
of all of them, as chronoprobe's overall and per-period figures leave them out (unless
``include_deleted``). Files: ``NAME*.yaml``, ``chronoprobe_task.py`` (the hooks the YAMLs
name), ``docs/`` (what lm-eval asks), ``rows/`` (a copy of the probe set: judging knows the
other periods' answers from it) and ``task.json`` (the settings, and the weights the printed
``lm_eval`` command loads).

The step is never served from the step cache: ``lm_eval --include_path`` imports
``chronoprobe_task.py`` and runs the YAMLs' hooks, so every file of the folder is written by
this code, never copied from a cache entry someone else could have written.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, field_validator
from pydantic_core import PydanticCustomError

from chronoprobe.errors import UserError
from chronoprobe.params import NOT_ECHOED, Cli, Params, seed_field
from chronoprobe.probes.judging import DEFAULT_RULE, RULES
from chronoprobe.set_files import EXAMPLES, NAMES_FILE
from chronoprobe.step_context import StepContext
from chronoprobe.steps import Input, step_kind

TASK_MODULE = "chronoprobe_task"
UNDATED = "undated"  # the task of rows without a period (a template without {period})
# what the generation tasks report, and their group aggregates
GENERATION_METRICS = ("accuracy", *(f"accuracy_{rule}" for rule in RULES), "other_period")


class LmEvalExportParams(Params):
    name: str | None = Field(
        None,
        description="The task name lm-eval knows it by (default: chronoprobe_ and the data "
        "folder's name), e.g. --name templama_2019.",
    )
    rows: str | None = Field(
        None, description="Which file of the data folder holds the rows (default: examples.jsonl)."
    )
    template: str = Field(
        "In {period}, {statement}",
        description="The prompt, as `probe generate --template` renders it.",
    )
    shots: int = Field(0, ge=0, description="Exemplars before each prompt, as `probe generate`.")
    seed: int | None = seed_field("the exemplar draws")
    max_tokens: int = Field(12, ge=1, description="Longest answer, in tokens.")
    match: Literal[RULES] = Field(  # type: ignore[valid-type]
        DEFAULT_RULE, description="The rule behind `accuracy` (every rule is reported)."
    )
    include_deleted: bool = Field(
        False, description="Keep deleted rows (they carry the previous period's answers)."
    )
    model: Annotated[str, Cli(short="-m")] = Field(
        "package:smollm2",
        description="The model the printed lm_eval command loads (the tasks name none: any "
        "model lm-eval runs them on): a local save_pretrained directory, a .gguf file or "
        "package:smollm2 (converted once, the weights chronoprobe probes for that spec), or a "
        "Hugging Face id.",
    )

    @field_validator("name")
    @classmethod
    def _a_file_name(cls, name: str | None) -> str | None:
        if name is None:
            return None
        if not re.search(r"[A-Za-z0-9]", name):  # "---" made a task named chronoprobe
            raise PydanticCustomError(
                NOT_ECHOED,
                "holds no letter or digit (A-Z, a-z, 0-9), of which lm-eval's task names are "
                "made; give one such as --name my_probe",
            )
        try:
            return checked_task_name(name)
        except ValueError as err:  # the name is not repeated: its start is in the message
            raise PydanticCustomError(NOT_ECHOED, str(err)) from None

    @field_validator("template")
    @classmethod
    def _known_placeholders(cls, template: str) -> str:
        from chronoprobe.probes.generate import checked_template

        return checked_template(template)

    @field_validator("model")
    @classmethod
    def _local_weights(cls, model: str) -> str:
        from chronoprobe.models.weights import local_spec

        if model.startswith("openai:"):
            raise UserError(
                "lm-eval's hf model loads weights, not a server: name them (a directory, a "
                ".gguf file, package:smollm2 or a Hugging Face id)"
            )
        try:
            local_spec(model)
        except FileNotFoundError as err:
            raise UserError(str(err)) from None
        return model


def task_name(text: str) -> str:
    """A name lm-eval takes: letters, digits and underscores."""
    return re.sub(r"[^A-Za-z0-9_]+", "_", text).strip("_") or "chronoprobe"


LONGEST_TASK_NAME = 200  # characters: NAME_loglikelihood.yaml must fit a file name's 255 bytes


def checked_task_name(text: str, source: str = "") -> str:
    """``text`` as lm-eval's task name (:func:`task_name`); a ValueError (saying it came from
    ``source``) when the task files named after it could not be written."""
    name = task_name(text)
    if len(name) > LONGEST_TASK_NAME:
        raise UserError(
            f"{source + ' ' if source else ''}gives a task name of {len(name):,} characters, "
            f"longer than "
            f"{LONGEST_TASK_NAME}: the task files are named after it "
            f"({name[:20]}..._loglikelihood.yaml), and a file name holds at most 255 bytes; "
            "give a shorter --name"
        )
    return name


def _yaml(fields: dict, hooks: dict[str, str]) -> str:
    """A task YAML: ``fields`` as YAML, then ``hooks`` as lm-eval's ``!function`` tags."""
    import yaml

    text = yaml.safe_dump(fields, sort_keys=False, allow_unicode=True)
    return text + "".join(f"{key}: !function {TASK_MODULE}.{fn}\n" for key, fn in hooks.items())


def _mean(metric: str, higher: bool = True) -> dict:
    return {"metric": metric, "aggregation": "mean", "higher_is_better": higher}


def generation_yaml(name: str, max_tokens: int, period: str | None) -> str:
    """The generation task of one period's rows (``period`` None: the rows without one)."""
    fields: dict = {"task": name, "test_split": "test", "output_type": "generate_until"}
    fields |= {
        "dataset_kwargs": {"period": period},
        "doc_to_text": "prompt",
        "doc_to_target": "target",
        "generation_kwargs": {
            "until": ["\n"],
            "max_gen_toks": max_tokens,
            "do_sample": False,
            "temperature": 0.0,
        },
        "metric_list": [_mean(m, higher=m != "other_period") for m in GENERATION_METRICS],
        "metadata": {"version": 2.0},
    }
    hooks = {"custom_dataset": "generation_docs", "process_results": "judge"}
    return _yaml(fields, hooks)


def loglikelihood_yaml(name: str) -> str:
    fields = {
        "task": name,
        "test_split": "test",
        "output_type": "loglikelihood",
        "doc_to_text": "context",
        "doc_to_target": "continuation",
        "target_delimiter": "",
        "metric_list": [
            _mean("mean_label_logprob"),
            {"metric": "perplexity", "aggregation": "perplexity", "higher_is_better": False},
        ],
        "metadata": {"version": 2.0},
    }
    hooks = {"custom_dataset": "loglikelihood_docs", "process_results": "label_logprob"}
    return _yaml(fields, hooks)


def group_yaml(name: str, tasks: list[str]) -> str:
    """The group of the period tasks: each metric's mean weighted by the tasks' sizes, the
    mean over all their rows."""
    import yaml

    weighted = {"aggregation": "mean", "weight_by_size": True}
    group = {
        "group": name,
        "task": tasks,
        "aggregate_metric_list": [{"metric": m, **weighted} for m in GENERATION_METRICS],
        "metadata": {"version": 2.0},
    }
    return yaml.safe_dump(group, sort_keys=False)


def generation_docs(rows_file: Path, params: LmEvalExportParams, seed: int) -> list[dict]:
    """The rows the generate view asks, with their prompts (exemplar set 0)."""
    from chronoprobe.probes.generate import (
        DELETED,
        GenerateParams,
        prompt_for,
        read_asked_rows,
        skip_reason,
    )

    asked = GenerateParams(template=params.template, shots=params.shots, seed=seed)
    return [
        {
            "id": row.id,
            "period": row.period,
            "prompt": prompt_for(row, asked, 0, seed),
            "target": row.labels[0],
        }
        for row in read_asked_rows(rows_file)
        if skip_reason(params.template, row) is None
        and (params.include_deleted or row.split != DELETED)
    ]


def loglikelihood_docs(rows_file: Path, include_deleted: bool) -> list[dict]:
    """(row, label) pairs as the pll view scores them with a causal model."""
    from chronoprobe.probes.cloze_views import in_gap
    from chronoprobe.probes.generate import DELETED
    from chronoprobe.probes.rows import read_rows

    docs = []
    for row in read_rows(rows_file):
        if row.split == DELETED and not include_deleted:
            continue
        for label in dict.fromkeys(row.labels):
            cloze = in_gap(row.cloze, label)
            docs.append({"id": row.id, "context": cloze.left, "continuation": label + cloze.right})
    return docs


def _write_jsonl(path: Path, docs: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs), "utf-8")


def period_tasks(name: str, docs: list[dict]) -> dict[str, str | None]:
    """The generation tasks, by name: one per period of ``docs``, in order, then the rows
    without a period."""
    periods = sorted({d["period"] for d in docs if d["period"] is not None})
    tasks: dict[str, str | None] = {f"{name}_{task_name(p)}": p for p in periods}
    if any(d["period"] is None for d in docs):
        tasks[f"{name}_{UNDATED}"] = None
    return tasks


def lm_eval_command(out: Path) -> str:
    """The lm_eval command line that runs every task written to ``out`` (the folder as given)
    on the weights the export names, one request at a time as chronoprobe asks."""
    import shlex

    settings = json.loads((out / "task.json").read_text(encoding="utf-8"))
    model_args = f"pretrained={settings['pretrained']}"
    return shlex.join(
        [
            "lm_eval",
            "--model",
            "hf",
            "--model_args",
            model_args,
            "--batch_size",
            "1",
            "--include_path",
            str(out),
            "--tasks",
            ",".join(settings["tasks"]),
        ]
    )


def show_command(out: Path) -> str:
    """The command to run (as rich markup: its brackets are text)."""
    from rich.markup import escape

    return escape(f"run: {lm_eval_command(out)}")


@step_kind(
    "lm-eval",
    LmEvalExportParams,
    cacheable=False,  # lm_eval imports what this writes: written here each time, never served
    inputs=(
        Input(
            "data",
            "The probe set: a directory of rows (e.g. from `build drift` or `import "
            "templama`), or its rows file.",
            file_param="rows",
        ),
    ),
    command=("export", "lm-eval"),
    show=show_command,
)
def export_lm_eval(ctx: StepContext, params: LmEvalExportParams, inputs: dict[str, Path]) -> None:
    """Write a probe set as lm-evaluation-harness tasks: NAME (the generation tasks' group,
    judged by chronoprobe's rules), one task NAME_<period> per period, and NAME_loglikelihood
    (the pll view's label log-probabilities); each row is asked once. It prints the lm_eval
    command that runs them on the weights of --model (chronoprobe installed beside lm-eval:
    its rules judge the answers).

    Example: chronoprobe export lm-eval drift/ --out lm-eval-drift/ -m package:smollm2
    """
    from chronoprobe.models.weights import weights_location
    from chronoprobe.probes.view import no_rows_file

    rows_file = inputs["data"] / (params.rows or EXAMPLES)
    if not rows_file.is_file():
        raise UserError(no_rows_file(rows_file, "the probe rows"))
    folder = inputs["data"].resolve().name
    name = params.name or checked_task_name(f"chronoprobe_{folder}", "the data folder's name")
    seed = ctx.seed if params.seed is None else params.seed
    out = ctx.out_dir
    generate = generation_docs(rows_file, params, seed)
    loglikelihood = loglikelihood_docs(rows_file, params.include_deleted)
    if not generate and not loglikelihood:
        raise UserError(f"{rows_file}: no row to export")
    try:
        pretrained = weights_location(params.model)
    except (FileNotFoundError, ValueError) as err:
        raise UserError(f"--model {params.model}: {err}") from None
    (out / "rows").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(rows_file, out / "rows" / rows_file.name)
    if (rows_file.parent / NAMES_FILE).is_file():
        shutil.copyfile(rows_file.parent / NAMES_FILE, out / "rows" / NAMES_FILE)
    _write_jsonl(out / "docs" / "generate.jsonl", generate)
    _write_jsonl(out / "docs" / "loglikelihood.jsonl", loglikelihood)
    shutil.copyfile(Path(__file__).with_name("lm_eval_task.py"), out / f"{TASK_MODULE}.py")
    periods = period_tasks(name, generate)
    for task, period in periods.items():
        (out / f"{task}.yaml").write_text(generation_yaml(task, params.max_tokens, period))
    tasks = [name] if periods else []
    if periods:
        (out / f"{name}.yaml").write_text(group_yaml(name, list(periods)))
    if loglikelihood:
        tasks.append(f"{name}_loglikelihood")
        (out / f"{name}_loglikelihood.yaml").write_text(loglikelihood_yaml(tasks[-1]))
    settings = {**params.model_dump(mode="json"), "name": name, "rows": rows_file.name}
    settings |= {"seed": seed, "pretrained": pretrained, "tasks": tasks}
    (out / "task.json").write_text(json.dumps(settings, indent=2) + "\n")
    ctx.log.info(
        f"{name}: {len(generate):,} rows to generate in {len(periods)} period tasks, "
        f"{len(loglikelihood):,} labels to score"
    )
