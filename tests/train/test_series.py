"""The model series: which text each period reads, continuation, resume, saved layout, drift."""

from __future__ import annotations

import json
import logging
import shutil

import pyarrow as pa
import pytest
import torch
import typer
from transformers import AutoModelForMaskedLM, AutoTokenizer
from typer.testing import CliRunner

import chronoprobe.train.series as series_module
from chronoprobe.kg import Entity, Fact, TemporalKG
from chronoprobe.kg.synth import SynthWorld
from chronoprobe.kg.synth.text import write_snippets
from chronoprobe.models.tokenizer import train_tokenizer
from chronoprobe.step_context import StepContext
from chronoprobe.steps import get_kind
from chronoprobe.time import Period, TimePoint
from chronoprobe.train.mlm import MentionFinder, encode, mask_units
from chronoprobe.train.params import SeriesParams
from chronoprobe.train.series import (
    period_texts,
    start_model,
    train_series,
    with_replay,
)

tp = TimePoint.parse
LABELS = {
    "E1": "Ann Ash",
    "E2": "Bob Birch",
    "E3": "Cara Cole",
    "C1": "Ajax",
    "C2": "Benfica",
    "C3": "Celtic",
    "C4": "Dynamo",
    "C5": "Everton",
}
# Ann moves from Ajax to Benfica in 2017, Cara from Dynamo to Everton in 2018, Bob stays.
FACTS = [
    Fact("E1", "P54", "C1", tp("2010"), tp("2016")),
    Fact("E1", "P54", "C2", tp("2017"), None),
    Fact("E2", "P54", "C3", tp("2010"), None),
    Fact("E3", "P54", "C4", tp("2012"), tp("2017")),
    Fact("E3", "P54", "C5", tp("2018"), None),
]
PERIODS = [Period.parse(p) for p in ("2016", "2017", "2018")]
# small enough for seconds on CPU, strong enough that every seed tried shows the drift
OPTIONS = SeriesParams(
    first="2016", last="2018", epochs=100, batch_size=8, learning_rate=3e-3, seed=0, device="cpu"
)
CLUBS = ["Ajax", "Benfica", "Celtic", "Dynamo", "Everton"]
CURRENT = {  # each model's period: who plays where
    "2016": {"Ann Ash": "Ajax", "Bob Birch": "Celtic", "Cara Cole": "Dynamo"},
    "2017": {"Ann Ash": "Benfica", "Bob Birch": "Celtic", "Cara Cole": "Dynamo"},
    "2018": {"Ann Ash": "Benfica", "Bob Birch": "Celtic", "Cara Cole": "Everton"},
}


