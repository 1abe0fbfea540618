"""`kg convert --engine ray`: the dump fixture parsed in Ray tasks (a local Ray instance with two
CPU workers) gives the KG the local loader gives, byte for byte, and a killed conversion
resumes from the parts it finished."""

from __future__ import annotations

import bz2
import filecmp
import gzip
import os
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.kg.io import wikidata_dump_ray, wikidata_load
from chronoprobe.kg.io.options import LoadOptions
from chronoprobe.kg.io.problems import BadRecord, Problems

FIXTURE = Path(__file__).parents[2] / "fixtures" / "wikidata" / "dump.json"
COMPRESS = {"json": bytes, "json.gz": gzip.compress, "json.bz2": bz2.compress}


@pytest.fixture
def small_parts(monkeypatch):
    """Parts of 3 kB, so the 19 lines of the fixture make 11 parts."""
    monkeypatch.setattr(wikidata_dump_ray, "PART_SIZE", 3000)


def dump(tmp_path: Path, suffix: str) -> Path:
    path = tmp_path / f"latest-all.{suffix}"
    path.write_bytes(COMPRESS[suffix](FIXTURE.read_bytes()))
    return path


def load(path: Path, **options):
    problems = Problems()
    return wikidata_load.load([path], LoadOptions(**options), problems), problems


@pytest.mark.parametrize("suffix", list(COMPRESS))
def test_ray_parts_give_the_local_kg(ray_session, small_parts, tmp_path, suffix):
    path = dump(tmp_path, suffix)
    local, local_problems = load(path)
    seen = []
    got, problems = load(
        path, engine="ray", work_dir=tmp_path / "work", progress=lambda *a: seen.append(a)
    )
    assert len(list((tmp_path / "work" / "dump-parts").glob("000-*"))) == 11
    size = path.stat().st_size
    assert seen[-1] == (size, size) and [d for d, _ in seen] == sorted(d for d, _ in seen)
    for table in ("facts", "entities", "relations"):
        assert getattr(got, table).equals(getattr(local, table)), table
    assert got.meta == local.meta
    # the same problems at the same lines: parts number their lines from 1, gathered in order
    assert problems.examples == local_problems.examples
    assert problems.counts == local_problems.counts
    with pytest.raises(BadRecord, match=r"latest-all\.json[.a-z2]*:10: malformed JSON"):
        wikidata_load.load([path], LoadOptions(engine="ray"), Problems(strict=True))


@pytest.mark.parametrize("suffix", ["json.gz", "json.bz2"])
def test_a_killed_ray_conversion_resumes_from_its_finished_parts(
    ray_session, small_parts, tmp_path, monkeypatch, suffix
):
    path = dump(tmp_path, suffix)
    written = []
    write = wikidata_dump_ray.PartStore.write

    def killed_after_three(store, file, part, parsed):
        if len(written) == 3:
            raise KeyboardInterrupt
        written.append(part)
        write(store, file, part, parsed)

    monkeypatch.setattr(wikidata_dump_ray.PartStore, "write", killed_after_three)
    with pytest.raises(KeyboardInterrupt):
        load(path, engine="ray", work_dir=tmp_path / "work")
    finished = set(written)
    written.clear()
    monkeypatch.setattr(
        wikidata_dump_ray.PartStore, "write", lambda *a: (written.append(a[2]), write(*a))
    )
    monkeypatch.setattr(wikidata_dump_ray, "bz2_blocks", None)  # a .bz2 index is kept too
    got, _ = load(path, engine="ray", work_dir=tmp_path / "work")
    assert len(finished) == 3
    assert sorted(written + sorted(finished)) == list(range(11))  # no part parsed twice
    local, _ = load(path)
    assert got.facts.equals(local.facts)
    assert got.entities.equals(local.entities)


@pytest.mark.parametrize("fault", ["its worker dies", "reading its input fails"])
def test_a_part_whose_first_attempt_fails_is_retried(
    ray_session, small_parts, tmp_path, monkeypatch, fault
):
    path = dump(tmp_path, "json")
    marker, parse = tmp_path / "failed-once", wikidata_dump_ray.parse_part

    def failing_once(*args):  # defined here, so Ray ships it to the workers by value
        try:
            marker.open("x").close()  # the first attempt of any part, on either worker
        except FileExistsError:
            return parse(*args)
        if fault == "its worker dies":
            os._exit(1)
        raise OSError("Stale file handle")

    monkeypatch.setattr(wikidata_dump_ray, "parse_part", failing_once)
    got, _ = load(path, engine="ray", work_dir=tmp_path / "work")
    assert marker.exists()
    local, _ = load(path)
    for table in ("facts", "entities", "relations"):
        assert getattr(got, table).equals(getattr(local, table)), table


def test_a_part_whose_parsing_fails_is_not_retried(ray_session, small_parts, tmp_path, monkeypatch):
    path = dump(tmp_path, "json")
    attempts, parse = tmp_path / "attempts", wikidata_dump_ray.parse_part

    def failing_at_the_start(source, *args):
        if source[1] > 0:
            return parse(source, *args)
        with attempts.open("a") as log:
            log.write("attempt\n")
        raise ValueError("a deterministic failure")

    monkeypatch.setattr(wikidata_dump_ray, "parse_part", failing_at_the_start)
    with pytest.raises(ValueError, match="a deterministic failure"):
        load(path, engine="ray", work_dir=tmp_path / "work")
    assert attempts.read_text() == "attempt\n"  # Ray retries before the error reaches us


def test_cli_ray_conversion_writes_the_local_kg_directory(ray_session, tmp_path):
    path = dump(tmp_path, "json.bz2")
    convert = ["kg", "convert", str(path), "-f", "wikidata-json", "-o"]
    local = CliRunner().invoke(app, [*convert, str(tmp_path / "local")])
    ray = CliRunner().invoke(app, [*convert, str(tmp_path / "ray"), "--engine", "ray"])
    assert local.exit_code == 0, local.output
    assert ray.exit_code == 0, ray.output
    files = ["entities.parquet", "relations.parquet", "facts.parquet", "manifest.json"]
    files.append("metrics.json")
    same = filecmp.cmpfiles(tmp_path / "local", tmp_path / "ray", files, shallow=False)
    assert same == (files, [], [])
    assert not (tmp_path / "ray" / ".shards").exists()


def test_engine_ray_without_ray_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails as when not installed
    result = CliRunner().invoke(
        app,
        [
            "kg",
            "convert",
            str(FIXTURE),
            "-f",
            "wikidata-json",
            "-o",
            str(tmp_path / "kg"),
            "--engine",
            "ray",
        ],
    )
    assert result.exit_code != 0
    assert "--engine ray needs Ray, which is not installed: pip install 'chronoprobe[ray]'" in (
        " ".join(result.output.split())
    )
    assert not (tmp_path / "kg").exists()


def test_engine_ray_is_for_wikidata_dumps_and_address_for_ray(tmp_path):
    out = ["-o", str(tmp_path / "kg")]
    jsonl = CliRunner().invoke(
        app, ["kg", "convert", str(FIXTURE), "-f", "jsonl", *out, "--engine", "ray"]
    )
    assert "--engine ray applies to --format wikidata-json only" in jsonl.output
    address = CliRunner().invoke(
        app, ["kg", "convert", str(FIXTURE), "-f", "wikidata-json", *out, "--address", "auto"]
    )
    assert "--address applies to --engine ray only" in address.output
