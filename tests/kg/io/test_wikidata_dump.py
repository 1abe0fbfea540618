"""The Wikidata JSON dump loader on a hand-written fixture in the official dump layout.

tests/fixtures/wikidata/dump.json holds, one entity per line, what a real dump holds: items
with labels in several languages, references, sitelinks and non-time statements around the
time-qualified ones, two properties, a lexeme, and broken lines. The expected facts below were
worked out by hand from the fixture's statements.
"""

from __future__ import annotations

import bz2
import functools
import gzip
import random
import shutil
from pathlib import Path

import pyarrow.compute as pc
import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.kg import TemporalKG
from chronoprobe.kg.io import compressed, wikidata_dump, wikidata_load
from chronoprobe.kg.io.options import LoadOptions
from chronoprobe.kg.io.problems import BadRecord, Problems
from chronoprobe.kg.records import bound_points

FIXTURE = Path(__file__).parents[2] / "fixtures" / "wikidata" / "dump.json"
needs_scanner = pytest.mark.skipif(
    wikidata_dump.Scanner is None, reason="the compiled scanner is not built (no C compiler)"
)

FACTS = [
    # Obama: day precision; qualifiers written end first; start-only; year precision;
    # point in time (start = end). Deprecated, somevalue and unqualified statements are gone.
    ("Q76", "P39", "Q11696", "2009-01-20", "2017-01-20"),
    ("Q76", "P39", "Q4416090", "2005-01-03", "2008-11-16"),
    ("Q76", "P26", "Q13133", "1992-10-03", None),
    ("Q76", "P69", "Q49088", "1981", "1983"),
    ("Q76", "P166", "Q35637", "2009", "2009"),
    # Ronaldo: repeated terms at the same club (years, then months); end-only; an object given
    # only by its numeric id (old dumps); a start of decade precision is unknown; an end of
    # "novalue" means no end.
    ("Q11571", "P54", "Q18656", "2003", "2009"),
    ("Q11571", "P54", "Q18656", "2021-08", "2022-11"),
    ("Q11571", "P54", "Q75729", None, "2003"),
    ("Q11571", "P54", "Q8682", "2009-07-01", "2018-07-10"),
    ("Q11571", "P54", "Q1422", None, "2021-08-27"),
    ("Q11571", "P54", "Q1997", "2023-01-01", None),
    ("Q1048", "P39", "Q39686", "-0059", "-0059"),  # BCE, point in time
    # Trump has no English label; two terms of the same office.
    ("Q22686", "P39", "Q11696", "2017-01-20", "2021-01-20"),
    ("Q22686", "P39", "Q11696", "2025-01-20", None),
    # Gandhi's line also holds an end-before-start and a month 13: only those are dropped.
    ("Q1001", "P69", "Q1060", "1888-09", "1891-06"),
]

SKIPPED = {
    "deprecated": 1,
    "lexeme entity": 1,
    "no time qualifier": 4,
    "somevalue/novalue": 2,
    "unknown end time": 1,  # P582 somevalue: it ended, nobody knows when
    "unknown or imprecise time": 1,  # only a start of century precision
}

PROBLEMS = [
    "dump.json:10: malformed JSON: Input data was truncated",
    "dump.json:16: not a Wikidata entity: Object missing required field `id`",
    "dump.json:17: Q1001 P69: end before start: end 1888 before start 1891",
    "dump.json:17: Q1001 P69: bad time value: month 13 is not in 1..12 in '+2009-13-01T00:00:00Z'",
]


def iso(point):
    return point.iso() if point else None


def facts_of(kg: TemporalKG) -> list[tuple]:
    table = kg.facts
    return sorted(
        zip(
            table["subject"].to_pylist(),
            table["relation"].to_pylist(),
            table["object"].to_pylist(),
            map(iso, bound_points(table, "start")),
            map(iso, bound_points(table, "end")),
            strict=True,
        ),
        key=str,
    )


def entities_of(kg: TemporalKG) -> dict[str, tuple]:
    table = kg.entities
    return {
        row[0]: row[1:]
        for row in zip(
            table["id"].to_pylist(),
            table["label"].to_pylist(),
            table["aliases"].to_pylist(),
            table["description"].to_pylist(),
            map(iso, bound_points(table, "start")),
            map(iso, bound_points(table, "end")),
            strict=True,
        )
    }


