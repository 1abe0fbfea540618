"""`chronoprobe export lm-eval`: the tasks it writes run in lm-evaluation-harness (its own
command line, `lm_eval --include_path DIR --tasks ...`) and give chronoprobe's figures for the
same rows and model: accuracy by every rule, overall and per period, and pll's mean label
log-probability."""

from __future__ import annotations

import json
import math
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

import chronoprobe.export.lm_eval as lm_eval_module
from chronoprobe.cli.main import app
from chronoprobe.jsonl import read_jsonl, write_jsonl
from chronoprobe.models.tiny import random_model
from chronoprobe.models.tokenizer import train_tokenizer
from chronoprobe.probes.judging import RULES
from chronoprobe.probes.series_matrix import read_predictions

CORPUS = [
    f"In {year}, {person} was employed by {org}."
    for year in range(2015, 2021)
    for person in ("Alice Smith", "Bob Jones", "Carla Diaz")
    for org in ("Acme Corp", "Globex", "New York Times", "Initech", "Umbrella")
]


def row(id, period, split, subject, query, labels):
    return {
        "id": id,
        "period": period,
        "relation": "P108",
        "subject": subject,
        "query": query,
        "answers": [],
        "answer_labels": labels,
        "split": split,
    }


ROWS = [
    row("q1", "2019", None, "A", "Alice Smith was employed by [MASK].", ["Globex"]),
    row("q2", "2019", None, "B", "Bob Jones was employed by [MASK].", ["Acme Corp"]),
    row("q3", "2019", None, "C", "[MASK] was employed by Umbrella.", ["Carla Diaz"]),
    row("q4", "2020", "unchanged", "A", "Alice Smith was employed by [MASK].", ["Globex"]),
    row("q5", "2020", "updated", "B", "Bob Jones was employed by [MASK] in 2020.", ["Umbrella"]),
    row("q6", "2020", "new", "D", "In 2020, Dan Wu was employed by [MASK].", ["Initech"]),
    row("q7", "2020", "deleted", "C", "In 2020, Carla Diaz was employed by [MASK].", ["Initech"]),
]


def run(*args: str) -> None:
    result = CliRunner().invoke(app, [*args, "--no-cache"])
    assert result.exit_code == 0, result.output


@pytest.fixture
def model(tmp_path):
    tokenizer = train_tokenizer(CORPUS, "llama")
    path = tmp_path / "model"
    random_model("llama", tokenizer, seed=3).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture
def data(tmp_path, model):
    """The rows, with gold labels that make the tiny model right on some rows by some rules:
    q1 and q4 get its own answer, q5 its answer's words and a legal form (names, not exact)."""
    first = tmp_path / "first" / "examples.jsonl"
    write_jsonl(first, ROWS)
    said_dir = tmp_path / "said"
    run(
        "probe",
        "generate",
        str(first.parent),
        "-m",
        str(model),
        "--device",
        "cpu",
        "-o",
        str(said_dir),
    )
    said = {p["id"]: p["prediction"] for p in read_predictions(said_dir / "predictions.parquet")}
    assert len({said["q1"], said["q4"], said["q5"]}) == 3, said
    words = " ".join(w for w in said["q5"].split() if w.isalpha())
    labels = {"q1": said["q1"], "q4": said["q4"], "q5": f"{words} Corp"}
    rows = [{**r, "answer_labels": [labels.get(r["id"], r["answer_labels"][0])]} for r in ROWS]
    path = tmp_path / "drift" / "examples.jsonl"
    write_jsonl(path, rows)
    return path.parent


