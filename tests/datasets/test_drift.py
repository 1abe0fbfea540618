"""The drift builder on a hand-made real timeline, at year, quarter and month granularity."""

from __future__ import annotations

import pytest

from chronoprobe.datasets.drift import build_drift, split_of
from chronoprobe.kg import Entity, Fact, TemporalKG
from chronoprobe.time import Granularity, TimePoint, periods_between


def tp(text: str) -> TimePoint:
    return TimePoint.parse(text)


@pytest.fixture(scope="module")
def kg() -> TemporalKG:
    pm = [
        ("Q264766", "2016-07-13", "2019-07-24"),  # Theresa May
        ("Q180589", "2019-07-24", "2022-09-06"),  # Boris Johnson
        ("Q7194", "2022-09-06", "2022-10-25"),  # Liz Truss
        ("Q1", "2022-10-25", "2024-07-05"),  # Rishi Sunak
        ("Q2", "2024-07-05", None),  # Keir Starmer
    ]
    facts = [Fact("Q145", "P6", who, tp(a), tp(b) if b else None) for who, a, b in pm]
    facts += [
        Fact("Q164", "P54", "Q214928", tp("2015"), tp("2019")),  # Xavi retires at Al Sadd
        Fact("Q3", "P54", "Q41420", tp("2020-01"), tp("2022-06-30")),  # Haaland: Dortmund
        Fact("Q3", "P54", "Q50602", tp("2022-07-01"), None),  # debut at Manchester City
    ]
    labels = {
        "Q145": "United Kingdom",
        "Q264766": "Theresa May",
        "Q180589": "Boris Johnson",
        "Q7194": "Liz Truss",
        "Q1": "Rishi Sunak",
        "Q2": "Keir Starmer",
        "Q164": "Xavi",
        "Q214928": "Al Sadd SC",
        "Q3": "Erling Haaland",
        "Q41420": "Borussia Dortmund",
        "Q50602": "Manchester City F.C.",
    }
    return TemporalKG.from_records(facts, entities=[Entity(i, n) for i, n in labels.items()])


def rows(kg, first, last, granularity, **kwargs):
    periods = periods_between(first, last, granularity)
    return {
        (r.period, r.subject, r.relation): (r.answers, r.split)
        for r in build_drift(kg, periods, **kwargs)
    }


def test_split_of_covers_the_four_cases():
    assert split_of(["a"], ["a"]) == "unchanged"
    assert split_of(["a"], ["b"]) == "updated"
    assert split_of(None, ["a"]) == "new"
    assert split_of(["a"], None) == "deleted"
    assert split_of(None, None) is None


def test_year_granularity(kg):
    got = rows(kg, "2018", "2020", Granularity.YEAR)
    assert got == {
        ("2018", "Q145", "P6"): (["Q264766"], None),
        ("2018", "Q164", "P54"): (["Q214928"], None),
        ("2019", "Q145", "P6"): (["Q180589", "Q264766"], "updated"),
        ("2019", "Q164", "P54"): (["Q214928"], "unchanged"),
        ("2020", "Q145", "P6"): (["Q180589"], "updated"),
        ("2020", "Q164", "P54"): (["Q214928"], "deleted"),  # retired: carries 2019's answers
        ("2020", "Q3", "P54"): (["Q41420"], "new"),  # debut
    }


def test_quarter_granularity_sees_the_mid_quarter_handover(kg):
    got = rows(kg, "2019-Q2", "2020-Q2", Granularity.QUARTER, relations=["P6", "P54"])
    assert got[("2019-Q2", "Q145", "P6")] == (["Q264766"], None)
    assert got[("2019-Q3", "Q145", "P6")] == (["Q180589", "Q264766"], "updated")
    assert got[("2019-Q4", "Q145", "P6")] == (["Q180589"], "updated")
    assert got[("2020-Q1", "Q145", "P6")] == (["Q180589"], "unchanged")
    assert got[("2019-Q4", "Q164", "P54")] == (["Q214928"], "unchanged")  # year-precision end
    assert got[("2020-Q1", "Q164", "P54")] == (["Q214928"], "deleted")
    assert ("2020-Q2", "Q164", "P54") not in got  # deleted once, then gone
    assert got[("2020-Q1", "Q3", "P54")] == (["Q41420"], "new")


def test_month_granularity_through_three_prime_ministers(kg):
    got = rows(kg, "2022-09", "2022-11", Granularity.MONTH, relations=["P6"])
    assert got == {
        ("2022-09", "Q145", "P6"): (["Q180589", "Q7194"], None),
        ("2022-10", "Q145", "P6"): (["Q1", "Q7194"], "updated"),
        ("2022-11", "Q145", "P6"): (["Q1"], "updated"),
    }


def test_row_fields_and_query_text(kg):
    periods = periods_between("2019-07", "2019-07", Granularity.MONTH)
    (row,) = [r for r in build_drift(kg, periods) if r.relation == "P6"]
    assert row.id == "Q145_P6_2019-07"
    assert row.query == "[MASK] is the head of the government of United Kingdom."
    assert row.answer_labels == ["Boris Johnson", "Theresa May"]


def test_top_subjects_keeps_the_most_frequent(kg):
    got = rows(kg, "2022", "2022", Granularity.YEAR, top=1, relations=["P54"])
    assert set(got) == {("2022", "Q3", "P54")}  # Haaland has two clubs in range, Xavi none


def test_periods_between_expands_coarser_bounds_and_rejects_finer():
    assert [p.label() for p in periods_between("2019", "2019-Q2", Granularity.QUARTER)] == [
        "2019-Q1",
        "2019-Q2",
    ]
    with pytest.raises(ValueError, match="finer than the granularity year"):
        periods_between("2019-07", "2020", Granularity.YEAR)


def test_unknown_relation_is_an_error(kg):
    with pytest.raises(ValueError, match="no drift template for relations: P999"):
        list(build_drift(kg, periods_between("2019", "2019", Granularity.YEAR), relations=["P999"]))


def test_the_answer_names_file_lists_every_entity_answering_a_probed_relation(kg, tmp_path):
    from chronoprobe.datasets.writers import write_drift
    from chronoprobe.jsonl import read_jsonl

    write_drift(kg, tmp_path, periods_between("2021", "2021", Granularity.YEAR), relations=["P54"])
    # every team in the KG, also Al Sadd (Xavi left in 2019) and City (from 2022)
    assert list(read_jsonl(tmp_path / "answer_names.jsonl")) == [
        {"id": "Q214928", "relation": "P54", "names": ["Al Sadd SC"]},
        {"id": "Q41420", "relation": "P54", "names": ["Borussia Dortmund"]},
        {"id": "Q50602", "relation": "P54", "names": ["Manchester City F.C."]},
    ]
