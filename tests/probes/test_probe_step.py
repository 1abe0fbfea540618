"""The `probe` step kind: many models over one drift probe set, resumable, with the matrix."""

from __future__ import annotations

import io
import json
import logging
import math
import sqlite3
from pathlib import Path

import pytest
import torch
from rich.console import Console

from chronoprobe.jsonl import read_jsonl, write_jsonl
from chronoprobe.models import load_model, local
from chronoprobe.probes import VIEWS
from chronoprobe.probes.series_matrix import read_predictions
from chronoprobe.runs.engine import run_experiment
from chronoprobe.step_context import StepContext
from chronoprobe.steps import get_kind

from .conftest import as_dicts


@pytest.fixture
def data_dir(tmp_path) -> Path:
    """A build step's output: the hand-made drift rows, a query repeated over periods included."""
    rows = as_dicts()
    rows.append({**rows[0], "id": "q8", "period": "2021", "split": "unchanged"})
    write_jsonl(tmp_path / "data" / "examples.jsonl", rows)
    return tmp_path / "data"


def context(out: Path) -> StepContext:
    out.mkdir(parents=True, exist_ok=True)
    return StepContext("probe", out, out.parent, 0, logging.getLogger("test-probe"))


def params(**values):
    values = {"view": "pll", "device": "cpu", "batch_size": 4, **values}
    return get_kind("probe").params.model_validate(values)


def close(got, want) -> bool:
    """Equal up to float noise, through nested dicts and lists (batching orders differ)."""
    if isinstance(want, dict):
        return (
            isinstance(got, dict)
            and got.keys() == want.keys()
            and all(close(got[k], want[k]) for k in want)
        )
    if isinstance(want, list):
        return len(got) == len(want) and all(close(g, w) for g, w in zip(got, want, strict=True))
    if isinstance(want, float):
        return math.isclose(got, want, abs_tol=1e-4)
    return got == want


def run_step(out: Path, inputs: dict, **values) -> dict:
    get_kind("probe").run(context(out), params(**values), inputs)
    return json.loads((out / "metrics.json").read_text())


def naive(view_name: str, spec: str, rows_file: Path) -> tuple[list[dict], dict]:
    """A view's predictions and one model's metrics, each row asked as it is, in one list:
    what the probe step's distinct queries and shards must give."""
    view = VIEWS.get(view_name)
    options = view.params(device="cpu")
    model = load_model(spec, device="cpu")
    answers = view.predict(model, view.rows.read(rows_file), options, None)
    predictions = [p for p in answers if "skipped" not in p]
    return predictions, view.model_metrics(predictions, options)


@pytest.mark.parametrize("view", ["single-token", "multi-token", "pll"])
def test_each_model_gets_the_predictions_and_metrics_of_every_row_asked(
    model_dirs, data_dir, tmp_path, view
):
    specs = [str(d) for d in model_dirs]
    metrics = run_step(tmp_path / "out", {"data": data_dir}, model=specs, view=view)
    predictions = read_predictions(tmp_path / "out" / "predictions.parquet")
    assert not (tmp_path / "out" / ".shards").exists()
    for spec in specs:
        expected, direct = naive(view, spec, data_dir / "examples.jsonl")
        mine = [p for p in predictions if p["model"] == spec]
        assert [p["id"] for p in mine] == [p["id"] for p in expected]
        for got, want in zip(mine, expected, strict=True):
            assert got["period"] == want["period"] and got["split"] == want["split"]
            assert got["relation"] == "P108" and got["query"].count("[MASK]") == 1
            for key in set(want) - {"id", "period", "split", "model"}:
                assert close(got[key], want[key]), key
        ours = metrics["models"][spec]
        for group in ("overall", "by_period", "by_split"):
            assert close(ours[group], direct[group]), group
    assert metrics["model_count"] == 2 and metrics["rows"] == 8
    matrix = json.loads((tmp_path / "out" / "matrix.json").read_text())
    first = matrix["metrics"][matrix["default_metric"]]["all"]
    assert first["models"] == specs and first["periods"] == ["2019", "2020", "2021"]


