from __future__ import annotations

import pytest
from transformers import AutoTokenizer

from chronoprobe.models.tokenizer import ARCHITECTURES, train_tokenizer

CORPUS = [
    f"{person} plays for {club} since {year}."
    for person in ("Alice Smith", "Bob Jones")
    for club in ("Ajax", "Acme Corp")
    for year in (2001, 2015)
]
SENTENCE = "Bob Jones plays for Ajax since 2015."
ROBERTA = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3, "<mask>": 4}
SPECIAL_IDS = {
    "roberta": ROBERTA,
    "bart": ROBERTA,
    "bert": {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4},
    "t5": {"<pad>": 0, "</s>": 1, "<unk>": 2, "<extra_id_0>": 3, "<extra_id_1>": 4},
    "llama": {"<s>": 1, "</s>": 2, "<unk>": 3},  # <pad>=0 and <mask>=4 are in the vocabulary,
    "gpt2": {"<s>": 1, "</s>": 2, "<unk>": 3},  # but not declared: these models have none
}
FRAMES = {  # the special tokens around an encoded text
    "roberta": ("<s>", "</s>"),
    "bart": ("<s>", "</s>"),
    "bert": ("[CLS]", "[SEP]"),
    "t5": (None, "</s>"),
    "llama": (None, None),
    "gpt2": (None, None),
}


@pytest.fixture(scope="module")
def tokenizers():
    return {a: train_tokenizer(CORPUS, a) for a in ARCHITECTURES}


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_special_tokens_and_their_ids(tokenizers, architecture):
    tokenizer = tokenizers[architecture]
    declared = {tokenizer.convert_ids_to_tokens(i): i for i in tokenizer.all_special_ids}
    assert declared == SPECIAL_IDS[architecture]
    tokens = tokenizer.convert_ids_to_tokens(tokenizer(SENTENCE)["input_ids"])
    first, last = FRAMES[architecture]
    assert (tokens[0], tokens[-1]) == (first or "Bob", last or ".")


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_a_sentence_round_trips(tokenizers, architecture):
    tokenizer = tokenizers[architecture]
    ids = tokenizer(SENTENCE)["input_ids"]
    expected = SENTENCE.lower() if architecture == "bert" else SENTENCE
    assert tokenizer.decode(ids, skip_special_tokens=True) == expected
    # the corpus's words are whole tokens: " Ajax" in the byte-level ones, "ajax" in WordPiece
    assert len(ids) == 8 + sum(x is not None for x in FRAMES[architecture])


@pytest.mark.parametrize("architecture", ["roberta", "bart", "bert"])
def test_the_mask_stands_where_the_filled_word_does(tokenizers, architecture):
    tokenizer = tokenizers[architecture]
    gap = tokenizer(f"Bob Jones plays for {tokenizer.mask_token}.")["input_ids"]
    filled = tokenizer("Bob Jones plays for Ajax.")["input_ids"]
    assert len(gap) == len(filled)
    at = gap.index(tokenizer.mask_token_id)
    assert gap[:at] == filled[:at] and gap[at + 1 :] == filled[at + 1 :]
    word = "ajax" if architecture == "bert" else "ĠAjax"  # the space goes with the word
    assert tokenizer.convert_ids_to_tokens(filled[at]) == word


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_a_saved_tokenizer_loads_with_the_same_ids(tokenizers, architecture, tmp_path):
    tokenizer = tokenizers[architecture]
    tokenizer.save_pretrained(tmp_path)
    loaded = AutoTokenizer.from_pretrained(tmp_path)
    texts = [SENTENCE, f"Alice Smith plays for {tokenizer.mask_token or '<mask>'}.", "Zoë, 1999"]
    assert loaded(texts)["input_ids"] == tokenizer(texts)["input_ids"]
    assert loaded.all_special_ids == tokenizer.all_special_ids
    assert len(loaded) == len(tokenizer)


def test_rare_merges_and_words_are_left_out_below_min_frequency():
    texts = [*CORPUS, "Zyx Qwv"]
    for architecture, rare in (("roberta", "ĠQwv"), ("bert", "qwv")):
        assert rare in train_tokenizer(texts, architecture).get_vocab()
        assert rare not in train_tokenizer(texts, architecture, min_frequency=2).get_vocab()


def test_an_unknown_architecture_is_named():
    with pytest.raises(ValueError, match=r"unknown architecture 'gpt5'; choose one of \("):
        train_tokenizer(CORPUS, "gpt5")