def test_the_exported_tasks_hold_the_prompts_and_labels_chronoprobe_asks(tmp_path, data, model):
    out = tmp_path / "tasks"
    run("export", "lm-eval", str(data), "--out", str(out), "--name", "drift-2019/20")
    name = "drift_2019_20"
    task = yaml.safe_load((out / f"{name}_2019.yaml").read_text().split("custom_dataset")[0])
    assert task["output_type"] == "generate_until" and task["doc_to_text"] == "prompt"
    assert task["dataset_kwargs"] == {"period": "2019"}
    assert (
        task["generation_kwargs"]["until"] == ["\n"]
        and task["generation_kwargs"]["max_gen_toks"] == 12
    )
    assert "!function chronoprobe_task.judge" in (out / f"{name}_2019.yaml").read_text()
    docs = list(read_jsonl(out / "docs" / "generate.jsonl"))
    # q3: the gap comes first ({statement} leaves nothing to ask); q7: deleted
    assert [d["id"] for d in docs] == ["q1", "q2", "q4", "q5", "q6"]
    assert docs[0]["prompt"] == "In 2019, Alice Smith was employed by"
    labels = list(read_jsonl(out / "docs" / "loglikelihood.jsonl"))
    assert [d["id"] for d in labels] == ["q1", "q2", "q3", "q4", "q5", "q6"]
    assert labels[2] == {
        "id": "q3",
        "context": "",
        "continuation": "Carla Diaz was employed by Umbrella.",
    }
    group = yaml.safe_load((out / f"{name}.yaml").read_text())
    assert group["group"] == name and group["task"] == [f"{name}_2019", f"{name}_2020"]
    aggregated = [(m["metric"], m["weight_by_size"]) for m in group["aggregate_metric_list"]]
    assert aggregated == [(m, True) for m in ("accuracy", *(f"accuracy_{r}" for r in RULES))] + [
        ("other_period", True)
    ]
    assert (out / "rows" / "examples.jsonl").read_bytes() == (data / "examples.jsonl").read_bytes()
    settings = json.loads((out / "task.json").read_text())
    assert settings["tasks"] == [name, f"{name}_loglikelihood"]


def task_module(out: Path):
    """The exported chronoprobe_task.py, imported as lm-eval imports it (from its file)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("chronoprobe_task", out / "chronoprobe_task.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def leaf_tasks(out: Path, names: list[str]) -> list[dict]:
    """The tasks lm-eval runs for ``--tasks NAMES``: each group opened into its tasks."""
    found = {}
    for path in out.glob("*.yaml"):
        text = path.read_text().split("custom_dataset")[0].split("process_results")[0]
        config = yaml.safe_load(text)
        found[config.get("group") or config["task"]] = config
    leaves = []
    for name in names:
        config = found[name]
        leaves += leaf_tasks(out, config["task"]) if "group" in config else [config]
    return leaves


def test_the_printed_tasks_ask_each_row_once(tmp_path, data, model):
    """A row's prompt is generated by one task, and each (row, label) scored by one: the group
    of the periods asks nothing of its own, and no other task repeats one of its rows."""
    out = tmp_path / "tasks"
    result = CliRunner().invoke(
        app, ["export", "lm-eval", str(data), "--out", str(out), "-m", str(model)]
    )
    assert result.exit_code == 0, result.output
    printed = shlex.split(result.output.split("run: ", 1)[1].strip())
    names = printed[printed.index("--tasks") + 1].split(",")
    hooks = task_module(out)
    asked = []
    for task in leaf_tasks(out, names):
        if task["output_type"] == "generate_until":
            docs = hooks.generation_docs(**task["dataset_kwargs"])["test"]
        else:
            docs = hooks.loglikelihood_docs()["test"]
        asked += [(task["output_type"], d["id"], d.get("continuation")) for d in docs]
    assert len(asked) == len(set(asked)) == 5 + 6
    assert printed[:6] == [
        "lm_eval",
        "--model",
        "hf",
        "--model_args",
        f"pretrained={model}",
        "--batch_size",
    ]


def test_the_task_code_is_written_by_this_chronoprobe_never_served_from_the_cache(
    tmp_path, data, monkeypatch
):
    """lm_eval --include_path imports the folder's chronoprobe_task.py: an entry in the step
    cache under the export's key, with its digests in order and signed by the cache itself (an
    older chronoprobe's, or one the cache was tricked into), must not put its code there."""
    from chronoprobe.export.lm_eval import LmEvalExportParams
    from chronoprobe.runs.cache import StepCache, step_key
    from chronoprobe.runs.single import input_key

    params = LmEvalExportParams(name="drift", model=str(data.parent / "model"))
    key = step_key("lm-eval", params.model_dump(mode="json"), {"data": input_key(data)}, 0)
    cache = StepCache(Path(os.environ["CHRONOPROBE_CACHE"]))
    work, _ = cache.work_dir("lm-eval", key, fresh=True)  # signed by this cache, even
    (work / "chronoprobe_task.py").write_text("import os\nos.system('touch /tmp/owned')\n")
    (work / "task.json").write_text('{"name": "drift", "pretrained": "x", "tasks": ["drift"]}')
    cache.commit(work, "lm-eval", key, {"id": "export lm-eval", "kind": "lm-eval", "key": key})
    out = tmp_path / "tasks"
    export = ["export", "lm-eval", str(data), "--out", str(out), "--name", "drift"]
    result = CliRunner().invoke(app, [*export, "-m", str(data.parent / "model")])  # cache on
    assert result.exit_code == 0, result.output
    source = Path(lm_eval_module.__file__).with_name("lm_eval_task.py")
    assert (out / "chronoprobe_task.py").read_bytes() == source.read_bytes()
    assert json.loads((out / "task.json").read_text())["tasks"] == ["drift", "drift_loglikelihood"]


