"""`chronoprobe import templama|dynamic-templama`: released rows in, one drift row each out,
probed by `probe pll` like a built set; wrong formats and empty imports fail, naming the line."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.jsonl import read_jsonl
from chronoprobe.models.tiny import random_model
from chronoprobe.models.tokenizer import train_tokenizer

FIXTURES = Path(__file__).parents[1] / "fixtures"
TEMPLAMA = [FIXTURES / "templama" / "train.jsonl", FIXTURES / "templama" / "test.jsonl"]
runner = CliRunner()


def invoke(*args) -> object:
    return runner.invoke(app, [str(a) for a in args])


def imported(tmp_path, fmt: str, *paths) -> Path:
    out = tmp_path / fmt
    result = invoke("import", fmt, *paths, "-o", out)
    assert result.exit_code == 0, result.output
    return out


def test_templama_rows_one_for_one_with_splits_against_the_previous_year(tmp_path):
    out = imported(tmp_path, "templama", *TEMPLAMA)
    rows = list(read_jsonl(out / "examples.jsonl"))
    # nine released rows, nine rows, in file order: no row is invented for Xavi's 2020/2021
    assert [(r["id"], r["period"], r["split"], r["answers"]) for r in rows] == [
        ("Q11571_P54_2017", "2017", None, ["Q8682"]),  # answer as one object, an integer year
        ("Q11571_P54_2018", "2018", "updated", ["Q8682", "Q9616"]),
        ("Q145_P6_2018", "2018", "new", ["Q264766"]),
        ("Q11571_P54_2019", "2019", "updated", ["Q9616"]),
        ("Q11571_P54_2020", "2020", "unchanged", ["Q9616"]),
        ("Q11571_P54_2021", "2021", "updated", ["Q9616", "Q18656"]),
        ("Q145_P6_2019", "2019", "updated", ["Q264766", "Q180589"]),
        ("Q145_P6_2020", "2020", "updated", ["Q180589"]),
        ("Q164_P54_2019", "2019", "new", ["Q214928"]),
    ]
    first = rows[0]
    assert first["query"] == "Cristiano Ronaldo plays for [MASK]."
    assert first["answer_labels"] == ["Real Madrid CF"] and first["subject"] == "Q11571"
    assert rows[5]["answer_labels"] == ["Juventus F.C.", "Manchester United F.C."]
    assert rows[5]["most_frequent_answer"] == {"id": "Q9616", "label": "Juventus F.C."}
    assert rows[5]["most_recent_answer"] == {"id": "Q18656", "label": "Manchester United F.C."}
    stats = {s["period"]: s for s in json.loads((out / "stats.json").read_text())}
    # Xavi's query has no 2020 row and Theresa May's none in 2021: counted, not written
    assert stats["2020"] == {
        "period": "2020",
        "total": 2,
        "unchanged": 1,
        "updated": 1,
        "deleted": 1,
    }
    assert stats["2021"] == {"period": "2021", "total": 1, "updated": 1, "deleted": 1}
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["family"] == "drift" and metrics["rows"] == 9 and metrics["skipped"] == {}


def test_a_release_folder_reads_as_its_files_in_split_order(tmp_path):
    files = imported(tmp_path / "files", "templama", *TEMPLAMA)
    folder = imported(tmp_path / "folder", "templama", FIXTURES / "templama")  # + templates.csv
    for name in ("examples.jsonl", "stats.json"):
        assert (folder / name).read_bytes() == (files / name).read_bytes()
    result = invoke("import", "templama", FIXTURES / "cronquestions" / "kg", "-o", tmp_path / "x")
    assert result.exit_code != 0
    assert "a folder with no .json or .jsonl file in it" in " ".join(result.output.split())


def test_dynamic_templama_reads_quarters_and_months(tmp_path):
    out = imported(tmp_path, "dynamic-templama", FIXTURES / "dynamic-templama" / "quarters.jsonl")
    rows = list(read_jsonl(out / "examples.jsonl"))
    assert [(r["period"], r["subject"], r["split"]) for r in rows] == [
        ("2019-Q2", "Q180589", None),
        ("2019-Q3", "Q180589", "updated"),
        ("2019-Q2", "Q264766", None),
        ("2019-Q4", "Q180589", "unchanged"),
    ]
    stats = json.loads((out / "stats.json").read_text())
    assert stats[1] == {"period": "2019-Q3", "total": 1, "updated": 1, "deleted": 1}
    out = imported(tmp_path, "dynamic-templama", FIXTURES / "dynamic-templama" / "months.jsonl")
    rows = list(read_jsonl(out / "examples.jsonl"))
    assert [(r["period"], r["split"], r["answer_labels"]) for r in rows] == [
        ("2021-07", None, ["FC Barcelona"]),
        ("2021-08", "updated", ["Paris Saint-Germain F.C."]),
    ]


def test_quarters_are_not_templama_and_granularities_do_not_mix(tmp_path):
    quarters = FIXTURES / "dynamic-templama" / "quarters.jsonl"
    result = invoke("import", "templama", quarters, "-o", tmp_path / "out")
    assert result.exit_code != 0
    assert "quarters.jsonl:1: date '2019-Q2' is a quarter, TempLAMA's are years" in result.output
    assert "chronoprobe import dynamic-templama" in result.output
    assert not (tmp_path / "out").exists()
    months = FIXTURES / "dynamic-templama" / "months.jsonl"
    result = invoke("import", "dynamic-templama", quarters, months, "-o", tmp_path / "out")
    assert result.exit_code != 0 and "months.jsonl:1: date '2021-07' is a month" in result.output


def test_a_wrong_format_names_file_line_format_and_missing_fields(tmp_path):
    ecbd = tmp_path / "np_spans_dev.json"
    ecbd.write_text(
        json.dumps(
            {
                "ex_id": "x_1_0_0",
                "masked_sentence": "a <extra_id_0>",
                "answer_str": "<extra_id_0> b <extra_id_1>",
                "definition": ["d"],
                "year": "2019",
                "entity_span_str": "a",
                "entity_span_loc": [0, 1],
            }
        )
        + "\n"
    )
    result = invoke("import", "templama", ecbd, "-o", tmp_path / "out")
    assert result.exit_code != 0
    said = " ".join(result.output.split())
    assert (
        f"{ecbd}:1: not a templama row (no query, answer, date, id, relation); this looks "
        f"like ecbd rows; read them with `chronoprobe import ecbd {ecbd} --out "
        f"{tmp_path / 'out'}`" in said
    )


def test_bad_rows_stop_the_import_or_are_skipped_and_an_empty_import_fails(tmp_path):
    good = TEMPLAMA[1].read_text().splitlines()
    bad = tmp_path / "test.jsonl"
    bad.write_text("\n".join([good[0], "{not json", good[1].replace("_X_", "")]) + "\n")
    result = invoke("import", "templama", bad, "-o", tmp_path / "out")
    assert result.exit_code != 0 and "test.jsonl:2: invalid JSON" in result.output
    out = imported(tmp_path, "templama", bad, "--skip-bad")
    assert len(list(read_jsonl(out / "examples.jsonl"))) == 1
    skipped = json.loads((out / "metrics.json").read_text())["skipped"]
    assert sum(skipped.values()) == 2
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    result = invoke("import", "templama", empty, "-o", tmp_path / "none")
    assert result.exit_code != 0 and "no rows in" in result.output
    assert not (tmp_path / "none").exists()


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory) -> dict[str, Path]:
    """A tiny random causal and masked LM over the fixtures' words, saved as local specs."""
    words = []
    for path in [*TEMPLAMA, FIXTURES / "dynamic-templama" / "quarters.jsonl"]:
        for row in read_jsonl(path):
            answers = row["answer"] if isinstance(row["answer"], list) else [row["answer"]]
            words += [row["query"].replace("_X_", a["name"]) for a in answers]
    dirs = {}
    for architecture in ("llama", "roberta"):
        tokenizer = train_tokenizer(words * 3, architecture, vocab_size=400)
        path = tmp_path_factory.mktemp(architecture)
        random_model(architecture, tokenizer, seed=1).save_pretrained(path)
        tokenizer.save_pretrained(path)
        dirs[architecture] = path
    return dirs


@pytest.mark.parametrize("architecture", ["llama", "roberta"])
def test_an_imported_set_is_probed_like_a_built_one(tmp_path, tiny_models, architecture):
    data = imported(tmp_path, "templama", *TEMPLAMA)
    out = tmp_path / "probe"
    model = tiny_models[architecture]
    result = invoke("probe", "pll", data, "-m", model, "--device", "cpu", "-o", out)
    assert result.exit_code == 0, result.output
    predictions = pq.read_table(out / "predictions.parquet").to_pylist()
    rows = list(read_jsonl(data / "examples.jsonl"))
    assert sorted((p["id"], p["period"], p["split"]) for p in predictions) == sorted(
        (r["id"], r["period"], r["split"]) for r in rows
    )
    metrics = json.loads((out / "metrics.json").read_text())["models"][str(model)]
    # every released row counts in the overall figures: no invented deleted row among them
    assert metrics["predicted"] == 9 and metrics["overall"]["n"] == 9
    assert metrics["overall"]["labels"] == 12  # every answer of every row is scored
    assert set(metrics["by_split"]) == {"new", "unchanged", "updated"}
