"""Untrusted pickles: no code runs, and no pickle of data costs more than its size allows."""

from __future__ import annotations

import pickle
import time

import pytest

from chronoprobe.datasets.cronq_release import read_released_questions
from chronoprobe.kg.io.safe_pickle import Limits, safe_load, safe_loads


def _shared_lists(levels: int) -> bytes:
    """A question whose answers are a list holding one list twice, holding one list twice...:
    a few hundred bytes, 2**levels lists to anything that walks it."""
    nested: list = ["spam"]
    for _ in range(levels):
        nested = [nested, nested]
    return pickle.dumps([{"question": "q", "answers": nested}], protocol=2)


def _shared_tuples(levels: int, container: str) -> bytes:
    """A tuple holding one tuple twice, ``levels`` deep, written by hand (building it as a key
    here would hash it, which is the attack), then used as a dict key or a set's element."""
    out = bytearray(b"\x80\x02X\x01\x00\x00\x00x\x85q\x00")  # ("x",), memo 0
    for k in range(levels):
        get = b"h" + bytes([k % 2])
        out += get + get + b"\x86q" + bytes([(k + 1) % 2])  # (t, t), memo 0 and 1 in turn
    last = b"h" + bytes([levels % 2])
    if container == "dict":
        return bytes(out + b"0}" + last + b"K\x01s.")  # {t: 1}
    return bytes(out + b"0cbuiltins\nset\n]" + last + b"a\x85R.")  # set([t])


def test_a_small_pickle_of_shared_lists_is_refused_at_once(tmp_path):
    path = tmp_path / "test.pickle"
    path.write_bytes(_shared_lists(40))
    assert len(path.read_bytes()) < 700
    began = time.perf_counter()
    with pytest.raises(ValueError, match=r"test\.pickle: refused: the value holds far more"):
        read_released_questions(path)
    assert time.perf_counter() - began < 30  # the reader used to walk 2**40 lists


def test_scalars_built_by_a_call_load_and_a_long_text_is_still_counted():
    """complex(...) is a call whose arguments are scalars: nothing inside them to walk."""
    assert safe_loads(pickle.dumps([1j, -2.5 + 0j], protocol=2)) == [1j, -2.5 + 0j]
    with pytest.raises(pickle.UnpicklingError, match="refused: the value holds far more"):
        safe_loads(pickle.dumps("x" * 100), Limits(base=10, characters_per_byte=0))


def test_shared_tuples_are_refused_before_a_set_hashes_them():
    began = time.perf_counter()
    with pytest.raises(pickle.UnpicklingError, match="refused: the value holds far more"):
        safe_loads(_shared_tuples(60, "set"))
    assert time.perf_counter() - began < 30


def test_unpickling_that_runs_past_the_deadline_is_stopped(tmp_path):
    # Filling a dict hashes its key inside the unpickler, where nothing can be checked: the
    # worker process is stopped at the deadline instead.
    path = tmp_path / "train.pickle"
    path.write_bytes(_shared_tuples(60, "dict"))
    with pytest.raises(ValueError, match=r"train\.pickle: refused: unpickling took more than 2 s"):
        safe_load(path, Limits(base_seconds=2))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (pickle.dumps([[[[[[1]]]]]]), "refused: nested deeper than 4 levels"),
        (b"\x80\x02cbuiltins\nbytes\nJ\x00\x00\x00\x7f\x85R.", r"refused: bytes\(\) of int"),
        (b"\x80\x02cbuiltins\nstr\n]\x85R.", r"refused: str\(\) of list"),
        (b"\x80\x02]q\x00(K\x01", r"not a readable pickle: EOFError"),
    ],
)
def test_values_past_the_limits_and_broken_pickles_are_refused(tmp_path, data, message):
    path = tmp_path / "valid.pickle"
    path.write_bytes(data)
    with pytest.raises(ValueError, match=rf"valid\.pickle: {message}"):
        safe_load(path, Limits(depth=4))


def test_data_of_every_protocol_loads_as_it_was():
    rows = [{"question": f"q{i}", "answers": {"Q1"}, "times": (1999, 2001)} for i in range(50)]
    for protocol in range(6):
        assert safe_loads(pickle.dumps(rows, protocol=protocol)) == rows
