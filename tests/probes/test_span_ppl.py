"""ECBD span perplexity: condition texts, per-entity averaging, batched vs naive scoring, CLI."""

from __future__ import annotations

import json
import math
import re

import pyarrow.parquet as pq
import pytest
import torch
from typer.testing import CliRunner

import chronoprobe
from chronoprobe.cli.main import app
from chronoprobe.core.tables import format_number
from chronoprobe.jsonl import write_jsonl
from chronoprobe.metrics.uncertainty import with_interval
from chronoprobe.models.requests import Cloze, ScoreRequest
from chronoprobe.models.seq2seq import Seq2SeqLM
from chronoprobe.models.tiny import random_model
from chronoprobe.models.tokenizer import train_tokenizer
from chronoprobe.probes import VIEWS
from chronoprobe.probes.span_ppl import (
    CONDITIONS,
    DefinitionPool,
    SpanPplParams,
    condition_request,
    read_examples,
    span_ppl_metrics,
)

from .conftest import CORPUS

ATOL = 1e-4

DEFINITIONS = {
    "Q1": "Globex is a company in Springfield.",
    "Q2": "Alice Smith is an engineer.",
    "Q3": "Initech is a software company.",
}


def ecbd_row(i, entity, year, span_type, sentence, mention, span, definition=None) -> dict:
    m_start = sentence.index(mention)
    s_start = sentence.index(span, m_start + len(mention))
    return {
        "id": f"ecbd-{i}",
        "entity": entity,
        "year": year,
        "span_type": span_type,
        "sentence": sentence,
        "mention_start": m_start,
        "mention_end": m_start + len(mention),
        "span_start": s_start,
        "span_end": s_start + len(span),
        "span": span,
        "definition": DEFINITIONS[entity] if definition is None else definition,
        "split": "test" if entity != "Q2" else "dev",
    }


ROWS = [
    ecbd_row(0, "Q1", "2019", "np", "Globex hired Alice Smith in 2019.", "Globex", "Alice Smith"),
    ecbd_row(1, "Q1", "2019", "random", "In 2019, Globex hired Bob Jones.", "Globex", "hired Bob"),
    ecbd_row(
        2, "Q2", "2020", "np", "Alice Smith was employed by Initech.", "Alice Smith", "Initech"
    ),
    ecbd_row(
        3, "Q3", "popular", "random", "In 2015, Initech employed Carla Diaz.", "Initech", "employed"
    ),
]


@pytest.fixture
def ecbd_file(tmp_path):
    path = tmp_path / "examples.jsonl"
    write_jsonl(path, ROWS)
    return path


def test_condition_texts_are_exact(ecbd_file):
    first, second, *_ = read_examples(ecbd_file)
    texts = {c: condition_request(first, c, seed=0) for c in CONDITIONS}
    right = " in 2019."
    assert texts["original"][0].cloze == Cloze("Globex hired ", right)
    assert texts["no-ent"][0].cloze == Cloze("The entity hired ", right)
    definition = Cloze("Globex is a company in Springfield. Globex hired ", right)
    assert texts["definition"] == (ScoreRequest(definition, "Alice Smith"), "Q1")
    request, source = texts["random-def"]
    assert source in {"Q2", "Q3"}
    assert request.cloze == Cloze(f"{DEFINITIONS[source]} Globex hired ", right)
    assert {r.span for r, _ in texts.values()} == {"Alice Smith"}
    # a mention inside the sentence keeps the lower-case generic mention
    assert condition_request(second, "no-ent")[0].cloze == Cloze("In 2019, the entity ", " Jones.")
    with pytest.raises(ValueError, match="unknown condition 'shuffled'"):
        condition_request(first, "shuffled")


def test_random_definition_is_another_entity_fixed_by_seed(ecbd_file):
    example = read_examples(ecbd_file)[0]
    drawn = {s: condition_request(example, "random-def", seed=s)[1] for s in range(40)}
    assert set(drawn.values()) == {"Q2", "Q3"}  # never the entity's own, both others drawn
    again = {s: condition_request(example, "random-def", seed=s)[1] for s in range(40)}
    assert again == drawn


