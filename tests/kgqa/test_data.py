"""Question rows to index tensors, unknown names counted, bad rows named by file and line."""

from __future__ import annotations

import json

import pytest
import torch

from chronoprobe.kgqa.data import AnswerVocab, encode, read_rows

VOCAB = AnswerVocab(("E1", "E2", "E3"), (2000, 2001, 2002))


def row(**fields) -> dict:
    base = {
        "id": "q",
        "question": "Who was the mayor in 2001?",
        "type": "simple_entity",
        "answer_type": "entity",
        "answers": ["E2"],
        "entities": ["E1"],
        "times": [2001],
    }
    return {**base, **fields}


def test_encode_maps_annotations_and_answers_to_candidate_indices():
    questions = encode(
        [
            row(),
            row(
                type="simple_time",
                answer_type="time",
                answers=[2002, 2000],
                entities=["E3", "E1"],
                times=[],
            ),
        ],
        VOCAB,
    )
    assert questions.head.tolist() == [0, 2]
    assert questions.tail.tolist() == [3, 0]  # 3 = no tail
    assert questions.time.tolist() == [1, 3]  # 3 = no time
    assert questions.is_time.tolist() == [False, True]
    # Years sit after the entities: 2000 -> 3, 2002 -> 5.
    gold = questions.gold_mask(torch.tensor([1, 0]), VOCAB.size)
    assert gold.nonzero().tolist() == [[0, 3], [0, 5], [1, 1]]
    assert not questions.unknown


def test_unknown_names_become_dummies_and_are_counted():
    questions = encode(
        [row(entities=["EVENT", "E2"], times=[1990], answers=["E1", "E9"]), row(answers=["E9"])],
        VOCAB,
    )
    assert questions.head.tolist() == [3, 0] and questions.time.tolist() == [3, 1]
    assert questions.answer_counts().tolist() == [1, 0]
    assert questions.unknown == {
        "question entities": 1,
        "question years": 1,
        "answers": 2,
        "questions without a known answer": 1,
    }
    assert VOCAB.label(1) == "E2" and VOCAB.label(4) == "2001"


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("{not json", "invalid JSON"),
        (json.dumps(row(type="multi_hop")), "type 'multi_hop' is not one of"),
        (json.dumps({"id": "q", "question": "?"}), "missing type, answer_type, answers"),
        (
            json.dumps(row(answer_type="time", answers=["E1"])),
            "a time question.s answers must be years",
        ),
        (json.dumps(row(answers="E2")), "answers must be a list"),
    ],
)
def test_bad_rows_name_file_line_and_reason(tmp_path, line, reason):
    path = tmp_path / "test.jsonl"
    path.write_text(json.dumps(row()) + "\n\n" + line + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=f"test.jsonl:3: {reason}"):
        read_rows(path)


def test_missing_file_says_how_to_make_one(tmp_path):
    with pytest.raises(FileNotFoundError, match="chronoprobe build cronq"):
        read_rows(tmp_path / "train.jsonl")


def test_the_encoder_reads_the_template_or_the_question():
    rows = [row(template="Who was the {tail} in {time}?", relations=["P39"])]
    assert encode(rows, VOCAB, "template").inputs == ["Who was the {tail} in {time}?"]
    assert encode(rows, VOCAB).inputs == ["Who was the mayor in 2001?"]
    assert encode(rows, VOCAB).texts == ["Who was the mayor in 2001?"]


def test_a_template_without_placeholders_is_refused_for_template_input(tmp_path):
    path = tmp_path / "train.jsonl"
    # As written before templates held the wording: the seed template's name.
    path.write_text(json.dumps(row(template="office_in_year")) + "\n", encoding="utf-8")
    assert read_rows(path)  # the question text does not need it
    with pytest.raises(ValueError, match=r"train.jsonl:1: template 'office_in_year' is not"):
        read_rows(path, "template")
