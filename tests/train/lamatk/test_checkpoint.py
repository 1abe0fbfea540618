"""Checkpoints: a round trip keeps weights, vocabulary, encoder and state; old ones are pruned."""

from __future__ import annotations

import json

import pytest
import torch
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.datasets.lamatk_vocab import EntityVocab
from chronoprobe.models.tokenizer import train_tokenizer
from chronoprobe.train.lamatk import checkpoint as ckpt
from chronoprobe.train.lamatk.encoding import StatementEncoder, word_texts
from chronoprobe.train.model import build_model, symbol_logits


@pytest.fixture
def fresh(world_rows, world_labels) -> ckpt.Checkpoint:
    vocab = EntityVocab.from_rows(world_rows, world_labels)
    tokenizer = train_tokenizer(word_texts(world_rows, vocab), "roberta", vocab_size=300)
    torch.manual_seed(0)
    model = build_model("tiny", tokenizer, len(vocab)).eval()
    encoder = StatementEncoder(tokenizer, vocab, len(tokenizer))
    return ckpt.Checkpoint(model, encoder, {"epoch": 1, "history": [{"epoch": 1}]})


def test_round_trip_keeps_everything(tmp_path, fresh, world_rows):
    optimizer = torch.optim.AdamW(fresh.model.parameters())
    fresh.model(input_ids=torch.tensor([[0, 5, 2]])).logits.sum().backward()
    optimizer.step()
    path = ckpt.save(tmp_path, fresh, optimizer)
    assert path == tmp_path / "checkpoints" / "epoch-0001"
    assert (path / "model.safetensors").is_file()
    loaded, training = ckpt.load(tmp_path)
    assert loaded.state == fresh.state
    assert loaded.vocab == fresh.vocab
    assert loaded.encoder.offset == fresh.encoder.offset
    for (name, a), b in zip(
        fresh.model.state_dict().items(), loaded.model.state_dict().values(), strict=True
    ):
        assert torch.equal(a, b), name
    state = training["state"]
    assert torch.equal(state[0]["exp_avg"], optimizer.state_dict()["state"][0]["exp_avg"])
    assert training["param_groups"][0]["betas"] == [0.9, 0.999]
    rows = world_rows[:20]
    before = fresh.encoder.encode(rows, [r["text"] for r in rows], 128)
    after = loaded.encoder.encode(rows, [r["text"] for r in rows], 128)
    assert (before.ids == after.ids).all()
    ids = torch.from_numpy(before.ids)
    mask_at = torch.from_numpy(before.mask_at)
    with torch.no_grad():
        expected = symbol_logits(fresh.model, ids, ids != 1, mask_at, fresh.encoder.offset)
        got = symbol_logits(loaded.model, ids, ids != 1, mask_at, loaded.encoder.offset)
    assert torch.equal(expected, got)
    assert expected.shape == (20, len(fresh.vocab))
    asked, no_training = ckpt.load(tmp_path, optimizer=False)  # a model only asked
    assert no_training is None and asked.state == loaded.state


def test_last_names_the_newest_and_older_ones_go(tmp_path, fresh):
    ckpt.save(tmp_path, fresh)
    fresh.state["epoch"] = 2
    ckpt.save(tmp_path, fresh)
    assert (tmp_path / "last").read_text().strip() == "epoch-0002"
    assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir()) == ["epoch-0002"]
    assert ckpt.resolve(tmp_path) == tmp_path / "checkpoints" / "epoch-0002"
    assert ckpt.resolve(tmp_path / "checkpoints" / "epoch-0002") == ckpt.resolve(tmp_path)
    assert ckpt.load(tmp_path / "checkpoints" / "epoch-0002")[0].epoch == 2


def test_not_a_checkpoint_is_a_clear_error(tmp_path, fresh):
    with pytest.raises(FileNotFoundError, match="no checkpoint here"):
        ckpt.load(tmp_path)
    path = ckpt.save(tmp_path, fresh)
    state = json.loads((path / "train.json").read_text())
    (path / "train.json").write_text(json.dumps({**state, "format": "something-else"}))
    with pytest.raises(ValueError, match=r"train\.json: not a chronoprobe-lamatk-checkpoint/2"):
        ckpt.load(tmp_path)


def test_an_older_checkpoint_is_refused_in_one_line_saying_to_train_again(
    tmp_path, fresh, world_rows, write_statements
):
    path = ckpt.save(tmp_path / "run", fresh)
    state = json.loads((path / "train.json").read_text())
    (path / "train.json").write_text(json.dumps({**state, "format": ckpt.FORMAT[:-1] + "1"}))
    (path / "optimizer.pt").write_bytes(b"a pickle")
    with pytest.raises(ValueError, match=r"a chronoprobe-lamatk-checkpoint/1 checkpoint, from an"):
        ckpt.load(tmp_path / "run")
    statements = write_statements(tmp_path / "statements.jsonl", world_rows[:8])
    args = ["probe", "recite", str(statements), "-m", str(path), "-o", str(tmp_path / "r")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    [error] = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert error.endswith(
        "train again into another output directory; nothing written to " + str(tmp_path / "r")
    )


def test_an_optimizer_state_of_another_epoch_is_refused(tmp_path, fresh):
    optimizer = torch.optim.AdamW(fresh.model.parameters())
    path = ckpt.save(tmp_path, fresh, optimizer)
    fresh.state["epoch"] = 2
    later = ckpt.save(tmp_path / "later", fresh, optimizer)
    (path / "optimizer.safetensors").write_bytes((later / "optimizer.safetensors").read_bytes())
    with pytest.raises(ValueError, match=r"optimizer\.safetensors: holds another epoch than train"):
        ckpt.load(path)