def test_random_definition_needs_another_entity(tmp_path):
    path = tmp_path / "one.jsonl"
    write_jsonl(path, ROWS[:2])
    with pytest.raises(ValueError, match="at least two entities"):
        condition_request(read_examples(path)[0], "random-def")


ONE_ENTITY_SKIP = (
    "random-def not scored: random-def needs the definitions of at least two entities in the "
    "file (it holds 1)"
)


def test_a_file_of_one_entity_scores_the_other_conditions_and_skips_random_def(tiny, tmp_path):
    """Two examples of Q1 alone: RANDOM DEF has no other definition to draw, so it is skipped
    for each example with the reason; the other three conditions are scored as they would be
    had they alone been asked for."""
    path = tmp_path / "one.jsonl"
    write_jsonl(path, ROWS[:2])
    model = tiny("llama")
    model_dir = tmp_path / "model"
    model.model.save_pretrained(model_dir)
    model.tokenizer.save_pretrained(model_dir)
    out = tmp_path / "out"
    args = ["probe", "span-ppl", str(path), "-m", str(model_dir), "-o", str(out), "--device", "cpu"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert f"skipped 2 of 2 rows: {ONE_ENTITY_SKIP}" in " ".join(result.output.split())
    rows = pq.read_table(out / "predictions.parquet").to_pylist()
    assert [(r["id"], r["condition"]) for r in rows] == [
        (i, c) for i in ("ecbd-0", "ecbd-1") for c in ("original", "no-ent", "definition")
    ]
    skipped = pq.read_table(out / "skipped.parquet").to_pylist()
    assert [(r["id"], r["skipped"]) for r in skipped] == [
        ("ecbd-0", ONE_ENTITY_SKIP),
        ("ecbd-1", ONE_ENTITY_SKIP),
    ]
    top = json.loads((out / "metrics.json").read_text())
    metrics = top["models"][str(model_dir)]
    assert metrics["conditions"] == ["original", "no-ent", "definition"]
    assert metrics["skipped_conditions"] == {
        "random-def": "random-def needs the definitions of at least two entities in the file"
    }
    assert metrics["skipped"] == {ONE_ENTITY_SKIP: 2} and top["ppl_random-def"] is None
    from chronoprobe.report.blocks import Table, Text
    from chronoprobe.report.ecbd_section import model_blocks

    notes = [b.text for b in model_blocks("m", metrics) if isinstance(b, Text)]
    assert notes == [
        "m: ppl_original, ppl_no-ent and ppl_definition over 2 of 2 rows (100.0%).",
        "random-def was not scored: random-def needs the definitions of at least two entities "
        "in the file.",
    ]
    # one entity: a bootstrap over entities has one to draw, so no interval, and it says why
    original = metrics["overall"]["original"]
    assert original["perplexity"] > 1 and original["perplexity_ci95"] is None
    assert original["perplexity_no_interval"].startswith("n too small: 1 entity;")
    assert metrics["by_year"]["2019"]["original"]["perplexity_ci95"] is None
    assert top["ppl_original_no_interval"] == original["perplexity_no_interval"]
    printed = " ".join(result.output.split())
    assert f"{format_number(original['perplexity'])} (n too small)" in printed
    # the report's tables and `results` say so too, never a point interval or a blank
    cells = [
        cell
        for block in model_blocks("m", metrics)
        if isinstance(block, Table)
        for row in block.rows
        for cell in row
        if isinstance(cell, str)
    ]
    year = metrics["by_year"]["2019"]["original"]["perplexity"]
    assert f"{year:.2f} (n too small)" in cells
    assert not any(re.search(r"\[([\d.]+), \1\]", cell) for cell in cells)
    shown = CliRunner().invoke(app, ["results", str(out), "--metric", "ppl_original"])
    assert shown.exit_code == 0, shown.output
    assert f"{format_number(original['perplexity'])} (n too small)" in shown.output
    three = ("original", "no-ent", "definition")
    direct = chronoprobe.probe("span-ppl", path, model=model, conditions=three).model()
    assert "skipped_conditions" not in direct and direct["skipped"] == {}
    for condition in three:
        assert metrics["overall"][condition]["perplexity"] == pytest.approx(
            direct["overall"][condition]["perplexity"], rel=1e-5
        )


def test_random_def_runs_for_all_examples_or_none():
    """One entity with a definition and one without: Q1's examples would have nothing to
    draw and Q2's could draw Q1's only, so the condition is skipped for the whole file."""
    one = DefinitionPool.of({"Q1": DEFINITIONS["Q1"], "Q2": ""})
    assert one.why_no_draw == ONE_ENTITY_SKIP
    assert DefinitionPool.of({"Q1": " ", "Q2": ""}).why_no_draw.endswith("(it holds 0)")
    assert DefinitionPool.of(DEFINITIONS).why_no_draw is None


def test_bad_rows_name_file_and_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    shifted = {**ROWS[0], "span_start": ROWS[0]["span_start"] + 1}
    write_jsonl(path, [ROWS[1], shifted])
    with pytest.raises(ValueError, match=r"bad\.jsonl:2: span 'Alice Smith' is not the"):
        read_examples(path)
    before = {**ROWS[0], "span_start": 0, "span_end": 6, "span": "Globex"}
    write_jsonl(path, [before])
    with pytest.raises(ValueError, match=r"bad\.jsonl:1: span offsets 0\.\.6 must lie after"):
        read_examples(path)
    path.write_text('{"id": "x", "entity": "Q1"}\n')
    with pytest.raises(ValueError, match=r"bad\.jsonl:1: not an ECBD example: .*year"):
        read_examples(path)


def prediction(i, entity, year, condition, logprob, n_tokens, span_type="np") -> dict:
    return {
        "id": f"e{i}",
        "entity": entity,
        "year": year,
        "span_type": span_type,
        "split": "test",
        "condition": condition,
        "logprob": logprob,
        "n_tokens": n_tokens,
        "nll": -logprob / n_tokens,
    }


def test_perplexity_is_averaged_per_entity_first():
    # entity A: token-normalised NLLs 1.0 and 3.0 (mean 2.0); entity B: 0.5.
    # per entity then over entities: (2.0 + 0.5) / 2 = 1.25 (per example it would be 1.5,
    # per token 5.5 / 4 = 1.375)
    original = [
        prediction(0, "A", "2018", "original", -2.0, 2),
        prediction(1, "A", "2018", "original", -3.0, 1, "random"),
        prediction(2, "B", "2021", "original", -0.5, 1),
    ]
    # NO ENT: A's spans cost 1 nat per token more, B's 0.5 more
    no_ent = [
        prediction(0, "A", "2018", "no-ent", -4.0, 2),
        prediction(1, "A", "2018", "no-ent", -4.0, 1, "random"),
        prediction(2, "B", "2021", "no-ent", -1.0, 1),
    ]
    options = SpanPplParams(conditions=("original", "no-ent"), cutoff_year=2019)
    metrics = span_ppl_metrics(original + no_ent, options)
    overall = metrics["overall"]["original"]
    assert overall == {
        "n": 3,
        "entities": 2,
        "tokens": 4,
        "perplexity": pytest.approx(math.e**1.25),
        # entities are resampled whole: all-A e^2, all-B e^0.5, each a quarter of resamples
        "perplexity_ci95": pytest.approx([math.e**0.5, math.e**2]),
    }
    assert metrics["overall"]["no-ent"]["perplexity"] == pytest.approx(math.exp((3.0 + 1.0) / 2))
    assert list(metrics["by_year"]) == ["2018", "2021"]
    assert metrics["by_group"]["seen"]["original"]["perplexity"] == pytest.approx(math.e**2)
    assert metrics["by_group"]["unseen"]["original"]["perplexity"] == pytest.approx(math.e**0.5)
    assert metrics["by_span_type"]["np"]["original"]["perplexity"] == pytest.approx(
        math.exp((1.0 + 0.5) / 2)
    )
    assert metrics["by_group_span_type"]["seen/random"]["no-ent"]["perplexity"] == pytest.approx(
        math.e**4
    )
    check = metrics["sensitivity"]["all"]
    assert check["gap"] == pytest.approx(math.e**2 - math.e**1.25)
    # paired over entities: all-B gives e^1 - e^0.5, all-A e^3 - e^2
    assert check["gap_ci95"] == pytest.approx([math.e - math.e**0.5, math.e**3 - math.e**2])
    assert check["share_increased_ci95"] == pytest.approx([0.43849, 1.0], abs=5e-5)  # 3 of 3
    # per-span ratios e^1, e^1, e^0.5: the median increase is e - 1
    assert check["median_increase"] == pytest.approx(math.e - 1)
    assert check["share_increased"] == 1.0
    assert metrics["sensitivity"]["unseen"]["relative_gap"] == pytest.approx(math.e**0.5 - 1)
    no_cutoff = span_ppl_metrics(original, SpanPplParams(conditions=("original",)))
    assert no_cutoff["by_group"] == {} and "sensitivity" not in no_cutoff


def naive_logprob(adapter, request) -> tuple[float, int]:
    """log p(span) from one full forward per example (per token for PLL), written from the
    model's own tokenizer and the family's scoring rule, not from the adapter's code."""
    tok, model = adapter.tokenizer, adapter.model
    left, right, span = request.cloze.left, request.cloze.right, request.span
    start, end = len(left), len(left) + len(span)
    encoded = tok(left + span + right, return_offsets_mapping=True)
    ids = encoded["input_ids"]
    positions = [
        p for p, (a, b) in enumerate(encoded["offset_mapping"]) if b > a and a < end and b > start
    ]
    with torch.no_grad():
        if adapter.family == "causal":
            logprobs = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0], -1)
            return sum(logprobs[p - 1, ids[p]].item() for p in positions), len(positions)
        if adapter.family == "masked":
            total = 0.0
            for p in positions:
                copy = list(ids)
                copy[p] = tok.mask_token_id
                logits = model(input_ids=torch.tensor([copy])).logits[0, p]
                total += torch.log_softmax(logits, -1)[ids[p]].item()
            return total, len(positions)
        start_id = model.config.decoder_start_token_id
        if "<extra_id_0>" in tok.get_vocab():  # T5: the span is the sentinel's target
            encoder = tok(left + "<extra_id_0>" + right)["input_ids"]
            target = tok(span, add_special_tokens=False)["input_ids"]
            decoder = [start_id, tok.convert_tokens_to_ids("<extra_id_0>"), *target]
            first = 2
        else:  # BART: the decoder rewrites the sentence from its start
            encoder = tok(left + tok.mask_token + right)["input_ids"]
            decoder = [start_id, *ids[: positions[-1] + 1]]
            first = positions[0] + 1
        logits = model(
            input_ids=torch.tensor([encoder]), decoder_input_ids=torch.tensor([decoder])
        ).logits[0]
        logprobs = torch.log_softmax(logits, -1)
        total = sum(logprobs[p - 1, decoder[p]].item() for p in range(first, len(decoder)))
        return total, len(decoder) - first


