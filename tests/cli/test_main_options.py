"""Options of the root `chronoprobe` command."""

from __future__ import annotations

import pytest
import torch
from typer.testing import CliRunner

from chronoprobe.cli.main import app

from .test_build_cli import save_kg


@pytest.fixture
def restore_threads():
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


@pytest.mark.parametrize("how", ["option", "environment"])
def test_threads_sets_torch_threads_for_the_command(tmp_path, restore_threads, how):
    save_kg(tmp_path / "kg")
    torch.set_num_threads(2)
    args, env = ["kg", "info", str(tmp_path / "kg")], {}
    if how == "option":
        args = ["--threads", "1", *args]
    else:
        env = {"CHRONOPROBE_THREADS": "1"}
    result = CliRunner().invoke(app, args, env=env)
    assert result.exit_code == 0, result.output
    assert torch.get_num_threads() == 1


def test_threads_must_be_positive(restore_threads):
    result = CliRunner().invoke(app, ["--threads", "0", "kg", "info", "x"])
    assert result.exit_code == 2
    assert "--threads" in result.output
