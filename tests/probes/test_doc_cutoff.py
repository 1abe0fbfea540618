"""The doc-cutoff view: per family and period the perplexity of dated texts, and the period of
lowest perplexity with a bootstrap interval over documents (Dated Data's effective cutoff), on
hand-made files with a model whose perplexity the test sets, on the synthetic world's real
snippets, and on ECBD rows; bad rows are one line naming the file and the line."""

from __future__ import annotations

import json
import math

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import chronoprobe
from chronoprobe.cli.main import app
from chronoprobe.jsonl import write_jsonl
from chronoprobe.kg.synth import SynthConfig, synthesize
from chronoprobe.models.requests import Cloze, SpanScore
from chronoprobe.probes.doc_cutoff import DocCutoffParams, lowest_perplexity, read_dated_texts

from .test_span_ppl import ecbd_row

runner = CliRunner()


class Perplexing:
    """A model whose per-token NLL of each text the test sets: a text of n words is n tokens,
    each of NLL ``nll[text]`` (unknown texts: 5)."""

    family = "causal"
    unfit_reason = "never unfit"

    def __init__(self, nll: dict[str, float], name: str = "perplexing") -> None:
        self.nll, self.name, self.asked = nll, name, []

    def score(self, requests, progress=None):
        out = []
        for request in requests:
            assert request.cloze == Cloze("", "")  # the whole text is the span scored
            self.asked.append(request.span)
            words = len(request.span.split())
            out.append(SpanScore(-self.nll.get(request.span, 5.0) * words, words))
        return out


# (family, year, per-token NLL, words): hand-checked below
DOCUMENTS = [
    ("news", 2016, 2.0, 2),
    ("news", 2016, 1.3, 20),
    ("news", 2017, 1.5, 2),
    ("news", 2017, 1.7, 2),
    ("news", 2018, 2.5, 3),
    ("news", 2018, 2.5, 3),
    ("wiki", 2016, 1.0, 4),
    ("wiki", 2016, 1.2, 4),
    ("wiki", 2017, 1.4, 4),
    ("wiki", 2018, 1.3, 4),
    ("wiki", 2018, 1.3, 4),
]


def text_of(i: int, words: int) -> str:
    return " ".join([f"d{i}", *["w"] * (words - 1)])


def hand_made(tmp_path, documents=DOCUMENTS, extra=()):
    """The documents as a JSONL of dated texts, and a model that scores them as they say."""
    rows = [
        {"id": f"d{i}", "text": text_of(i, words), "date": str(year), "family": family}
        for i, (family, year, _, words) in enumerate(documents)
    ]
    path = tmp_path / "docs" / "texts.jsonl"
    path.parent.mkdir(exist_ok=True)
    write_jsonl(path, [*rows, *extra])
    model = Perplexing({text_of(i, d[3]): d[2] for i, d in enumerate(documents)})
    return path, model


def probed(path, model, **options):
    result = chronoprobe.probe("doc-cutoff", path, model=model, **options)
    return result, result.model()


