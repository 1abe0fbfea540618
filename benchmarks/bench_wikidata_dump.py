"""Wikidata JSON dump loading speed (MB/s of uncompressed JSON) and peak memory.

Real dumps cannot be downloaded here, so this writes a synthetic dump in the official layout
whose lines look like real ones: labels, descriptions and aliases in dozens of languages,
sitelinks, references on every statement, many statements that are no facts (external ids,
strings, quantities, dates, unqualified items) and a few time-qualified ones, several KB a
line. Each (file, processes) run is a fresh process, so its peak RSS (the largest of the main
process and its workers) is its own. CPU seconds (all processes; in brackets the reading
process's own) next to wall seconds keep the figures readable on a busy machine. The last line
measures, in the same run, the reference way (msgspec's typed decode of the
fields a plain extraction loop reads) next to chronoprobe's parser on the same lines in memory.
The target: >= 300 MB/s per core.

    python benchmarks/bench_wikidata_dump.py [--mb 200] [--formats json,json.gz] [--processes 1,2]
        [--repeat 3] [--shares]

``--shares`` adds where ``parse_block``'s time goes on the first 100 MB: each step's share is
measured by replacing that step with nothing (a profiler's own cost per call would distort a
loop of small calls), on a first pass with cold caches, best of 5, every relation loaded.

On a machine shared with other work, CPU seconds are the figures to compare, and ``--repeat``
keeps the best of several runs of each measurement.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgspec

GREGORIAN = "http://www.wikidata.org/entity/Q1985727"
LANGUAGES = [
    *("en de fr es it nl pt ru ja zh pl sv uk ca ar fa he ko fi cs hu no da ro tr id vi".split()),
    *("el bg sr hr sk sl lt lv et eu gl cy ga is mk sq hy ka az kk uz be ta te hi bn ur".split()),
]
WIKIS = [f"{lang}wiki" for lang in LANGUAGES[:30]] + ["commonswiki", "enwikiquote"]
EXTERNAL_IDS = [f"P{n}" for n in (214, 227, 244, 213, 268, 269, 349, 409, 646, 691, 906, 950)]
FACT_RELATIONS = ("P39", "P54", "P108", "P69", "P166", "P26", "P102")


def _time(pid: str, year: int, month: int, day: int, precision: int) -> dict:
    value = {
        "time": f"+{year:04d}-{month:02d}-{day:02d}T00:00:00Z",
        "timezone": 0,
        "before": 0,
        "after": 0,
        "precision": precision,
        "calendarmodel": GREGORIAN,
    }
    return {
        "snaktype": "value",
        "property": pid,
        "datavalue": {"value": value, "type": "time"},
        "datatype": "time",
    }


def _item(pid: str, q: int) -> dict:
    value = {"entity-type": "item", "numeric-id": q, "id": f"Q{q}"}
    return {
        "snaktype": "value",
        "property": pid,
        "datavalue": {"value": value, "type": "wikibase-entityid"},
        "datatype": "wikibase-item",
    }


def _string(pid: str, text: str) -> dict:
    return {
        "snaktype": "value",
        "property": pid,
        "datavalue": {"value": text, "type": "string"},
        "datatype": "external-id",
    }


def _reference(rng: random.Random) -> dict:
    snaks = {
        "P248": [_item("P248", rng.randrange(1, 10**7))],
        "P854": [_string("P854", f"https://example.org/{rng.randrange(10**9)}")],
        "P813": [_time("P813", 2020 + rng.randrange(5), 1 + rng.randrange(12), 1, 11)],
    }
    return {"hash": f"{rng.getrandbits(160):040x}", "snaks": snaks, "snaks-order": list(snaks)}


def _statement(rng: random.Random, subject: str, main: dict, qualifiers: dict | None) -> dict:
    statement = {"mainsnak": main, "type": "statement"}
    if qualifiers:
        statement["qualifiers"] = qualifiers
        statement["qualifiers-order"] = list(qualifiers)
    statement["id"] = f"{subject}${rng.getrandbits(128):032X}"
    statement["rank"] = "normal"
    statement["references"] = [_reference(rng)] if rng.random() < 0.6 else []
    return statement


def _entity(rng: random.Random, number: int) -> tuple[dict, int]:
    """One item like a real person's, and how many facts the loader must find in it."""
    q = f"Q{number}"
    name = f"Person {number}"
    langs = rng.sample(LANGUAGES, rng.randrange(5, 30))
    claims: dict[str, list[dict]] = {}

    def add(main: dict, qualifiers: dict | None = None) -> None:
        claims.setdefault(main["property"], []).append(_statement(rng, q, main, qualifiers))

    add(_item("P31", 5))
    add(_item("P21", 6581097))
    add(_item("P27", rng.randrange(1, 300)))
    add(_time("P569", 1900 + rng.randrange(100), 1 + rng.randrange(12), 1 + rng.randrange(28), 11))
    for pid in rng.sample(EXTERNAL_IDS, rng.randrange(2, 8)):
        add(_string(pid, str(rng.randrange(10**9))))
    for _ in range(rng.randrange(1, 4)):
        add(_item("P106", rng.randrange(1, 10**6)))  # occupation: items, but no time
    facts = 0
    for _ in range(rng.randrange(0, 6)):
        start = 1950 + rng.randrange(70)
        qualifiers = {"P580": [_time("P580", start, 1 + rng.randrange(12), 1, 10)]}
        if rng.random() < 0.7:
            qualifiers["P582"] = [_time("P582", start + rng.randrange(1, 10), 1, 1, 9)]
        add(_item(rng.choice(FACT_RELATIONS), rng.randrange(1, 10**6)), qualifiers)
        facts += 1
    entity = {
        "type": "item",
        "id": q,
        "labels": {lang: {"language": lang, "value": name} for lang in langs},
        "descriptions": {
            lang: {"language": lang, "value": f"person number {number} ({lang})"}
            for lang in langs[: len(langs) // 2]
        },
        "aliases": {
            lang: [{"language": lang, "value": f"P. {number}"}] for lang in langs[: len(langs) // 4]
        },
        "claims": claims,
        "sitelinks": {
            wiki: {"site": wiki, "title": name, "badges": []}
            for wiki in rng.sample(WIKIS, rng.randrange(0, 12))
        },
        "pageid": number + 100,
        "ns": 0,
        "title": q,
        "lastrevid": 2_000_000_000 + number,
        "modified": "2024-05-01T12:00:00Z",
    }
    return entity, facts


def write_dump(path: Path, megabytes: float, seed: int = 0) -> dict:
    """A synthetic dump of about ``megabytes`` MB; returns its size and expected fact count."""
    rng = random.Random(seed)
    target, size, facts, entities = int(megabytes * 1e6), 0, 0, 0
    with path.open("wb") as out:
        out.write(b"[\n")
        while size < target:
            entity, found = _entity(rng, entities + 1)
            line = msgspec.json.encode(entity)
            out.write(line if size == 0 else b",\n" + line)
            size += len(line) + 2
            facts += found
            entities += 1
        out.write(b"\n]\n")
    return {"bytes": path.stat().st_size, "entities": entities, "facts": facts}


def gzip_copy(path: Path) -> Path:
    from isal import igzip

    target = path.with_name(path.name + ".gz")
    with path.open("rb") as source, igzip.open(target, "wb", compresslevel=2) as out:
        while block := source.read(16 << 20):
            out.write(block)
    return target


def bz2_copy(path: Path) -> Path:
    import bz2

    target = path.with_name(path.name + ".bz2")
    with path.open("rb") as source, bz2.open(target, "wb", compresslevel=9) as out:
        while block := source.read(16 << 20):
            out.write(block)
    return target


def _relations(text: str) -> frozenset[str] | None:
    return frozenset(text.split(",")) if text else None


def measure(path: Path, processes: int, relations: frozenset[str] | None) -> dict:
    import multiprocessing.forkserver

    from chronoprobe.kg.io.options import LoadOptions
    from chronoprobe.kg.io.problems import Problems
    from chronoprobe.kg.io.wikidata_load import load

    own = resource.getrusage(resource.RUSAGE_SELF)
    cpu_before = own.ru_utime + own.ru_stime  # the imports above
    began = time.perf_counter()
    options = LoadOptions(processes=processes, relations=relations)
    kg = load([path], options, Problems(strict=True))
    seconds = time.perf_counter() - began
    # Workers are children of the fork server: stopping it (it waits for them, and this
    # process for it) puts their CPU time into RUSAGE_CHILDREN.
    multiprocessing.forkserver._forkserver._stop()
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    return {
        "seconds": seconds,
        "reader_cpu_seconds": usage[0].ru_utime + usage[0].ru_stime - cpu_before,
        "cpu_seconds": sum(u.ru_utime + u.ru_stime for u in usage) - cpu_before,
        "facts": len(kg),
        "peak_rss_mib": max(u.ru_maxrss for u in usage) / 1024,
    }


class _Value(msgspec.Struct):
    type: str
    value: msgspec.Raw


class _Snak(msgspec.Struct):
    snaktype: str
    datatype: str = ""
    datavalue: _Value | None = None


class _Qualifiers(msgspec.Struct, rename={"start": "P580", "end": "P582", "point": "P585"}):
    start: list[_Snak] = []
    end: list[_Snak] = []
    point: list[_Snak] = []


class _Statement(msgspec.Struct):
    mainsnak: _Snak
    rank: str = "normal"
    qualifiers: _Qualifiers | None = None


class _Label(msgspec.Struct):
    value: str


class _Labels(msgspec.Struct):
    en: _Label | None = None


class _Entity(msgspec.Struct):
    id: str
    labels: _Labels | None = None
    claims: dict[str, list[_Statement]] = {}


class _Item(msgspec.Struct):
    id: str


class _Time(msgspec.Struct):
    time: str
    precision: int


def _first_time(snaks: list[_Snak], decoder: msgspec.json.Decoder) -> str | None:
    for snak in snaks:
        if snak.datavalue is not None:
            return decoder.decode(snak.datavalue.value).time
    return None


def _plain_facts(line: bytes, decoders: tuple) -> list[tuple]:
    """The reference extraction loop: the facts of one line, times left as strings."""
    entity, item, when = decoders
    record, facts = entity.decode(line), []
    for pid, statements in record.claims.items():
        for statement in statements:
            snak, qualifiers = statement.mainsnak, statement.qualifiers
            if snak.datatype != "wikibase-item" or qualifiers is None:
                continue
            if statement.rank == "deprecated" or snak.datavalue is None:
                continue
            start = _first_time(qualifiers.start, when) or _first_time(qualifiers.point, when)
            end = _first_time(qualifiers.end, when) or _first_time(qualifiers.point, when)
            if start or end:
                facts.append((record.id, pid, item.decode(snak.datavalue.value).id, start, end))
    return facts


def _decode_rate(decode, lines: list[bytes], megabytes: float) -> float:
    """MB per CPU second of ``decode`` over ``lines``, the decoded values dropped."""
    began = time.process_time()
    for line in lines:
        decode(line)
    return megabytes / (time.process_time() - began)


def reference(path: Path, relations: frozenset[str] | None) -> dict:
    """MB per CPU second of one process on lines in memory: msgspec's typed decode of only the
    fields a plain extraction reads plus that loop (310 MB/s on real entities), and
    chronoprobe's ``parse_block`` (whole blocks, Arrow tables out, first pass), with and without
    its compiled scanner, on the same lines; then
    whole-line decodes that build every value: ``json.loads``, and orjson where installed."""
    from chronoprobe.kg.io.compressed import line_blocks
    from chronoprobe.kg.io.wikidata_dump import parse_block

    decoders = tuple(msgspec.json.Decoder(t) for t in (_Entity, _Item, _Time))
    blocks = [bytes(block) for block, _ in line_blocks(path)]
    lines = [line.rstrip(b",") for block in blocks for line in block.split(b"\n")]
    lines = [line for line in lines if len(line) > 1]
    megabytes = sum(map(len, blocks)) / 1e6
    began = time.process_time()
    facts = sum(len(_plain_facts(line, decoders)) for line in lines)
    typed = time.process_time() - began
    rates = {"msgspec_typed_loop": megabytes / typed}
    for compiled in (True, False):
        _clear_caches(_caches())
        began = time.process_time()
        parsed = sum(
            parse_block(block, 1, relations=relations, compiled=compiled).facts.num_rows
            for block in blocks
        )
        rates[f"parse_block{'' if compiled else '_msgspec'}"] = megabytes / (
            time.process_time() - began
        )
    rates = {
        **rates,
        "json_loads": _decode_rate(json.loads, lines, megabytes),
        "facts": [facts, parsed],
    }
    try:
        import orjson
    except ImportError:
        return rates
    return {**rates, "orjson": _decode_rate(orjson.loads, lines, megabytes)}


def _caches() -> tuple:
    """The times and bounds the parser remembers."""
    from chronoprobe.kg.io import wikidata_dump

    return (
        wikidata_dump._qualifier_bounds,
        wikidata_dump._remembered_bounds,
        wikidata_dump._extreme,
        wikidata_dump._time,
    )


def _clear_caches(caches: tuple) -> None:
    """Forget what the parser remembers, for a first pass."""
    from chronoprobe.kg.io import wikidata_dump

    for cache in caches:
        cache.cache_clear()
    wikidata_dump._SCANNED_BOUNDS.clear()


def shares(path: Path) -> dict:
    """CPU seconds of ``parse_block`` over the first 100 MB of ``path`` in one process, whole
    and with one step at a time replaced by nothing: a first pass, caches cleared, best of 5."""
    from chronoprobe.kg.io import wikidata_dump
    from chronoprobe.kg.io.compressed import line_blocks

    blocks = [bytes(block) for block, _ in line_blocks(path)][:24]
    caches = _caches()

    def seconds() -> float:
        _clear_caches(caches)
        began = time.process_time()
        for block in blocks:
            wikidata_dump.parse_block(block, 1)
        return time.process_time() - began

    nothing = {
        "whole": {},
        "_time_bounds": {"_time_bounds": lambda _times: (None,) * 8},  # every fact unbounded
        "_table": {"_table": lambda *_: None},
    }
    best = dict.fromkeys(nothing, float("inf"))
    for _ in range(5):  # round after round, so a slow minute of the machine hits every case
        for case, replacements in nothing.items():
            kept = {name: getattr(wikidata_dump, name) for name in replacements}
            for name, replacement in replacements.items():
                setattr(wikidata_dump, name, replacement)
            try:
                best[case] = min(best[case], seconds())
            finally:
                for name, value in kept.items():
                    setattr(wikidata_dump, name, value)
    seconds = best
    parsed = [wikidata_dump.parse_block(block, 1) for block in blocks]
    bounds, tables = (
        seconds["whole"] - seconds["_time_bounds"],
        seconds["whole"] - seconds["_table"],
    )
    return {
        "megabytes": sum(map(len, blocks)) / 1e6,
        "scan": seconds["whole"] - bounds - tables,
        "bounds": bounds,
        "tables": tables,
        "whole": seconds["whole"],
        "fact_count": sum(p.facts.num_rows for p in parsed),
        "distinct_bounds": len(wikidata_dump._SCANNED_BOUNDS),
    }


def print_shares(result: dict) -> None:
    megabytes, facts = result["megabytes"], result["fact_count"]
    print(
        f"\nwhere parse_block's time goes: {megabytes:.0f} MB, one process, first pass, "
        "each step replaced by nothing (CPU s):"
    )
    print("| share | CPU s | per |")
    print("|---|---:|---:|")
    print(
        "| the compiled scan: lines, validation, labels, statements, rows | "
        f"{result['scan']:.3f} | {megabytes / result['scan']:.0f} MB per CPU s |"
    )
    per_bound = result["bounds"] / result["distinct_bounds"] * 1e6
    print(
        f"| time bounds read in Python ({result['distinct_bounds']:,} distinct of {facts:,} "
        f"facts; the others cached) | {result['bounds']:.3f} | {per_bound:.1f} µs each |"
    )
    print(f"| Arrow tables from the rows | {result['tables']:.3f} | |")
    print(f"| total | {result['whole']:.3f} ({megabytes / result['whole']:.0f} MB per CPU s) | |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=200, help="uncompressed dump size in MB")
    parser.add_argument("--formats", default="json,json.gz", help="of json, json.gz, json.bz2")
    parser.add_argument("--processes", default="1,2")
    parser.add_argument("--dir", type=Path, help="where to write the dump (default: a temp dir)")
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs of each measurement; the best one is shown"
    )
    parser.add_argument(
        "--relations",
        default="",
        help="load only these relations, as `kg convert --relations` (e.g. "
        f"{','.join(FACT_RELATIONS)}, every relation the synthetic dump has facts of; "
        "default: all)",
    )
    parser.add_argument(
        "--shares", action="store_true", help="also show where parse_block's time goes"
    )
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # internal: "path,processes"
    parser.add_argument("--reference", help=argparse.SUPPRESS)  # internal: path
    parser.add_argument("--shares-of", help=argparse.SUPPRESS)  # internal: path
    args = parser.parse_args()
    if args.measure:
        path, processes = args.measure.rsplit(",", 1)
        print(json.dumps(measure(Path(path), int(processes), _relations(args.relations))))
        return
    if args.reference:
        print(json.dumps(reference(Path(args.reference), _relations(args.relations))))
        return
    if args.shares_of:
        print(json.dumps(shares(Path(args.shares_of))))
        return
    if args.dir:
        args.dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        plain = Path(folder) / "latest-all.json"
        began = time.perf_counter()
        dump = write_dump(plain, args.mb)
        copies = {"json": plain}
        formats = args.formats.split(",")
        if "json.gz" in formats:
            copies["json.gz"] = gzip_copy(plain)
        if "json.bz2" in formats:
            copies["json.bz2"] = bz2_copy(plain)
        print(
            f"dump: {dump['bytes'] / 1e6:.0f} MB, {dump['entities']:,} entities "
            f"({dump['bytes'] / dump['entities'] / 1e3:.1f} kB a line), {dump['facts']:,} facts; "
            + ", ".join(f"{k} {p.stat().st_size / 1e6:.0f} MB" for k, p in copies.items())
            + f" (written in {time.perf_counter() - began:.0f} s)",
            flush=True,
        )
        if args.relations:
            print(f"relations: {args.relations} (`kg convert --relations`)")
        print("| file | processes | wall s | MB/s | CPU s (reader) | MB per CPU s | facts | RSS |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        megabytes = dump["bytes"] / 1e6
        for name in formats:
            for processes in (int(p) for p in args.processes.split(",")):
                case = f"{copies[name]},{processes}"
                runs = [_child("--measure", case, args.relations) for _ in range(args.repeat)]
                run = min(runs, key=lambda r: r["cpu_seconds"])
                if run["facts"] != dump["facts"]:
                    raise SystemExit(f"expected {dump['facts']:,} facts, loaded {run['facts']:,}")
                print(
                    f"| .{name} | {processes} | {run['seconds']:.1f} | "
                    f"{megabytes / run['seconds']:.0f} | {run['cpu_seconds']:.1f} "
                    f"({run['reader_cpu_seconds']:.1f}) | "
                    f"{megabytes / run['cpu_seconds']:.0f} | {run['facts']:,} | "
                    f"{run['peak_rss_mib']:.0f} MiB |",
                    flush=True,
                )
        references = [_child("--reference", str(plain), args.relations) for _ in range(args.repeat)]
        same = {key: max(r[key] for r in references) for key in references[0]}
        orjson = f", orjson {same['orjson']:.0f}" if "orjson" in same else " (no orjson installed)"
        print(
            f"in memory, one process, MB per CPU s: msgspec typed decode + plain loop "
            f"{same['msgspec_typed_loop']:.0f}, chronoprobe parse_block {same['parse_block']:.0f} "
            f"({same['parse_block_msgspec']:.0f} with msgspec alone, no compiled scanner); "
            f"whole-line decodes: json.loads {same['json_loads']:.0f}{orjson}"
        )
        if args.shares:
            print_shares(_child("--shares-of", str(plain), ""))


def _child(what: str, case: str, relations: str) -> dict:
    """A measurement in a fresh process, so that its CPU time, memory and caches are its own."""
    command = [sys.executable, __file__, what, case, "--relations", relations]
    child = subprocess.run(command, check=True, capture_output=True, text=True)
    return json.loads(child.stdout)


if __name__ == "__main__":
    main()
