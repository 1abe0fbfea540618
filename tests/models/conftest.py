from __future__ import annotations

import pytest

from chronoprobe.models.causal import CausalLM
from chronoprobe.models.masked import MaskedLM
from chronoprobe.models.requests import Cloze
from chronoprobe.models.seq2seq import Seq2SeqLM
from chronoprobe.models.tiny import random_model
from chronoprobe.models.tokenizer import train_tokenizer

PEOPLE = ["Alice Smith", "Bob Jones", "Carla Diaz", "Dmitri Ivanov"]
ORGS = ["Acme Corp", "Globex", "New York Times", "Initech", "Umbrella"]
CORPUS = [
    f"In {year}, {person} was employed by {org}."
    for year in range(2010, 2020)
    for person in PEOPLE
    for org in ORGS
] + [
    f"{person} plays for {org} since {year}."
    for year in (2001, 2015)
    for person in PEOPLE
    for org in ORGS
]

ADAPTERS = {
    "roberta": MaskedLM,
    "bert": MaskedLM,
    "llama": CausalLM,
    "gpt2": CausalLM,
    "t5": Seq2SeqLM,
    "bart": Seq2SeqLM,
}

# clozes of different lengths, so that length bucketing reorders them
CLOZES = [
    Cloze("In 2019, Alice Smith was employed by ", "."),
    Cloze("", " plays for Globex."),
    Cloze("In 2012, Dmitri Ivanov, who plays for Umbrella since 2001, was employed by ", "."),
    Cloze("Bob Jones plays for ", " since 2015."),
    Cloze("In 2010, ", " was employed by New York Times."),
    Cloze("Carla Diaz was employed by ", ""),
    Cloze("In 2018, Bob Jones was employed by ", "."),
]
SPANS = [
    "Acme Corp",
    "Alice Smith",
    "New York Times",
    "Globex",
    "Carla Diaz",
    "Initech",
    "Umbrella",
]


def make_adapter(architecture: str, batch_size: int = 3):
    tokenizer = train_tokenizer(CORPUS, architecture)
    model = random_model(architecture, tokenizer)
    return ADAPTERS[architecture](model, tokenizer, batch_size=batch_size, name=architecture)


@pytest.fixture(scope="session")
def adapters():
    cache: dict[str, object] = {}

    def get(architecture: str):
        if architecture not in cache:
            cache[architecture] = make_adapter(architecture)
        return cache[architecture]

    return get