def test_the_period_of_lowest_perplexity_per_family_and_overall(tmp_path):
    path, model = hand_made(tmp_path)
    result, entry = probed(path, model)
    # news: 2016 averages (2.0 + 1.3) / 2 = 1.65 per token, 2017 1.6, 2018 2.5 -> 2017
    news = entry["by_family"]["news"]
    assert news["cutoff"] == "2017"
    assert [p["perplexity"] for p in news["curve"]] == pytest.approx(
        [math.exp(1.65), math.exp(1.6), math.exp(2.5)]
    )
    assert [(p["documents"], p["tokens"]) for p in news["curve"]] == [(2, 22), (2, 4), (2, 6)]
    # resampling each period's two documents: 2016 wins 3 draws in 8 (both the long 1.3
    # document: 1/4; one of each against two 1.7s: 1/2 * 1/4), 2017 the rest
    assert news["cutoff_ci95"] == ["2016", "2017"]
    assert 0.55 < news["cutoff_share"] < 0.70
    # wiki: 1.1, 1.4, 1.3 -> 2016, whatever the resample (its draws lie in [1.0, 1.2])
    wiki = entry["by_family"]["wiki"]
    assert (wiki["cutoff"], wiki["cutoff_ci95"], wiki["cutoff_share"]) == (
        "2016",
        ["2016", "2016"],
        1.0,
    )
    low, high = wiki["curve"][0]["perplexity_ci95"]
    assert math.exp(1.0) <= low <= math.exp(1.1) <= high <= math.exp(1.2)
    # every family: 2016 (2.0 + 1.3 + 1.0 + 1.2) / 4 = 1.375, 2017 4.6 / 3, 2018 7.6 / 4
    overall = entry["overall"]
    assert overall["cutoff"] == entry["cutoff"] == "2016"
    assert overall["perplexity"] == pytest.approx(math.exp(1.375))
    assert overall["documents"] == entry["n"] == len(DOCUMENTS)
    assert entry["family_by"] == "family" and entry["periods"] == ["2016", "2017", "2018"]
    assert entry["departures"] == [] and entry["cut_texts"] == 0
    assert entry["perplexity_of_a_period"].startswith("exp(mean over documents")
    assert sorted(model.asked) == sorted(text_of(i, d[3]) for i, d in enumerate(DOCUMENTS))
    shown = result.metrics["models"][model.name]
    assert shown["cutoff_ci95"] == overall["cutoff_ci95"]


def test_pooled_tokens_is_an_option_that_says_so_and_weighs_long_texts_more(tmp_path):
    path, model = hand_made(tmp_path)
    _, entry = probed(path, model, pool_tokens=True)
    news = entry["by_family"]["news"]
    # 2016 pools (2.0 * 2 + 1.3 * 20) / 22 tokens: below 2017's 1.6, so 2016
    assert news["cutoff"] == "2016"
    assert news["curve"][0]["perplexity"] == pytest.approx(math.exp(30 / 22))
    assert entry["departures"] == [
        "pool_tokens: a period's perplexity pools its tokens (longer texts weigh more)"
    ]
    assert entry["perplexity_of_a_period"] == "exp(-summed log-probability / summed tokens)"


def test_the_interval_is_seeded_and_resamples_zero_gives_none(tmp_path):
    path, model = hand_made(tmp_path)
    first = probed(path, model, seed=3)[1]["by_family"]["news"]
    again = probed(path, model, seed=3)[1]["by_family"]["news"]
    assert first == again
    bare = probed(path, model, resamples=0)[1]["by_family"]["news"]
    assert bare["cutoff"] == "2017" and bare["cutoff_ci95"] is None
    assert bare["curve"][0]["perplexity_ci95"] is None


def test_texts_outside_the_range_or_given_twice_are_skipped_and_counted(tmp_path):
    twice = {"id": "again", "text": text_of(0, 2), "date": "2016", "family": "news"}
    later = {"id": "later", "text": text_of(0, 2), "date": "2017-06", "family": "news"}
    path, model = hand_made(tmp_path, extra=[twice, later])
    result, entry = probed(path, model, first="2016", last="2017")
    assert entry["skipped"] == {
        "dated outside 2016..2017": 4,
        "the same text and date as an earlier row (one document, scored once)": 1,
    }
    assert entry["periods"] == ["2016", "2017"] and entry["n"] == 8  # 7 + the later version
    assert result.skipped.num_rows == 5


def test_months_take_texts_dated_to_the_month_and_skip_those_dated_to_the_year(tmp_path):
    rows = [
        {"text": "alpha beta", "date": "2019-03-02"},
        {"text": "gamma delta", "date": "2019-04"},
        {"text": "epsilon", "date": 2019},
    ]
    path = tmp_path / "months.jsonl"
    write_jsonl(path, rows)
    model = Perplexing({"alpha beta": 2.0, "gamma delta": 1.0})
    _, entry = probed(path, model, granularity="month")
    assert entry["cutoff"] == "2019-04" and entry["periods"] == ["2019-03", "2019-04"]
    assert entry["skipped"] == {"dated to the year only, and the periods are months": 1}
    assert entry["family_by"] is None and entry["by_family"] == {}