def load(path: Path = FIXTURE, **options) -> tuple[TemporalKG, Problems]:
    problems = Problems()
    return wikidata_load.load([path], LoadOptions(**options), problems), problems


@pytest.fixture(scope="module")
def loaded() -> tuple[TemporalKG, Problems]:
    return load()


def test_facts_are_time_qualified_item_statements(loaded):
    kg, _ = loaded
    assert facts_of(kg) == sorted(FACTS, key=str)
    assert kg.meta["skipped"] == SKIPPED


def test_entities_have_labels_in_one_language_and_their_own_spans(loaded):
    kg, _ = loaded
    entities = entities_of(kg)
    assert entities["Q76"] == (
        "Barack Obama",
        ["Obama", "Barack Hussein Obama II"],
        "president of the United States from 2009 to 2017",
        None,
        None,
    )
    assert entities["Q22686"] == ("Q22686", [], None, None, None)  # no English terms
    # Inception; start/end over point in time; inception and dissolution (the deprecated
    # inception is ignored); a Julian day moved to the Gregorian calendar; the earliest of two
    # publication dates.
    assert entities["Q11696"][3:] == ("1789-04-30", None)
    assert entities["Q8567"][3:] == ("2008-08-08", "2008-08-24")
    assert entities["Q8691"][3:] == ("1927-03-14", "1991-12-04")
    assert entities["Q83224"][3:] == ("1066-10-20", "1066-10-20")
    assert entities["Q83495"][3:] == ("1999-03-31", None)
    # Kept: subjects of facts and items with a span. Q5 is neither; objects absent from the
    # dump have no row, and label() falls back to their id.
    referenced = ["Q76", "Q11696", "Q11571", "Q1048", "Q22686", "Q1001"]
    assert sorted(entities) == sorted([*referenced, "Q8567", "Q8691", "Q83224", "Q83495"])
    assert kg.label("Q4416090") == "Q4416090"


def test_properties_with_item_values_are_relations(loaded):
    kg, _ = loaded
    relations = kg.relations
    labels = dict(zip(relations["id"].to_pylist(), relations["label"].to_pylist(), strict=True))
    # P569 (a time-valued property) is no relation; relations used without a record get their id.
    assert labels == {
        "P39": "position held",
        "P54": "member of sports team",
        "P26": "P26",
        "P69": "P69",
        "P166": "P166",
    }


def test_bad_lines_are_counted_by_reason_with_file_and_line(loaded):
    _, problems = loaded
    assert dict(problems.counts) == {
        "malformed JSON": 1,
        "entity without id": 1,
        "end before start": 1,
        "bad time value": 1,
    }
    examples = sorted(example.split("/")[-1] for example in problems.examples.values())
    assert examples == sorted(PROBLEMS)


def test_strict_mode_stops_at_the_first_bad_line():
    with pytest.raises(BadRecord) as caught:
        wikidata_load.load([FIXTURE], LoadOptions(), Problems(strict=True))
    assert str(caught.value) == f"{FIXTURE}:10: malformed JSON: Input data was truncated"


def test_another_language():
    kg, _ = load(lang="de")
    entities = entities_of(kg)
    assert entities["Q22686"][0] == "Donald Trump"
    assert entities["Q76"][1:3] == (["Obama"], "44. Präsident der USA")
    assert entities["Q11571"][0] == "Q11571"  # only English and Portuguese labels
    assert facts_of(kg) == sorted(FACTS, key=str)


def test_relations_filter_keeps_only_those_facts_and_relations():
    kg, _ = load(relations=frozenset({"P39", "P569"}))
    assert facts_of(kg) == sorted((f for f in FACTS if f[1] == "P39"), key=str)
    assert kg.relations["id"].to_pylist() == ["P39"]
    # Entity spans do not depend on the filter.
    assert "Q8691" in kg.entities["id"].to_pylist()
    assert "Q11571" not in kg.entities["id"].to_pylist()


