"""The judge-agreement view: how far a model judging answers agrees with a person.

``chronoprobe probe judge-agreement SETS -m MODEL`` asks the model (the judge, any spec:
``openai:NAME`` included) every answer of a hand-judged calibration set, as ``--judge MODEL``
asks it in the generate view (:mod:`chronoprobe.probes.model_judge`: the same prompt, the
same answer cache), and compares its verdicts with the person's. The shipped sets are in
``tests/fixtures/judging/`` (its README): ``calibration.jsonl``, 416 SmolLM2-135M answers
(the default rows file), and ``strong.jsonl``, 683 answers written as strong models answer
(``--rows strong.jsonl``); a set of one's own in the same format works alike.

Metrics, each with its 95% interval: agreement (the share of answers on which judge and
person agree, Wilson), Cohen's kappa (bootstrap over the answers), the share of the right
answers the judge accepts (``recall``) and of the wrong ones it accepts (``false_correct``,
the error that inflates a model's score), and how many replies were neither yes nor no
(counted as no); overall and per source of the set. Beside the judge's, every rule of
:mod:`chronoprobe.probes.judging` on the same answers (``rules``), for comparison.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import numpy as np

from chronoprobe.metrics.uncertainty import Estimate, estimate, proportion, summary
from chronoprobe.probes.calibration import Record, _kappa, cohen_kappa, read_records
from chronoprobe.probes.judging import RULES, judge
from chronoprobe.probes.model_judge import Asked, ask
from chronoprobe.probes.view import ProbeParams, Progress, RowsFormat, View

KEYS = ("id", "run", "decoding", "source", "period")
FIGURES = ("accuracy", "kappa", "recall", "false_correct")


class JudgeAgreementParams(ProbeParams):
    pass


def _asked(record: Record) -> Asked:
    names = [[label, *(record.aliases[i] if i < len(record.aliases) else [])]
             for i, label in enumerate(record.labels)]  # fmt: skip
    question = record.query.replace("[MASK]", "___") or record.id
    return Asked(question, record.period, names, record.answer)


def predict_judge_agreement(
    model, records: Sequence[Record], params: JudgeAgreementParams, progress: Progress
) -> list[dict]:
    """The judge's verdict on each record, beside the person's and every rule's."""
    verdicts = ask(model, [_asked(r) for r in records], progress)
    return [
        {
            **{key: getattr(r, key) for key in KEYS},
            "answer": r.answer,
            "human": r.human,
            "named": r.named,
            "judge": bool(said),
            "unclear": said is None,
            "rules": judge(r.answer, r.gold()),
        }
        for r, said in zip(records, verdicts, strict=True)
    ]


def _agreement(
    said: Sequence[bool], human: Sequence[bool], resamples: int | None = None
) -> dict[str, Estimate]:
    a, b = np.array(said, dtype=bool), np.array(human, dtype=bool)
    extra = {} if resamples is None else {"resamples": resamples}
    kappa = cohen_kappa(list(a), list(b))
    return {
        "accuracy": proportion(list(a == b)),
        "kappa": estimate(kappa, partial(_kappa, a=a, b=b), len(a), len(a), **extra),
        "recall": proportion(list(a[b])),
        "false_correct": proportion(list(a[~b])),
    }


def summarize_judge_agreement(predictions: Sequence[dict], resamples: int | None = None) -> dict:
    """Agreement, kappa, recall and false correct of the judge against the person."""
    human = [p["human"] for p in predictions]
    shares = _agreement([p["judge"] for p in predictions], human, resamples)
    unclear = sum(p["unclear"] for p in predictions)
    return summary(len(predictions), shares, correct_by_hand=sum(human), unclear_replies=unclear)


def judge_agreement_metrics(predictions: Sequence[dict], params: JudgeAgreementParams) -> dict:
    """The judge's figures overall and per source, and every rule's on the same answers."""
    by_source: dict[str, list[dict]] = {}
    for p in predictions:
        by_source.setdefault(p["source"] or "", []).append(p)
    human = [p["human"] for p in predictions]
    overall = summarize_judge_agreement(predictions)
    return {
        **{k: overall[k] for k in ("accuracy", "accuracy_ci95")},
        "overall": overall,
        "by_source": {s: summarize_judge_agreement(g) for s, g in sorted(by_source.items())},
        "rules": {
            rule: summary(
                len(predictions), _agreement([p["rules"][rule] for p in predictions], human)
            )
            for rule in RULES
        },
    }


def _columns() -> list[tuple]:
    import pyarrow as pa

    flags = {"human": pa.bool_(), "judge": pa.bool_(), "unclear": pa.bool_()}
    fields = (*KEYS, "answer", "human", "named", "judge", "unclear")
    rules = pa.struct([(rule, pa.bool_()) for rule in RULES])
    return [*((k, flags.get(k, pa.string())) for k in fields), ("rules", rules)]


JUDGE_AGREEMENT = View(
    name="judge-agreement",
    help="Calibrate a model as a judge of generated answers: ask it every answer of a "
    "hand-judged set, as --judge asks it in probe generate, and report its agreement with the "
    "person, Cohen's kappa, the share of right answers it accepts and of wrong ones it "
    "accepts (false correct), with 95% intervals, beside the judging rules' on the same "
    "answers. The shipped sets: tests/fixtures/judging, calibration.jsonl (the default) and "
    "strong.jsonl (--rows strong.jsonl).\n\nExample: chronoprobe probe judge-agreement "
    "tests/fixtures/judging -m package:smollm2 -o judge-smollm2/",
    params=JudgeAgreementParams,
    predict=predict_judge_agreement,
    summarize=summarize_judge_agreement,
    keys=KEYS,
    columns=_columns,
    metrics=judge_agreement_metrics,
    figures=lambda m: {f: m["overall"][f] for f in FIGURES} | {"n": m["overall"]["n"]},
    rows=RowsFormat("calibration.jsonl", ("answer", "human", "named"), read_records),
)