def test_the_estimate_of_one_group_follows_its_documents():
    rows = [
        {"period": "2019", "logprob": -4.0, "tokens": 2},
        {"period": "2020", "logprob": -2.0, "tokens": 2},
        {"period": "2021", "logprob": -9.0, "tokens": 3},
    ]
    found = lowest_perplexity(rows, DocCutoffParams())
    assert (found["cutoff"], found["cutoff_ci95"], found["cutoff_share"]) == (
        "2020",
        ["2020", "2020"],
        1.0,
    )
    assert found["perplexity"] == pytest.approx(math.e)
    assert lowest_perplexity([], DocCutoffParams())["cutoff"] is None


# ----- the synthetic world's snippets --------------------------------------------------------


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    path = tmp_path_factory.mktemp("world")
    synthesize(SynthConfig(seed=2, facts=600, start_year=2000, end_year=2020)).save(path)
    return path


class Recent:
    """A model that read the snippets up to ``cutoff`` year by year, remembering the latest
    best: a text it last read in year y has NLL 1 + 0.1 * (cutoff - y), one it never read 5
    (the same text dated in several years, "X plays for Y.", was last read in the latest)."""

    family = "masked"
    unfit_reason = "never unfit"
    name = "recent"

    def __init__(self, snippets: pa.Table, cutoff: int) -> None:
        last: dict[str, int] = {}
        texts, years = snippets["text"].to_pylist(), snippets["year"].to_pylist()
        for text, year in zip(texts, years, strict=True):
            if year <= cutoff:
                last[text] = max(year, last.get(text, year))
        self.nll = {text: 1 + 0.1 * (cutoff - year) for text, year in last.items()}

    def score(self, requests, progress=None):
        return [SpanScore(-self.nll.get(r.span, 5.0), 1) for r in requests]


def test_snippets_are_grouped_by_relation_and_the_cutoff_is_the_year_last_read(world):
    snippets = pq.read_table(world / "snippets.parquet")
    model = Recent(snippets, 2016)
    result = chronoprobe.probe(
        "doc-cutoff", world, model=model, rows="snippets.parquet", first="2012", last="2019"
    )
    entry = result.model()
    assert entry["family_by"] == "relation" and entry["cutoff"] == "2016"
    in_range = snippets.filter(pc.is_in(snippets["year"], pa.array(range(2012, 2020))))
    pairs = zip(in_range["text"].to_pylist(), in_range["date"].to_pylist(), strict=True)
    distinct = len(set(pairs))
    assert entry["n"] == distinct
    assert len(entry["by_family"]) >= 5
    assert set(entry["by_family"]) == set(in_range["relation"].to_pylist())
    for relation, group in entry["by_family"].items():
        at = {p["period"]: p["perplexity"] for p in group["curve"]}
        if "2016" in at:
            # every text of 2016 was read last in 2016: NLL 1, the lowest there is; an earlier
            # year ties only where each of its texts was said again in 2016 (a state snippet)
            assert at["2016"] == pytest.approx(math.e) == group["perplexity"], relation
            assert group["cutoff"] == "2016" or at[group["cutoff"]] == at["2016"], relation
    predictions = result.predictions.to_pylist()
    assert {p["family_by"] for p in predictions} == {"relation"}


