"""A probe set probed with a model series: rows without a model of their period are counted
and warned of, a set with none is refused in one line, and another KG's rows are named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.jsonl import write_jsonl
from chronoprobe.probes.series_inputs import check_series_kg, check_series_periods

from .conftest import as_dicts

YEARS = ["2016", "2017", "2018", "2019", "2020"]
QUARTERS = [f"{y}-Q{q}" for y in (2019, 2020, 2021) for q in (1, 2, 3, 4)]
WHERE = Path("drift/examples.jsonl")


def test_rows_of_other_periods_than_the_models_are_refused_with_what_to_build():
    with pytest.raises(ValueError) as error:
        check_series_periods(QUARTERS, YEARS, WHERE, pytest.fail)
    assert str(error.value) == (
        "drift/examples.jsonl: no row has a model of its period in the series: the rows are of "
        "2019-Q1..2021-Q4 (quarter), the models of 2016..2020 (year); build the probe set over "
        "the models' periods, e.g. `chronoprobe build drift KG --granularity year --first 2016 "
        "--last 2020 -o drift-2016-2020`"
    )
    with pytest.raises(ValueError, match=r"the rows are without a period, the models of 2016"):
        check_series_periods([None, None], YEARS, WHERE, pytest.fail)
    with pytest.raises(ValueError, match=r"models of early\.\.late; build the probe set over the"):
        check_series_periods(["2019"], ["late", "early"], WHERE, pytest.fail)


def test_rows_without_a_model_are_counted_in_a_warning():
    said: list[str] = []
    rows = ["2015", "2016", "2016", "2020", "2021", "2022", None]
    check_series_periods(rows, YEARS, WHERE, said.append)
    assert said == [
        "drift/examples.jsonl: 3 of 7 rows have a model of their period in the series and 4 "
        "have none (2015..2022 (year), 1 without a period): every model probes them, but no "
        "model is at t for them, so they add no diagonal cell and no window"
    ]
    check_series_periods(["2016", "2020", "2020"], YEARS, WHERE, pytest.fail)  # all have one


def _record(path: Path, data: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def test_rows_of_another_kg_than_the_series_are_named(tmp_path):
    rows = _record(tmp_path / "drift" / "examples.jsonl", {})
    _record(tmp_path / "drift" / "kg.json", {"name": "sample", "fingerprint": "a" * 64})
    series = tmp_path / "series"
    said: list[str] = []
    check_series_kg(rows, series, said.append)  # no series.json: nothing to compare
    _record(series / "series.json", {"kg": "kg/world", "periods": []})
    check_series_kg(rows, series, said.append)  # an older series: no fingerprint
    _record(series / "series.json", {"kg": "kg/world", "kg_fingerprint": "a" * 64})
    check_series_kg(rows, series, said.append)  # the same KG
    assert said == []
    _record(series / "series.json", {"kg": "kg/world", "kg_fingerprint": "b" * 64})
    check_series_kg(rows, series, said.append)
    assert said == [
        f"{tmp_path / 'drift'} was built from KG 'sample' (aaaaaaaaaaaa), the series {series} "
        "was trained on kg/world (bbbbbbbbbbbb): its models never read these rows' facts"
    ]


def _series(tmp_path: Path, model_dirs: list[Path], periods: list[str]) -> Path:
    series = tmp_path / "series"
    entries = [{"period": p, "dir": f"m{p}"} for p in periods]
    for entry, source in zip(entries, model_dirs, strict=True):
        series.mkdir(parents=True, exist_ok=True)
        (series / entry["dir"]).symlink_to(source)
    _record(series / "series.json", {"periods": entries})
    return series


def test_the_probe_command_refuses_a_quarterly_set_for_a_yearly_series(model_dirs, tmp_path):
    rows = [{**row, "period": f"{row['period']}-Q1"} for row in as_dicts()]
    write_jsonl(tmp_path / "drift" / "examples.jsonl", rows)
    series = _series(tmp_path, model_dirs, ["2019", "2020"])
    out = tmp_path / "out"
    args = ["probe", "pll", str(tmp_path / "drift"), "--series", str(series), "-o", str(out)]
    result = CliRunner().invoke(app, [*args, "--device", "cpu"])
    assert result.exit_code == 2, result.output
    error = [line for line in result.output.splitlines() if "error:" in line]
    assert len(error) == 1 and "no row has a model of its period in the series" in error[0]
    assert (
        "the rows are of 2019-Q1..2020-Q1 (quarter), the models of 2019..2020 (year)"
        in " ".join(result.output.split())
    )
    assert not (out / "predictions.parquet").exists()


def test_the_probe_command_warns_of_rows_without_a_model_and_probes_them(model_dirs, tmp_path):
    rows = as_dicts()  # 2019: three rows, 2020: four
    write_jsonl(tmp_path / "drift" / "examples.jsonl", rows)
    series = _series(tmp_path, model_dirs, ["2020", "2021"])
    out = tmp_path / "out"
    args = ["probe", "pll", str(tmp_path / "drift"), "--series", str(series), "-o", str(out)]
    result = CliRunner().invoke(app, [*args, "--device", "cpu"])
    assert result.exit_code == 0, result.output
    assert (
        "4 of 7 rows have a model of their period in the series and 3 have none (2019 (year))"
        in (" ".join(result.output.split()))
    )
    metrics = json.loads((out / "metrics.json").read_text())
    assert {name: m["predicted"] for name, m in metrics["models"].items()} == {"2020": 7, "2021": 7}
