"""Wikidata SPARQL JSON results: fixtures in the query service's exact output format."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.kg.graph import TemporalKG
from chronoprobe.kg.io.checks import Invalid
from chronoprobe.kg.io.jsonl import fact_tuples
from chronoprobe.kg.io.options import LoadOptions, get_loader
from chronoprobe.kg.io.problems import BadRecord, Problems
from chronoprobe.kg.io.wikidata_sparql import Skipped, Term, load, merge, parse_binding
from chronoprobe.kg.records import Fact
from chronoprobe.time import TimePoint

FIXTURES = Path(__file__).parents[2] / "fixtures" / "sparql"
HEADS = FIXTURES / "heads_of_state.json"
STATEMENTS = FIXTURES / "statements.json"

# Hand-checked against heads_of_state.json: day, month and year precisions, precision 8
# (unknown start), start-only, end-only, point in time, BCE in both spellings of the query
# service, repeated terms, relation IRIs of every namespace, and a duplicated row.
HEADS_FACTS = [
    ("Q1048", "P39", "Q39686", "-0059", "-0059"),  # "-058" in XSD 1.1 is 59 BCE
    ("Q11571", "P54", "Q18656", "2003", "2009"),
    ("Q11571", "P54", "Q18656", "2021-08", "2022-11-22"),
    ("Q11571", "P54", "Q75729", None, "2003"),
    ("Q1541", "P39", "Q39686", "-0063", "-0063"),
    ("Q22686", "P39", "Q11696", "2017-01-20", "2021-01-20"),
    ("Q22686", "P39", "Q11696", "2025-01-20", None),
    ("Q35171", "P39", "Q11696", "1885-03-04", "1889-03-04"),
    ("Q35171", "P39", "Q11696", "1893-03-04", "1897-03-04"),
    ("Q6279", "P39", "Q11696", "2021-01-20", "2025-01-20"),  # no precision: the day written
    ("Q7186", "P108", "Q209842", None, "1934-07-04"),  # start at precision 8: unknown
    ("Q7186", "P166", "Q38104", "1903", "1903"),
    ("Q7186", "P166", "Q44585", "1911", "1911"),
    ("Q76", "P39", "Q11696", "2009-01-20", "2017-01-20"),
]
HEADS_PROBLEMS = {
    "malformed time": 2,
    "missing object": 1,
    "object is not an entity": 1,
    "malformed precision": 1,
    "end before start": 1,
}


def _load(paths, strict=False, **options):
    problems = Problems(strict=strict)
    return load(paths, LoadOptions(**options), problems), problems


def test_fixture_gives_exact_facts():
    kg, _ = _load([HEADS])
    assert fact_tuples(kg) == HEADS_FACTS


def test_labels_prefer_the_wanted_language_and_fall_back_to_the_id():
    kg, _ = _load([HEADS])
    assert kg.label("Q76") == "Barack Obama"
    assert kg.label("Q7186") == "Marie Curie"  # an English row beats the Polish one
    assert kg.label("Q75729") == "Q75729"  # no objectLabel
    assert kg.relation_label("P39") == "position held"
    assert kg.relation_label("P54") == "P54"  # no relationLabel in those rows
    polish, _ = _load([HEADS], lang="pl")
    assert polish.label("Q7186") == "Maria Skłodowska-Curie"


def test_lenient_mode_counts_problems_and_skips_with_file_and_line():
    kg, problems = _load([HEADS])
    assert dict(problems.counts) == HEADS_PROBLEMS
    assert problems.examples["missing object"] == (f"{HEADS}:641: results.bindings[15]: no object")
    assert problems.examples["malformed time"] == (
        f"{HEADS}:703: results.bindings[17]: start is not a valid date: month 13 is not in "
        "1..12 in '+2009-13-20T00:00:00Z'"
    )
    assert problems.examples["end before start"] == (
        f"{HEADS}:805: results.bindings[21]: end 2009-01-20 before start 2017-01-20"
    )
    # Sound rows that are no time-scoped facts are counted apart from problems.
    assert kg.meta["skipped"] == {"no time": 1, "unknown value": 1}


def test_strict_mode_stops_at_the_first_bad_binding():
    with pytest.raises(BadRecord) as caught:
        _load([HEADS], strict=True)
    assert str(caught.value) == f"{HEADS}:641: results.bindings[15]: no object"


def test_relations_filter_keeps_only_those_and_ignores_the_rest_unread():
    kg, problems = _load([HEADS], relations=frozenset({"P54", "P166"}))
    assert fact_tuples(kg) == [f for f in HEADS_FACTS if f[1] in ("P54", "P166")]
    assert problems.total == 0  # the bad rows are all P39 ones
    assert sorted(kg.entities.column("id").to_pylist()) == [
        "Q11571",
        "Q18656",
        "Q38104",
        "Q44585",
        "Q7186",
        "Q75729",
    ]


def test_rows_of_one_statement_merge_into_the_widest_interval():
    kg, problems = _load([STATEMENTS])
    assert fact_tuples(kg) == [
        ("Q11571", "P54", "Q75729", "2002", "2003"),  # two identical rows
        ("Q35171", "P39", "Q11696", "1885-03-04", "1889-03-04"),  # two statements stay two
        ("Q35171", "P39", "Q11696", "1893-03-04", "1897-03-04"),
        ("Q7186", "P108", "Q209842", "1900", "1934-07-04"),  # two start qualifiers
    ]
    statement = "http://www.wikidata.org/entity/statement/Q76-3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f"
    assert problems.examples == {
        "end before start": f"{STATEMENTS}:287: statement {statement}: end 2009-01-20 "
        "before start 2013-01-20"
    }
    # The label service's bare id is no label; a label in another language is better.
    assert kg.label("Q75729") == "Sporting CP"


def test_merge_compares_bounds_by_the_days_they_cover():
    merged = merge(
        Fact("Q1", "P39", "Q2", TimePoint(2001, 3), TimePoint(2009)),
        Fact("Q1", "P39", "Q2", TimePoint(2001), TimePoint(2009, 6, 1)),
    )
    assert (merged.start, merged.end) == (TimePoint(2001), TimePoint(2009))


def test_problems_in_several_files_and_documents_that_are_not_results():
    _, problems = _load([FIXTURES / "truncated.json", HEADS])
    assert problems.examples["invalid JSON"].startswith(
        f"{FIXTURES / 'truncated.json'}:13: invalid JSON: "
    )
    assert problems.total == sum(HEADS_PROBLEMS.values()) + 1


def test_results_of_another_query_are_an_error_listing_variables_and_missing_roles():
    # Not a bad record to skip: no binding of such a file can fill a fact's roles.
    with pytest.raises(ValueError) as caught:
        _load([HEADS, FIXTURES / "wrong_query.json"])
    assert str(caught.value).startswith(
        f"{FIXTURES / 'wrong_query.json'}:1: the results lack roles a fact needs: subject, "
        "relation, object, start/end; variables found: ?item ?itemLabel. Map a variable"
    )


def _binding(**terms: str) -> dict[str, Term]:
    iri = "http://www.wikidata.org/entity/"
    binding = {
        "subject": Term("uri", iri + "Q1048"),
        "relation": Term("uri", "http://www.wikidata.org/prop/direct/P39"),
        "object": Term("uri", iri + "Q39686"),
    }
    xsd = "http://www.w3.org/2001/XMLSchema#"
    for name, value in terms.items():
        kind = "integer" if name.endswith("Precision") else "dateTime"
        binding[name] = Term("literal", value, datatype=xsd + kind)
    return binding


@pytest.mark.parametrize(
    ("value", "year"),
    [
        ("0001-01-01T00:00:00Z", 1),
        ("0000-01-01T00:00:00Z", -1),  # XSD 1.1 year 0 is 1 BCE
        ("-0043-01-01T00:00:00Z", -44),  # the standard spelling
        ("-043-01-01T00:00:00Z", -44),  # the query service's spelling
        ("+12345-01-01T00:00:00Z", 12345),
    ],
)
def test_years_follow_xsd_1_1(value, year):
    statement = parse_binding(_binding(start=value, startPrecision="9"))
    assert statement.fact.start == TimePoint(year)


def test_precisions_finer_than_a_day_keep_the_day_and_coarser_than_a_year_are_unknown():
    fine = parse_binding(_binding(start="1999-05-04T12:30:00Z", startPrecision="14"))
    assert fine.fact.start == TimePoint(1999, 5, 4)
    with pytest.raises(Skipped, match="imprecise or unknown time"):
        parse_binding(_binding(start="1900-01-01T00:00:00Z", startPrecision="7"))


@pytest.mark.parametrize("role", ["subject", "object"])
@pytest.mark.parametrize("entity", ["P39", "L7"])
def test_a_property_or_lexeme_is_no_subject_or_object_of_a_fact(role, entity):
    iri = f"http://www.wikidata.org/entity/{entity}"
    binding = _binding(start="2000-01-01T00:00:00Z") | {role: Term("uri", iri)}
    with pytest.raises(Invalid, match=f"^{role} is not a Wikidata item: '{iri}'$"):
        parse_binding(binding)


def test_relation_spellings_and_filter():
    for value, kind in [
        ("http://www.wikidata.org/entity/P39", "uri"),
        ("http://www.wikidata.org/prop/P39", "uri"),
        ("http://www.wikidata.org/prop/statement/P39", "uri"),
        ("P39", "literal"),
    ]:
        binding = _binding(start="2000-01-01T00:00:00Z") | {"relation": Term(kind, value)}
        assert parse_binding(binding).fact.relation == "P39"
        assert parse_binding(binding, frozenset({"P54"})) is None


def test_cli_convert_writes_the_kg_and_prints_counts(tmp_path):
    out = tmp_path / "kg"
    result = CliRunner().invoke(
        app, ["kg", "convert", str(HEADS), "--format", "wikidata-sparql", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    assert "14 facts" in output
    assert "skipped 6 bad records" in output
    assert "2 malformed time" in output
    kg = TemporalKG.load(out)
    assert fact_tuples(kg) == HEADS_FACTS
    assert kg.label("Q22686") == "Donald Trump"
    assert kg.meta["problems"] == HEADS_PROBLEMS


def test_cli_strict_fails_with_file_line_and_reason(tmp_path):
    results = tmp_path / "query.json"
    shutil.copy(HEADS, results)
    out = tmp_path / "kg"
    args = ["kg", "convert", str(results), "-f", "wikidata-sparql", "-o", str(out), "--strict"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert f"{results}:641: results.bindings[15]: no object" in " ".join(result.output.split())
    assert not out.exists()


def test_registered_under_its_format_name():
    assert get_loader("wikidata-sparql") is load


# Results of a query with its own variable names that fixed the relation and the object in its
# text (?item p:P39 ?st . ?st ps:P39 wd:Q11696); hand-checked: a year, a month and day
# precisions, an open term, and Biden's row with a precision "eleven".
CUSTOM = FIXTURES / "presidents_custom_variables.json"
CUSTOM_FACTS = [
    ("Q22686", "P39", "Q11696", "2017-01-20", "2021-01-20"),
    ("Q22686", "P39", "Q11696", "2025-01-20", None),
    ("Q35171", "P39", "Q11696", "1885", "1889"),
    ("Q76", "P39", "Q11696", "2009-01-20", "2017-01-20"),
    ("Q9696", "P39", "Q11696", "1961-01", "1963-11-22"),
]
CUSTOM_OPTIONS = [
    *("--var", "item=subject", "--var", "itemLabel=subject_label"),
    *("--var", "start_date=start", "--var", "start_precision=start_precision"),
    *("--var", "end_date=end", "--var", "end_precision=end_precision"),
    *("--constant", "relation=P39", "--constant", "object=Q11696"),
]


def _convert(tmp_path, *args):
    out = tmp_path / "kg"
    result = CliRunner().invoke(
        app, ["kg", "convert", "-f", "wikidata-sparql", "-o", str(out), *args]
    )
    return result, " ".join(result.output.split()), out


@pytest.mark.parametrize(
    "mapping",
    [CUSTOM_OPTIONS, ["--mapping", str(FIXTURES / "presidents_mapping.yaml")]],
    ids=["options", "yaml"],
)
def test_variables_of_any_name_and_roles_the_query_fixed(tmp_path, mapping):
    result, output, out = _convert(tmp_path, str(CUSTOM), *mapping)
    assert result.exit_code == 0, result.output
    kg = TemporalKG.load(out)
    assert fact_tuples(kg) == CUSTOM_FACTS
    assert kg.label("Q9696") == "John F. Kennedy"
    assert kg.meta["problems"] == {"malformed precision": 1}
    assert (
        f"{CUSTOM}:146: results.bindings[5]: start_precision is not an integer: 'eleven'" in output
    )
    assert "warning" not in output


def test_command_line_roles_override_the_mapping_file(tmp_path):
    mapping = ["--mapping", str(FIXTURES / "presidents_mapping.yaml")]
    result, _, out = _convert(tmp_path, str(CUSTOM), *mapping, "--constant", "relation=P1308")
    assert result.exit_code == 0, result.output
    assert {f[1] for f in fact_tuples(TemporalKG.load(out))} == {"P1308"}


def test_a_mapping_that_is_a_folder_is_refused_in_one_line(tmp_path):
    folder = tmp_path / "mapping.yaml"
    folder.mkdir()
    result, output, out = _convert(tmp_path, str(CUSTOM), "--mapping", str(folder))
    assert result.exit_code == 2
    assert f"{folder}: a folder; pass a YAML mapping file" in output
    assert not out.exists()


def test_variables_that_look_like_dates_or_precisions_but_fill_no_role_are_warned(tmp_path):
    mapping = ["--var", "item=subject", "--var", "start_date=start"]
    fixed = ["--constant", "relation=P39", "--constant", "object=Q11696"]
    result, output, out = _convert(tmp_path, str(CUSTOM), *mapping, *fixed)
    assert result.exit_code == 0, result.output
    assert (
        f"warning: {CUSTOM}:1: ?start_precision looks like a precision but fills no role; map "
        "it with --var start_precision=start_precision" in output
    )
    assert f"warning: {CUSTOM}:1: ?end_precision looks like a precision" in output
    assert (
        f"warning: {CUSTOM}:6: ?end_date holds dates but fills no role; map it with --var "
        "end_date=end" in output
    )
    assert (
        f"warning: {CUSTOM}:6: 6 rows give start (?start_date) without a precision: read at day "
        "precision" in output
    )
    kg = TemporalKG.load(out)
    assert ("Q35171", "P39", "Q11696", "1885-01-01", None) in fact_tuples(kg)  # as warned
    assert len(kg.meta["warnings"]) == 4


def test_rows_without_a_precision_are_warned_about_under_the_default_mapping():
    problems = Problems()
    load([HEADS], LoadOptions(), problems)
    assert problems.warnings == [
        f"{HEADS}:284: 1 rows give start without a precision: read at day precision; map the "
        "precision with --var NAME=start_precision or fix it with --constant start_precision=9 "
        "(year), 10 (month) or 11 (day)",
        f"{HEADS}:284: 1 rows give end without a precision: read at day precision; map the "
        "precision with --var NAME=end_precision or fix it with --constant end_precision=9 "
        "(year), 10 (month) or 11 (day)",
    ]


def test_results_lacking_roles_fail_listing_variables_and_roles_and_write_nothing(tmp_path):
    result, output, out = _convert(tmp_path, str(CUSTOM), "--var", "item=subject")
    assert result.exit_code == 2
    assert (
        f"error: {CUSTOM}:1: the results lack roles a fact needs: relation, object, start/end; "
        "variables found: ?item ?itemLabel ?start_date ?start_precision ?end_date ?end_precision."
        in output
    )
    assert not out.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--var", "item=owner"], "variable ?item: unknown role 'owner'; roles are subject,"),
        (["--var", "a=start", "--var", "b=start"], "start is given by both ?a and ?b"),
        (["--constant", "relation=position held"], "constant relation='position held' must be a"),
        (["--constant", "start=2001"], "start cannot be a constant; constants may fix: subject,"),
        (["--var", "item=subject", "--constant", "subject=Q1"], "subject is given both by ?item"),
        (["--var", "item"], "var 'item': expected NAME=VALUE"),
    ],
)
def test_bad_mappings_are_refused_before_reading(tmp_path, args, message):
    result, output, out = _convert(tmp_path, str(CUSTOM), *args)
    assert result.exit_code == 2
    assert f"error: {message}" in output
    assert not out.exists()


def test_mapping_options_belong_to_sparql_results(tmp_path):
    out = tmp_path / "kg"
    args = ["kg", "convert", str(HEADS), "-f", "jsonl", "-o", str(out), "--var", "a=subject"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert "error: --var, --constant and --mapping apply to --format wikidata-sparql only" in (
        result.output
    )


def test_a_byte_order_mark_before_the_results_is_no_problem(tmp_path):
    marked = tmp_path / "query.json"
    marked.write_bytes(b"\xef\xbb\xbf" + HEADS.read_bytes())
    kg, problems = _load([marked])
    assert fact_tuples(kg) == HEADS_FACTS
    assert dict(problems.counts) == HEADS_PROBLEMS


@pytest.mark.parametrize(
    ("old", "new", "example"),
    [
        (b"Barack Obama", b"Barack \xff Obama", "results.bindings[0]: invalid UTF-8: byte 0xff"),
        (
            b'"2009-01-20T00:00:00Z"',
            b'"2147483648-01-20T00:00:00Z"',
            "results.bindings[0]: start: year +2147483648 is outside -2147483648..2147483647",
        ),
        (
            b'"Barack Obama"',
            b'"x", "deep": ' + b"[" * 5000 + b"]" * 5000,
            "results.bindings[0]: JSON nested too deeply (5002 levels)",
        ),
    ],
)
def test_a_bad_binding_is_one_located_problem_and_the_others_load(tmp_path, old, new, example):
    broken = tmp_path / "query.json"
    broken.write_bytes(HEADS.read_bytes().replace(old, new, 1))
    kg, problems = _load([broken])
    assert fact_tuples(kg) == HEADS_FACTS  # Obama's term is also in a later row
    assert problems.total == sum(HEADS_PROBLEMS.values()) + 1
    assert f"{broken}:6: {example}" in problems.examples.values()
