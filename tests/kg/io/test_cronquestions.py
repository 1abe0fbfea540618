"""The CronQuestions KG: hand-written fixtures in the released layout of data/wikidata_big/kg/."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.kg.graph import KGFormatError, TemporalKG
from chronoprobe.kg.io.cronquestions import find_inputs, load, parse_lines
from chronoprobe.kg.io.jsonl import fact_tuples, iso_column
from chronoprobe.kg.io.options import LoadOptions, get_loader
from chronoprobe.kg.io.problems import BadRecord, Problems

FIXTURES = Path(__file__).parents[2] / "fixtures" / "cronquestions"
KG = FIXTURES / "kg"
MALFORMED = FIXTURES / "malformed.txt"

# Hand-checked against kg/full.txt: 0 is an unknown start, 9999 an open end, -59 is 59 BCE,
# a point in time has start = end, and the line with 0 and 9999 has no time at all.
FACTS = [
    ("Q1048", "P39", "Q39686", "-0059", "-0059"),
    ("Q11571", "P54", "Q18656", "2003", "2009"),
    ("Q11571", "P54", "Q18656", "2021", "2022"),
    ("Q11571", "P54", "Q75729", None, "2003"),
    ("Q22686", "P39", "Q11696", "2017", "2021"),
    ("Q35171", "P39", "Q11696", "1885", "1889"),
    ("Q35171", "P39", "Q11696", "1893", "1897"),
    ("Q362", "P793", "Q1190554", "1939", "1945"),
    ("Q615", "P54", "Q7156", "2004", "2021"),
    ("Q6279", "P39", "Q11696", "2021", None),
    ("Q7186", "P166", "Q38104", "1903", "1903"),
    ("Q76", "P26", "Q13133", "1992", None),
    ("Q76", "P39", "Q11696", "2009", "2017"),
]


def _load(paths, strict=False, **options):
    problems = Problems(strict=strict)
    return load(paths, LoadOptions(**options), problems), problems


def _entity(kg, entity_id):
    rows = kg.entities.filter(pc.equal(kg.entities["id"], entity_id))
    start, end = iso_column(rows, "start")[0].as_py(), iso_column(rows, "end")[0].as_py()
    return rows["label"][0].as_py(), start, end, rows["type"][0].as_py()


def test_release_directory_gives_exact_facts_and_precision_year():
    kg, problems = _load([KG])
    assert fact_tuples(kg) == FACTS
    assert problems.total == 0
    assert kg.meta["skipped"] == {"no time": 1}
    precisions = pc.unique(kg.facts["start_precision"].drop_null()).to_pylist()
    assert precisions == [9]


def test_labels_come_from_the_id2text_files_beside_the_facts():
    kg, _ = _load([KG / "full.txt"])
    assert kg.label("Q76") == "Barack Obama"
    assert kg.label("Q18656") == "Q18656"  # not in wd_id2entity_text.txt
    assert kg.label("Q75729") == "Q75729"  # a whitespace label is no label
    assert kg.relation_label("P54") == "member of sports team"
    assert len(kg.entities) == 17  # every head and tail, and no one else from the label file


def test_events_get_their_own_span():
    kg, _ = _load([KG])
    assert _entity(kg, "Q362") == ("World War II", "1939", "1945", "event")
    assert _entity(kg, "Q76") == ("Barack Obama", None, None, None)


def test_splits_and_full_give_each_fact_once():
    splits = [KG / name for name in ("train.txt", "valid.txt", "test.txt")]
    kg, _ = _load([*splits, KG / "full.txt"])
    assert fact_tuples(kg) == FACTS
    assert kg.meta["skipped"] == {"no time": 2, "duplicate": 13}
    only_splits, _ = _load(splits)
    assert fact_tuples(only_splits) == FACTS


def test_a_directory_without_full_txt_reads_its_splits(tmp_path):
    # The splits as tkbc reads them: no extension.
    for split in ("train", "valid", "test"):
        shutil.copy(KG / f"{split}.txt", tmp_path / split)
    shutil.copy(KG / "wd_id2entity_text.txt", tmp_path)
    found = find_inputs([tmp_path])
    assert [p.name for p in found.facts] == ["train", "valid", "test"]
    assert [p.name for p in found.labels] == ["wd_id2entity_text.txt"]
    assert found.splits == []
    kg, _ = _load([tmp_path])
    assert fact_tuples(kg) == FACTS
    assert kg.label("Q615") == "Lionel Messi"


def test_a_directory_without_kg_files_is_an_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no CronQuestions KG file"):
        _load([tmp_path])


def test_malformed_lines_are_counted_with_file_line_and_reason():
    kg, problems = _load([MALFORMED, KG / "wd_id2entity_text.txt"])
    assert fact_tuples(kg) == [
        ("Q1048", "P39", "Q39686", "-0063", "-0063"),
        ("Q76", "P39", "Q11696", "2009", "2017"),
    ]
    assert kg.label("Q76") == "Barack Obama"  # a label file passed as an input
    assert dict(problems.counts) == {
        "wrong number of fields": 3,
        "bad year": 1,
        "end before start": 1,
        "bad id": 1,
    }
    assert problems.examples == {
        "wrong number of fields": f"{MALFORMED}:2: expected 5 tab-separated fields "
        "(head rel tail start end), found 4",
        "bad year": f"{MALFORMED}:5: start is not a year: '20o9'",
        "end before start": f"{MALFORMED}:7: end 1893 before start 1897",
        "bad id": f"{MALFORMED}:8: head is not an id: ''",
    }


def test_strict_mode_stops_at_the_first_bad_line():
    with pytest.raises(BadRecord) as caught:
        _load([MALFORMED], strict=True)
    assert str(caught.value) == (
        f"{MALFORMED}:2: expected 5 tab-separated fields (head rel tail start end), found 4"
    )


def test_relations_filter():
    kg, _ = _load([KG], relations=frozenset({"P54"}))
    assert fact_tuples(kg) == [f for f in FACTS if f[1] == "P54"]
    assert kg.relations["id"].to_pylist() == ["P54"]
    _, problems = _load([MALFORMED], relations=frozenset({"P54"}))
    assert problems.counts == {"wrong number of fields": 3}  # their relation cannot be told


def test_parse_lines_is_a_pure_function_of_a_batch():
    lines = pa.array(["Q1\tP39\tQ2\t-44\t9999", "Q1\tP39\tQ2\t0\t0\r", "", "Q1\tP39\tQ2\tx\t1"])
    parsed = parse_lines(lines)
    assert parsed.facts["start_year"].to_pylist() == [-44]
    assert parsed.facts["end_precision"].to_pylist() == [None]
    assert parsed.timeless == 1
    assert parsed.bad == [(3, "start is not a year: 'x'", "bad year")]


def test_cli_convert(tmp_path):
    out = tmp_path / "kg"
    args = ["kg", "convert", str(KG / "full.txt"), "--format", "cronquestions", "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "13 facts" in " ".join(result.output.split())
    kg = TemporalKG.load(out)
    assert fact_tuples(kg) == FACTS
    assert kg.label("Q22686") == "Donald Trump"


def test_cli_strict_fails_with_file_line_and_reason(tmp_path):
    out = tmp_path / "kg"
    args = ["kg", "convert", str(MALFORMED), "-f", "cronquestions", "-o", str(out), "--strict"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert f"{MALFORMED}:2: expected 5 tab-separated fields" in " ".join(result.output.split())
    assert not out.exists()


def test_registered_under_its_format_name():
    assert get_loader("cronquestions") is load


def test_invalid_utf8_and_years_out_of_range_are_located_problems_the_other_lines_load(tmp_path):
    lines = [
        b"Q76\tP39\tQ11696\t2009\t2017",
        b"Q7\xff6\tP39\tQ11696\t2009\t2017",
        b"Q1\tP39\tQ2\t2147483648\t9999",
        b"Q1\tP39\tQ2\t-2147483649\t9999",
        b"Q22686\tP39\tQ11696\t2017\t2021",
    ]
    path = tmp_path / "full.txt"
    path.write_bytes(b"\n".join(lines) + b"\n")
    labels = tmp_path / "wd_id2entity_text.txt"
    labels.write_bytes(b"Q76\tBarack Obama\nQ22686\tDonald \xff Trump\n")
    kg, problems = _load([path])
    assert fact_tuples(kg) == [
        ("Q22686", "P39", "Q11696", "2017", "2021"),
        ("Q76", "P39", "Q11696", "2009", "2017"),
    ]
    assert kg.label("Q76") == "Barack Obama" and kg.label("Q22686") == "Q22686"
    assert dict(problems.counts) == {"invalid UTF-8": 2, "bad year": 2}
    assert problems.examples == {
        "invalid UTF-8": f"{labels}:2: invalid UTF-8: byte 0xff",  # labels are read first
        "bad year": f"{path}:3: start: year +2147483648 is outside -2147483648..2147483647",
    }


def test_unicode_spaces_at_a_fields_edge_are_refused_not_cut_away(tmp_path):
    path = tmp_path / "full.txt"
    lines = ["Q76\tP39\tQ11696\t2009\t2017", "Q1\u2028\tP39\tQ2\t2001\t2002"]
    lines += ["Q3\tP39\t\u3000Q4\t2001\t2002", "Q5\tP39\tQ6 \t2001\t2002"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    kg, problems = _load([path])
    # "Q1\u2028" was stored as Q1; an ASCII space at the edge is still trimmed, as before
    assert [f[0] for f in fact_tuples(kg)] == ["Q5", "Q76"]
    assert problems.counts == {"bad id": 2}
    assert problems.examples["bad id"] == f"{path}:2: head is not an id: 'Q1\\u2028'"


def test_a_byte_order_mark_is_no_part_of_the_first_id(tmp_path):
    path = tmp_path / "full.txt"
    path.write_bytes(b"\xef\xbb\xbfQ76\tP39\tQ11696\t2009\t2017\n")
    labels = tmp_path / "wd_id2entity_text.txt"
    labels.write_bytes(b"\xef\xbb\xbfQ76\tBarack Obama\n")
    kg, problems = _load([path])
    assert fact_tuples(kg) == [("Q76", "P39", "Q11696", "2009", "2017")]
    assert kg.label("Q76") == "Barack Obama"
    assert problems.total == 0


def test_an_end_of_year_0_is_unknown_not_open(tmp_path):
    # 0 stands for "not known": as an end the fact did end, so it must not read as still true.
    path = tmp_path / "full.txt"
    path.write_text("Q76\tP39\tQ11696\t2009\t0\nQ76\tP26\tQ13133\t1992\t9999\n")
    kg, problems = _load([path])
    assert fact_tuples(kg) == [("Q76", "P26", "Q13133", "1992", None)]
    assert kg.meta["skipped"] == {"unknown end time": 1}
    assert problems.total == 0


def test_a_file_of_another_format_is_refused_saying_which(tmp_path):
    jsonl = FIXTURES.parent / "jsonl" / "presidents.jsonl"
    with pytest.raises(ValueError) as caught:
        _load([KG / "full.txt", jsonl])
    assert str(caught.value) == (
        f"{jsonl}:1: this looks like chronoprobe JSONL rows, not CronQuestions KG lines "
        "(5 tab-separated fields); read it with --format jsonl"
    )


# The released split of the fixture, hand-checked against train.txt, valid.txt and test.txt
# (the line with 0 and 9999 in train.txt has no time and is no fact).
SPLIT = {
    "train": [
        ("Q1048", "P39", "Q39686", "-0059", "-0059"),
        ("Q35171", "P39", "Q11696", "1885", "1889"),
        ("Q362", "P793", "Q1190554", "1939", "1945"),
        ("Q615", "P54", "Q7156", "2004", "2021"),
        ("Q76", "P39", "Q11696", "2009", "2017"),
    ],
    "valid": [
        ("Q11571", "P54", "Q75729", None, "2003"),
        ("Q22686", "P39", "Q11696", "2017", "2021"),
        ("Q35171", "P39", "Q11696", "1893", "1897"),
        ("Q7186", "P166", "Q38104", "1903", "1903"),
    ],
    "test": [
        ("Q11571", "P54", "Q18656", "2003", "2009"),
        ("Q11571", "P54", "Q18656", "2021", "2022"),
        ("Q6279", "P39", "Q11696", "2021", None),
        ("Q76", "P26", "Q13133", "1992", None),
    ],
}


def _split_facts(kg, split):
    rows = kg.facts.filter(pc.equal(kg.facts["split"], split))
    return fact_tuples(TemporalKG.from_tables(kg.entities, kg.relations, rows))


@pytest.mark.parametrize("use_full", [True, False])
def test_the_released_split_is_kept(tmp_path, use_full):
    if not use_full:  # the splits alone, as tkbc reads them
        for name in ("train", "valid", "test"):
            shutil.copy(KG / f"{name}.txt", tmp_path / name)
    kg, problems = _load([KG if use_full else tmp_path])
    assert problems.total == 0 and fact_tuples(kg) == FACTS
    assert {name: _split_facts(kg, name) for name in SPLIT} == SPLIT
    assert kg.facts["split"].null_count == 0
    saved = TemporalKG.load(kg.save(tmp_path / "saved"))
    assert saved.has_split and saved.facts["split"].to_pylist() == kg.facts["split"].to_pylist()


def test_a_fact_in_no_split_file_is_in_no_split(tmp_path):
    shutil.copy(KG / "full.txt", tmp_path)
    shutil.copy(KG / "train.txt", tmp_path)
    kg, _ = _load([tmp_path])
    assert _split_facts(kg, "train") == SPLIT["train"]
    assert kg.facts["split"].null_count == len(FACTS) - len(SPLIT["train"])


def test_a_split_fact_missing_from_full_txt_is_an_error(tmp_path):
    shutil.copy(KG / "full.txt", tmp_path)
    (tmp_path / "test.txt").write_text("Q76\tP39\tQ11696\t2009\t2018\n", encoding="utf-8")
    with pytest.raises(ValueError) as caught:
        _load([tmp_path])
    assert str(caught.value) == (
        f"{tmp_path / 'test.txt'}: 1 of its 1 split facts are not facts of the KG 'kg', e.g. "
        "(Q76, P39, Q11696, 2009, 2018); give the split of this KG's own facts"
    )


def test_convert_keeps_the_split_and_a_bad_split_value_is_refused(tmp_path):
    out = tmp_path / "kg"
    result = CliRunner().invoke(
        app, ["kg", "convert", str(KG), "--format", "cronquestions", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    kg = TemporalKG.load(out)
    assert {name: _split_facts(kg, name) for name in SPLIT} == SPLIT
    facts = kg.facts.set_column(
        kg.facts.schema.get_field_index("split"), "split", pa.array(["dev"] * len(kg))
    )
    TemporalKG(kg.entities, kg.relations, facts).save(out)
    with pytest.raises(KGFormatError, match="column 'split' holds 'dev'; a fact's split is one"):
        TemporalKG.load(out)
