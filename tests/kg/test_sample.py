"""The shipped real sample: it loads strictly, is internally consistent, and answers hand-checked
questions exactly as the historical record does."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from chronoprobe.kg.io.jsonl import load
from chronoprobe.kg.io.options import LoadOptions
from chronoprobe.kg.io.problems import Problems
from chronoprobe.kg.records import bound_points
from chronoprobe.kg.samples import load_sample, sample_path
from chronoprobe.time import TimePoint

P = TimePoint.parse


@pytest.fixture(scope="module")
def kg():
    return load_sample()


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return [json.loads(line) for line in sample_path().read_text(encoding="utf-8").splitlines()]


def kinds(rows):
    relations = [r for r in rows if r.get("kind") == "relation"]
    facts = [r for r in rows if "subject" in r]
    entities = [r for r in rows if "id" in r and r.get("kind") != "relation"]
    return relations, entities, facts


def test_sample_path_is_the_packaged_file():
    path = sample_path()
    assert path.name == "real_sample.jsonl"
    assert path.parent.name == "samples"
    assert path.is_file()


def test_loads_strictly_with_the_jsonl_loader(kg):
    direct = load([sample_path()], LoadOptions(), Problems(strict=True))
    assert len(direct) == len(kg) >= 150
    assert kg.name == "real-sample"
    assert kg.entities.num_rows == direct.entities.num_rows


def test_every_reference_has_a_row_and_ids_are_unique(rows, kg):
    relations, entities, facts = kinds(rows)
    assert len(relations) + len(entities) + len(facts) == len(rows)
    ids = [r["id"] for r in relations] + [e["id"] for e in entities]
    assert len(ids) == len(set(ids)), [i for i, n in Counter(ids).items() if n > 1]
    entity_ids = {e["id"] for e in entities}
    relation_ids = {r["id"] for r in relations}
    assert {f["subject"] for f in facts} | {f["object"] for f in facts} <= entity_ids
    assert {f["relation"] for f in facts} == relation_ids
    # No fact is duplicated (the KG would silently drop the copy).
    assert len(kg) == len(facts)
    for entity in entities:
        assert entity["label"].strip() and entity["type"], entity["id"]


def test_ids_are_wikidata_or_marked_local(rows):
    relations, entities, _ = kinds(rows)
    assert all(re.fullmatch(r"P\d+", r["id"]) for r in relations)
    for entity in entities:
        assert re.fullmatch(r"Q\d+|X:[a-z0-9-]+", entity["id"]), entity["id"]


def test_readme_lists_every_local_id(rows):
    readme = (sample_path().parent / "README.md").read_text(encoding="utf-8")
    _, entities, _ = kinds(rows)
    local = {e["id"] for e in entities if e["id"].startswith("X:")}
    listed = set(re.findall(r"`(X:[a-z0-9-]+)`", readme))
    assert local == listed


def test_readme_counts_match_the_data(kg):
    readme = (sample_path().parent / "README.md").read_text(encoding="utf-8")
    table = dict(re.findall(r"^\| (P\d+) \| [^|]+ \| (\d+) \|", readme, flags=re.M))
    assert {r: int(n) for r, n in table.items()} == kg.facts_per_relation()
    assert f"{len(kg)} facts" in readme


def test_times_are_bounded_and_ordered(kg):
    starts, ends = bound_points(kg.facts, "start"), bound_points(kg.facts, "end")
    for row, (start, end) in enumerate(zip(starts, ends, strict=True)):
        assert start is not None or end is not None, row
        if start is not None and end is not None:
            assert start <= end, (row, start, end)


def test_spouse_facts_are_symmetric(rows):
    spouses = {
        (f["subject"], f["object"], f["start"], f["end"])
        for f in kinds(rows)[2]
        if f["relation"] == "P26"
    }
    assert spouses == {(o, s, a, b) for s, o, a, b in spouses}


# ----- hand-checked answers ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("period", "expected"),
    [
        ("2010", ["Q76"]),
        ("2017-Q1", ["Q22686", "Q76"]),  # handover on 2017-01-20
        ("2017-01-19", ["Q76"]),
        ("2017-01-21", ["Q22686"]),
        ("2025", ["Q22686", "Q6279"]),
        ("2030", ["Q22686"]),  # the second term is open-ended
        ("1890", ["Q35678"]),  # Benjamin Harrison between Cleveland's two terms
        ("1963-Q4", ["Q9640", "Q9696"]),
        ("1841", ["Q11820", "Q11869", "Q11881"]),  # three presidents in one year
    ],
)
def test_president_of_the_united_states(kg, period, expected):
    assert kg.answers(object="Q11696", relation="P39", period=period) == expected


def test_presidents_label_and_relation_label(kg):
    assert kg.label("Q76") == "Barack Obama"
    assert kg.label("Q11696") == "President of the United States"
    assert kg.relation_label("P39") == "position held"
    assert kg.relation_label("P6") == "head of government"


def test_uk_prime_minister_handover_inside_a_quarter(kg):
    assert kg.answers(subject="Q145", relation="P6", period="2019-Q3") == ["Q180589", "Q264766"]
    assert kg.answers(subject="Q145", relation="P6", period="2019-07-23") == ["Q264766"]
    assert kg.answers(subject="Q145", relation="P6", period="2019-07-25") == ["Q180589"]
    # Truss until 2022-10-25, then Sunak; Starmer only from 2024.
    assert kg.answers(subject="Q145", relation="P6", period="2022-Q4") == [
        "X:liz-truss",
        "X:rishi-sunak",
    ]


def test_repeated_terms_in_the_same_office(kg):
    assert kg.time_answers("Q35171", "P39", "Q11696") == [
        (P("1885-03-04"), P("1889-03-04")),
        (P("1893-03-04"), P("1897-03-04")),
    ]
    assert kg.time_answers("Q22686", "P39", "Q11696") == [
        (P("2017-01-20"), P("2021-01-20")),
        (P("2025-01-20"), None),
    ]
    assert kg.time_answers("Q145", "P6", "Q128956") == [
        (P("1964-10-16"), P("1970-06-19")),
        (P("1974-03-04"), P("1976-04-05")),
    ]
    assert kg.time_answers("Q17", "P6", "Q132345") == [
        (P("2006-09-26"), P("2007-09-26")),
        (P("2012-12-26"), P("2020-09-16")),
    ]


def test_heads_of_government_of_other_countries(kg):
    assert kg.answers(subject="Q183", relation="P6", period="2010") == ["Q567"]
    assert kg.answers(subject="Q183", relation="P6", period="2021-12") == ["Q567", "Q61053"]
    assert kg.answers(subject="Q16", relation="P6", period="1984") == [
        "Q8619",
        "X:brian-mulroney",
        "X:john-turner",
    ]
    assert kg.answers(subject="Q668", relation="P6", period="2020") == ["Q1058"]
    assert kg.answers(subject="Q142", relation="P6", period="2024-Q3") == [
        "X:gabriel-attal",
        "X:michel-barnier",
    ]


def test_footballer_careers(kg):
    assert kg.time_answers("Q11571", "P54", "Q18656") == [
        (P("2003"), P("2009")),
        (P("2021"), P("2022")),
    ]
    assert kg.answers(subject="Q11571", relation="P54", period="2020") == ["Q1422"]
    assert kg.answers(subject="Q11571", relation="P54", period="2030") == ["X:al-nassr"]
    assert kg.answers(subject="Q615", relation="P54", period="2022") == ["Q483020"]
    # Zidane retired in 2006: no club afterwards, but Real Madrid's coach twice.
    assert kg.answers(subject="Q1835", relation="P54", period="2007") == []
    assert kg.answers(subject="Q8682", relation="P286", period="2017") == ["Q1835"]
    assert len(kg.time_answers("Q8682", "P286", "Q1835")) == 2
    assert kg.answers(subject="Q18656", relation="P286", period="2000") == ["X:alex-ferguson"]
    # Players of Manchester United in 2004: Ronaldo and the newly signed Rooney.
    assert kg.answers(object="Q18656", relation="P54", period="2004") == [
        "Q11571",
        "X:wayne-rooney",
    ]


def test_nobel_prizes(kg):
    assert kg.answers(object="Q38104", relation="P166", period="1903") == [
        "Q37463",
        "Q41269",
        "Q7186",
    ]
    assert kg.answers(subject="Q7186", relation="P166") == ["Q38104", "Q44585"]
    assert kg.time_answers("Q7186", "P166", "Q44585") == [(P("1911"), P("1911"))]
    assert kg.answers(object="Q35637", relation="P166", period="2009") == ["Q76"]
    assert kg.answers(object="Q38104", relation="P166", period="1965") == [
        "Q39246",
        "X:julian-schwinger",
        "X:sin-itiro-tomonaga",
    ]


def test_spouses_employers_and_citizenship(kg):
    assert kg.answers(subject="Q22686", relation="P26", period="1995") == ["X:marla-maples"]
    assert kg.answers(subject="Q937", relation="P26", period="1919") == [
        "X:elsa-einstein",
        "X:mileva-maric",
    ]
    assert kg.answers(subject="Q937", relation="P27", period="1945") == ["Q30", "Q39"]
    assert kg.answers(subject="Q937", relation="P108", period="1910") == ["Q206702"]
    assert len(kg.time_answers("Q19837", "P108", "Q312")) == 2
    assert kg.answers(subject="X:federal-reserve", relation="P488", period="2010") == [
        "X:ben-bernanke"
    ]


def test_bce_facts_and_entity_spans(kg):
    assert kg.answers(object="Q39686", relation="P39", period="-0044") == [
        "Q1048",
        "X:mark-antony",
    ]
    assert kg.answers(subject="Q1048", relation="P39", period="-0050") == []
    assert kg.time_answers("Q1405", "P39", "X:roman-emperor") == [
        (P("-0027-01-16"), P("0014-08-19"))
    ]
    assert kg.year_range() == (-70, 2025)
    spans = dict(
        zip(
            kg.entities.column("id").to_pylist(),
            zip(bound_points(kg.entities, "start"), bound_points(kg.entities, "end"), strict=True),
            strict=True,
        )
    )
    assert spans["Q1048"] == (P("-0100-07-12"), P("-0044-03-15"))
    assert spans["Q362"] == (P("1939-09-01"), P("1945-09-02"))
    assert spans["X:brexit-referendum"] == (P("2016-06-23"), P("2016-06-23"))
    assert spans["Q76"] == (P("1961-08-04"), None)
