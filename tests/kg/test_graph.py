"""TemporalKG queries on a small real timeline whose answers are worked out by hand."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from chronoprobe.kg.graph import (
    FORMAT_VERSION,
    KGBuilder,
    KGFormatError,
    TemporalKG,
    _bound_days,
    entities_table,
    relations_table,
)
from chronoprobe.kg.records import FACT_SCHEMA, BoundColumns, Entity, Fact, Relation
from chronoprobe.time import OPEN_END, OPEN_START, Period, TimePoint

T = TimePoint
PRESIDENT, VICE_PRESIDENT = "Q11696", "Q11699"
BUSH, OBAMA, TRUMP, BIDEN = "Q207", "Q76", "Q22686", "Q6279"
RONALDO, SPORTING, MAN_UTD, REAL, JUVE = "Q11571", "Q75729", "Q18656", "Q8682", "Q1422"
MARIE, PIERRE, PHYSICS, CHEMISTRY, FRANCE = "Q7186", "Q37463", "Q38104", "Q44585", "Q142"

# Row order matters: row i of the facts table is FACTS[i].
FACTS = [
    Fact(BUSH, "P39", PRESIDENT, T(2001, 1, 20), T(2009, 1, 20)),  # 0
    Fact(OBAMA, "P39", PRESIDENT, T(2009, 1, 20), T(2017, 1, 20)),  # 1
    Fact(TRUMP, "P39", PRESIDENT, T(2017, 1, 20), T(2021, 1, 20)),  # 2
    Fact(BIDEN, "P39", PRESIDENT, T(2021, 1, 20), T(2025, 1, 20)),  # 3
    Fact(TRUMP, "P39", PRESIDENT, T(2025, 1, 20), None),  # 4: open-ended, a repeated term
    Fact(BIDEN, "P39", VICE_PRESIDENT, T(2009, 1, 20), T(2017, 1, 20)),  # 5
    Fact(RONALDO, "P54", SPORTING, T(2002), T(2003)),  # 6
    Fact(RONALDO, "P54", MAN_UTD, T(2003, 8), T(2009, 7)),  # 7
    Fact(RONALDO, "P54", REAL, T(2009, 7), T(2018, 7)),  # 8
    Fact(RONALDO, "P54", JUVE, T(2018, 7), T(2021, 8)),  # 9
    Fact(RONALDO, "P54", MAN_UTD, T(2021, 8), T(2022, 11)),  # 10: second spell
    Fact(MARIE, "P166", PHYSICS, T(1903), T(1903)),  # 11: two winners the same year
    Fact(PIERRE, "P166", PHYSICS, T(1903), T(1903)),  # 12
    Fact(MARIE, "P166", CHEMISTRY, T(1911), T(1911)),  # 13
    Fact(MARIE, "P27", FRANCE, None, T(1934, 7, 4)),  # 14: unknown start
]
ENTITIES = [
    Entity(OBAMA, "Barack Obama", ("Obama", "Barack Hussein Obama II"), "44th US president"),
    Entity(PRESIDENT, "President of the United States", type="office"),
    Entity(RONALDO, "Cristiano Ronaldo", ("CR7",), start=T(1985, 2, 5), type="person"),
    Entity(MAN_UTD, "Manchester United F.C.", start=T(1878), type="team"),
    Entity(MARIE, "Marie Curie", start=T(1867, 11, 7), end=T(1934, 7, 4)),
]
RELATIONS = [Relation("P39", "position held"), Relation("P54", "member of sports team")]


@pytest.fixture(scope="module")
def kg() -> TemporalKG:
    return TemporalKG.from_records(FACTS, ENTITIES, RELATIONS, name="timeline")


# ----- periods -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("period", "rows"),
    [
        ("2017-Q1", [1, 2, 5, 8]),
        ("2017-Q2", [2, 8]),
        ("2017-01-19", [1, 5, 8]),
        ("2017-01-20", [1, 2, 5, 8]),
        ("2017-01-21", [2, 8]),
        ("2009-01", [0, 1, 5, 7]),
        ("2009-07", [1, 5, 7, 8]),  # a spell ending "2009-07" holds all of July
        ("2009-07-01", [1, 5, 7, 8]),
        ("2008", [0, 7]),
        ("2003", [0, 6, 7]),
        ("2021-08", [3, 9, 10]),
        ("1903", [11, 12, 14]),
        ("1911", [13, 14]),
        ("1934-07-04", [14]),
        ("1934-07-05", []),
        ("2022-12", [3]),
        ("1950", []),
        ("2030", [4]),
    ],
)
def test_holding_mask_and_facts_in(kg: TemporalKG, period: str, rows: list[int]) -> None:
    mask = kg.holding_mask(period)
    assert mask.dtype == bool and mask.shape == (len(FACTS),)
    assert np.flatnonzero(mask).tolist() == rows
    assert np.array_equal(kg.holding_mask(Period.parse(period)), mask)
    held = kg.facts_in(period)
    assert held.column("subject").to_pylist() == [FACTS[i].subject for i in rows]
    assert held.column("object").to_pylist() == [FACTS[i].object for i in rows]
    # The vectorised mask agrees with the scalar overlap rule, fact by fact.
    p = Period.parse(period)
    assert [p.overlaps(f.start, f.end) for f in FACTS] == mask.tolist()


def test_facts_in_relation_filter(kg: TemporalKG) -> None:
    held = kg.facts_in("2017-Q1", relations=["P39"])
    assert held.column("subject").to_pylist() == [OBAMA, TRUMP, BIDEN]
    assert kg.facts_in("2017-Q1", relations=["P26"]).num_rows == 0


# ----- answers -----------------------------------------------------------------------------------


def test_answer_sets_objects(kg: TemporalKG) -> None:
    table = kg.answer_sets("2017-Q1")
    assert table.column_names == ["subject", "relation", "answers"]
    assert table.to_pylist() == [
        {"subject": TRUMP, "relation": "P39", "answers": [PRESIDENT]},
        {"subject": BIDEN, "relation": "P39", "answers": [VICE_PRESIDENT]},
        {"subject": OBAMA, "relation": "P39", "answers": [PRESIDENT]},
        {"subject": RONALDO, "relation": "P54", "answers": [REAL]},
    ]


def test_answer_sets_subjects(kg: TemporalKG) -> None:
    table = kg.answer_sets("2017-Q1", ask="subject")
    assert table.column_names == ["object", "relation", "answers"]
    assert table.to_pylist() == [
        {"object": PRESIDENT, "relation": "P39", "answers": [TRUMP, OBAMA]},
        {"object": VICE_PRESIDENT, "relation": "P39", "answers": [BIDEN]},
        {"object": REAL, "relation": "P54", "answers": [RONALDO]},
    ]
    nobel = kg.answer_sets(Period.parse("1903"), relations=["P166"], ask="subject")
    assert nobel.to_pylist() == [
        {"object": PHYSICS, "relation": "P166", "answers": [PIERRE, MARIE]}
    ]


def test_answer_sets_whole_time_and_transfers(kg: TemporalKG) -> None:
    # The transfer month holds both clubs; over all time the second spell is not listed twice.
    assert kg.answer_sets("2021-08", relations=["P54"]).to_pylist() == [
        {"subject": RONALDO, "relation": "P54", "answers": [JUVE, MAN_UTD]}
    ]
    assert kg.answer_sets(relations=["P54"]).to_pylist() == [
        {"subject": RONALDO, "relation": "P54", "answers": [JUVE, MAN_UTD, SPORTING, REAL]}
    ]
    everyone = kg.answer_sets(ask="subject", relations=["P39"]).to_pylist()
    assert everyone == [
        {"object": PRESIDENT, "relation": "P39", "answers": [BUSH, TRUMP, BIDEN, OBAMA]},
        {"object": VICE_PRESIDENT, "relation": "P39", "answers": [BIDEN]},
    ]
    empty = kg.answer_sets("1950")
    assert empty.num_rows == 0
    assert empty.schema == kg.answer_sets("2017").schema
    with pytest.raises(ValueError) as err:
        kg.answer_sets("2017", ask="relation")
    assert str(err.value) == "ask must be 'object' or 'subject', not 'relation'"


def test_answer_lists_sorted_on_large_groups() -> None:
    # Failed before: Arrow's "distinct" aggregation reorders values across batches.
    rng = np.random.default_rng(0)
    n = 80_000
    subjects = [f"s{i}" for i in rng.integers(0, 40, n)]
    objects = [f"o{i}" for i in rng.integers(0, 5_000, n)]
    facts = [Fact(s, "P1", o) for s, o in zip(subjects, objects, strict=True)]
    big = TemporalKG.from_records(facts)
    for ask, key, values in (("object", subjects, objects), ("subject", objects, subjects)):
        expected: dict[str, set[str]] = {}
        for k, v in zip(key, values, strict=True):
            expected.setdefault(k, set()).add(v)
        table = big.answer_sets(ask=ask).to_pylist()
        keys = [row["subject" if ask == "object" else "object"] for row in table]
        assert keys == sorted(expected)
        for k, row in zip(keys, table, strict=True):
            assert row["answers"] == sorted(expected[k])


def test_answers(kg: TemporalKG) -> None:
    assert kg.answers(subject=RONALDO, relation="P54", period="2021-08") == [JUVE, MAN_UTD]
    assert kg.answers(object=PRESIDENT, relation="P39", period="2017-01-20") == [TRUMP, OBAMA]
    assert kg.answers(object=PRESIDENT, relation="P39") == [BUSH, TRUMP, BIDEN, OBAMA]
    assert kg.answers(subject=TRUMP, relation="P39", period="2030") == [PRESIDENT]
    assert kg.answers(subject=OBAMA, relation="P54") == []
    assert kg.answers(subject=MARIE, relation="P166", period=Period.parse("1911")) == [CHEMISTRY]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"subject": OBAMA, "object": PRESIDENT, "relation": "P39"},
        {"relation": "P39"},
        {"subject": OBAMA},
    ],
)
def test_answers_needs_relation_and_one_side(kg: TemporalKG, kwargs: dict) -> None:
    with pytest.raises(ValueError) as err:
        kg.answers(**kwargs)
    assert str(err.value) == "give a relation and exactly one of subject or object"


def test_time_answers(kg: TemporalKG) -> None:
    assert kg.time_answers(TRUMP, "P39", PRESIDENT) == [
        (T(2017, 1, 20), T(2021, 1, 20)),
        (T(2025, 1, 20), None),
    ]
    assert kg.time_answers(RONALDO, "P54", MAN_UTD) == [
        (T(2003, 8), T(2009, 7)),
        (T(2021, 8), T(2022, 11)),
    ]
    assert kg.time_answers(MARIE, "P27", FRANCE) == [(None, T(1934, 7, 4))]
    assert kg.time_answers(OBAMA, "P39", VICE_PRESIDENT) == []


def test_time_answers_mixed_precision_order() -> None:
    # Failed before: sorting compared TimePoint(2009) with TimePoint(2009, 3, 1) field by field.
    facts = [
        Fact("s", "r", "o", T(2011), None),
        Fact("s", "r", "o", T(2009, 3, 1), T(2009, 6)),
        Fact("s", "r", "o", T(2009), T(2009)),
        Fact("s", "r", "o", None, T(2001)),
        Fact("s", "r", "o", T(2009), T(2010)),
    ]
    assert TemporalKG.from_records(facts).time_answers("s", "r", "o") == [
        (None, T(2001)),
        (T(2009), T(2009)),
        (T(2009), T(2010)),
        (T(2009, 3, 1), T(2009, 6)),
        (T(2011), None),
    ]


# ----- statistics --------------------------------------------------------------------------------


def test_facts_per_relation(kg: TemporalKG) -> None:
    assert list(kg.facts_per_relation().items()) == [
        ("P39", 6),
        ("P54", 5),
        ("P166", 3),
        ("P27", 1),
    ]
    assert TemporalKG.from_records([]).facts_per_relation() == {}


def test_cardinality_classes() -> None:
    y2000, y2001, y2002, y2004 = T(2000), T(2001), T(2002), T(2004)
    facts = [
        # 1-1: one holder at a time (a second holder starts in another year).
        Fact("s1", "ONE", "o1", y2000),
        Fact("s2", "ONE", "o1", y2004),
        Fact("s3", "ONE", "o2", y2000),
        # 1-N: a subject has several objects at once (means 3 and 2 -> 2.5 objects).
        *(Fact("s1", "ONE_N", o, y2000) for o in ("a", "b", "c")),
        *(Fact("s2", "ONE_N", o, y2000) for o in ("d", "e")),
        # N-1: several subjects share an object (means 3 and 1 -> 2 subjects).
        *(Fact(s, "N_ONE", "o1", y2000) for s in ("s1", "s2", "s3")),
        Fact("s4", "N_ONE", "o2", y2000),
        # N-M: both.
        *(Fact(s, "N_M", o, y2000) for s in ("s1", "s2") for o in ("o1", "o2")),
        # Exactly 1.5 objects per subject is not "many".
        Fact("s1", "EDGE", "o1", y2000),
        Fact("s1", "EDGE", "o2", y2000),
        Fact("s2", "EDGE", "o3", y2000),
        # A career: many objects over time, one at a time.
        Fact("s1", "CAREER", "o1", y2000, y2001),
        Fact("s1", "CAREER", "o2", y2001, y2002),
        Fact("s1", "CAREER", "o3", y2002),
    ]
    assert TemporalKG.from_records(facts).cardinality() == {
        "CAREER": "1-1",
        "EDGE": "1-1",
        "N_M": "N-M",
        "N_ONE": "N-1",
        "ONE": "1-1",
        "ONE_N": "1-N",
    }


def test_popularity(kg: TemporalKG) -> None:
    table = kg.popularity()
    assert table.column_names == ["entity", "facts"]
    assert list(zip(*table.to_pydict().values(), strict=True)) == [
        (RONALDO, 5),
        (PRESIDENT, 5),
        (MARIE, 3),
        (MAN_UTD, 2),
        (TRUMP, 2),
        (PHYSICS, 2),
        (BIDEN, 2),
        (VICE_PRESIDENT, 1),
        (FRANCE, 1),
        (JUVE, 1),
        (BUSH, 1),
        (PIERRE, 1),
        (CHEMISTRY, 1),
        (SPORTING, 1),
        (OBAMA, 1),
        (REAL, 1),
    ]
    assert sum(table.column("facts").to_pylist()) == 2 * len(FACTS)


def test_multi_answer_share(kg: TemporalKG) -> None:
    # Every (subject, relation, start year, end year) of the timeline has one object.
    assert kg.multi_answer_share() == 0.0
    facts = [
        Fact("s1", "r", "o1", T(2000), T(2001)),
        Fact("s1", "r", "o2", T(2000, 5), T(2001)),  # same years as o1: 2 answers
        Fact("s2", "r", "o3", T(2000), T(2001)),
        Fact("s3", "r", "o4", T(2000), T(2001)),
        Fact("s1", "r", "o5", T(2005), T(2006)),
        Fact("s4", "r", "o6", None, T(2001)),  # unknown starts group together: 2 answers
        Fact("s4", "r", "o7", None, T(2001)),
    ]
    assert TemporalKG.from_records(facts).multi_answer_share() == pytest.approx(4 / 7)
    assert TemporalKG.from_records([]).multi_answer_share() == 0.0


def test_year_range(kg: TemporalKG) -> None:
    assert kg.year_range() == (1903, 2025)
    assert TemporalKG.from_records([Fact("a", "r", "b", None, T(-59))]).year_range() == (-59, -59)
    assert TemporalKG.from_records([]).year_range() == (None, None)


# ----- construction ------------------------------------------------------------------------------


def test_duplicate_facts_dropped_keeping_order() -> None:
    a = Fact("a", "r", "x", T(2009), None)
    b = Fact("b", "r", "y", None, None)
    c = Fact("c", "r", "z", T(2009, 1), None)  # differs from a only in precision: kept
    d = Fact("a", "r", "x", T(2009), T(2010))
    kg = TemporalKG.from_records([b, a, b, c, a, d, b])
    assert kg.facts.column("subject").to_pylist() == ["b", "a", "c", "a"]
    assert kg.facts.column("end_year").to_pylist() == [None, None, None, 2010]
    assert len(kg) == 4


def test_undeclared_relations_and_label_fallbacks(kg: TemporalKG) -> None:
    assert kg.relations.to_pylist() == [
        {"id": "P39", "label": "position held"},
        {"id": "P54", "label": "member of sports team"},
        {"id": "P166", "label": "P166"},
        {"id": "P27", "label": "P27"},
    ]
    assert kg.relation_label("P54") == "member of sports team"
    assert kg.relation_label("P166") == "P166"
    assert kg.relation_label("P999") == "P999"
    assert kg.label(OBAMA) == "Barack Obama"
    assert kg.label(TRUMP) == TRUMP
    assert kg.entities.num_rows == len(ENTITIES)


def test_builder_keeps_last_entity_record() -> None:
    builder = KGBuilder(name="b")
    builder.add_entity(Entity("Q76", "Obama"))
    builder.add_entity(Entity("Q76", "Barack Obama"))
    builder.add_relation(Relation("P39", "held"))
    builder.add_relation(Relation("P39", "position held"))
    builder.add_fact(Fact("Q76", "P39", "Q11696", T(2009, 1, 20), T(2017, 1, 20)))
    assert builder.has_entity("Q76") and not builder.has_entity("Q11696")
    kg = builder.build(meta={"source": "hand"})
    assert kg.name == "b" and kg.meta == {"source": "hand"}
    assert kg.entities.column("label").to_pylist() == ["Barack Obama"]
    assert kg.relations.to_pylist() == [{"id": "P39", "label": "position held"}]
    assert kg.fact_points(0) == (T(2009, 1, 20), T(2017, 1, 20))


# ----- persistence -------------------------------------------------------------------------------


def test_save_load_round_trip(kg: TemporalKG, tmp_path: Path) -> None:
    kg.meta["source"] = "hand-made"
    out = kg.save(tmp_path / "kg")
    assert sorted(p.name for p in out.iterdir()) == [
        "entities.parquet",
        "facts.parquet",
        "manifest.json",
        "relations.parquet",
    ]
    manifest = json.loads((out / "manifest.json").read_text())
    # the fingerprint: a digest of the Parquet files as written, in a fixed order
    tables = ("entities", "relations", "facts")
    written = b"".join((out / f"{n}.parquet").read_bytes() for n in tables)
    assert manifest == {
        "format": "chronoprobe-kg",
        "version": FORMAT_VERSION,
        "name": "timeline",
        "fingerprint": hashlib.blake2b(written, digest_size=12).hexdigest(),
        "counts": {"entities": 5, "relations": 4, "facts": 15},
        "meta": {"source": "hand-made"},
    }
    loaded = TemporalKG.load(out)
    assert loaded.fingerprint == kg.fingerprint == manifest["fingerprint"]
    assert loaded.name == "timeline" and loaded.meta == {"source": "hand-made"}
    for name in ("entities", "relations", "facts"):
        assert getattr(loaded, name).equals(getattr(kg, name)), name
    assert loaded.entities.to_pylist()[0]["aliases"] == ["Obama", "Barack Hussein Obama II"]
    assert np.array_equal(loaded.start_days, kg.start_days)
    assert np.array_equal(loaded.end_days, kg.end_days)
    del kg.meta["source"]


def _write_manifest(directory: Path, text: str) -> Path:
    path = directory / "manifest.json"
    path.write_text(text)
    return path


@pytest.fixture
def saved(kg: TemporalKG, tmp_path: Path) -> Path:
    return kg.save(tmp_path / "kg")


def test_load_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(KGFormatError) as err:
        TemporalKG.load(tmp_path / "nope")
    assert str(err.value) == f"{tmp_path / 'nope'}: no such KG directory"


def test_load_without_manifest(tmp_path: Path) -> None:
    with pytest.raises(KGFormatError) as err:
        TemporalKG.load(tmp_path)
    assert str(err.value).startswith(f"{tmp_path}: not a chronoprobe KG directory (no manifest")


def test_load_bad_json_names_file_and_line(saved: Path) -> None:
    path = _write_manifest(saved, '{\n  "format": "chronoprobe-kg",\n  "version": 1,\n}\n')
    with pytest.raises(KGFormatError) as err:
        TemporalKG.load(saved)
    assert str(err.value).startswith(f"{path}:4: invalid JSON: ")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"format": "other", "version": 1}', "format is 'other', not 'chronoprobe-kg'"),
        ("[1]", "a KG's manifest must be a JSON object, not list"),
        ('{"format": "chronoprobe-kg", "version": "1"}', "version '1' is not an integer"),
        (
            '{"format": "chronoprobe-kg", "version": 2}',
            "KG format version 2 is newer than this chronoprobe reads (1); upgrade chronoprobe",
        ),
    ],
)
def test_load_rejects_manifest(saved: Path, text: str, reason: str) -> None:
    path = _write_manifest(saved, text)
    with pytest.raises(KGFormatError) as err:
        TemporalKG.load(saved)
    assert str(err.value) in (f"{path}: {reason}", f"{path}:1: {reason}")


def test_load_missing_parquet(saved: Path) -> None:
    (saved / "facts.parquet").unlink()
    with pytest.raises(KGFormatError) as err:
        TemporalKG.load(saved)
    assert str(err.value) == f"{saved / 'facts.parquet'}: missing; the KG directory is incomplete"


def test_load_corrupt_parquet(saved: Path) -> None:
    (saved / "relations.parquet").write_bytes(b"not parquet")
    with pytest.raises(KGFormatError) as err:
        TemporalKG.load(saved)
    assert str(err.value).startswith(f"{saved / 'relations.parquet'}: not a readable Parquet file")


def test_load_parquet_missing_columns(saved: Path) -> None:
    pq.write_table(pa.table({"id": ["P39"]}), saved / "relations.parquet")
    with pytest.raises(KGFormatError) as err:
        TemporalKG.load(saved)
    assert str(err.value) == f"{saved / 'relations.parquet'}: missing columns label"


# ----- vectorised bounds -------------------------------------------------------------------------


def _random_point(rng: random.Random) -> TimePoint | None:
    kind = rng.randrange(4)
    if kind == 0:
        return None
    year = rng.randint(-3000, 3000)
    if kind == 1:
        return T(year)
    month = rng.randint(1, 12)
    if kind == 2:
        return T(year, month)
    return T(year, month, rng.randint(1, 28 if month == 2 else 30))


def test_bound_days_parity_with_timepoint() -> None:
    rng = random.Random(11)
    points = [_random_point(rng) for _ in range(3000)]
    points += [T(2000, 2), T(1900, 2), T(2019, 12), T(-1, 12), T(2020, 2, 29), None]
    columns = BoundColumns()
    for point in points:
        columns.append(point)
    table = pa.table(
        columns.columns("start"), schema=pa.schema([FACT_SCHEMA.field(i) for i in range(3, 7)])
    )
    # Several chunks, as after concatenating loader batches.
    table = pa.concat_tables([table.slice(0, 1000), table.slice(1000)])
    first = _bound_days(table, "start", last=False)
    last = _bound_days(table, "start", last=True)
    assert first.tolist() == [OPEN_START if p is None else p.first_day() for p in points]
    assert last.tolist() == [OPEN_END if p is None else p.last_day() for p in points]


def test_open_bounds_on_the_kg(kg: TemporalKG) -> None:
    assert kg.start_days[14] == OPEN_START
    assert kg.end_days[4] == OPEN_END
    assert kg.start_days[7] == T(2003, 8).first_day()
    assert kg.end_days[7] == T(2009, 7).last_day()
    empty = TemporalKG.from_tables(
        entities_table([]), relations_table([]), pa.Table.from_batches([], schema=FACT_SCHEMA)
    )
    assert empty.start_days.tolist() == [] and empty.holding_mask("2019").tolist() == []


FIXTURES = Path(__file__).parent.parent / "fixtures"


@pytest.mark.parametrize(
    ("source", "fmt", "what"),
    [
        ("jsonl/presidents.jsonl", "jsonl", "chronoprobe JSONL rows"),
        ("sparql/heads_of_state.json", "wikidata-sparql", "SPARQL JSON results"),
    ],
)
def test_load_a_source_file_suggests_converting_it(source, fmt, what) -> None:
    path = FIXTURES / source
    with pytest.raises(KGFormatError) as err:
        TemporalKG.load(path)
    message = str(err.value)
    assert message.startswith(
        f"{path}: a file, not a KG directory (one holds manifest.json and entities.parquet, "
        "relations.parquet, facts.parquet); it looks like "
    )
    assert what in message
    kg_dir = path.parent / (path.name.split(".")[0] + "-kg")
    assert message.endswith(
        f"make a KG of it with `chronoprobe kg convert {path} --format {fmt} -o {kg_dir}`"
    )


def test_load_a_file_of_unknown_shape_says_what_a_kg_directory_holds(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("a few words\n")
    with pytest.raises(KGFormatError) as err:
        TemporalKG.load(path)
    assert str(err.value) == (
        f"{path}: a file, not a KG directory (one holds manifest.json and entities.parquet, "
        "relations.parquet, facts.parquet)"
    )


@pytest.mark.parametrize("name", ["manifest.json", "facts.parquet"])
def test_load_a_file_of_a_kg_directory_names_the_directory(saved: Path, name: str) -> None:
    with pytest.raises(KGFormatError) as err:
        TemporalKG.load(saved / name)
    assert (
        str(err.value) == f"{saved / name}: a file of the KG directory {saved}; give the directory"
    )