@pytest.fixture(scope="module")
def tiny_bart():
    tokenizer = train_tokenizer(CORPUS, "bart")
    return Seq2SeqLM(random_model("bart", tokenizer, seed=1), tokenizer, batch_size=2)


@pytest.mark.parametrize("architecture", ["llama", "t5", "bart", "roberta"])
def test_batched_span_scores_equal_naive_forwards(tiny, tiny_bart, ecbd_file, architecture):
    model = tiny_bart if architecture == "bart" else tiny(architecture)
    rows = read_examples(ecbd_file)
    got = VIEWS["span-ppl"].predict(model, rows, SpanPplParams(seed=3), None)
    assert len(got) == len(rows) * len(CONDITIONS)
    for i, p in enumerate(got):
        row, condition = rows[i // len(CONDITIONS)], CONDITIONS[i % len(CONDITIONS)]
        assert (p["id"], p["condition"], p["span"]) == (
            row.id,
            condition,
            row.sentence[slice(*row.span)],
        )
        expected, count = naive_logprob(model, condition_request(row, condition, seed=3)[0])
        assert p["n_tokens"] == count > 0
        assert p["logprob"] == pytest.approx(expected, abs=ATOL)
        assert p["nll"] == pytest.approx(-expected / count, abs=ATOL)


def test_probe_command_runs_span_ppl(tiny, ecbd_file, tmp_path):
    model = tiny("llama")
    model_dir = tmp_path / "model"
    model.model.save_pretrained(model_dir)
    model.tokenizer.save_pretrained(model_dir)
    out = tmp_path / "out"
    args = ["probe", "span-ppl", str(ecbd_file), "-m", str(model_dir), "-o", str(out)]
    options = ["--device", "cpu", "--cutoff-year", "2019"]
    conditions = ["--conditions", "original", "--conditions", "no-ent"]
    result = CliRunner().invoke(app, [*args, *options, *conditions])
    assert result.exit_code == 0, result.output
    assert "ppl original" in " ".join(result.output.split())
    rows = pq.read_table(out / "predictions.parquet").to_pylist()
    assert [(r["id"], r["condition"]) for r in rows[:2]] == [
        ("ecbd-0", "original"),
        ("ecbd-0", "no-ent"),
    ]
    top = json.loads((out / "metrics.json").read_text())
    metrics = top["models"][str(model_dir)]
    assert top["view"] == "span-ppl" and metrics["family"] == "causal"
    assert metrics["conditions"] == ["original", "no-ent"]
    assert set(metrics["by_group"]) == {"seen", "unseen", "popular"}
    assert list(metrics["by_year"]) == ["2019", "2020", "popular"]
    assert set(metrics["sensitivity"]) == {"all", "seen", "unseen", "popular"}
    # a model object from Python and the command agree
    direct = chronoprobe.probe(
        "span-ppl", ecbd_file, model=model, conditions=("original", "no-ent"), cutoff_year=2019
    ).model()
    assert direct["overall"]["no-ent"]["perplexity"] == pytest.approx(
        metrics["overall"]["no-ent"]["perplexity"], rel=1e-4
    )


def test_span_ppl_probe_step_and_report_section(tiny, ecbd_file, tmp_path, monkeypatch):
    """The probe step with the span-ppl view (two models, per-model cutoffs) writes predictions
    and metrics the section reads; a rerun after a kill keeps the finished model."""
    import logging

    import pyarrow.parquet as pq

    from chronoprobe.models import local
    from chronoprobe.report.ecbd_section import ecbd_section
    from chronoprobe.step_context import SHARDS_DIR, StepContext
    from chronoprobe.steps import get_kind

    specs = []
    for architecture in ("llama", "t5"):
        model, folder = tiny(architecture), tmp_path / architecture
        model.model.save_pretrained(folder)
        model.tokenizer.save_pretrained(folder)
        specs.append(str(folder))
    kind = get_kind("probe")
    params = kind.params.model_validate(
        {
            "view": "span-ppl",
            "model": specs,
            "cutoff_year": 2019,
            "cutoff_years": {specs[1]: 2020},
            "device": "cpu",
            "batch_size": 4,
            "recall_beams": 10,  # the T5 model gets Recall@10, the causal one perplexity only
        }
    )
    inputs = {"data": ecbd_file.parent}
    out = tmp_path / "step"
    ctx = StepContext("ecbd", out, tmp_path, seed=5, log=logging.getLogger("t"))
    load, calls = local.load_transformers, []

    def killed_at_second_model(spec, source, options):
        calls.append(spec.text)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return load(spec, source, options)

    monkeypatch.setattr(local, "load_transformers", killed_at_second_model)
    with pytest.raises(KeyboardInterrupt):
        kind.run(ctx, params, inputs)
    kind.run(ctx, params, inputs)
    assert calls == [specs[0], specs[1], specs[1]]  # the finished model was not rerun
    table = pq.read_table(out / "predictions.parquet").to_pylist()
    assert len(table) == 2 * len(ROWS) * len(CONDITIONS)
    assert {r["model"] for r in table} == set(specs)
    assert not (out / SHARDS_DIR).exists()
    metrics = json.loads((out / "metrics.json").read_text())
    llama, t5 = (metrics["models"][s] for s in specs)
    assert llama["options"]["seed"] == 5 and llama["cutoff_year"] == 2019
    assert set(llama["by_group"]) == {"seen", "unseen", "popular"}
    assert set(t5["by_group"]) == {"seen", "popular"}  # 2020 counts as seen for this model
    assert "recall@10" not in llama["overall"]["original"]
    assert 0.0 <= t5["overall"]["original"]["recall@10"] <= 1.0
    assert {(r["model"], r["recall_at_10"] is None) for r in table} == {
        (specs[0], True),
        (specs[1], False),
    }
    mean = llama["overall"]["definition"]["perplexity"] + t5["overall"]["definition"]["perplexity"]
    assert metrics["ppl_definition"] == pytest.approx(mean / 2)
    direct = chronoprobe.probe(
        "span-ppl", ecbd_file, model=tiny("llama"), seed=5, cutoff_year=2019
    ).model()
    for condition in CONDITIONS:  # the step's batch size differs: padding moves the last digits
        assert direct["overall"][condition]["perplexity"] == pytest.approx(
            llama["overall"][condition]["perplexity"], rel=1e-5
        )
    section = ecbd_section(out, {"id": "ecbd"})
    assert section.title == "ECBD span perplexity: ecbd"
    tiles = section.blocks[0].items
    assert tiles["examples"] == len(ROWS) and tiles["models"] == 2
    # the mean over the two models has no interval of its own, and says so
    assert tiles["original ppl"] == f"{metrics['ppl_original']:.2f} (a mean over 2 models' figures)"
    recall_tables = [
        b for b in section.blocks if (getattr(b, "caption", "") or "")[:9] == "Recall@10"
    ]
    assert len(recall_tables) == 1  # the T5 model's only
    recall = t5["overall"]["original"]
    assert recall_tables[0].rows[0][2] == with_interval(recall, "recall@10")
    assert recall_tables[0].rows[0][2].startswith(f"{recall['recall@10']:.3f} [")
    [problem] = kind.problems(params, ["data", "kg"])
    assert problem == "inputs.kg: probe takes no input 'kg' (it takes: data, series, trained)"


def test_beam_spans_read_the_text_between_the_sentinels(tiny, monkeypatch):
    """Each beam is read up to <extra_id_1> (or any special token), whitespace-normalised;
    empty and repeated spans are dropped, best beam first."""
    model = tiny("t5")
    tok, start = model.tokenizer, model.start
    s0, s1 = model.sentinels
    acme, globex = (tok(t, add_special_tokens=False)["input_ids"] for t in ("Acme Corp", "Globex"))
    beams = [
        [start, s0, *globex, s1, *acme],  # text after the closing sentinel is not the span
        [start, s0, s1],  # empty: dropped
        [start, s0, *acme, tok.eos_token_id],
        [start, s0, *globex, s1],  # a repeat: dropped
    ]

    def fake_generate(**kwargs):
        assert kwargs["num_beams"] == kwargs["num_return_sequences"] == 4
        assert kwargs["decoder_input_ids"].tolist() == [[start, s0]]
        width = max(map(len, beams))
        return torch.tensor([b + [model.pad_id] * (width - len(b)) for b in beams])

    monkeypatch.setattr(model.model, "generate", fake_generate)
    cloze = Cloze("In 2019, Alice Smith was employed by ", ".")
    assert model.beam_spans([cloze], beams=4, top_k=3) == [["Globex", "Acme Corp"]]
    assert model.beam_spans([cloze], beams=4, top_k=1) == [["Globex"]]
    with pytest.raises(ValueError, match="4 beams cannot give 10 distinct spans"):
        model.beam_spans([cloze], beams=4, top_k=10)


def test_beam_spans_batched_equal_one_gap_at_a_time(tiny, ecbd_file):
    model = tiny("t5")
    clozes = [condition_request(r, "original")[0].cloze for r in read_examples(ecbd_file)]
    batched = Seq2SeqLM(model.model, model.tokenizer, batch_size=12 * len(clozes))
    alone = Seq2SeqLM(model.model, model.tokenizer, batch_size=1)
    got = batched.beam_spans(clozes, beams=12, top_k=10, max_tokens=4)
    assert got == alone.beam_spans(clozes, beams=12, top_k=10, max_tokens=4)
    assert all(0 < len(spans) <= 10 and len(set(spans)) == len(spans) for spans in got)
    assert not any("extra_id" in span for spans in got for span in spans)


@pytest.mark.parametrize("architecture", ["llama", "roberta", "bart"])
def test_recall_needs_a_t5_style_model(tiny, tiny_bart, ecbd_file, architecture):
    model = tiny_bart if architecture == "bart" else tiny(architecture)
    rows = read_examples(ecbd_file)
    with pytest.raises(ValueError, match="need a T5-style model"):
        VIEWS["span-ppl"].predict(model, rows, SpanPplParams(recall_beams=10), None)


class _FixedSpans:
    """An adapter whose beam search returns given spans; scores are all log p = -1."""

    fills_spans = True

    def __init__(self, spans: dict[str, list[str]]) -> None:
        self.spans = spans

    def beam_spans(self, clozes, beams, top_k, progress=None):
        assert (beams, top_k) == (20, 10)
        return [self.spans[c.left.split()[-1]] for c in clozes]

    def score(self, requests, progress=None):
        from chronoprobe.models.requests import SpanScore

        return [SpanScore(-1.0, 1) for _ in requests]


def test_recall_at_10_on_hand_checked_spans(ecbd_file):
    """ORIGINAL only: ecbd-0's gold "Alice Smith" is found (spacing aside), ecbd-1's "hired Bob"
    is not, ecbd-2's "Initech" is, ecbd-3's "employed" is not: Recall@10 = 2/4; per span type,
    np 2/2 and random 0/2."""
    rows = read_examples(ecbd_file)
    by_last_left_word = {  # each example's left context ends with a different word
        "hired": ["Bob Jones", "Alice  Smith"],
        "Globex": ["Globex hired", "hired"],
        "by": ["Initech"],
        "Initech": ["hired", "employs"],
    }
    options = SpanPplParams(conditions=("original",), recall_beams=20)
    got = VIEWS["span-ppl"].predict(_FixedSpans(by_last_left_word), rows, options, None)
    assert [p["recall_at_10"] for p in got] == [True, False, True, False]
    assert got[0]["top10"] == ["Bob Jones", "Alice  Smith"]
    metrics = span_ppl_metrics(got, options)
    assert metrics["overall"]["original"]["recall@10"] == 0.5
    assert metrics["by_span_type"]["np"]["original"]["recall@10"] == 1.0
    assert metrics["by_span_type"]["random"]["original"]["recall@10"] == 0.0


@pytest.mark.parametrize("architecture", ["t5", "llama"])
def test_probe_command_recall_beams(tiny, ecbd_file, tmp_path, architecture):
    model, model_dir = tiny(architecture), tmp_path / "model"
    model.model.save_pretrained(model_dir)
    model.tokenizer.save_pretrained(model_dir)
    out = tmp_path / "out"
    args = ["probe", "span-ppl", str(ecbd_file), "-m", str(model_dir), "-o", str(out)]
    options = ["--device", "cpu", "--conditions", "original"]
    result = CliRunner().invoke(app, [*args, *options, "--recall-beams", "10"])
    assert result.exit_code == 0, result.output
    rows = pq.read_table(out / "predictions.parquet").to_pylist()
    if architecture == "llama":  # perplexity only, and the reason why
        assert "need a T5-style model" in " ".join(result.output.split())
        assert all(r["top10"] is None for r in rows)
        return
    assert all(0 < len(r["top10"]) <= 10 and isinstance(r["recall_at_10"], bool) for r in rows)
    metrics = json.loads((out / "metrics.json").read_text())["models"][str(model_dir)]
    hits = [r["recall_at_10"] for r in rows]
    assert metrics["overall"]["original"]["recall@10"] == sum(hits) / len(hits)
