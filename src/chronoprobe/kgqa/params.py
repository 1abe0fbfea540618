"""The QA models by name (:data:`QA_MODELS`) and the options of ``kgqa train`` and ``kgqa eval``.

``kgqa/models.py`` builds a model from this registry and ``kgqa/train.py`` reads the training
options, below ``kgqa/ops.py``, which runs them as steps.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from chronoprobe.params import DeviceParams, choice_of, seed_field
from chronoprobe.registry import Registry

QA_MODELS: Registry[type] = Registry(
    "QA model",
    {
        "cronkgqa": "chronoprobe.kgqa.models:CronKGQA",
        "embedkgqa": "chronoprobe.kgqa.models:EmbedKGQA",
        "lm": "chronoprobe.kgqa.models:LMBaseline",
    },
)


class KGQATrainParams(DeviceParams):
    renamed: ClassVar[dict[str, str]] = {"model": "arch"}

    arch: choice_of(QA_MODELS) = Field(
        "cronkgqa",
        description="cronkgqa: TComplEx scoring with the question as relation; embedkgqa: "
        "ComplEx scoring, learned years; lm: the encoder and a classifier, no KG embeddings.",
    )
    encoder: str = Field(
        "tiny",
        description="Question encoder: a Hugging Face id or local path (bert-base-uncased, "
        "distilbert-base-uncased, roberta-base), or tiny: a 2-layer BERT built here, with a "
        "WordPiece tokenizer trained on the training questions (offline).",
    )
    epochs: int = Field(10, ge=0, description="Epochs in total, resumed ones included.")
    batch_size: int = Field(128, ge=2, description="Questions per training step.")
    learning_rate: float = Field(
        1e-3,
        gt=0,
        description="Adam learning rate (1e-3 suits tiny; 2e-5 to 2e-4 for pretrained encoders).",
    )
    dropout: float = Field(0.1, ge=0, le=1, description="Dropout on the question vector.")
    eval_batch_size: int = Field(256, ge=2, description="Questions scored at once.")
    select: Literal["best-valid", "last"] = Field(
        "best-valid",
        description="Which epoch's model is tested (and `kgqa eval` uses): the best on the "
        "valid split by Hits@1, as the CronKGQA code keeps it, or the last.",
    )
    answer_type_given: bool = Field(
        False,
        description="Not the paper's protocol: give the model the gold answer type (a softmax "
        "over that type only), in training and test. Off: one softmax over every entity and "
        "year, as the paper.",
    )
    question_input: Literal["question", "template"] = Field(
        "question",
        description="What the encoder reads: the question text with names, as the paper (the "
        "default), or, not the paper's protocol, its template: the wording with {head}, "
        "{tail}, {time}... placeholders, which shows which slot of the fact each entity fills, "
        "an annotation the paper gives with training questions only.",
    )
    seed: int | None = seed_field("the initialisation, shuffles and dropout")


class KGQAEvalParams(DeviceParams):
    renamed: ClassVar[dict[str, str]] = {"limit": "sample"}

    split: Literal["train", "valid", "test"] = Field("test", description="Which questions.")
    batch_size: int = Field(256, ge=1, description="Questions scored at once.")
    sample: int | None = Field(
        None, ge=1, description="Answer only the first N questions of the split (a quick look)."
    )
    answer_type_given: bool | None = Field(
        None,
        description="Give the model the gold answer type (softmax over that type only), or "
        "not (one softmax over entities and years, the paper's protocol). Default: as it was "
        "trained.",
    )
    oracle_relation: bool = Field(
        False,
        description="Also score the simple questions with the true relation in the question "
        "vector's place, using the TKG checkpoint's own tables: the embeddings' link-prediction "
        "ceiling through the same data path.",
    )
