"""chronoprobe from Python: ``chronoprobe.run`` builds the probe sets of a small config,
``chronoprobe.probe`` probes them with every view, and each result holds what the command line
writes (the same metrics.json and predictions, served from the same cache)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from typer.testing import CliRunner

import chronoprobe
from chronoprobe.cli.main import app
from chronoprobe.probes.view import VIEWS

STEPS = [
    {"id": "kg", "kind": "kg", "params": {"source": "sample"}},
    {
        "id": "drift",
        "kind": "build",
        "inputs": {"kg": "kg"},
        "params": {"family": "drift", "first": "2015", "last": "2018", "per_group": 2},
    },
    {"id": "world", "kind": "kg", "params": {"source": "synth", "facts": 1500}},
    {
        "id": "ecbd",
        "kind": "build",
        "inputs": {"kg": "world"},
        "params": {"family": "ecbd", "per_group": 2, "min_article_words": 100},
    },
    {"id": "lamatk", "kind": "build", "inputs": {"kg": "kg"}, "params": {"family": "lamatk"}},
    {
        "id": "dates",
        "kind": "build",
        "inputs": {"kg": "kg"},
        "params": {"family": "dates", "first": 2000, "sample": 4},
    },
    {
        "id": "memorize",
        "kind": "memorize",
        "inputs": {"statements": "lamatk"},
        "params": {"preset": "tiny", "epochs": 1},
    },
]


@pytest.fixture(scope="module")
def built(tmp_path_factory, tiny):
    """The run's steps, and a tiny masked and causal model saved as local specs."""
    root = tmp_path_factory.mktemp("api")
    config = root / "small.yaml"
    config.write_text(yaml.safe_dump({"name": "small", "steps": STEPS}))
    outcome = chronoprobe.run(config, root / "run")
    models = {}
    for architecture in ("roberta", "llama"):
        models[architecture] = root / architecture
        tiny(architecture).model.save_pretrained(models[architecture])
        tiny(architecture).tokenizer.save_pretrained(models[architecture])
    return outcome, models


def test_a_run_gives_each_step_its_folder_and_metrics(built):
    outcome, _ = built
    assert list(outcome.steps) == [step["id"] for step in STEPS]
    assert outcome["memorize"].kind == "memorize" and outcome["memorize"].metrics is not None
    assert (outcome["drift"].dir / "examples.jsonl").is_file()
    with pytest.raises(KeyError, match="no step 'nope'; steps: kg, drift"):
        outcome["nope"]
    with pytest.raises(ValueError, match="step drift is a build step, not a probe"):
        outcome["drift"].probe()


JUDGING = Path(__file__).parents[1] / "fixtures" / "judging"
# (view, the step whose set it reads, or the set's folder, options): every registered view
CASES = [
    ("single-token", "drift", {"model": "roberta"}),
    ("multi-token", "drift", {"model": "roberta", "max_tokens": 2}),
    ("pll", "drift", {"model": "roberta"}),
    ("generate", "drift", {"model": "llama", "max_tokens": 4}),
    ("span-ppl", "ecbd", {"model": "llama", "sample": 12}),
    ("date-context", "dates", {"model": "llama"}),
    ("recite", "lamatk", {"trained": "memorize"}),
    ("doc-cutoff", "world", {"model": "llama", "rows": "snippets.parquet", "sample": 200}),
    ("cutoff", "drift", {"model": "roberta", "permutations": 100}),
    ("judge-agreement", JUDGING, {"model": "llama", "sample": 6}),  # a shipped set, no step
]


def test_every_view_is_covered():
    assert sorted(c[0] for c in CASES) == sorted(VIEWS.names())