def test_the_printed_table_keeps_each_model_name_whole_on_one_line(model_dirs, data_dir, tmp_path):
    from rich.console import Console

    from chronoprobe.probes.ops import show

    specs = [str(d) for d in model_dirs]  # long paths, on a 60-column terminal
    run_step(tmp_path / "out", {"data": data_dir}, model=specs, view="pll")
    for width in (60, 200):
        console = Console(width=width, record=True, file=io.StringIO())
        console.print(show(tmp_path / "out"))
        lines = console.export_text().splitlines()
        assert all(len(line.rstrip()) <= width for line in lines)
        for spec in specs:  # folded before: the name spread over several lines
            assert any(spec in line for line in lines), (width, spec)


def test_a_device_map_step_gives_the_predictions_of_one_device(
    model_dirs, data_dir, tmp_path, monkeypatch
):
    spec, maps = str(model_dirs[0]), []
    load = local.load_transformers
    monkeypatch.setattr(
        local, "load_transformers", lambda s, w, o: maps.append(o.device_map) or load(s, w, o)
    )
    whole = run_step(tmp_path / "whole", {"data": data_dir}, model=[spec], view="pll")
    placed = run_step(
        tmp_path / "placed", {"data": data_dir}, model=[spec], view="pll", device_map="auto"
    )
    assert maps == [None, "auto"]
    assert placed["models"][spec]["options"]["device_map"] == "auto"
    assert close(placed["models"][spec]["overall"], whole["models"][spec]["overall"])
    assert same_predictions(
        read_predictions(tmp_path / "placed" / "predictions.parquet"),
        read_predictions(tmp_path / "whole" / "predictions.parquet"),
    )


def test_deleted_rows_are_outside_all_and_skipped_rows_are_counted(model_dirs, data_dir, tmp_path):
    """q7 is 2020's deleted row: out of the headline, overall, per-period and "all" figures,
    in its split's. With M = 2, q3 ("Carla Diaz", 4 tokens) and q6 ("New York Times", 3) have
    no label a filling could be: skipped, counted per model, listed in skipped.parquet."""
    import pyarrow.parquet as pq

    spec = str(model_dirs[0])
    metrics = run_step(
        tmp_path / "out", {"data": data_dir}, model=[spec], view="multi-token", max_tokens=2
    )
    mine = metrics["models"][spec]
    assert metrics["overall_excludes"] == mine["overall_excludes"] == ["deleted"]
    assert mine["skipped"] == {"every gold label is longer than M = 2 tokens": 2}
    skipped = pq.read_table(tmp_path / "out" / "skipped.parquet").to_pylist()
    assert sorted(r["id"] for r in skipped) == ["q3", "q6"] and skipped[0]["model"] == spec
    predictions = read_predictions(tmp_path / "out" / "predictions.parquet")
    assert sorted(p["id"] for p in predictions) == ["q1", "q2", "q4", "q5", "q7", "q8"]
    assert "skipped" not in predictions[0]
    kept = [p for p in predictions if p["split"] != "deleted"]
    assert mine["f1"] == pytest.approx(sum(p["f1"] for p in kept) / len(kept))
    assert mine["overall"]["n"] == 5 and mine["by_split"]["deleted"]["n"] == 1
    assert mine["by_period"]["2020"]["n"] == 2  # q4, q5; q6 skipped, q7 deleted
    tables = json.loads((tmp_path / "out" / "matrix.json").read_text())
    assert tables["all_excludes"] == ["deleted"]
    assert tables["metrics"]["f1"]["all"]["counts"] == [[2, 2, 1]]
    assert tables["metrics"]["f1"]["deleted"]["counts"] == [[0, 1, 0]]
    every = run_step(
        tmp_path / "every",
        {"data": data_dir},
        model=[spec],
        view="multi-token",
        max_tokens=2,
        include_deleted=True,
    )
    assert every["overall_excludes"] == [] and every["models"][spec]["overall"]["n"] == 6
    tables = json.loads((tmp_path / "every" / "matrix.json").read_text())
    assert tables["metrics"]["f1"]["all"]["counts"] == [[2, 3, 1]]


