from __future__ import annotations

import json

from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.tkg import checkpoint

runner = CliRunner()


def test_train_then_eval(synth_dir, tmp_path):
    out = tmp_path / "emb"
    args = ["tkg", "train", str(synth_dir), "--out", str(out), "--rank", "8", "--epochs", "2"]
    result = runner.invoke(app, [*args, "--batch-size", "2000", "--device", "cpu", "--seed", "3"])
    assert result.exit_code == 0, result.output
    assert "entities" in result.output and "epoch 2:" in result.output and "mrr" in result.output
    saved = checkpoint.load(out)
    assert saved.epoch == 2 and saved.config["train"]["seed"] == 3
    written = json.loads((out / "metrics.json").read_text())
    result = runner.invoke(app, ["tkg", "eval", str(out), "--json", "--device", "cpu"])
    assert result.exit_code == 0, result.output
    metrics = json.loads(result.stdout)
    assert metrics["split"] == "test" and metrics["model"] == "tcomplex"
    assert metrics["mrr"] == written["mrr"] and 0 < metrics["mrr"] <= 1
    valid = runner.invoke(app, ["tkg", "eval", str(out), "--split", "valid", "--json"])
    assert json.loads(valid.stdout)["queries"] == 2 * len(saved.data.queries("valid"))
    # a second run with more epochs resumes instead of starting over
    more = tmp_path / "emb3"
    args = [*args[:4], str(more), *args[5:-1], "3", "--batch-size", "2000", "--seed", "3"]
    result = runner.invoke(app, [*args, "--device", "cpu"])
    assert result.exit_code == 0, result.output
    assert "continues from a finished run of epochs 2" in " ".join(result.output.split())
    assert "epoch 1:" not in result.output and checkpoint.load(more).epoch == 3


def test_errors_are_one_line_messages(tmp_path):
    result = runner.invoke(app, ["tkg", "eval", str(tmp_path)])
    assert result.exit_code == 2
    message = result.output.split("error: ", 1)[1].replace("\n", "")
    expected = f"{tmp_path}: not a TKG checkpoint (no config.json); create one with `chronoprobe"
    assert message == f"{expected} tkg train`"
    result = runner.invoke(app, ["tkg", "train", str(tmp_path), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "error:" in result.output


def test_help_teaches():
    result = runner.invoke(app, ["tkg", "train", "--help"])
    assert result.exit_code == 0
    for words in ("--time-mode", "--valid-fraction", "--no-cache", "--eval-every"):
        assert words in result.output


def test_an_empty_split_has_no_figure(synth_dir, tmp_path):
    """--valid-fraction 0 leaves the valid split empty: `tkg eval --split valid` gives no MRR
    (null, "-"), as it gives no object_mrr, rather than an MRR of 0."""
    out = tmp_path / "emb"
    args = ["tkg", "train", str(synth_dir), "--out", str(out), "--rank", "4", "--epochs", "1"]
    result = runner.invoke(app, [*args, "--valid-fraction", "0", "--device", "cpu"])
    assert result.exit_code == 0, result.output
    valid = ["tkg", "eval", str(out), "--split", "valid", "--device", "cpu"]
    result = runner.invoke(app, [*valid, "--json"])
    assert result.exit_code == 0, result.output
    metrics = json.loads(result.stdout)
    assert metrics["n"] == 0
    assert metrics["mrr"] is metrics["object_mrr"] is metrics["hits@1"] is None
    result = runner.invoke(app, valid)
    assert result.exit_code == 0, result.output
    assert "no fact in the split: no figure" in " ".join(result.output.split())
    assert "0.0000" not in result.output and "│ mrr " in result.output


def _kg_spanning(first: int, last: int, folder):
    from chronoprobe.kg.graph import TemporalKG
    from chronoprobe.kg.records import Fact
    from chronoprobe.time import TimePoint

    facts = [
        Fact(f"q{i}", "held", f"o{i % 3}", TimePoint(year), TimePoint(year))
        for i, year in enumerate([first, last, first + 1, last - 1, first + 2, last - 2])
    ]
    return TemporalKG.from_records(facts, name="wide").save(folder)


def test_a_kg_spanning_more_years_than_a_time_table_holds_is_refused(tmp_path):
    """Facts from year 1 to 200,001 made a time table of 200,001 rows (from 1 to 2**31 - 1,
    of billions, which no memory holds): refused in one line naming facts.parquet."""
    kg = _kg_spanning(1, 200_001, tmp_path / "wide")
    args = ["tkg", "train", str(kg), "--out", str(tmp_path / "o"), "--rank", "2"]
    result = runner.invoke(app, [*args, "--epochs", "1", "--time-mode", "start"])
    assert result.exit_code == 2, result.output
    message = " ".join(result.output.split("error: ", 1)[1].split())
    assert message.startswith(
        f"{kg / 'facts.parquet'}: its facts span 200,001 years (0001 to +200001); temporal "
        "embeddings keep a row per year, of at most 100,000 years"
    ), message
    assert not (tmp_path / "o").exists()


def test_the_span_is_checked_before_any_table_is_made(tmp_path):
    import pytest

    from chronoprobe.errors import UserError
    from chronoprobe.kg.graph import TemporalKG
    from chronoprobe.tkg.data import MAX_YEARS, check_span

    kg = TemporalKG.load(_kg_spanning(1, 2**31 - 1, tmp_path / "widest"))
    with pytest.raises(UserError, match=r"facts\.parquet: its facts span 2,147,483,647 years"):
        check_span(kg, tmp_path / "widest" / "facts.parquet")
    check_span(TemporalKG.load(_kg_spanning(-4, MAX_YEARS - 5, tmp_path / "wide")), tmp_path)
