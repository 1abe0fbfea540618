"""Temporal KG embedding models by name (:data:`TKG_MODELS`) and the options of ``tkg train``
and ``tkg eval``; a plugin adds a model with ``TKG_MODELS.add``. Kept apart from the steps
(``tkg/ops.py``) so that the models and the trainer can read them.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from chronoprobe.params import SEED_RANGE, DeviceParams, choice_of, seed_field
from chronoprobe.registry import Registry

TKG_MODELS: Registry[type] = Registry(
    "TKG model",
    {
        "complex": "chronoprobe.tkg.models:ComplEx",
        "tcomplex": "chronoprobe.tkg.models:TComplEx",
        "tntcomplex": "chronoprobe.tkg.models:TNTComplEx",
        "timeplex": "chronoprobe.tkg.models:TimePlex",
    },
)


class TKGTrainParams(DeviceParams):
    renamed: ClassVar[dict[str, str]] = {"model": "arch"}

    arch: choice_of(TKG_MODELS) = Field("tcomplex", description="Embedding model.")
    rank: int = Field(64, ge=1, description="Complex dimensions (tables are 2 x rank wide).")
    epochs: int = Field(10, ge=0, description="Epochs in total, resumed ones included.")
    batch_size: int = Field(1000, ge=1, description="Training examples per step.")
    learning_rate: float = Field(0.1, gt=0, description="Adagrad learning rate.")
    n3: float = Field(1e-2, ge=0, description="Weight of the N3 penalty.")
    smoothness: float = Field(1e-2, ge=0, description="Weight of the temporal smoothness penalty.")
    time_loss: float = Field(
        0.0,
        ge=0,
        description="Weight of a softmax over years of (s, r, o, ?) added to the loss (0: off, "
        "as tkbc trains).",
    )
    time_mode: Literal["every-year", "start", "sampled"] = Field(
        "every-year",
        description="Training quadruples per fact: one per year it holds, its start year only, "
        "or one year sampled anew each epoch.",
    )
    valid_fraction: float = Field(
        0.05, ge=0, lt=1, description="Share of facts for validation, when re-splitting."
    )
    test_fraction: float = Field(
        0.05, gt=0, lt=1, description="Share of facts held out for testing, when re-splitting."
    )
    resplit: bool = Field(
        False,
        description="Split the facts anew with the seed even when the KG has its own split "
        "(figures are then not comparable with those on the given split).",
    )
    init_scale: float = Field(1e-2, gt=0, description="Scale of the initial embeddings.")
    eval_every: int = Field(0, ge=0, description="Rank the valid split every N epochs (0: off).")
    eval_batch_size: int = Field(1000, ge=1, description="Queries ranked at once.")
    seed: int | None = seed_field("the split, the initialisation and the shuffles")
    split_seed: int | None = Field(
        None,
        description="Seed of the split alone (default: seed). Fix it to train over several "
        "seeds on one split, so the spread is the training's, not the split's.",
        **SEED_RANGE,
    )


class TKGEvalParams(DeviceParams):
    split: Literal["train", "valid", "test"] = Field("test", description="Which facts to rank.")
    batch_size: int = Field(1000, ge=1, description="Queries ranked at once.")