def test_a_series_input_probes_every_model_named_by_its_period(model_dirs, data_dir, tmp_path):
    series = tmp_path / "series"
    periods = [{"period": "2020", "dir": "m2020"}, {"period": "2021", "dir": "m2021"}]
    for entry, source in zip(periods, model_dirs, strict=True):
        (series / entry["dir"]).parent.mkdir(parents=True, exist_ok=True)
        (series / entry["dir"]).symlink_to(source)
    (series / "series.json").write_text(json.dumps({"periods": periods}))
    metrics = run_step(tmp_path / "out", {"data": data_dir, "series": series}, view="pll")
    assert list(metrics["models"]) == ["2020", "2021"]
    assert metrics["models"]["2021"]["spec"] == str(series / "m2021")
    tables = json.loads((tmp_path / "out" / "matrix.json").read_text())
    window = tables["metrics"]["temporal_acc"]["all"]["window"]
    assert set(window["models"]) == {"2020", "2021"}
    # q1 (2019, Globex) against q5 (2020, Umbrella) share no query text; q1/q4/q8 share one
    # and never change answer, so no row of this file has a competitor: no temporal rank
    assert window["models"]["2020"]["t"] is None


def test_a_killed_step_resumes_at_the_first_unfinished_model(
    model_dirs, data_dir, tmp_path, monkeypatch
):
    loaded: list[str] = []
    load = local.load_transformers

    def flaky(spec, source, options):
        loaded.append(spec.text)
        if spec.text == str(model_dirs[1]) and loaded.count(spec.text) == 1:
            raise KeyboardInterrupt  # killed while loading the second model
        return load(spec, source, options)

    monkeypatch.setattr(local, "load_transformers", flaky)
    specs = [str(d) for d in model_dirs]
    with pytest.raises(KeyboardInterrupt):
        run_step(tmp_path / "out", {"data": data_dir}, model=specs, view="pll")
    assert loaded == specs
    run_step(tmp_path / "out", {"data": data_dir}, model=specs, view="pll")
    assert loaded == [*specs, specs[1]]  # the first model's shard was kept
    run_step(tmp_path / "fresh", {"data": data_dir}, model=specs, view="pll")
    resumed = read_predictions(tmp_path / "out" / "predictions.parquet")
    assert resumed == read_predictions(tmp_path / "fresh" / "predictions.parquet")


def test_inputs_and_models_are_checked(data_dir, model_dirs, tmp_path):
    kind = get_kind("probe")
    [problem] = kind.problems(params(), ["data"])
    # Both ways of running a step are named: the command's options and a config's keys.
    assert problem.startswith("model: give the models to probe in one way")
    for way in ("`-m SPEC`", "`model: [spec, ...]`", "`--series DIR`", "input `series`"):
        assert way in problem
    assert "`--trained DIR`; input `trained`" in problem
    [problem] = kind.problems(params(model=[str(model_dirs[0])]), [])
    assert problem.startswith("inputs.data: required: The probe set")
    [problem] = kind.problems(params(model=[str(model_dirs[0])] * 2), ["data"])
    assert "listed twice" in problem
    with pytest.raises(ValueError, match=r"examples.jsonl: no such file"):
        run_step(tmp_path / "c", {"data": tmp_path}, model=[str(model_dirs[0])])
    bad = tmp_path / "bad"
    write_jsonl(bad / "examples.jsonl", [{"id": "x", "query": "[MASK] works."}])
    with pytest.raises(ValueError, match=r"bad/examples.jsonl:1: not a probe row: .*`answer_"):
        run_step(tmp_path / "e", {"data": bad}, model=[str(model_dirs[0])])
    rows = as_dicts()
    write_jsonl(bad / "examples.jsonl", [rows[0], rows[1], rows[0]])
    with pytest.raises(ValueError, match=r"bad/examples.jsonl:3: duplicate id 'q1'"):
        run_step(tmp_path / "f", {"data": bad}, model=[str(model_dirs[0])])
    not_a_series = tmp_path / "series.json"
    not_a_series.write_text("{}")
    with pytest.raises(ValueError, match=r"series\.json: a file; input `series` is a model"):
        run_step(tmp_path / "g", {"data": data_dir, "series": not_a_series})


