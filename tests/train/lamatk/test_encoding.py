"""Statements to model input: one mask token at the slot, one symbol token per mention."""

from __future__ import annotations

import numpy as np
import pytest

from chronoprobe.datasets.lamatk import build_statements
from chronoprobe.datasets.lamatk_vocab import EntityVocab, read_labels, write_labels
from chronoprobe.jsonl import write_jsonl
from chronoprobe.kg import Entity, Fact, TemporalKG
from chronoprobe.models.tokenizer import train_tokenizer
from chronoprobe.time import TimePoint
from chronoprobe.train.lamatk.encoding import StatementEncoder, mentioned, segment, word_texts
from chronoprobe.train.lamatk.statements import load_statements

LABELS = {
    "Q11571": "Cristiano Ronaldo",
    "Q18656": "Manchester United F.C.",
    "Q9616": "Juventus F.C.",
    "Q949": "John Bardeen",
    "Q38104": "Nobel Prize in Physics",
}


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    facts = [
        Fact("Q11571", "P54", "Q18656", TimePoint(2003), TimePoint(2009)),
        Fact("Q11571", "P54", "Q9616", TimePoint(2018), TimePoint(2021)),
        Fact("Q949", "P166", "Q38104", TimePoint(1956), TimePoint(1956)),
    ]
    kg = TemporalKG.from_records(facts, [Entity(i, n) for i, n in LABELS.items()])
    return build_statements(kg)[0]


@pytest.fixture(scope="module")
def encoder(rows) -> StatementEncoder:
    vocab = EntityVocab.from_rows(rows, LABELS)
    tokenizer = train_tokenizer(word_texts(rows, vocab), "roberta", vocab_size=300)
    return StatementEncoder(tokenizer, vocab, len(tokenizer))


def by_text(rows, text):
    return next(r for r in rows if r["text"] == text)


def test_labels_round_trip_and_bad_lines_are_named(tmp_path):
    write_labels(tmp_path / "vocab.jsonl", LABELS)
    assert read_labels(tmp_path / "vocab.jsonl") == LABELS
    (tmp_path / "vocab.jsonl").write_text('{"id": "Q1", "label": "A"}\n{"id": "Q2"}\n')
    with pytest.raises(ValueError, match=r"vocab.jsonl:2: not an entity label"):
        read_labels(tmp_path / "vocab.jsonl")
    with pytest.raises(FileNotFoundError, match="build lamatk"):
        read_labels(tmp_path / "none.jsonl")


def test_vocab_holds_entities_then_an_unbroken_year_range(encoder):
    vocab = encoder.vocab
    assert vocab.entities == tuple(sorted(LABELS))
    assert vocab.years[0] == "1956" and vocab.years[-1] == "2021"
    assert len(vocab.years) == 2021 - 1956 + 1
    assert vocab.year("1990") == len(LABELS) + 1990 - 1956  # inside no fact, still a token


def test_one_mask_token_at_the_slot_and_symbols_for_mentions(rows, encoder):
    row = by_text(rows, "Cristiano Ronaldo played for [MASK] from 2003 to 2009.")
    encoded = encoder.encode([row], [row["text"]], max_length=64)
    ids = encoded.ids[0, : encoded.lengths[0]].tolist()
    tokenizer, vocab, offset = encoder.tokenizer, encoder.vocab, encoder.offset
    assert ids.count(tokenizer.mask_token_id) == 1
    assert ids[encoded.mask_at[0]] == tokenizer.mask_token_id
    symbols = [i - offset for i in ids if i >= offset]
    assert symbols == [vocab.entity("Q11571"), vocab.year("2003"), vocab.year("2009")]
    assert ids[1] == offset + vocab.entity("Q11571")  # right after <s>: the subject, one token
    words = tokenizer.decode([i for i in ids[1:-1] if i < offset and i != tokenizer.mask_token_id])
    assert words == " played for from to."  # no piece of any label went through the tokenizer
    assert encoded.targets[0] == vocab.target("object", row["target"])


def test_masked_year_and_time_alone_forms(rows, encoder):
    row = by_text(rows, "Cristiano Ronaldo played for Juventus F.C. from [MASK] to 2021.")
    assert row["text_alone"] == "Cristiano Ronaldo played for Juventus F.C. from [MASK]."
    pieces = segment(row["text_alone"], mentioned(row), encoder.vocab, row["id"])
    vocab = encoder.vocab
    assert pieces == [
        vocab.entity("Q11571"),
        " played for",
        vocab.entity("Q9616"),
        " from",
        -1,
        ".",
    ]
    encoded = encoder.encode([row], [row["text"]], max_length=64)
    assert encoded.targets[0] == vocab.year("2018")


def test_a_batch_is_padded_and_keeps_each_rows_mask(rows, encoder):
    encoded = encoder.encode(rows, [r["text"] for r in rows], max_length=64)
    pad = encoder.tokenizer.pad_token_id
    for n, length in enumerate(encoded.lengths):
        assert (encoded.ids[n, length:] == pad).all()
        assert encoded.ids[n, encoded.mask_at[n]] == encoder.tokenizer.mask_token_id
    assert np.array_equal(
        encoded.targets, [encoder.vocab.target(r["slot"], r["target"]) for r in rows]
    )


def test_too_long_and_missing_mentions_name_the_row(rows, encoder):
    row = rows[0]
    with pytest.raises(ValueError, match=rf"row {row['id']}: \d+ tokens, more than the model's 3"):
        encoder.encode([row], [row["text"]], max_length=3)
    wrong = {**row, "text": "Somebody else played for [MASK] from 2003 to 2009.", "slot": "object"}
    with pytest.raises(ValueError, match=r"row .+: Q949 \('John Bardeen'\) is not in its text"):
        segment(wrong["text"], mentioned(wrong), encoder.vocab, wrong["id"])


def test_bad_statement_lines_name_file_and_line(tmp_path, rows):
    path = tmp_path / "statements.jsonl"
    broken = {k: v for k, v in rows[1].items() if k != "slot"}
    write_jsonl(path, [rows[0], broken])
    with pytest.raises(ValueError, match=r"statements\.jsonl:2: .*slot"):
        load_statements(path)
    write_jsonl(path, [{**rows[0], "text": "no mask here"}])
    with pytest.raises(ValueError, match=r"statements\.jsonl:1: text must hold exactly one"):
        load_statements(path)
    with pytest.raises(FileNotFoundError, match="no such statements file"):
        load_statements(tmp_path / "nope.jsonl")
