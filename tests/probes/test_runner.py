"""Metrics per period and split, resumable runs, bad input, and the `chronoprobe probe` command."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.probes import VIEWS, metrics_by_group, read_rows
from chronoprobe.probes.series_matrix import read_predictions


def test_single_token_metrics_by_period_and_split():
    predictions = [
        {"id": "a", "period": "2019", "split": None, "gold_rank": 1},
        {"id": "b", "period": "2019", "split": None, "gold_rank": 20},
        {"id": "c", "period": "2020", "split": "updated", "gold_rank": 2},
        {"id": "d", "period": "2020", "split": "updated", "gold_rank": 200},
        {"id": "e", "period": "2020", "split": "new", "gold_rank": 60},
    ]
    metrics = metrics_by_group(VIEWS["single-token"], predictions)
    assert metrics["overall"]["n"] == 5
    assert metrics["overall"]["P@1"] == pytest.approx(1 / 5)
    assert metrics["overall"]["P@100"] == pytest.approx(4 / 5)
    assert metrics["by_period"]["2019"]["P@10"] == pytest.approx(0.5)
    assert metrics["by_period"]["2019"]["MRR"] == pytest.approx((1 + 1 / 20) / 2)
    assert set(metrics["by_split"]) == {"new", "updated"}  # the first period has no split
    assert metrics["by_split"]["updated"]["MRR"] == pytest.approx((1 / 2 + 1 / 200) / 2)
    assert metrics["by_period_split"]["2020"]["new"]["P@50"] == 0.0
    # every figure carries a 95% interval: Wilson for P@k (1 of 5), the bootstrap for MRR
    assert metrics["overall"]["P@1_ci95"] == pytest.approx([0.03622, 0.62450], abs=5e-5)
    low, high = metrics["overall"]["MRR_ci95"]
    assert min(1 / 200, 1 / 60) <= low < metrics["overall"]["MRR"] < high <= 1.0
    assert metrics["by_period_split"]["2020"]["new"]["P@50_ci95"] == pytest.approx(
        [0.0, 0.79345], abs=5e-5
    )


def test_multi_token_and_pll_intervals():
    rows = [{"exact_match": e, "f1": f, "rouge_l": f} for e, f in ((1.0, 1.0), (0.0, 0.5))]
    rows += [{"exact_match": 0.0, "f1": 0.0, "rouge_l": 0.0}] * 2
    summary = VIEWS["multi-token"].summarize(rows)
    assert summary["exact_match_ci95"] == pytest.approx([0.04558, 0.69936], abs=5e-5)  # 1 of 4
    low, high = summary["f1_ci95"]
    assert summary["f1"] == 0.375 and 0.0 <= low < 0.375 < high <= 1.0
    # pll: a row's labels are resampled together, so two rows give three possible means
    pll = [
        {"label_scores": {"A": -2.0, "B": -4.0}, "label_tokens": {"A": 1, "B": 2}},
        {"label_scores": {"C": -1.0}, "label_tokens": {"C": 1}},
    ]
    summary = VIEWS["pll"].summarize(pll)
    assert (summary["n"], summary["labels"], summary["mean_label_logprob_n"]) == (2, 3, 3)
    assert summary["mean_label_logprob"] == pytest.approx(-7 / 3)
    assert summary["mean_label_logprob_ci95"] == pytest.approx([-3.0, -1.0])
    assert summary["token_perplexity"] == pytest.approx(2.718281828 ** (7 / 4))
    assert summary["token_perplexity_ci95"] == pytest.approx([2.718281828, 2.718281828**2])
    bare = VIEWS["pll"].summarize(pll, resamples=0)
    assert bare["token_perplexity"] == summary["token_perplexity"]
    assert bare["token_perplexity_ci95"] is None


def test_deleted_rows_count_in_their_split_only():
    """A deleted row carries the previous period's answers: it is no knowledge of its own
    period, so overall and per-period metrics leave it out; its split keeps it."""
    predictions = [
        {"id": "a", "period": "2020", "split": "unchanged", "gold_rank": 1},
        {"id": "b", "period": "2020", "split": "updated", "gold_rank": 3},
        {"id": "c", "period": "2020", "split": "deleted", "gold_rank": 1},
        {"id": "d", "period": "2021", "split": "deleted", "gold_rank": 1},
    ]
    metrics = metrics_by_group(VIEWS["single-token"], predictions)
    assert metrics["overall_excludes"] == ["deleted"]
    assert metrics["overall"]["n"] == 2 and metrics["overall"]["P@1"] == 0.5
    assert list(metrics["by_period"]) == ["2020"]  # 2021 has deleted rows only
    assert metrics["by_period"]["2020"]["P@1"] == 0.5
    assert metrics["by_split"]["deleted"]["n"] == 2
    assert metrics["by_period_split"]["2021"]["deleted"]["P@1"] == 1.0
    every = metrics_by_group(VIEWS["single-token"], predictions, include_deleted=True)
    assert every["overall_excludes"] == [] and every["overall"]["P@1"] == 0.75
    assert every["by_period"]["2021"]["n"] == 1
    assert every["by_split"] == metrics["by_split"]


def test_pll_metrics_aggregate_tokens():
    predictions = [
        {
            "period": "2019",
            "split": None,
            "label_scores": {"A": -2.0, "B": -4.0},
            "label_tokens": {"A": 1, "B": 2},
        },
    ]
    overall = metrics_by_group(VIEWS["pll"], predictions)["overall"]
    assert overall["mean_label_logprob"] == pytest.approx(-3.0)
    assert overall["token_perplexity"] == pytest.approx(2.718281828**2)


class Counting:
    """Wraps an adapter, counting rank calls and failing on the ``fail_at``-th one."""

    def __init__(self, model, fail_at=None):
        self.inner, self.fail_at, self.calls = model, fail_at, 0

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def rank(self, *args, **kwargs):
        self.calls += 1
        if self.calls == self.fail_at:
            raise KeyboardInterrupt
        return self.inner.rank(*args, **kwargs)


def test_an_interrupted_probe_resumes_from_its_finished_shards(
    tiny, examples, tmp_path, monkeypatch
):
    """Six distinct queries in shards of two: killed in the third rank call, the probe keeps the
    two shards written, and answers the third one only when run again."""
    import chronoprobe
    from chronoprobe.models import local
    from chronoprobe.probes import answering

    model_dir = tmp_path / "model"
    tiny().model.save_pretrained(model_dir)
    tiny().tokenizer.save_pretrained(model_dir)
    monkeypatch.setattr(answering, "SHARD_ROWS", 2)
    options = {"device": "cpu", "reuse_answers": False}
    load, wrapped = local.load_transformers, []

    def counting(fail_at):
        def loaded(spec, source, options):
            wrapped.append(Counting(load(spec, source, options), fail_at))
            return wrapped[-1]

        return loaded

    monkeypatch.setattr(local, "load_transformers", counting(3))
    with pytest.raises(KeyboardInterrupt):
        chronoprobe.probe("single-token", examples, model=str(model_dir), **options)
    monkeypatch.setattr(local, "load_transformers", counting(None))
    again = chronoprobe.probe("single-token", examples, model=str(model_dir), **options)
    assert wrapped[-1].calls == 1  # shards 0 and 1 were kept, 2 remained
    whole = chronoprobe.probe(
        "single-token", examples, model=str(model_dir), cache=False, **options
    )
    assert wrapped[-1].calls == 3
    assert again.predictions == whole.predictions
    assert again.metrics == whole.metrics


def test_bad_row_names_file_and_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    good = '{"id": "a", "query": "X [MASK].", "answer_labels": ["Y"]}'
    path.write_text(good + "\n\n" + '{"id": "b", "query": "no gap", "answer_labels": []}\n')
    with pytest.raises(ValueError, match=r"bad\.jsonl:3: query must hold exactly one \[MASK\]"):
        read_rows(path)
    path.write_text('{"id": "a", "query": "X [MASK]."}\n')
    with pytest.raises(ValueError, match=r"bad\.jsonl:1: .*answer_labels"):
        read_rows(path)


def test_probe_command_writes_predictions_and_metrics(tiny, examples, tmp_path):
    model = tiny()
    model_dir = tmp_path / "model"
    model.model.save_pretrained(model_dir)
    model.tokenizer.save_pretrained(model_dir)
    out = tmp_path / "out"
    args = ["probe", "pll", str(examples), "-m", str(model_dir), "-o", str(out), "--device", "cpu"]
    result = CliRunner().invoke(app, [*args, "--batch-size", "3"])
    assert result.exit_code == 0, result.output
    rows = read_predictions(out / "predictions.parquet")
    assert [r["id"] for r in rows] == [f"q{i}" for i in range(1, 8)]
    assert rows[4]["query"] == "Bob Jones was employed by [MASK] in 2020."
    assert rows[4]["answer_labels"] == ["Umbrella"]  # the gold labels beside the scores
    top = json.loads((out / "metrics.json").read_text())
    assert top["view"] == "pll" and top["metric"] == "temporal_acc"  # the family's own metric
    metrics = top["models"][str(model_dir)]
    assert metrics["family"] == "masked"
    assert set(metrics["by_period"]) == {"2019", "2020"}
    assert set(metrics["by_split"]) == {"unchanged", "updated", "new", "deleted"}
    assert metrics["overall_excludes"] == ["deleted"]
    assert metrics["overall"]["n"] == 6 and metrics["by_split"]["deleted"]["n"] == 1
    missing = CliRunner().invoke(app, [*args[:2], str(tmp_path / "nope.jsonl"), *args[3:]])
    assert missing.exit_code == 2 and "nope.jsonl: no such file or directory" in missing.output


def test_probe_command_counts_skipped_rows_and_warns_of_gap_first_rows(tiny, examples, tmp_path):
    """Multi-token with M = 2 skips q3 and q6, whose labels are all longer (the fixture's BPE:
    "Carla Diaz" 4 tokens at the start of a sentence, "New York Times" 3). A causal model asks
    q3, whose gap comes first, as a question, where " Carla Diaz" follows "Answer:" as two
    tokens, so it is answered; with --gap-first skip it is skipped for its gap."""
    args = ["probe", "multi-token", str(examples), "--device", "cpu", "--max-tokens", "2"]
    too_long = "every gold label is longer than M = 2 tokens"
    for architecture, extra in (("roberta", []), ("llama", []), ("llama", ["--gap-first", "skip"])):
        model = tiny(architecture)
        model_dir = tmp_path / architecture
        model.model.save_pretrained(model_dir)
        model.tokenizer.save_pretrained(model_dir)
        out = tmp_path / f"out-{architecture}-{len(extra)}"
        result = CliRunner().invoke(app, [*args, *extra, "-m", str(model_dir), "-o", str(out)])
        assert result.exit_code == 0, result.output
        top = json.loads((out / "metrics.json").read_text())
        metrics = top["models"][str(model_dir)]
        skipped = {
            r["id"]: r["skipped"] for r in pq.read_table(out / "skipped.parquet").to_pylist()
        }
        predicted = read_predictions(out / "predictions.parquet")
        asked = architecture == "llama" and not extra
        assert [(r["id"], r["form"]) for r in predicted] == [
            ("q1", "cloze"),
            ("q2", "cloze"),
            *([("q3", "question")] if asked else []),
            ("q4", "cloze"),
            ("q5", "cloze"),
            ("q7", "cloze"),
        ]
        assert top["selection"].startswith("of the greedy fillings of 1..M tokens")
        assert metrics["selection"] == "mean" and set(metrics["selections"]) == {"mean", "sum"}
        assert metrics["asked_as_question"] == int(asked)
        assert metrics["predicted"] == 5 + asked
        output = " ".join(result.output.split())
        if architecture == "roberta":
            assert skipped == {"q3": too_long, "q6": too_long}
            assert metrics["skipped"] == {too_long: 2} and metrics["warnings"] == []
            # the figure says what it covers: 4 of the 7 rows, and why the other 3 are not
            assert f"f1 over 4 of 7 rows (57.1%); left out: 2 skipped: {too_long}; 1 deleted" in (
                output
            )
            assert metrics["coverage"]["left_out"] == {
                f"skipped: {too_long}": 2,
                "deleted split: answers that ended before the row's period "
                "(`include_deleted: true` counts them)": 1,
            }
            continue
        assert metrics["warnings"] and "warning: 1 of 7 rows put the gap first" in output
        # the option as the command line spells it
        assert "or, with --gap-first skip, leaves them out" in output
        if asked:
            assert skipped == {"q6": too_long} and metrics["by_form"]["question"]["n"] == 1
            assert metrics["coverage"]["forms"] == {"cloze": 4, "question": 1}
            assert "f1 over 5 of 7 rows (71.4%)" in output
            assert "asked 4 as cloze statements, 1 as questions" in output
            assert "per form, as cloze statements: f1 " in output
        else:
            assert skipped["q3"].startswith("the gap comes first: a causal model")
            assert skipped["q3"].endswith("(left out by `gap_first: skip`)")  # a config's words
            assert "(left out by --gap-first skip)" in output
            assert set(metrics["by_form"]) == {"cloze"}
