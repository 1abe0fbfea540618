"""Feeding: dynamic time masking, the schedule, memorisation, resuming, and pretrained starts."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from transformers import RobertaConfig, RobertaForMaskedLM

from chronoprobe.datasets.lamatk_vocab import EntityVocab
from chronoprobe.models.tokenizer import train_tokenizer
from chronoprobe.train.lamatk import checkpoint as ckpt
from chronoprobe.train.lamatk.encoding import StatementEncoder, word_texts
from chronoprobe.train.lamatk.memorize import (
    TrainOptions,
    _Data,
    learning_rate_at,
    time_masking_plan,
    train,
)
from chronoprobe.train.lamatk.statements import load_statements


def test_time_masking_plan_is_seeded_and_only_touches_time_rows():
    has_alone = np.array([True, False, True, True, False, True] * 50)
    assert not time_masking_plan(has_alone, 0.0, 3, seed=0).any()
    full = time_masking_plan(has_alone, 1.0, 3, seed=0)
    assert (full == has_alone).all()  # k = 1: every start/end row, in every copy
    half = time_masking_plan(has_alone, 0.5, 3, seed=7)
    assert np.array_equal(half, time_masking_plan(has_alone, 0.5, 3, seed=7))
    assert not half[:, ~has_alone].any()
    assert not np.array_equal(half[0], half[1])  # each copy masks differently
    share = half[:, has_alone].mean()
    assert 0.4 < share < 0.6
    assert np.array_equal(time_masking_plan(has_alone, 0.5, 1, seed=7)[0], half[0])


def test_time_alone_form_drops_the_other_year(world_rows, world_labels):
    vocab = EntityVocab.from_rows(world_rows, world_labels)
    tokenizer = train_tokenizer(word_texts(world_rows, vocab), "roberta", vocab_size=300)
    encoder = StatementEncoder(tokenizer, vocab, len(tokenizer))
    data = _Data.encode(encoder, world_rows, 128)
    first_year = len(vocab.entities)
    for n, row in enumerate(world_rows):
        forms = [data.ids[f, n, : data.lengths[f, n]] - encoder.offset for f in (0, 1)]
        years = [int(((f >= first_year) & (f < len(vocab))).sum()) for f in forms]
        if row["slot"] in ("start", "end"):
            assert data.has_alone[n]
            assert years == [1, 0]  # the other time is shown, then deleted
        else:
            assert not data.has_alone[n]
            assert torch.equal(forms[0], forms[1])


def test_learning_rate_warms_up_then_decays_to_zero():
    rates = [learning_rate_at(step, 100, 1.0, 0.1) for step in range(100)]
    assert rates[0] == pytest.approx(0.1) and rates[9] == pytest.approx(1.0)
    assert rates[10] == pytest.approx(1.0) and rates[55] == pytest.approx(0.5)
    assert rates[99] == pytest.approx(1 / 90)


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="unknown preset 'huge'"):
        TrainOptions(preset="huge")
    with pytest.raises(ValueError, match="time masking must be within"):
        TrainOptions(time_masking=1.5)


def test_tiny_model_memorises_a_small_kg(memorized, statements_path):
    """Memorisation reaches Acc@1 >= 0.95 on the statements it was fed."""
    from chronoprobe.models import load_model
    from chronoprobe.probes.recite import ReciteParams, predict_recite, recite_metrics

    loaded, _ = ckpt.load(memorized)
    model = load_model(str(memorized), device="cpu")
    rows = load_statements(statements_path)
    metrics = recite_metrics(predict_recite(model, rows, ReciteParams(model=["m"]), None))
    assert metrics["statements"] == 240
    assert metrics["acc@1"] >= 0.95
    assert metrics["by_answers"]["single"]["hit@10"] >= 0.95
    history = loaded.state["history"]
    assert [h["epoch"] for h in history] == list(range(1, 46))
    assert history[-1]["loss"] < history[0]["loss"] / 5


class Interrupt(Exception):
    pass


def _stop_after(epoch: int):
    def hook(done: int, record: dict) -> None:
        if done == epoch:
            raise Interrupt

    return hook


def test_resume_continues_from_the_checkpoint(tmp_path, world_rows, write_statements):
    path = tmp_path / "statements.jsonl"
    write_statements(path, world_rows[:48])
    options = TrainOptions(epochs=4, batch_size=16, time_masking=0.5, duplicates=2, seed=3)
    whole = train(path, tmp_path / "whole", options, device="cpu")
    with pytest.raises(Interrupt):
        train(path, tmp_path / "cut", options, device="cpu", on_epoch=_stop_after(2))
    assert ckpt.load(tmp_path / "cut")[0].epoch == 2
    epochs_seen: list[int] = []
    resumed = train(
        path, tmp_path / "cut", options, device="cpu", on_epoch=lambda e, _: epochs_seen.append(e)
    )
    assert (resumed.resumed_from, resumed.epochs_run, epochs_seen) == (2, 2, [3, 4])
    assert [h["epoch"] for h in resumed.history] == [1, 2, 3, 4]
    a, b = ckpt.load(tmp_path / "whole")[0].model, ckpt.load(tmp_path / "cut")[0].model
    for (name, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items(), strict=True):
        assert torch.equal(x, y), name
    assert [h["loss"] for h in resumed.history] == [h["loss"] for h in whole.history]
    adam_whole, adam_cut = ckpt.load(tmp_path / "whole")[1], ckpt.load(tmp_path / "cut")[1]
    assert adam_whole["param_groups"] == adam_cut["param_groups"]
    assert adam_whole["state"].keys() == adam_cut["state"].keys()
    for index, entries in adam_whole["state"].items():
        for key, value in entries.items():
            assert torch.equal(value, adam_cut["state"][index][key]), (index, key)
    again = train(path, tmp_path / "cut", options, device="cpu")
    assert again.epochs_run == 0
    assert again.checkpoint == tmp_path / "cut" / "checkpoints" / "epoch-0004"
    assert whole.checkpoint == tmp_path / "whole" / "checkpoints" / "epoch-0004"


def test_resume_refuses_other_options_or_statements(tmp_path, world_rows, write_statements):
    path = tmp_path / "statements.jsonl"
    write_statements(path, world_rows[:16])
    options = TrainOptions(epochs=1, batch_size=16)
    train(path, tmp_path / "run", options, device="cpu")
    with pytest.raises(ValueError, match=r"other options \(epochs, lr differ\)"):
        train(path, tmp_path / "run", TrainOptions(epochs=2, batch_size=16, lr=0.1))
    write_statements(path, world_rows[:17])
    with pytest.raises(ValueError, match="on other statements"):
        train(path, tmp_path / "run", options, device="cpu")


def test_starts_from_a_hugging_face_masked_lm(tmp_path, world_rows, world_labels, write_statements):
    """--init takes any MLM directory: its tokenizer, its weights, room made for the symbols."""
    vocab = EntityVocab.from_rows(world_rows, world_labels)
    tokenizer = train_tokenizer(word_texts(world_rows, vocab), "roberta", vocab_size=300)
    config = RobertaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(0)
    pretrained = RobertaForMaskedLM(config)
    pretrained.save_pretrained(tmp_path / "mlm")
    tokenizer.save_pretrained(tmp_path / "mlm")
    path = tmp_path / "statements.jsonl"
    write_statements(path, world_rows[:32])
    options = TrainOptions(init=str(tmp_path / "mlm"), epochs=1, batch_size=16)
    train(path, tmp_path / "run", options, device="cpu")
    loaded, _ = ckpt.load(tmp_path / "run")
    assert loaded.encoder.offset == len(tokenizer)
    embeddings = loaded.model.get_input_embeddings().weight
    assert embeddings.shape[0] == len(tokenizer) + len(loaded.vocab)
    assert loaded.state["options"]["init"] == str(tmp_path / "mlm")
    train_json = json.loads((ckpt.resolve(tmp_path / "run") / "train.json").read_text())
    assert train_json["history"][0]["epoch"] == 1
