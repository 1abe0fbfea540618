"""Every field of an imported row is checked by its schema's one check, shared by the importers
of that schema: a released value no view can use is a located problem, skipped with
--skip-bad, never a row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.datasets.ecbd_release import read_ecbd, read_ekp
from chronoprobe.datasets.row_checks import (
    UniqueIds,
    check_drift_row,
    check_ecbd_row,
)
from chronoprobe.datasets.templama import read_templama
from chronoprobe.jsonl import read_jsonl
from chronoprobe.kg.io.checks import Invalid
from chronoprobe.kg.io.problems import BadRecord, Problems

FIXTURES = Path(__file__).parents[1] / "fixtures"
DRIFT = {
    "id": "Q5_P54_2017",
    "period": "2017",
    "relation": "P54",
    "subject": "Q5",
    "query": "Alice plays for [MASK].",
    "answers": ["Q1", "Q2"],
    "answer_labels": ["Acme", "Globex"],
    "split": None,
}
ECBD = {
    "id": "GPT-2_1_0_0",
    "entity": "GPT-2",
    "year": "2019",
    "span_type": "np",
    "sentence": "The GPT-2 model has many parameters.",
    "mention_start": 4,
    "mention_end": 9,
    "span_start": 20,
    "span_end": 35,
    "span": "many parameters",
    "definition": "GPT-2 is a language model.",
    "split": "dev",
}


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("id", "", "id is empty"),
        ("id", 5, "id must be text, not a number"),
        ("id", "a\nb", "id 'a\\nb' holds a tab or a newline"),
        ("period", "0000", "period '0000': year 0 does not exist (1 BCE is -1)"),
        ("period", 2017, "period must be a period such as '2019', not 2017"),
        ("period", "+99999999999-Q1", "period '+99999999999-Q1': year +99999999999 is outside"),
        ("period", "2017-Q5", "period: not a period: '2017-Q5'"),
        ("period", "17", "period '17' is written '0017'"),
        ("relation", "P 54", "relation is not an id: 'P 54'"),
        ("subject", "Q5\u2028", "subject is not an id: 'Q5\\u2028'"),
        ("query", "Alice plays for _X_.", "query must hold [MASK] once, not 0 times"),
        ("query", "[MASK] plays for [MASK].", "query must hold [MASK] once, not 2 times"),
        ("query", "Alice\x00 plays for [MASK].", "query holds U+0000, which no text may"),
        ("answers", [], "answers must be a non-empty list of ids, not a list"),
        ("answers", [["Q1"], ["Q2"]], "answers[0] must be a string id, not a list"),
        ("answers", ["Q1", "Q 2"], "answers[1] is not an id: 'Q 2'"),
        ("answers", ["Q1", "Q1"], "answers lists an id twice"),
        ("answer_labels", ["Acme"], "answer_labels must be a list of 2 texts, not 1 items"),
        ("answer_labels", ["Acme", None], "answer_labels[1] must be text, not null"),
        ("answer_labels", ["Acme", " "], "answer_labels[1] is empty"),
        ("split", "kept", "split 'kept' is none of unchanged, updated, new, deleted"),
        ("answer_aliases", [["x"]], "answer_aliases must hold one list per answer"),
        ("most_recent_answer", {"id": "Q1"}, "most_recent_answer must be null or {id, label}"),
        ("extra", 1, "row fields: extra"),
    ],
)
def test_each_field_of_a_drift_row(field, value, reason):
    with pytest.raises(Invalid) as caught:
        check_drift_row({**DRIFT, field: value})
    assert str(caught.value).startswith(reason)
    good = {**DRIFT, "answer_aliases": [["A"], []], "most_recent_answer": None}
    assert check_drift_row(good) is good


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("entity", "", "entity is empty"),
        ("year", "in 2019", "year 'in 2019' is neither a year nor a group name"),
        ("year", "0", "year: year 0 does not exist"),
        ("year", 2019, "year must be text, not a number"),
        ("mention_start", 4.0, "mention_start must be an integer, not 4.0"),
        ("mention_end", True, "mention_end must be an integer, not a boolean"),
        ("mention_end", 40, "mention offsets 4..40 outside the sentence"),
        ("span_start", 2, "span offsets 2..35 must lie after the mention"),
        ("span", "many parameter", "span 'many parameter' is not the sentence's text"),
        ("sentence", "x\u2029y", "sentence holds U+2029, which no text may"),
        ("split", "", "split is empty"),
    ],
)
def test_each_field_of_an_ecbd_row(field, value, reason):
    with pytest.raises(Invalid) as caught:
        check_ecbd_row({**ECBD, field: value})
    assert str(caught.value).startswith(reason)
    assert check_ecbd_row({**ECBD, "year": "popular"})["year"] == "popular"


def test_ids_are_claimed_once_per_import():
    ids = UniqueIds()
    ids.claim(["a", "b"], "f.json:1")
    with pytest.raises(Invalid, match=r"^duplicate id 'b' \(first at f\.json:1\)$"):
        ids.claim(["c", "b"], "f.json:2")
    assert "c" not in ids.seen  # all of a record's ids or none
    assert ids.unused("a") == "a~2" and ids.unused("z") == "z"


TEMPLAMA = {
    "query": "Alice plays for _X_.",
    "answer": [{"wikidata_id": "Q1", "name": "Acme"}],
    "date": 2017,
    "id": "Q5_P54_2017",
    "relation": "P54",
}


@pytest.mark.parametrize(
    ("fmt", "change", "reason"),
    [
        ("templama", {"date": 0}, "period '0000': year 0 does not exist"),  # wrote "0000"
        ("templama", {"date": "0"}, "period '0000': year 0 does not exist"),
        ("templama", {"date": 2017.0}, "date must be a year or a period such as '2019-Q1'"),
        ("dynamic-templama", {"date": "+3000000000-Q1"}, "period '+3000000000-Q1': year"),
        ("templama", {"answer": [{"wikidata_id": "Q 1", "name": "A"}]}, "answers[0] is not an id"),
        ("templama", {"answer": [[{"wikidata_id": "Q1"}]]}, "'answer' must hold {wikidata_id"),
        ("templama", {"answer": {"wikidata_id": "Q1", "name": ["A"]}}, "'answer': name must be"),
        ("templama", {"relation": None}, "relation must be a string id, not null"),  # was "None"
        ("templama", {"id": 7}, "id must be text, not a number"),  # was "7"
        ("templama", {"id": "Q5\x85_P54_2017"}, "subject is not an id: 'Q5\\x85'"),
        ("templama", {"query": "[MASK] plays for _X_."}, "query must hold [MASK] once"),
    ],
)
def test_templama_values_no_view_can_use_are_located_problems(tmp_path, fmt, change, reason):
    path = tmp_path / "rows.jsonl"
    good = {**TEMPLAMA, "id": "Q6_P54_2017"}
    if fmt == "dynamic-templama":
        good["date"] = "2017-Q1"
    path.write_text(json.dumps(good) + "\n" + json.dumps({**TEMPLAMA, **change}) + "\n")
    problems = Problems()
    rows, _ = read_templama([path], problems, fmt)
    assert [row["id"] for row in rows] == ["Q6_P54_2017"]
    [example] = problems.examples.values()
    assert example.startswith(f"{path}:2: {reason}")
    with pytest.raises(BadRecord, match=f"^{path}:2: "):
        read_templama([path], Problems(strict=True), fmt)


def test_a_duplicate_templama_id_names_where_it_was_first(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(TEMPLAMA) + "\n\n" + json.dumps(TEMPLAMA) + "\n")
    problems = Problems()
    rows, _ = read_templama([path], problems)
    assert len(rows) == 1
    assert list(problems.examples.values()) == [
        f"{path}:3: duplicate id 'Q5_P54_2017' (first at {path}:1)"
    ]


def _ecbd_record(**change) -> dict:
    first = (FIXTURES / "ecbd" / "2019" / "np_spans_dev.json").read_text().splitlines()[0]
    return {**json.loads(first), **change}


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"year": "abc"}, "year 'abc' is not a year (such as 2019)"),  # was group "abc"
        ({"year": 2019.5}, "year 2019.5 is not a year (such as 2019)"),
        ({"year": 0}, "year: year 0 does not exist (1 BCE is -1)"),
        ({"ex_id": 7}, "ex_id must be text, not a number"),
        ({"entity_span_str": ["GPT-2"]}, "entity_span_str must be text, not a list"),
        ({"span_type": 3}, "span_type must be text, not a number"),
    ],
)
def test_ecbd_values_no_view_can_use_are_located_problems(tmp_path, change, reason):
    path = tmp_path / "np_spans_dev.json"
    path.write_text(json.dumps(_ecbd_record()) + "\n" + json.dumps(_ecbd_record(**change)) + "\n")
    problems = Problems()
    rows = read_ecbd([path], problems)
    assert len(rows) == 1 and rows[0]["year"] == "2019"
    assert list(problems.examples.values()) == [f"{path}:2: {reason}"]


def test_ecbd_ids_stay_unique_when_a_released_id_looks_like_a_repeat(tmp_path):
    record = _ecbd_record()
    path = tmp_path / "np_spans_dev.json"
    again = {**record, "ex_id": record["ex_id"] + "~2"}
    path.write_text("\n".join(json.dumps(r) for r in (record, record, again)) + "\n")
    ids = [row["id"] for row in read_ecbd([path], Problems(strict=True))]
    assert len(set(ids)) == 3 and ids[:2] == [record["ex_id"], record["ex_id"] + "~2"]


def test_ekp_records_given_twice_are_a_problem_not_duplicate_rows(tmp_path):
    source = FIXTURES / "ecbd-ekp" / "all_ent_2020_2021_np_easy.json"
    first = source.read_text().splitlines()[0]
    path = tmp_path / "ekp_np.json"
    path.write_text(first + "\n" + first + "\n")
    problems = Problems()
    rows = read_ekp([path], problems)
    assert len({row["id"] for row in rows}) == len(rows) > 0
    [example] = problems.examples.values()
    assert example.startswith(f"{path}:2: duplicate id ") and example.endswith(
        f"(first at {path}:1)"
    )


def test_the_command_skips_bad_rows_with_skip_bad_and_counts_them(tmp_path):
    path = tmp_path / "rows.jsonl"
    rows = [{**TEMPLAMA, "id": "Q6_P54_2017"}, {**TEMPLAMA, "date": 0}, TEMPLAMA, TEMPLAMA]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    stopped = CliRunner().invoke(app, ["import", "templama", str(path), "-o", str(tmp_path / "a")])
    assert stopped.exit_code == 2 and "Traceback" not in stopped.output
    said = " ".join(stopped.output.split())
    assert f"{path}:2: period '0000': year 0 does not exist (1 BCE is -1)" in said
    out = tmp_path / "b"
    result = CliRunner().invoke(
        app, ["import", "templama", str(path), "--skip-bad", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert [row["id"] for row in read_jsonl(out / "examples.jsonl")] == [
        "Q6_P54_2017",
        "Q5_P54_2017",
    ]
    skipped = json.loads((out / "metrics.json").read_text())["skipped"]
    assert skipped == {"bad year": 1, "duplicate id": 1}
