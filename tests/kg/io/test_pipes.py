"""Converting from a pipe (``kg convert <(zcat dump.json.gz)``, a named FIFO, /dev/stdin).

A pipe can be read once: the format check that reads a file's first megabyte must leave it
alone, its position cannot be asked, and its size and time say nothing of what it held, so a
step that reads one runs every time and never comes from (or goes into) the cache.
"""

from __future__ import annotations

import bz2
import gzip
import json
import os
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.kg import TemporalKG
from chronoprobe.params import ExistingPath, Params

FIXTURE = Path(__file__).parents[2] / "fixtures" / "wikidata" / "dump.json"

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")


def _fifo(path: Path, data: bytes) -> threading.Thread:
    """A named pipe at ``path`` that a thread fills with ``data`` once a reader opens it."""
    os.mkfifo(path)

    def write() -> None:
        with open(path, "wb") as pipe:
            pipe.write(data)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    return writer


def _convert(source: Path, out: Path) -> str:
    result = CliRunner().invoke(
        app, ["kg", "convert", str(source), "-f", "wikidata-json", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


@pytest.mark.parametrize(
    "suffix, pack", [("", bytes), (".gz", gzip.compress), (".bz2", bz2.compress)]
)
def test_a_pipe_gives_the_kg_its_file_gives(tmp_path, suffix, pack):
    _convert(FIXTURE, tmp_path / "from-file")
    writer = _fifo(tmp_path / f"dump.json{suffix}", pack(FIXTURE.read_bytes()))
    said = _convert(tmp_path / f"dump.json{suffix}", tmp_path / "from-pipe")
    writer.join(timeout=30)
    assert "is a pipe, read once" in said
    piped, read = TemporalKG.load(tmp_path / "from-pipe"), TemporalKG.load(tmp_path / "from-file")
    assert piped.facts.equals(read.facts) and piped.entities.equals(read.entities)
    assert piped.meta["skipped"] == read.meta["skipped"]


def test_a_pipe_named_again_is_read_again_not_served_from_the_cache(tmp_path):
    """Two pipes at the same path: the second conversion is the second pipe's KG (the cache
    keyed on the pipe's name, size and time served the first)."""
    lines = FIXTURE.read_bytes().splitlines(keepends=True)
    first = b"".join(lines[:3])
    _fifo(tmp_path / "dump.json", b"".join(lines))
    _convert(tmp_path / "dump.json", tmp_path / "all")
    os.unlink(tmp_path / "dump.json")
    _fifo(tmp_path / "dump.json", first)
    _convert(tmp_path / "dump.json", tmp_path / "first-lines")
    whole, part = TemporalKG.load(tmp_path / "all"), TemporalKG.load(tmp_path / "first-lines")
    assert len(part) < len(whole)
    keys = [
        json.loads((tmp_path / d / "step.json").read_text())["key"] for d in ("all", "first-lines")
    ]
    assert keys[0] != keys[1]


def test_a_pipe_path_is_kept_as_given_not_resolved_to_a_name_that_is_no_file(tmp_path):
    class Source(Params):
        path: ExistingPath

    read, write = os.pipe()
    try:
        given = Path(f"/dev/fd/{read}")
        if not given.exists():
            pytest.skip("no /dev/fd here")
        assert Source(path=given).path == given  # resolve() gives /proc/<pid>/fd/pipe:[...]
    finally:
        os.close(read)
        os.close(write)