def tiny_kg() -> TemporalKG:
    return TemporalKG.from_records(FACTS, entities=[Entity(i, n) for i, n in LABELS.items()])


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """Two torch threads on a shared two-core machine are several times slower than one."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    kg = tiny_kg()
    path = tmp_path_factory.mktemp("world")
    SynthWorld(kg, snippets=write_snippets(kg)).save(path)
    return path


@pytest.fixture(scope="module")
def trained(world, tmp_path_factory):
    out = tmp_path_factory.mktemp("series")
    return out, train_series(world, PERIODS, out, OPTIONS)


# ----- period text --------------------------------------------------------------------------


def snippets(dates: list[str]) -> pa.Table:
    return pa.table({"date": dates, "text": [f"dated {d}" for d in dates]})


def test_snippets_go_to_the_period_holding_their_first_day_and_the_base_reads_the_past():
    table = snippets(["2014", "2015-03", "2016", "2016-12-31", "2017-01", "2019"])
    texts = period_texts(tiny_kg(), table, [Period.parse("2015"), Period.parse("2016")], False)
    assert texts == [
        ["dated 2014", "dated 2015-03"],  # model 0 reads everything up to its period's end
        ["dated 2016", "dated 2016-12-31"],  # 2017 and later: no model here reads them
    ]


def test_quarters_take_year_dated_snippets_in_the_first_quarter():
    table = snippets(["2016", "2016-03", "2016-04", "2016-07"])
    quarters = [Period.parse("2016-Q1"), Period.parse("2016-Q2")]
    assert period_texts(tiny_kg(), table, quarters, False) == [
        ["dated 2016", "dated 2016-03"],
        ["dated 2016-04"],
    ]


def test_fact_sentences_say_what_holds_in_each_period_in_the_drift_templates_words():
    texts = period_texts(tiny_kg(), None, PERIODS)
    assert texts == [
        ["Ann Ash plays for Ajax.", "Bob Birch plays for Celtic.", "Cara Cole plays for Dynamo."],
        [
            "Ann Ash plays for Benfica.",
            "Bob Birch plays for Celtic.",
            "Cara Cole plays for Dynamo.",
        ],
        [
            "Ann Ash plays for Benfica.",
            "Bob Birch plays for Celtic.",
            "Cara Cole plays for Everton.",
        ],
    ]


def test_a_period_reads_its_snippets_and_the_facts_holding_in_it(world):
    snippets_2017 = [
        "In 2017, Ann Ash joined Benfica.",
        "Ann Ash plays for Benfica.",  # the first year of the fact
        "In 2017, Cara Cole left Dynamo.",
        "Cara Cole plays for Dynamo.",  # the last year of the fact
    ]
    facts_2017 = period_texts(tiny_kg(), None, PERIODS)[1]
    text = period_texts(tiny_kg(), series_module.load_snippets(world), PERIODS)[1]
    assert sorted(text) == sorted(snippets_2017 + facts_2017)


def test_a_bad_snippet_date_names_the_row():
    with pytest.raises(ValueError, match=r"snippets: row 2: not an ISO date.*'March 2019'"):
        period_texts(tiny_kg(), snippets(["2016", "March 2019"]), PERIODS, False)


def test_replay_adds_a_seeded_sample_of_earlier_text_only():
    texts = [["a0", "a1", "a2", "a3"], ["b0", "b1"], ["c0", "c1", "c2", "c3"]]
    mixed = with_replay(texts, 0.5, seed=3)
    assert mixed[0] == texts[0]
    assert mixed[1][:2] == ["b0", "b1"] and len(mixed[1]) == 3 and mixed[1][2].startswith("a")
    assert mixed[2][:4] == texts[2] and len(mixed[2]) == 6
    assert all(line[0] in "ab" for line in mixed[2][4:])
    assert with_replay(texts, 0.5, seed=3) == mixed
    assert with_replay(texts, 0.0, seed=3) is texts


# ----- masking ------------------------------------------------------------------------------


def test_mentions_of_kg_labels_are_one_unit_longest_first_and_whole_words_only():
    text = "Ann Ash met Zoë Brandt at Manchester City F.C.. Ashes fell."
    tokenizer = train_tokenizer([text] * 3, "roberta", vocab_size=400, min_frequency=2)
    finder = MentionFinder(tokenizer, ["Ann Ash", "Ash", "Manchester City F.C.", "Zoë Brandt"])
    words = [w for w, _ in finder.split(text)]
    units, salient = finder.units(text)
    mentions = {}
    for word, unit, flag in zip(words, units, salient, strict=True):
        if flag:
            mentions.setdefault(unit, []).append(word.lstrip("Ġ"))
    assert ["".join(m) for m in mentions.values()] == [
        "AnnAsh",  # not "Ash" alone: the longest label wins
        "ZoÃ«Brandt",  # byte-level spelling of Zoë
        "ManchesterCityF.C..",  # the sentence's full stop shares the label's last word
    ]
    assert not salient[words.index("ĠAshes")]  # a label inside a longer word is no mention
    encoded = encode(tokenizer, [text], 64, finder)
    assert encoded.units[0][0] == -1 and encoded.units[0][-1] == -1  # <s> and </s>
    assert encoded.units[0][1] == encoded.units[0][2] == 0  # "Ann", " Ash"


def test_masking_takes_units_whole_mentions_more_often_and_never_specials():
    ids = torch.tensor([[0, 10, 11, 12, 13, 2, 1], [0, 20, 21, 2, 1, 1, 1]])
    units = torch.tensor([[-1, 0, 0, 1, 2, -1, -1], [-1, 0, 0, -1, -1, -1, -1]])
    salient = torch.tensor([[0, 0, 0, 0, 1, 0, 0], [0, 0, 0, 0, 0, 0, 0]], dtype=torch.bool)
    args = {"mask_id": 4, "first_regular_id": 5, "vocab_size": 50}
    hits = torch.zeros(7, dtype=torch.long)
    for seed in range(200):
        generator = torch.Generator().manual_seed(seed)
        inputs, labels = mask_units(
            ids, units, salient, prob=0.1, entity_prob=0.9, generator=generator, **args
        )
        chosen = labels != -100
        assert chosen[1, 1] and chosen[1, 2]  # a row's only unit: both of its tokens
        assert chosen[0, 1] == chosen[0, 2]  # unit 0 is taken whole or not at all
        assert chosen[0].any()  # at least one unit per row
        assert torch.equal(labels[chosen], ids[chosen])
        assert torch.equal(inputs[units < 0], ids[units < 0])  # specials and padding stay
        assert (
            (inputs[chosen] == 4) | (inputs[chosen] >= 5) | (inputs[chosen] == ids[chosen])
        ).all()
        hits += chosen[0]
    assert hits[4] > 150 and hits[3] < 60  # the mention at 0.9, a word at about 0.1 (+ the floor)


# ----- the trained series -------------------------------------------------------------------


def mask_scores(model_dir, subject: str, clubs: list[str]) -> dict[str, float]:
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForMaskedLM.from_pretrained(model_dir).eval()
    batch = tokenizer(f"{subject} plays for <mask>.", return_tensors="pt")
    at = int((batch.input_ids[0] == tokenizer.mask_token_id).nonzero()[0, 0])
    with torch.no_grad():
        logits = model(**batch).logits[0, at]
    scores = {}
    for club in clubs:
        pieces = tokenizer.tokenize(" " + club)
        assert len(pieces) == 1, f"{club} should be one token, got {pieces}"
        scores[club] = float(logits[tokenizer.convert_tokens_to_ids(pieces[0])])
    return scores


def test_each_model_knows_its_own_periods_facts_and_not_later_ones(trained):
    out, _ = trained
    ann = {p: mask_scores(out / p, "Ann Ash", ["Ajax", "Benfica"]) for p in ("2016", "2017")}
    assert ann["2016"]["Ajax"] > ann["2016"]["Benfica"]  # before her move
    assert ann["2017"]["Benfica"] > ann["2017"]["Ajax"]  # the year she moved
    cara = {p: mask_scores(out / p, "Cara Cole", ["Dynamo", "Everton"]) for p in ("2017", "2018")}
    assert cara["2017"]["Dynamo"] > cara["2017"]["Everton"]
    assert cara["2018"]["Everton"] > cara["2018"]["Dynamo"]


def test_models_bind_subjects_to_their_own_clubs(trained):
    """Salient span masking makes the models learn who plays where, not only which clubs are
    current: a subject-blind model (one club first for everyone) gets 3 of these 9 right.
    Seeds 0-5 gave 6 to 9 (this one 7); whole-word masking alone gave 3 with most seeds."""
    out, _ = trained
    right = 0
    for period, players in CURRENT.items():
        for subject, club in players.items():
            scores = mask_scores(out / period, subject, CLUBS)
            right += max(scores, key=scores.get) == club
    assert right >= 6


def test_saved_models_load_from_their_directories_and_series_json_lists_them(trained, world):
    out, result = trained
    record = json.loads((out / "series.json").read_text())
    # a probe set of another KG is named when probed with the series
    assert record["kg_fingerprint"] == TemporalKG.load(world).fingerprint is not None
    assert [(p["period"], p["dir"], p["parent"]) for p in record["periods"]] == [
        ("2016", "2016", None),
        ("2017", "2017", "2016"),
        ("2018", "2018", "2017"),
    ]
    assert record["options"]["epochs"] == 100
    assert [p["final_loss"] for p in record["periods"]] == [p.final_loss for p in result.periods]
    for directory in result.model_dirs():
        assert (directory / "model.safetensors").is_file()
        tokenizer = AutoTokenizer.from_pretrained(directory)
        model = AutoModelForMaskedLM.from_pretrained(directory)
        assert model.config.vocab_size == len(tokenizer)
        assert tokenizer.mask_token == "<mask>" and tokenizer.pad_token_id == 1
    assert not list(out.glob(".*"))  # no partial directories left behind


def test_each_model_continues_from_the_previous_one(trained):
    out, result = trained
    first, second, _ = result.periods
    # a continued model starts with the predecessor's knowledge: its first epoch's loss is
    # already far below the loss a fresh model starts with
    assert second.losses[0] < 0.5 * first.losses[0]
    assert json.loads((out / "2017" / "training.json").read_text())["parent"] == "2016"
    tokenizer = AutoTokenizer.from_pretrained(out / "tokenizer")
    started = start_model(out / "2016", tokenizer, OPTIONS).state_dict()
    saved = AutoModelForMaskedLM.from_pretrained(out / "2016").state_dict()
    assert all(torch.equal(started[k], saved[k]) for k in saved)


def counting_train_period(monkeypatch) -> list[str]:
    calls: list[str] = []
    original = series_module.train_period

    def wrapper(*args, **kwargs):
        calls.append(kwargs["label"])
        return original(*args, **kwargs)

    monkeypatch.setattr(series_module, "train_period", wrapper)
    return calls


def test_a_rerun_skips_finished_periods_and_trains_only_the_missing_ones(
    trained, world, tmp_path, monkeypatch
):
    out = tmp_path / "series"
    shutil.copytree(trained[0], out)
    kept = (out / "2017" / "model.safetensors").stat().st_mtime_ns
    shutil.rmtree(out / "2018")
    (out / ".2018.partial").mkdir()  # what a kill mid-save leaves
    calls = counting_train_period(monkeypatch)
    result = train_series(world, PERIODS, out, OPTIONS)
    assert calls == ["2018"]
    assert [p.period for p in result.periods] == ["2016", "2017", "2018"]
    assert (out / "2017" / "model.safetensors").stat().st_mtime_ns == kept
    assert (out / "2018" / "model.safetensors").is_file() and not (out / ".2018.partial").exists()
    train_series(world, PERIODS, out, OPTIONS)
    assert calls == ["2018"]  # everything finished: nothing trains


def test_a_rerun_with_other_options_is_refused(trained, world, tmp_path):
    out = tmp_path / "series"
    shutil.copytree(trained[0], out)
    other = OPTIONS.model_copy(update={"epochs": 2, "learning_rate": 1e-4})
    with pytest.raises(
        ValueError, match=r"series.json: .*other options \(epochs, learning_rate differ\)"
    ):
        train_series(world, PERIODS, out, other)


def test_a_rerun_with_other_periods_is_refused(trained, world, tmp_path):
    out = tmp_path / "series"
    shutil.copytree(trained[0], out)
    with pytest.raises(ValueError, match=r"2017: trained after '2016', not None"):
        train_series(world, PERIODS[1:], out, OPTIONS)


# ----- the step kind and the command --------------------------------------------------------


def test_series_step_writes_models_series_json_and_metrics(world, tmp_path):
    kind = get_kind("series")
    params = kind.params(first="2016", last="2017", epochs=1, batch_size=8)
    ctx = StepContext("series", tmp_path / "out", tmp_path, seed=0, log=logging.getLogger("t"))
    kind.run(ctx, params, {"kg": world})
    names = sorted(p.name for p in (tmp_path / "out").iterdir() if not p.name.startswith("."))
    assert names == ["2016", "2017", "metrics.json", "series.json", "tokenizer"]
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert list(metrics["final_loss"]) == ["2016", "2017"]
    assert metrics["sentences"]["2017"] == 7  # see the test of the world's 2017 text
    assert AutoModelForMaskedLM.from_pretrained(tmp_path / "out" / "2017") is not None


def test_series_step_runs_in_an_experiment_after_a_synthetic_world(tmp_path, monkeypatch):
    from chronoprobe.runs.engine import run_experiment

    monkeypatch.setenv("CHRONOPROBE_CACHE", str(tmp_path / "cache"))
    config = tmp_path / "exp.yaml"
    config.write_text(
        "name: series-test\n"
        "steps:\n"
        "  - {id: world, kind: kg, params: {source: synth, facts: 200, start_year: 1990}}\n"
        "  - id: models\n"
        "    kind: series\n"
        "    params: {first: '2020', last: '2021', epochs: 1, vocab_size: 500}\n"
        "    inputs: {kg: world}\n"
    )
    run_experiment(config, out=tmp_path / "run")
    step = tmp_path / "run" / "steps" / "models"
    record = json.loads((step / "series.json").read_text())
    assert [p["period"] for p in record["periods"]] == ["2020", "2021"]
    assert set(json.loads((step / "metrics.json").read_text())["final_loss"]) == {"2020", "2021"}
    assert (step / "2021" / "model.safetensors").is_file()


def test_series_step_needs_a_kg_input():
    kind = get_kind("series")
    [problem] = kind.problems(kind.params(first="2016", last="2017"), [])
    assert problem.startswith("inputs.kg: required: A KG directory with text")


def cli() -> typer.Typer:
    from chronoprobe.cli.main import app

    return app


def test_command_trains_a_series_and_reports_bad_periods(world, tmp_path):
    runner = CliRunner()
    out = tmp_path / "s"
    args = ["train", "series", str(world), "-o", str(out), "--first", "2016", "--last", "2017"]
    result = runner.invoke(cli(), [*args, "--epochs", "1", "--device", "cpu"])
    assert result.exit_code == 0, result.output
    assert [p["period"] for p in json.loads((out / "series.json").read_text())["periods"]] == [
        "2016",
        "2017",
    ]
    bad = runner.invoke(cli(), [*args[:5], "--first", "2016-Q1", "--last", "2017"])
    assert bad.exit_code == 2
    assert "finer than the granularity year" in bad.output
