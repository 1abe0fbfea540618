"""The hooks of a task `chronoprobe export lm-eval` wrote, for lm-evaluation-harness.

This file is copied into the task folder as ``chronoprobe_task.py`` each time the task is
exported (never from the step cache); the task YAMLs beside it name its functions
(``!function chronoprobe_task.judge``). It reads everything from its own
folder, so the folder can move: ``docs/*.jsonl`` (what lm-eval asks), ``rows/`` (the probe
set, whose rows tell how an answer is judged) and ``task.json`` (the settings of the export).

Generated answers are cut at the first newline or sentence end and judged by chronoprobe's
rules (:mod:`chronoprobe.probes.judging`) against the row's answers and the other entities of
the probe set, exactly as ``chronoprobe probe generate`` judges a model's first greedy answer,
so chronoprobe must be installed where lm-eval runs.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


@cache
def settings() -> dict[str, Any]:
    return json.loads((HERE / "task.json").read_text(encoding="utf-8"))


def _docs(name: str) -> list[dict]:
    lines = (HERE / "docs" / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _split(docs: list[dict]) -> dict:
    import datasets

    return {"test": datasets.Dataset.from_list(docs)}


def generation_docs(period: str | None, **_: Any) -> dict:
    """One period's rows to ask (None: the rows without a period), each with its prompt."""
    return _split([d for d in _docs("generate.jsonl") if d["period"] == period])


def loglikelihood_docs(**_: Any) -> dict:
    """One doc per (row, gold label): the context before the gap, and the label with the rest
    of the sentence."""
    return _split(_docs("loglikelihood.jsonl"))


@cache
def _rows() -> dict:
    from chronoprobe.probes.generate import read_asked_rows

    return {row.id: row for row in read_asked_rows(HERE / "rows" / settings()["rows"])}


def judge(doc: dict, results: list[str]) -> dict[str, float]:
    """The answer's verdict by the headline rule (``accuracy``) and by every rule, and whether
    it names another period's answer of the subject (``other_period``)."""
    from chronoprobe.models.completion import cut_answer
    from chronoprobe.probes.generate import GenerateParams, predict_generate
    from chronoprobe.probes.judging import RULES
    from chronoprobe.probes.responses import Responses

    row = _rows()[doc["id"]]
    answer = cut_answer(results[0])[0]
    said = Responses(HERE / "rows", "lm-eval", {row.id: [answer]}, {row.id: 0})
    params = GenerateParams(match=settings()["match"])
    judged = predict_generate(said, [row], params, None)[0]
    return {
        "accuracy": float(judged["correct"]),
        **{f"accuracy_{rule}": float(judged["judged"][rule]) for rule in RULES},
        "other_period": float(judged["other_period"]),
    }


def label_logprob(doc: dict, results: list[tuple[float, bool]]) -> dict[str, float]:
    """The label's summed log-probability (with the sentence's rest): its mean is chronoprobe
    pll's ``mean_label_logprob``, and exp(-mean) lm-eval's perplexity of it."""
    logprob, _ = results[0]
    return {"mean_label_logprob": logprob, "perplexity": logprob}