@pytest.mark.parametrize("architecture", ["llama", "roberta"])
def test_a_tiny_model_scores_the_real_snippets_whole(world, tiny, architecture, monkeypatch):
    """Through a real adapter: one score of each whole text (a masked model's PLL masks each
    token alone), cut to ``max_tokens`` where longer, and the estimate over what it gave."""
    model = tiny(architecture)
    monkeypatch.setattr(model, "batch_size", 64)  # the fixture's 2 is for bucketing tests
    texts = world / "snippets.parquet"
    year = {"first": "2016", "last": "2016"}  # a PLL scores each token of each text: one year
    whole = chronoprobe.probe("doc-cutoff", texts, model=model, **year)
    entry = whole.model()
    assert entry["cutoff"] == "2016" and entry["cutoff_ci95"] == ["2016", "2016"]
    assert entry["departures"] == [] and entry["cut_texts"] == 0
    full = {p["id"]: p for p in whole.predictions.to_pylist()}
    for p in full.values():
        assert p["nll"] == pytest.approx(-p["logprob"] / p["tokens"])
    budget = sorted(p["tokens"] for p in full.values())[len(full) // 2]
    cut = chronoprobe.probe("doc-cutoff", texts, model=model, max_tokens=budget, **year)
    entry = cut.model()
    predictions = cut.predictions.to_pylist()
    assert entry["departures"] == [f"max_tokens {budget}: Dated Data scores a version's first 512"]
    table = pq.read_table(texts)
    text_of_id = dict(zip(table["id"].to_pylist(), table["text"].to_pylist(), strict=True))
    tokens = model.tokenizer([text_of_id[i] for i in full], add_special_tokens=False)
    longer = {i for i, ids in zip(full, tokens["input_ids"], strict=True) if len(ids) > budget}
    assert longer and {p["id"] for p in predictions if p["cut"]} == longer
    assert entry["cut_texts"] == len(longer)
    for p in predictions:
        assert p["tokens"] <= budget
        if not p["cut"]:  # a text that fits is scored as it was whole
            assert p["logprob"] == pytest.approx(full[p["id"]]["logprob"], abs=1e-4)


# ----- ECBD rows and bad rows ----------------------------------------------------------------


def test_ecbd_rows_are_dated_by_their_entity_and_each_sentence_counts_once(tmp_path):
    sentence = "Globex hired Alice Smith in 2019."
    rows = [
        ecbd_row(0, "Q1", "2019", "np", sentence, "Globex", "Alice Smith"),
        ecbd_row(1, "Q1", "2019", "random", sentence, "Globex", "hired Alice"),
        ecbd_row(2, "Q3", "2018", "np", "Initech sold Globex in 2018.", "Initech", "Globex"),
        ecbd_row(3, "Q2", "popular", "np", "Alice Smith joined Initech.", "Alice Smith", "Initech"),
    ]
    path = tmp_path / "ecbd" / "examples.jsonl"
    path.parent.mkdir()
    write_jsonl(path, rows)
    model = Perplexing({sentence: 1.0, "Initech sold Globex in 2018.": 2.0})
    _, entry = probed(path, model)
    assert entry["cutoff"] == "2019" and entry["n"] == 2
    assert entry["skipped"] == {
        "the same text and date as an earlier row (one document, scored once)": 1,
        "no date (the year is 'popular': ECBD's group of popular entities)": 1,
    }
    _, by_entity = probed(path, model, family_by="entity")
    assert sorted(by_entity["by_family"]) == ["Q1", "Q3"]


BAD_LINES = [
    ('{"text": "a b"}', "2: the text has no date"),
    ('{"text": "a b", "date": "2019-13"}', "2: not a valid date: '2019-13' (month 13 is not"),
    ('{"text": " ", "date": "2019"}', "2: the text is empty"),
    ('{"title": "x", "date": "2019"}', "2: a dated text needs the fields text and date (or an"),
    ('{"id": "a", "text": "c", "date": "2020"}', "2: duplicate id 'a'"),
    ('{"text": "a", "date": [2019]}', "2: the date must be an ISO date such as 2019"),
    ("[1, 2]", "2: expected a JSON object"),
    ('{"text": "a", "date": ', "2: invalid JSON"),
]


@pytest.mark.parametrize(("line", "said"), BAD_LINES)
def test_a_bad_row_is_one_line_naming_the_file_and_line(tmp_path, line, said, model_dirs):
    path = tmp_path / "texts.jsonl"
    path.write_text('{"id": "a", "text": "a b", "date": "2019"}\n' + line + "\n")
    with pytest.raises(ValueError) as err:
        read_dated_texts(path)
    assert str(err.value).startswith(f"{path}:{said}")
    command = ["probe", "doc-cutoff", str(path), "-m", str(model_dirs[0])]
    printed = runner.invoke(app, [*command, "-o", str(tmp_path / "out")])
    assert printed.exit_code == 2 and "Traceback" not in printed.output
    assert f"error: {path}:{said}" in " ".join(printed.output.split())
    assert not (tmp_path / "out").exists()


def test_a_bad_parquet_row_or_file_names_the_row_or_the_columns(tmp_path):
    path = tmp_path / "snippets.parquet"
    pq.write_table(pa.table({"id": ["a", "b"], "body": ["x", "y"]}), path)
    with pytest.raises(ValueError, match=r"need the columns text and date \(or year\); it has id"):
        read_dated_texts(path)
    pq.write_table(pa.table({"text": ["x", None], "date": ["2019", "2020"]}), path)
    with pytest.raises(ValueError) as err:
        read_dated_texts(path)
    assert str(err.value) == f"{path}: row 2: the text is empty"
    path.write_bytes(b"PAR1 not really")
    with pytest.raises(ValueError, match=r"snippets.parquet: not a readable Parquet file"):
        read_dated_texts(path)


def test_a_family_column_no_row_has_is_refused_before_scoring(tmp_path):
    path, model = hand_made(tmp_path)
    with pytest.raises(ValueError, match=r"--family-by topic: no row has a text field of that"):
        probed(path, model, family_by="topic")
    assert model.asked == []


def test_the_command_line_prints_each_familys_estimate(tmp_path, tiny):
    path, _ = hand_made(tmp_path)
    model_dir = tmp_path / "llama"
    tiny("llama").model.save_pretrained(model_dir)
    tiny("llama").tokenizer.save_pretrained(model_dir)
    out = tmp_path / "out"
    printed = runner.invoke(
        app, ["probe", "doc-cutoff", str(path), "-m", str(model_dir), "--device", "cpu", "-o",
              str(out), "--resamples", "50"],
    )  # fmt: skip
    assert printed.exit_code == 0, printed.output
    for words in ("cutoff news", "cutoff wiki", "documents"):
        assert words in printed.output
    entry = json.loads((out / "metrics.json").read_text())["models"][str(model_dir)]
    assert entry["resamples"] == 50 and entry["n"] == len(DOCUMENTS)


# ----- the report section ----------------------------------------------------------------------


def test_the_report_draws_each_models_curve_and_lists_each_familys_estimate(tmp_path):
    from chronoprobe.report.blocks import Image, Table, Text
    from chronoprobe.report.sections import section_kind

    path, model = hand_made(tmp_path)
    chronoprobe.probe("doc-cutoff", path, model=model, out=tmp_path / "step")
    record = {"id": "docs", "kind": "probe", "params": {"view": "doc-cutoff"}}
    section = section_kind("probe", record).build(tmp_path / "step", record)
    assert section.title == "Effective cutoff, the documents' way: docs"
    images = [b for b in section.blocks if isinstance(b, Image)]
    assert [i.alt for i in images] == [
        "perplexing's perplexity by period of the texts, the period of lowest marked",
        "perplexing's perplexity by period for each family of texts",
    ]
    assert images[0].caption.startswith("Effective cutoff (lowest perplexity): 2016 [")
    data = images[0].data
    assert [row[0] for row in data.rows] == ["2016", "2017", "2018"]
    assert data.rows[0][1].startswith(f"{math.exp(1.375):.2f} [")
    table = next(b for b in section.blocks if isinstance(b, Table))
    assert table.columns[0] == "family"
    assert [(r[0], r[1].split(" ")[0], r[3]) for r in table.rows] == [
        ("news", "2017", 6),
        ("wiki", "2016", 5),
        ("all", "2016", 11),
    ]
    assert table.rows[1][1:3] == ["2016 [2016, 2016]", "100%"]
    notes = [b.text for b in section.blocks if isinstance(b, Text)]
    assert notes == [
        "A period's perplexity: exp(mean over documents of each document's per-token NLL)."
    ]


def test_a_model_that_scored_nothing_gets_a_note(tmp_path):
    from chronoprobe.report.blocks import Text
    from chronoprobe.report.sections import section_kind

    metrics = {"models": {"m": {"predicted": 0, "skipped": {"dated outside 2030..2031": 4}}}}
    (tmp_path / "metrics.json").write_text(json.dumps(metrics))
    record = {"id": "none", "kind": "probe", "params": {"view": "doc-cutoff"}}
    section = section_kind("probe", record).build(tmp_path, record)
    assert section.blocks == [
        Text("m answered none of the rows (skipped: 4 dated outside 2030..2031).", style="error")
    ]