@pytest.mark.parametrize(("view", "data", "options"), CASES, ids=[c[0] for c in CASES])
def test_a_probe_from_python_holds_what_the_command_writes(built, tmp_path, view, data, options):
    outcome, models = built
    options = dict(options)
    if "model" in options:
        options["model"] = str(models[options["model"]])
    else:
        options["trained"] = outcome[options["trained"]].dir
    folder = data if isinstance(data, Path) else outcome[data].dir
    result = chronoprobe.probe(view, folder, device="cpu", **options)
    assert result.view == view and result.out is None
    entry = result.model()
    assert entry["predicted"] == result.predictions.num_rows
    assert result.metrics["rows"] > 0 and entry["predicted"] + result.skipped.num_rows > 0
    assert result.skipped.num_rows == sum(entry["skipped"].values())
    name = result.models[0]
    assert result.rows(name) == result.rows()
    # the command line gives the same files, from the same cache entry
    words = ["probe", view, str(folder), "--device", "cpu", "-o", str(tmp_path / "o")]
    for key, value in options.items():
        flag = {"model": "-m", "trained": "--trained"}.get(key, "--" + key.replace("_", "-"))
        words += [flag, str(value)]
    printed = CliRunner().invoke(app, words)
    assert printed.exit_code == 0, printed.output
    written = json.loads((tmp_path / "o" / "metrics.json").read_text())
    assert written == result.metrics
    assert pq.read_table(tmp_path / "o" / "predictions.parquet") == result.predictions
    if view == "pll":
        figure = result.figure("temporal_acc")
        assert figure.value == entry["temporal_acc"] and figure.n == entry["temporal_acc_n"]
        assert figure.low <= figure.value <= figure.high
        assert result.matrix is not None and result.matrix["view"] == "pll"
        assert "temporal_acc" in str(figure)


def test_a_model_object_is_probed_every_time_and_its_answers_are_not_kept(built, tiny, monkeypatch):
    from chronoprobe.models import request_cache

    def kept(*args, **kwargs):
        raise AssertionError("a model object's answers went to the answer cache")

    monkeypatch.setattr(request_cache, "answer_cache", kept)
    outcome, _ = built
    model = tiny("roberta")
    first = chronoprobe.probe("pll", outcome["drift"].dir, model=model)
    again = chronoprobe.probe("pll", outcome["drift"].dir, model=model)
    assert first.models == [model.name] and again.predictions == first.predictions


def test_results_are_kept_in_out_and_mistakes_are_told(built, tmp_path):
    outcome, models = built
    kept = chronoprobe.probe(
        "single-token", outcome["drift"].dir / "examples.jsonl", model=str(models["roberta"]),
        out=tmp_path / "kept",
    )  # fmt: skip
    assert kept.out == tmp_path / "kept" and (kept.out / "metrics.json").is_file()
    assert kept.to_pandas().shape[0] == kept.predictions.num_rows
    with pytest.raises(KeyError, match=r"unknown view 'plll'.*did you mean 'pll'"):
        chronoprobe.probe("plll", outcome["drift"].dir, model="x")
    with pytest.raises(ValueError, match=r"model and models are the same setting \(models is its"):
        chronoprobe.probe("pll", outcome["drift"].dir, model="a", models=["b"])
    with pytest.raises(ValueError, match="give the models to probe in one way"):
        chronoprobe.probe("pll", outcome["drift"].dir)
    with pytest.raises(KeyError, match="no figure 'nope' here; figures: "):
        kept.figure("nope")


KEY = "sk-api-0123456789abcdef"


@pytest.mark.parametrize(
    ("option", "value", "says"),
    [
        ("sample", KEY, "Input should be a valid integer"),
        ("api_key_env", KEY, "takes the name of an environment variable"),
        ("dtype", KEY, "Input should be 'auto'"),
        ("engine", KEY, "Input should be 'local' or 'ray'"),
        ("base_url", f"http://127.0.0.1:9/v1\x00{KEY}", "holds the character U+0000"),
        ("base_url", f"http://127.0.0.1:9/{KEY}/v1", "holds what looks like a key in its path"),
        ("no_such_option", KEY, "Extra inputs are not permitted"),
    ],
)
def test_an_option_refused_from_python_names_it_and_never_repeats_the_value(
    option, value, says, tmp_path
):
    """The refusal was pydantic's, which quotes every value given (input_value='sk-...'): a
    key passed in the wrong option was printed."""
    with pytest.raises(chronoprobe.UserError) as refused:
        chronoprobe.probe("generate", tmp_path, model="openai:gpt-x", **{option: value})
    message = str(refused.value)
    assert message.startswith(f"{option}=: ") and says in message, message
    assert KEY not in message and "\n" not in message
