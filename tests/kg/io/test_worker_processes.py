"""`kg convert --processes N` starts no more workers than the cores, the input and the free
memory hold, and says so in one line; a conversion killed by SIGINT or SIGTERM leaves no
worker process (nor its forkserver) behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from tests.signals import interruptible
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.kg.io import wikidata_load
from chronoprobe.kg.io.wikidata_load import WORKER_MEMORY, worker_processes

FIXTURE = Path(__file__).parents[2] / "fixtures" / "wikidata" / "dump.json"


def test_workers_are_capped_by_cores_input_and_memory(tmp_path, monkeypatch):
    monkeypatch.setattr("chronoprobe.core.threads.usable_cores", lambda: 16)
    monkeypatch.setattr(wikidata_load, "_available_memory", lambda: 100 * WORKER_MEMORY)
    small = FIXTURE  # a 16-line file: one block
    assert worker_processes(40, [small]) == (
        1,
        "--processes 40: parsing with 1 worker process, the most that fit 16 usable cores, "
        "1 block of input (4 MiB a block), free memory for 100 (256 MiB each)",
    )
    big = tmp_path / "dump.json"
    with big.open("wb") as out:
        out.truncate(40 << 20)  # ten blocks
    assert worker_processes(8, [big]) == (8, None)
    assert worker_processes(5000, [big])[0] == 10
    monkeypatch.setattr(wikidata_load, "_available_memory", lambda: 3 * WORKER_MEMORY)
    assert worker_processes(5000, [big])[0] == 3
    os.mkfifo(tmp_path / "pipe")
    assert worker_processes(5000, [tmp_path / "pipe"])[0] == 3  # a pipe's size is not known


def test_the_cap_is_one_line_of_the_command(tmp_path):
    args = ["kg", "convert", str(FIXTURE), "-f", "wikidata-json", "--processes", "5000"]
    result = CliRunner().invoke(app, [*args, "-o", str(tmp_path / "kg"), "--no-cache"])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "--processes 5,000: parsing with 1 worker process, the most that fit" in said


def _session(sid: int) -> list[int]:
    """The live processes of session ``sid``."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                fields = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == sid and fields[0] != "Z":
                found.append(int(name))
    return found


@pytest.mark.slow  # a conversion of its own, with two workers, to kill
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the processes from /proc")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_killed_conversion_leaves_no_worker_behind(tmp_path, sig):
    """Killed by SIGTERM, a conversion left its forkserver and both workers running, and
    their shared memory behind. The dump comes through a pipe kept open, so the workers are
    busy (or waiting for blocks) when the signal comes."""
    lines = FIXTURE.read_text().splitlines()
    entity = lines[1].rstrip(",") + ",\n"
    pipe = tmp_path / "dump.json"
    os.mkfifo(pipe)
    stop = threading.Event()

    def feed() -> None:
        try:
            with pipe.open("w") as out:
                out.write("[\n" + entity * 3000)  # about ten blocks, then the pipe stays open
                out.flush()
                stop.wait(180)
        except BrokenPipeError:  # the conversion is gone before all of it was read
            pass

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    args = [sys.executable, "-m", "chronoprobe", "kg", "convert", str(pipe), "-f", "wikidata-json"]
    args += ["--processes", "2", "-o", str(tmp_path / "kg")]
    child = subprocess.Popen(
        args,
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        preexec_fn=interruptible,
    )
    try:
        deadline = time.monotonic() + 120
        while len(_session(child.pid)) < 5:  # itself, the resource tracker, the forkserver, 2
            assert child.poll() is None, child.communicate()[0].decode()
            assert time.monotonic() < deadline, "the workers never started"
            time.sleep(0.1)
        time.sleep(0.5)
        child.send_signal(sig)
        output = child.communicate(timeout=60)[0].decode()
        deadline = time.monotonic() + 10
        while _session(child.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _session(child.pid) == [], output
        assert child.returncode == 130 and "interrupted" in output, output
        assert "leaked shared_memory" not in output and "Traceback" not in output, output
    finally:
        stop.set()
        for pid in _session(child.pid):
            os.kill(pid, signal.SIGKILL)