def test_an_experiment_probes_the_sample_kg_and_reports_the_matrix(
    model_dirs, tmp_path, monkeypatch
):
    monkeypatch.setenv("CHRONOPROBE_CACHE", str(tmp_path / "cache"))
    config = tmp_path / "exp.yaml"
    config.write_text(
        "name: p\nsteps:\n"
        "  - {id: kg, kind: kg, params: {source: sample}}\n"
        "  - id: drift\n    kind: build\n    inputs: {kg: kg}\n"
        "    params: {family: drift, first: '2009', last: '2011', relations: [P6]}\n"
        "  - id: pll\n    kind: probe\n    inputs: {data: drift}\n"
        f"    params: {{view: pll, device: cpu, model: ['{model_dirs[0]}', '{model_dirs[1]}']}}\n"
        "  - {id: report, kind: report}\n"
    )
    result = run_experiment(config, tmp_path / "run", console=Console(quiet=True))
    step = result.step("pll").dir
    metrics = json.loads((step / "metrics.json").read_text())
    rows = len(list(read_jsonl(result.step("drift").dir / "examples.jsonl")))
    assert (
        metrics["rows"] == rows and len(read_predictions(step / "predictions.parquet")) == 2 * rows
    )
    # the UK changed head of government in 2010: its 2010 row has Brown and Cameron, the other
    # years one of them, so every UK row has a competitor and a temporal rank
    uk = [p for p in read_predictions(step / "predictions.parquet") if p["subject"] == "Q145"]
    assert {p["period"] for p in uk} == {"2009", "2010", "2011"}
    html = (tmp_path / "run" / "report.html").read_text()
    assert (
        "Drift probe: pll" in html
        and "Heatmap of temporal_acc for 2 models over 3 periods (all rows but deleted)" in html
    )


# ----- a real model ----------------------------------------------------------------------------


@pytest.fixture
def two_threads():
    """The probe tests run on one thread (conftest); a 135M-parameter model wants both cores."""
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


@pytest.mark.slow  # the first GGUF conversion takes ~45 s; it is cached after that
def test_smollm2_knows_messis_club_of_2010_not_of_2022(tmp_path, two_threads):
    """SmolLM2's label likelihoods on real sample rows (P54, P39) put it around 2010: it
    prefers Messi's Barcelona (2004-2021) to his 2022 PSG, and yet Biden the President
    (2021-2025) to Biden the Vice President (2009-2017)."""
    from chronoprobe.datasets.writers import write_drift
    from chronoprobe.kg.samples import load_sample
    from chronoprobe.probes.series_matrix import with_temporal_ranks
    from chronoprobe.time import Granularity, periods_between

    built = tmp_path / "built"
    write_drift(
        load_sample(),
        built,
        periods_between("2010", "2022", Granularity.YEAR),
        relations=["P54", "P39"],
    )
    wanted = {"Q615_P54_2010", "Q615_P54_2022", "Q6279_P39_2010", "Q6279_P39_2022"}
    rows = [r for r in read_jsonl(built / "examples.jsonl") if r["id"] in wanted]
    assert {r["answer_labels"][0] for r in rows} == {
        "FC Barcelona",
        "Paris Saint-Germain F.C.",
        "Vice President of the United States",
        "President of the United States",
    }
    write_jsonl(tmp_path / "data" / "examples.jsonl", rows)
    run_step(tmp_path / "out", {"data": tmp_path / "data"}, model=["smollm2"], view="pll")
    predictions = read_predictions(tmp_path / "out" / "predictions.parquet")
    ranks = {p["id"]: p["temporal_rank"] for p in with_temporal_ranks(predictions)}
    assert ranks == {
        "Q615_P54_2010": 1,
        "Q615_P54_2022": 2,
        "Q6279_P39_2010": 2,
        "Q6279_P39_2022": 1,
    }
    scores = {p["id"]: p["label_scores"] for p in predictions}
    barcelona = scores["Q615_P54_2010"]["FC Barcelona"]
    assert barcelona - scores["Q615_P54_2022"]["Paris Saint-Germain F.C."] > 10  # nats
    assert all(math.isfinite(v) for s in scores.values() for v in s.values())


def same_predictions(got: list[dict], want: list[dict]) -> bool:
    return [(p["model"], p["id"]) for p in got] == [(p["model"], p["id"]) for p in want] and all(
        close(g, w) for g, w in zip(got, want, strict=True)
    )


# Ray runs that are compared with a local run answer themselves (no shared answer store)
RAY = {"engine": "ray", "workers": 2, "reuse_answers": False}