@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress], ids=["gz", "bz2"])
def test_compressed_dumps_give_the_same_kg(loaded, tmp_path, compress):
    suffix = ".gz" if compress is gzip.compress else ".bz2"
    path = tmp_path / f"latest-all.json{suffix}"
    path.write_bytes(compress(FIXTURE.read_bytes()))
    kg, problems = load(path)
    assert kg.facts.equals(loaded[0].facts)
    assert kg.entities.equals(loaded[0].entities)
    assert kg.relations.equals(loaded[0].relations)
    assert problems.counts == loaded[1].counts


def test_line_blocks_end_on_whole_lines(tmp_path):
    path = tmp_path / "dump.json.gz"
    path.write_bytes(gzip.compress(FIXTURE.read_bytes()))
    blocks = [bytes(block) for block, _ in compressed.line_blocks(path, block_size=5000)]
    assert len(blocks) > 3
    assert all(block.endswith(b"\n") for block in blocks)
    assert b"".join(blocks) == FIXTURE.read_bytes()


def _load_in_small_blocks(monkeypatch):
    monkeypatch.setattr(
        wikidata_load, "line_blocks", functools.partial(compressed.line_blocks, block_size=4096)
    )
    return load()


def test_line_blocks_reuse_one_buffer_and_parsing_keeps_no_view_of_it(loaded, monkeypatch):
    blocks = compressed.line_blocks(FIXTURE, block_size=4096)
    first, _ = next(blocks)
    second, _ = next(blocks)
    assert second is first  # the same buffer, read into again
    # Parsing leaves nothing that holds a view of a block: the reader could not grow the
    # buffer again (BufferError), with the compiled scanner or without it.
    kg, problems = _load_in_small_blocks(monkeypatch)
    assert kg.facts.equals(loaded[0].facts)
    assert problems.examples == loaded[1].examples


@needs_scanner
def test_the_scanner_caches_bad_qualifiers_without_their_traceback(loaded, monkeypatch):
    """Line 17's bad qualifiers are cached with no traceback (which would keep a view of the
    block alive), by the compiled scanner and by the Python side that finishes the line."""
    cached, bad = wikidata_dump._time_bounds, []

    def bounds(times):
        result = cached(times)
        if isinstance(result, wikidata_dump._BadValue):
            bad.append(result)
        return result

    wikidata_dump._SCANNED_BOUNDS.clear()
    monkeypatch.setattr(wikidata_dump, "_time_bounds", bounds)
    monkeypatch.setattr(wikidata_dump, "_remembered_bounds", functools.lru_cache(bounds))
    kg, _ = _load_in_small_blocks(monkeypatch)
    assert kg.facts.equals(loaded[0].facts)
    assert {str(value) for value in bad} == {
        "end before start: end 1888 before start 1891",
        "bad time value: month 13 is not in 1..12 in '+2009-13-01T00:00:00Z'",
    }
    assert all(value.__traceback__ is None and value.__context__ is None for value in bad)


def test_entities_spooled_a_few_at_a_time_give_the_same_kg(loaded, monkeypatch):
    monkeypatch.setattr(wikidata_load, "_SPOOL_ROWS", 3)  # several writes, one left at the end
    monkeypatch.setattr(
        wikidata_load, "line_blocks", functools.partial(compressed.line_blocks, block_size=4096)
    )
    kg, _ = load()
    assert kg.entities.equals(loaded[0].entities)
    assert kg.facts.equals(loaded[0].facts)


def test_two_processes_give_the_same_kg_and_line_numbers(loaded, monkeypatch):
    # Small blocks, so that several go through the pool and line numbers cross blocks.
    small = functools.partial(compressed.line_blocks, block_size=4096)
    monkeypatch.setattr(wikidata_load, "line_blocks", small)
    kg, problems = load(processes=2)
    assert kg.facts.equals(loaded[0].facts)
    assert kg.entities.equals(loaded[0].entities)
    assert problems.examples == loaded[1].examples
    with pytest.raises(BadRecord, match=r"dump\.json:10: malformed JSON"):
        wikidata_load.load([FIXTURE], LoadOptions(processes=2), Problems(strict=True))


def test_a_later_record_of_an_entity_replaces_an_earlier_one(tmp_path):
    lines = FIXTURE.read_text().splitlines()
    obama = lines[1].replace('"value":"Barack Obama"', '"value":"Barack H. Obama"', 1)
    (tmp_path / "update.json").write_text(f"[\n{obama}\n]\n")
    problems = Problems()
    kg = wikidata_load.load([FIXTURE, tmp_path / "update.json"], LoadOptions(), problems)
    ids = kg.entities["id"]
    assert pc.sum(pc.equal(ids, "Q76")).as_py() == 1
    assert kg.label("Q76") == "Barack H. Obama"
    assert len(kg) == len(FACTS)  # the same statements twice are the same facts