def results_of(folder: Path) -> dict:
    (found,) = folder.rglob("results_*.json")
    return json.loads(found.read_text())["results"]


@pytest.mark.slow  # lm-eval's own command line: importing it takes most of a minute here
def test_lm_eval_runs_the_exported_tasks_to_chronoprobes_figures(tmp_path, model, data):
    """The command `export lm-eval` prints, run as printed (plus where to write), gives
    chronoprobe's figures for the same model, asking each row once."""
    pytest.importorskip(
        "lm_eval", reason="lm-evaluation-harness: pip install 'chronoprobe[lm-eval]'"
    )
    out = tmp_path / "tasks"
    export = ["export", "lm-eval", str(data), "--out", str(out), "--name", "drift"]
    said = CliRunner().invoke(app, [*export, "-m", str(model)])
    assert said.exit_code == 0, said.output
    printed = shlex.split(said.output.split("run: ", 1)[1].strip())
    generated, scored = tmp_path / "generated", tmp_path / "scored"
    # the exported task asks the rows the template asks: q3, its gap first, is left out there,
    # as --gap-first skip leaves it out here
    asked = ["-m", str(model), "--gap-first", "skip", "--device", "cpu", "-o", str(generated)]
    run("probe", "generate", str(data), *asked)
    run("probe", "pll", str(data), "-m", str(model), "--device", "cpu", "-o", str(scored))
    ours = json.loads((generated / "metrics.json").read_text())["models"][str(model)]
    pll = json.loads((scored / "metrics.json").read_text())["models"][str(model)]
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }
    assert printed[0] == "lm_eval"
    command = [sys.executable, "-m", "lm_eval", *printed[1:], "--device", "cpu", "--log_samples"]
    command += ["--output_path", str(tmp_path / "lm-eval")]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    theirs = results_of(tmp_path / "lm-eval")
    overall = ours["overall"]
    assert overall["accuracy_exact"] == pytest.approx(2 / 5), overall  # q1, q4 of 5 rows asked
    assert overall["accuracy_names"] == pytest.approx(3 / 5), overall  # and q5
    for rule in RULES:
        assert theirs["drift"][f"accuracy_{rule},none"] == pytest.approx(
            overall[f"accuracy_{rule}"]
        )
        for period in ("2019", "2020"):
            figure = theirs[f"drift_{period}"][f"accuracy_{rule},none"]
            assert figure == pytest.approx(ours["by_period"][period][f"accuracy_{rule}"])
    assert theirs["drift"]["accuracy,none"] == pytest.approx(ours["accuracy"])
    assert theirs["drift"]["other_period,none"] == pytest.approx(overall["other_period"])
    logprob = pll["overall"]["mean_label_logprob"]
    loglikelihood = theirs["drift_loglikelihood"]
    assert loglikelihood["mean_label_logprob,none"] == pytest.approx(logprob, rel=1e-5)
    assert loglikelihood["perplexity,none"] == pytest.approx(math.exp(-logprob), rel=1e-4)
    samples = {
        re.sub(r"_\d{4}-\d\d-\d\dT.*", "", path.stem): len(path.read_text().splitlines())
        for path in (tmp_path / "lm-eval").rglob("samples_*.jsonl")
    }
    # each of the 5 rows generated once, each of the 6 labels scored once
    assert samples == {
        "samples_drift_2019": 2,
        "samples_drift_2020": 3,
        "samples_drift_loglikelihood": 6,
    }
