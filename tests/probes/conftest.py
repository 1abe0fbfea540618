from __future__ import annotations

from pathlib import Path

import pytest

from chronoprobe.jsonl import write_jsonl
from chronoprobe.models.causal import CausalLM
from chronoprobe.models.masked import MaskedLM
from chronoprobe.models.seq2seq import Seq2SeqLM
from chronoprobe.models.tiny import random_model
from chronoprobe.models.tokenizer import train_tokenizer

ORGS = ["Acme Corp", "Globex", "New York Times", "Initech", "Umbrella"]
PEOPLE = ["Alice Smith", "Bob Jones", "Carla Diaz"]
CORPUS = [
    f"In {year}, {person} was employed by {org}."
    for year in range(2015, 2021)
    for person in PEOPLE
    for org in ORGS
]

# hand-made drift rows: 2019 is the first period (no split), 2020 has every split
ROWS = [
    ("q1", "2019", None, "Alice Smith was employed by [MASK].", ["Globex"]),
    ("q2", "2019", None, "Bob Jones was employed by [MASK].", ["Acme Corp", "Initech"]),
    ("q3", "2019", None, "[MASK] was employed by Umbrella.", ["Carla Diaz"]),
    ("q4", "2020", "unchanged", "Alice Smith was employed by [MASK].", ["Globex"]),
    ("q5", "2020", "updated", "Bob Jones was employed by [MASK] in 2020.", ["Umbrella"]),
    ("q6", "2020", "new", "In 2020, Carla Diaz was employed by [MASK].", ["New York Times"]),
    ("q7", "2020", "deleted", "In 2020, [MASK] was employed by Initech.", ["Bob Jones"]),
]


def as_dicts() -> list[dict]:
    return [
        {
            "id": i,
            "period": p,
            "relation": "P108",
            "subject": "Q1",
            "query": q,
            "answers": [f"Q{n}" for n, _ in enumerate(labels)],
            "answer_labels": labels,
            "split": s,
        }
        for i, p, s, q, labels in ROWS
    ]


@pytest.fixture
def examples(tmp_path):
    path = tmp_path / "examples.jsonl"
    write_jsonl(path, as_dicts())
    return path


@pytest.fixture(scope="session")
def tiny():
    """Tiny adapters by architecture, built once (batch size 2, so bucketing reorders)."""
    classes = {"roberta": MaskedLM, "llama": CausalLM, "t5": Seq2SeqLM}
    cache: dict = {}

    def get(architecture: str = "roberta"):
        if architecture not in cache:
            tokenizer = train_tokenizer(CORPUS, architecture)
            model = random_model(architecture, tokenizer, seed=1)
            cache[architecture] = classes[architecture](
                model, tokenizer, batch_size=2, name=f"tiny-{architecture}"
            )
        return cache[architecture]

    return get


@pytest.fixture(scope="session")
def model_dirs(tmp_path_factory) -> list[Path]:
    """Two random RoBERTas (seeds 1 and 2) sharing one tokenizer, saved as local model specs."""
    tokenizer = train_tokenizer(CORPUS, "roberta")
    dirs = []
    for seed in (1, 2):
        path = tmp_path_factory.mktemp(f"roberta-{seed}")
        random_model("roberta", tokenizer, seed=seed).save_pretrained(path)
        tokenizer.save_pretrained(path)
        dirs.append(path)
    return dirs