def test_ray_actors_give_the_single_process_probe_one_model_per_actor(
    ray_session, model_dirs, data_dir, tmp_path
):
    specs = [str(d) for d in model_dirs]
    local = run_step(tmp_path / "local", {"data": data_dir}, model=specs, view="multi-token")
    # the actors must answer themselves, not read the answers the local run stored
    step = {**RAY, "model": specs, "view": "multi-token"}
    ray = run_step(tmp_path / "ray", {"data": data_dir}, **step)
    assert close(ray, {**local, "models": ray["models"]})
    for spec in specs:
        options = {**local["models"][spec]["options"], **RAY}
        assert close(ray["models"][spec], {**local["models"][spec], "options": options})
    got = read_predictions(tmp_path / "ray" / "predictions.parquet")
    assert same_predictions(got, read_predictions(tmp_path / "local" / "predictions.parquet"))
    assert not (tmp_path / "ray" / ".shards").exists()


def test_a_killed_ray_probe_resumes_at_its_missing_shards(
    ray_session, model_dirs, data_dir, tmp_path, monkeypatch
):
    """One model on two CPU actors: its 7 distinct queries in 2 shards of 4 rows (the batch
    size), one per actor; killed after the first shard came back, it answers the other only,
    and gives what a single process gives."""
    from chronoprobe.probes.answering import ModelShards

    written: list[int] = []
    write = ModelShards.write

    def killed_after_one(shards, view, number, predictions):
        if written:
            raise KeyboardInterrupt
        written.append(number)
        write(shards, view, number, predictions)

    monkeypatch.setattr(ModelShards, "write", killed_after_one)
    spec = str(model_dirs[0])
    step = {**RAY, "model": [spec], "view": "pll", "batch_size": 4}
    with pytest.raises(KeyboardInterrupt):
        run_step(tmp_path / "out", {"data": data_dir}, **step)
    first = written.pop()
    monkeypatch.setattr(
        ModelShards, "write", lambda shards, v, n, p: (written.append(n), write(shards, v, n, p))
    )
    run_step(tmp_path / "out", {"data": data_dir}, **step)
    assert written == [1 - first]  # 2 shards: only the one not finished was answered again
    ray = json.loads((tmp_path / "out" / "metrics.json").read_text())
    local = run_step(tmp_path / "local", {"data": data_dir}, model=[spec], view="pll")
    options = {**local["models"][spec]["options"], **RAY}
    assert close(ray["models"][spec], {**local["models"][spec], "options": options})
    assert same_predictions(
        read_predictions(tmp_path / "out" / "predictions.parquet"),
        read_predictions(tmp_path / "local" / "predictions.parquet"),
    )


def test_ray_actors_answer_into_the_request_store_that_a_local_run_reads(
    ray_session, model_dirs, data_dir, tmp_path
):
    from chronoprobe.core.cache_dir import default_cache_dir
    from chronoprobe.models.request_cache import STORE_NAME

    def stored() -> int:
        with sqlite3.connect(default_cache_dir() / STORE_NAME) as store:
            return store.execute("select count(*) from answers").fetchone()[0]

    spec = str(model_dirs[0])
    ray = run_step(tmp_path / "ray", {"data": data_dir}, model=[spec], engine="ray", workers=2)
    written = stored()
    assert written > 0  # by the actors, into the command's cache folder
    local = run_step(tmp_path / "local", {"data": data_dir}, model=[spec])
    assert stored() == written  # the local run found every answer it needed: it stored none
    run_step(tmp_path / "single", {"data": data_dir}, model=[spec], view="single-token")
    assert stored() > written  # while answers it did not find are stored
    options = {**local["models"][spec]["options"], "engine": "ray", "workers": 2}
    assert close(ray["models"][spec], {**local["models"][spec], "options": options})


def test_engine_ray_without_ray_says_how_to_install_it(model_dirs, data_dir, tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails as when not installed
    with pytest.raises(ValueError, match=r"needs Ray, which is not installed: pip install "):
        run_step(tmp_path / "out", {"data": data_dir}, model=[str(model_dirs[0])], engine="ray")
    [problem] = get_kind("probe").problems(params(model=[str(model_dirs[0])], workers=2), ["data"])
    assert problem == "`address` and `workers` apply to `engine: ray` only"
    [problem] = get_kind("probe").problems(
        params(model=[str(model_dirs[0])], engine="ray", device_map="auto"), ["data"]
    )
    assert problem == "`device_map` applies to `engine: local` only (a Ray actor holds one GPU)"
