"""`import templama --aliases KG`: real TempLAMA rows take the aliases of a KG converted from
Wikidata (a dump excerpt, SPARQL names, JSONL entities), joined by id, and judging reads
them; without aliases, metrics.json and the warnings say so. `kg convert` keeps every
source's aliases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.jsonl import read_jsonl, write_jsonl

FIXTURES = Path(__file__).parents[1] / "fixtures"
# four rows of the TempLAMA training release, as published (Eden Hazard, Robin van Persie)
ROWS = FIXTURES / "judging" / "templama_rows.jsonl"
DUMP = FIXTURES / "wikidata" / "templama_answers.json"  # their clubs, as a dump gives them
SPARQL_NAMES = FIXTURES / "sparql" / "answer_names.json"
ENTITIES = FIXTURES / "judging" / "templama_aliases.jsonl"
runner = CliRunner()


def invoke(*args) -> str:
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def dump_kg(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("kg") / "kg"
    invoke("kg", "convert", DUMP, "--format", "wikidata-json", "-o", out)
    return out


def imported(tmp_path: Path, *aliases) -> Path:
    out = tmp_path / "templama"
    invoke("import", "templama", ROWS, *(["--aliases", *aliases] if aliases else []), "-o", out)
    return out


def test_the_dump_kgs_aliases_join_the_rows_by_id_and_judging_reads_them(dump_kg, tmp_path):
    out = imported(tmp_path, dump_kg)
    rows = {r["id"]: r for r in read_jsonl(out / "examples.jsonl")}
    assert rows["Q214204_P54_2013"]["answer_labels"] == ["Chelsea F.C."]
    assert rows["Q214204_P54_2013"]["answer_aliases"] == [
        ["Chelsea", "Chelsea FC", "Chelsea Football Club", "The Blues", "CFC"]
    ]
    # the Netherlands' team is in no KG given: it keeps its released name alone
    van_persie = rows["Q2339_P54_2013"]
    assert van_persie["answer_labels"] == [
        "Netherlands national association football team",
        "Manchester United F.C.",
    ]
    assert van_persie["answer_aliases"][0] == []
    assert "Man Utd" in van_persie["answer_aliases"][1]
    names = {(e["id"], e["relation"]): e["names"] for e in read_jsonl(out / "answer_names.jsonl")}
    assert names[("Q8682", "P54")][:2] == ["Real Madrid CF", "Real Madrid"]
    assert names[("Q134241", "P54")] == ["Feyenoord"]  # most_recent_answer of the rows
    aliases = json.loads((out / "metrics.json").read_text())["aliases"]
    assert aliases == {
        "source": f"{dump_kg} (KG directory)",
        "answers": 5,
        "in_kg": 4,
        "with_aliases": 4,
    }
    judged = judge_answers(
        out, tmp_path, {"Q214204_P54_2013": "The Blues", "Q2339_P54_2013": "Man Utd"}
    )
    assert judged == {"Q214204_P54_2013": True, "Q2339_P54_2013": True}


def judge_answers(data: Path, tmp_path: Path, answers: dict[str, str]) -> dict[str, bool]:
    responses = tmp_path / "answers.jsonl"
    write_jsonl(responses, [{"id": i, "answer": a} for i, a in answers.items()])
    out = tmp_path / "judged"
    invoke("probe", "generate", data, "--responses", responses, "-o", out)
    import pyarrow.parquet as pq

    table = pq.read_table(out / "predictions.parquet").to_pylist()
    return {p["id"]: p["judged"]["names"] for p in table if p["id"] in answers}


def test_without_aliases_the_released_names_alone_and_metrics_say_so(tmp_path):
    out = imported(tmp_path)
    assert all(not any(r.get("answer_aliases") or []) for r in read_jsonl(out / "examples.jsonl"))
    aliases = json.loads((out / "metrics.json").read_text())["aliases"]
    assert aliases == {"source": None, "answers": 5, "with_aliases": 0}
    judged = judge_answers(
        out, tmp_path, {"Q214204_P54_2013": "The Blues", "Q2339_P54_2013": "Man Utd"}
    )
    assert judged == {"Q214204_P54_2013": False, "Q2339_P54_2013": False}
    metrics = json.loads((tmp_path / "judged" / "metrics.json").read_text())
    assert "no gold answer has aliases" in json.dumps(metrics)


@pytest.mark.parametrize("source", [DUMP, SPARQL_NAMES, ENTITIES], ids=["dump", "sparql", "jsonl"])
def test_any_source_kg_convert_reads_gives_aliases_directly(source, tmp_path):
    out = imported(tmp_path, source)
    row = next(r for r in read_jsonl(out / "examples.jsonl") if r["id"] == "Q214204_P54_2013")
    assert "The Blues" in row["answer_aliases"][0]
    if source == SPARQL_NAMES:  # English aliases only, in the query's order
        assert row["answer_aliases"] == [["Chelsea", "The Blues"]]


def test_kg_convert_keeps_the_aliases_of_sparql_names_and_of_facts(tmp_path):
    from chronoprobe.kg.graph import TemporalKG

    # a JSONL file of entities alone, and a dump excerpt of dated entities alone
    invoke("kg", "convert", ENTITIES, "--format", "jsonl", "-o", tmp_path / "entities")
    assert "The Blues" in TemporalKG.load(tmp_path / "entities").aliases("Q9616")
    invoke("kg", "convert", DUMP, "--format", "wikidata-json", "-o", tmp_path / "dump")
    assert TemporalKG.load(tmp_path / "dump").aliases("Q18656")[:2] == [
        "Manchester United",
        "Man United",
    ]
    invoke("kg", "convert", SPARQL_NAMES, "--format", "wikidata-sparql", "-o", tmp_path / "names")
    kg = TemporalKG.load(tmp_path / "names")
    assert (len(kg), kg.aliases("Q9616"), kg.label("Q18656")) == (
        0,
        ["Chelsea", "The Blues"],
        "Manchester United F.C.",
    )

    # a fact query with ?objectAltLabel: one alias a row, or several joined by |
    def term(value, **extra):
        return {"type": "literal", "value": value, **extra}

    binding = {
        "subject": {"type": "uri", "value": "http://www.wikidata.org/entity/Q214204"},
        "relation": {"type": "uri", "value": "http://www.wikidata.org/prop/P54"},
        "object": {"type": "uri", "value": "http://www.wikidata.org/entity/Q9616"},
        "objectLabel": term("Chelsea F.C.", **{"xml:lang": "en"}),
        "start": term("2012-01-01T00:00:00Z", datatype="http://www.w3.org/2001/XMLSchema#dateTime"),
        "startPrecision": term("9"),
    }
    bindings = [
        {**binding, "objectAltLabel": term("Chelsea|The Blues", **{"xml:lang": "en"})},
        {**binding, "objectAltLabel": term("CFC", **{"xml:lang": "en"})},
        {**binding, "objectAltLabel": term("Die Blauen", **{"xml:lang": "de"})},
    ]
    variables = [*binding, "objectAltLabel"]
    results = tmp_path / "facts.json"
    results.write_text(json.dumps({"head": {"vars": variables}, "results": {"bindings": bindings}}))
    invoke("kg", "convert", results, "--format", "wikidata-sparql", "-o", tmp_path / "facts")
    kg = TemporalKG.load(tmp_path / "facts")
    assert kg.aliases("Q9616") == ["Chelsea", "The Blues", "CFC"]


@pytest.mark.parametrize(
    ("folder", "message"),
    [
        (False, "not a KG directory, and no KG source format"),
        (True, "not a chronoprobe KG directory (no manifest.json)"),
    ],
)
def test_an_aliases_path_that_is_no_kg_fails_saying_why(tmp_path, folder, message):
    bad = tmp_path / "bad"
    if folder:
        bad.mkdir()
    else:
        bad.write_text("not a kg\n")
    result = runner.invoke(
        app, ["import", "templama", str(ROWS), "--aliases", str(bad), "-o", str(tmp_path / "o")]
    )
    assert result.exit_code != 0
    assert message in result.output
    assert not (tmp_path / "o" / "examples.jsonl").exists()