def test_cli_convert_writes_a_kg_directory(loaded, tmp_path):
    out = tmp_path / "kg"
    dump = tmp_path / "latest-all.json.bz2"
    dump.write_bytes(bz2.compress(FIXTURE.read_bytes()))
    result = CliRunner().invoke(
        app, ["kg", "convert", str(dump), "--format", "wikidata-json", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "malformed JSON" in result.output
    kg = TemporalKG.load(out)
    assert facts_of(kg) == sorted(FACTS, key=str)
    assert kg.meta["skipped"] == SKIPPED
    assert kg.label("Q11696") == "President of the United States"


@needs_scanner
def test_cli_convert_without_the_compiled_scanner_says_so_and_gives_the_same_kg(
    tmp_path, monkeypatch
):
    def convert(out: Path):
        options = ["-f", "wikidata-json", "--no-cache", "-o", str(out)]
        command = ["kg", "convert", str(FIXTURE), *options]
        result = CliRunner().invoke(app, command)
        assert result.exit_code == 0, result.output
        return " ".join(result.output.split()), TemporalKG.load(out)

    said, compiled = convert(tmp_path / "compiled")
    assert "compiled dump scanner" not in said
    monkeypatch.setattr(wikidata_dump, "Scanner", None)
    said, alone = convert(tmp_path / "msgspec")
    assert "the compiled dump scanner was not built" in said
    assert "reinstall chronoprobe" in said
    assert alone.facts.equals(compiled.facts)
    assert alone.entities.equals(compiled.entities)
    assert alone.meta["skipped"] == compiled.meta["skipped"]


def test_cli_strict_names_file_line_and_reason(tmp_path):
    dump = tmp_path / "dump.json"
    shutil.copy(FIXTURE, dump)
    result = CliRunner().invoke(
        app,
        ["kg", "convert", str(dump), "-f", "wikidata-json", "-o", str(tmp_path / "kg"), "--strict"],
    )
    assert result.exit_code == 2
    assert f"{dump}:10: malformed JSON" in " ".join(result.output.split())
    assert not (tmp_path / "kg").exists()


def test_cli_names_a_missing_input_as_the_argument_it_is(tmp_path):
    missing = tmp_path / "nope.json"
    result = CliRunner().invoke(
        app, ["kg", "convert", str(missing), "-f", "wikidata-json", "-o", str(tmp_path / "kg")]
    )
    assert result.exit_code != 0
    text = " ".join(result.output.split())
    assert f"error: paths: no such file or directory: {missing}" in text  # not --paths
    assert not (tmp_path / "kg").exists()


def test_cli_refuses_a_folder_for_a_format_that_reads_files(tmp_path):
    folder = tmp_path / "dumps"
    folder.mkdir()
    shutil.copy(FIXTURE, folder / "dump.json")
    out = tmp_path / "kg"
    result = CliRunner().invoke(
        app, ["kg", "convert", str(folder), "-f", "wikidata-json", "-o", str(out)]
    )
    assert result.exit_code == 2  # a user error, not a traceback
    text = " ".join(result.output.split())
    assert f"{folder}: a folder; format wikidata-json reads files: pass the files in it" in text
    assert not out.exists()


def test_line_blocks_keep_lines_longer_than_a_block_whole():
    blocks = [bytes(block) for block, _ in compressed.line_blocks(FIXTURE, block_size=64)]
    assert all(block.endswith(b"\n") for block in blocks)
    assert b"".join(blocks) == FIXTURE.read_bytes()
    # Obama's line (13 kB) is read in 64-byte steps and still comes out as one block.
    assert blocks[1] == FIXTURE.read_bytes().split(b"\n")[1] + b"\n"


TERM = (
    '{"mainsnak":{"snaktype":"value","property":"P39","datavalue":{"value":{"entity-type":'
    '"item","numeric-id":%d,"id":"Q%d"},"type":"wikibase-entityid"},"datatype":"wikibase-item"},'
    '"type":"statement","rank":"normal","qualifiers":{"P580":[%s]}}'
)
IN_2001 = (
    '{"snaktype":"value","property":"P580","datavalue":{"value":{"time":"+2001-00-00T00:00:00Z",'
    '"timezone":0,"before":0,"after":0,"precision":9,"calendarmodel":'
    '"http://www.wikidata.org/entity/Q1985727"},"type":"time"},"datatype":"time"}'
)


def item_line(qid: str, *statements: str) -> str:
    claims = ",".join(statements)
    return f'{{"type":"item","id":"{qid}","labels":{{}},"claims":{{"P39":[{claims}]}}}}'


def test_a_malformed_statement_drops_its_whole_line_and_is_located():
    # Statements are read lazily, but a malformed one still rejects its line as a whole (the
    # good fact before it included) with the JSON path a full decode of the line would give.
    block = "\n".join(
        [
            "[",
            item_line("Q1", TERM % (2, 2, IN_2001), TERM % (3, 3, '{"property":"P580"}')) + ",",
            item_line("Q3", '{"rank":"normal"}') + ",",
            item_line("Q4", TERM % (5, 5, IN_2001)),
            "]",
        ]
    ).encode()
    parsed = wikidata_dump.parse_block(block, 1)
    assert parsed.problems == [
        (
            2,
            "not a Wikidata entity: Object missing required field `snaktype` - at "
            "`$.claims[...][1].qualifiers.P580[0]`",
            "not a Wikidata entity",
        ),
        (
            3,
            "not a Wikidata entity: Object missing required field `mainsnak` - at "
            "`$.claims[...][0]`",
            "not a Wikidata entity",
        ),
    ]
    assert parsed.facts["subject"].to_pylist() == ["Q4"]
    assert parsed.facts["object"].to_pylist() == ["Q5"]
    assert parsed.entities["id"].to_pylist() == ["Q4"]
    assert parsed.skipped == {}
    assert parsed.lines == 5
    some = wikidata_dump.parse_block(block, 1, relations=frozenset({"P39"}))
    assert some.problems == parsed.problems  # statements decoded per property, located alike


def test_shared_blocks_hand_blocks_to_workers_through_slots():
    shared = compressed.SharedBlocks(1, size=64)
    try:
        ticket = shared.put(bytearray(b'{"id":"Q1"}\n'))
        assert isinstance(ticket, tuple)
        assert compressed.shared_block(ticket) == b'{"id":"Q1"}\n'
        assert shared.put(b"x\n") == b"x\n"  # no free slot: a copy goes
        shared.release(ticket)
        big = bytearray(b"y" * 65)  # larger than a slot: it goes as a copy, since the
        sent = shared.put(big)  # reader reads its next block into the same buffer
        big[:] = b"w" * 65
        assert sent == b"y" * 65
        again = shared.put(b"z\n")
        assert again[0] == ticket[0]
        assert compressed.shared_block(again) == b"z\n"
    finally:
        shared.close()


@pytest.mark.parametrize("suffix", ["json", "json.gz", "json.bz2"])
def test_progress_follows_the_compressed_bytes_to_the_end(tmp_path, suffix, monkeypatch):
    # Small blocks so that progress is reported several times on the way.
    small = functools.partial(compressed.line_blocks, block_size=4096)
    monkeypatch.setattr(wikidata_load, "line_blocks", small)
    path = tmp_path / f"latest-all.{suffix}"
    compress = {"json": bytes, "json.gz": gzip.compress, "json.bz2": bz2.compress}[suffix]
    path.write_bytes(compress(FIXTURE.read_bytes()))
    seen = []
    wikidata_load.load([path, FIXTURE], LoadOptions(progress=lambda *a: seen.append(a)), Problems())
    total = path.stat().st_size + FIXTURE.stat().st_size
    assert len(seen) > 4
    assert {t for _, t in seen} == {total}
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)  # never backwards
    assert seen[-1] == (total, total)  # a bz2 bar used to end at 0%


@pytest.mark.parametrize(
    ("cores", "load", "parsers", "threads"),
    [(16, 2.2, 8, 6), (16, 0.0, 1, 15), (2, 1.4, 1, 1), (2, 0.1, 2, 1), (4, 0.3, 1, 3)],
)
def test_bz2_threads_are_the_free_cores_beside_the_parsers(
    monkeypatch, cores, load, parsers, threads
):
    monkeypatch.setattr(compressed.os, "sched_getaffinity", lambda _: set(range(cores)))
    monkeypatch.setattr(compressed.os, "getloadavg", lambda: (load, load, load))
    assert compressed.decompression_threads(parsers) == threads


def test_parts_cut_the_same_lines_from_a_file_and_from_a_stream(tmp_path, monkeypatch):
    path = tmp_path / "dump.json.bz2"
    path.write_bytes(bz2.compress(FIXTURE.read_bytes()))
    for block_size in (64, 5000):
        small = functools.partial(compressed.line_blocks, block_size=block_size)
        monkeypatch.setattr(compressed, "line_blocks", small)
        for part_size in (1, 3000, 10**6):
            ranges = compressed.plain_parts(FIXTURE, part_size)
            parts = [compressed.read_part(FIXTURE, *bounds) for bounds in ranges]
            assert b"".join(parts) == FIXTURE.read_bytes()
            assert all(part.endswith(b"\n") for part in parts[:-1])
            streamed = [part for part, _ in compressed.line_parts(path, part_size)]
            assert streamed == parts
    # a part ends with the line holding byte 2999 (5999, ...): Obama's 13 kB line is one part
    ends = [stop for _, stop in compressed.plain_parts(FIXTURE, 3000)]
    lines = FIXTURE.read_bytes().split(b"\n")
    assert ends[0] == len(lines[0]) + len(lines[1]) + 2


def test_bz2_parts_read_by_their_blocks_are_the_streamed_parts(tmp_path):
    # two streams (as parallel compressors write) of 100 kB blocks: six blocks in all
    rng = random.Random(0)
    text = b"".join(
        b"%d %s\n" % (i, rng.randbytes(rng.randrange(200)).hex().encode()) for i in range(2500)
    )
    half = text.index(b"\n", len(text) // 2) + 1
    path = tmp_path / "dump.json.bz2"
    path.write_bytes(bz2.compress(text[:half], 1) + bz2.compress(text[half:], 1))
    blocks = compressed.bz2_blocks(path, threads=2)
    assert len(blocks) > 6 and blocks[-1][1] == len(text)
    for part_size in (30_000, 70_000, 10**7):
        parts = compressed.bz2_parts(path, blocks, part_size)
        read = [compressed.read_part(path, start, stop, needed) for start, stop, needed, _ in parts]
        assert read == [part for part, _ in compressed.line_parts(path, part_size)]
        assert all(len(needed) < len(blocks) for *_, needed, _ in parts[1:-1])
        ends = [end for *_, end in parts]
        assert ends == sorted(ends) and ends[-1] == path.stat().st_size
    # an index that does not fit the file (text offsets shifted) fails, it hands over no bytes
    start, stop, needed, _ = compressed.bz2_parts(path, blocks, 30_000)[1]
    shifted = [(bit, text + 37) for bit, text in needed]
    with pytest.raises(OSError, match=r"are not whole lines: the file changed since it was cut"):
        compressed.read_part(path, start, stop, shifted)


def test_a_load_of_some_relations_checks_only_the_statements_it_reads():
    # With --relations, the statements of other properties stay unread: a malformed one there
    # no longer rejects its line, while one of a requested property still does, located alike.
    good = TERM % (2, 2, IN_2001)
    broken = '{"rank":"normal"}'
    line = item_line("Q1", good).replace('"claims":{', f'"claims":{{"P31":[{broken}],', 1)
    every = wikidata_dump.parse_block(line.encode(), 7)
    assert every.problems == [
        (
            7,
            "not a Wikidata entity: Object missing required field `mainsnak` - at "
            "`$.claims[...][0]`",
            "not a Wikidata entity",
        )
    ]
    some = wikidata_dump.parse_block(line.encode(), 7, relations=frozenset({"P39"}))
    assert some.problems == []
    assert some.facts["subject"].to_pylist() == ["Q1"]
    assert some.facts["object"].to_pylist() == ["Q2"]
    requested = wikidata_dump.parse_block(line.encode(), 7, relations=frozenset({"P31"}))
    assert requested.problems == every.problems and requested.entities.num_rows == 0
