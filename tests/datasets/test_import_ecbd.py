"""`chronoprobe import ecbd|ecbd-ekp`: released rows into span-ppl examples with checked
offsets, then probed by `probe span-ppl` on a tiny model; bad rows name file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.jsonl import read_jsonl
from chronoprobe.models.tiny import random_model
from chronoprobe.models.tokenizer import train_tokenizer

FIXTURES = Path(__file__).parents[1] / "fixtures"
ECBD = [
    FIXTURES / "ecbd" / "2019" / "np_spans_dev.json",
    FIXTURES / "ecbd" / "popular" / "random_spans_test.json",
]
EKP = FIXTURES / "ecbd-ekp" / "all_ent_2020_2021_np_easy.json"
DATES = FIXTURES / "ecbd-dates"  # ECBD's 2020 rows of one of EKP's entities (Mangum Fire)
NO_DATE = (
    "the release gives no origination date; give ECBD's release files (`years_from`) to date "
    "its entities by their Wikipedia page"
)
runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def imported(tmp_path, fmt: str, *args) -> Path:
    out = tmp_path / fmt
    result = invoke("import", fmt, *args, "-o", out)
    assert result.exit_code == 0, result.output
    return out


def test_ecbd_rows_are_rebuilt_with_checked_offsets(tmp_path):
    out = imported(tmp_path, "ecbd", *ECBD)
    rows = list(read_jsonl(out / "examples.jsonl"))
    gpt2 = "The GPT-2 model has 1.5 billion parameters, and it was trained on web pages."
    gpt2_definition = "GPT-2 is a language model that OpenAI released in 2019."
    assert rows == [
        {
            "id": "GPT-2_66045029_4_0",
            "entity": "GPT-2",
            "year": "2019",
            "span_type": "np",
            "sentence": gpt2,
            "mention_start": 4,
            "mention_end": 9,
            "span_start": 20,
            "span_end": 42,
            "span": "1.5 billion parameters",
            "definition": gpt2_definition,  # first sentence, markers removed
            "split": "dev",  # from the file name
            "released_span_type": "NP-COMMON",
        },
        {  # the same sentence's other span: the released id repeats, ours does not
            "id": "GPT-2_66045029_4_0~2",
            "entity": "GPT-2",
            "year": "2019",
            "span_type": "np",
            "sentence": gpt2,
            "mention_start": 4,
            "mention_end": 9,
            "span_start": 66,
            "span_end": 75,
            "span": "web pages",
            "definition": gpt2_definition,
            "split": "dev",
            "released_span_type": "NP-COMMON",
        },
        {  # the word at entity_span_loc is "Disney+,": the mention is narrowed to its name
            "id": "Disney+_58920314_2_1",
            "entity": "Disney+",
            "year": "2019",  # an integer year in the file
            "span_type": "np",
            "sentence": "Soon after launch, Disney+, the streaming service, gained ten million "
            "subscribers.",
            "mention_start": 19,
            "mention_end": 26,
            "span_start": 58,
            "span_end": 69,
            "span": "ten million",
            "definition": "Disney+ is a subscription video service owned by Disney.",
            "split": "dev",
            "released_span_type": "NP-PROPER",
        },
        {  # a file in the popular folder: the POPULAR group
            "id": "Barack Obama_534366_3_2",
            "entity": "Barack Obama",
            "year": "popular",
            "span_type": "random",
            "sentence": "In 2009 Barack Obama was awarded the Nobel Peace Prize.",
            "mention_start": 8,
            "mention_end": 20,
            "span_start": 25,
            "span_end": 32,
            "span": "awarded",
            "definition": "Barack Obama is an American politician who served as the 44th "
            "president.",
            "split": "test",
            "released_span_type": "RANDOM",
        },
    ]
    stats = json.loads((out / "stats.json").read_text())
    assert stats == {"examples": 4, "groups": {"2019": 3, "popular": 1}, "entities": 3}
    split = imported(tmp_path / "given", "ecbd", ECBD[0], "--split", "test", "--year", "2020")
    assert {(r["split"], r["year"]) for r in read_jsonl(split / "examples.jsonl")} == {
        ("test", "2020")
    }


def test_the_release_folder_reads_as_its_files_popular_group_included(tmp_path):
    files = imported(tmp_path / "files", "ecbd", *ECBD)
    folder = imported(tmp_path / "folder", "ecbd", FIXTURES / "ecbd")
    for name in ("examples.jsonl", "stats.json"):
        assert (folder / name).read_bytes() == (files / name).read_bytes()
    assert {row["year"] for row in read_jsonl(folder / "examples.jsonl")} == {"2019", "popular"}


def test_ekp_probe_sentences_are_one_example_each(tmp_path):
    out = imported(tmp_path, "ecbd-ekp", EKP)
    rows = list(read_jsonl(out / "examples.jsonl"))
    definition = "The Mangum Fire was a wildfire burning in Kaibab National Forest in Arizona."
    assert rows[1] == {
        "id": "Mangum Fire_64297770_2_5/template_1",
        "entity": "Mangum Fire",
        "year": "unknown",
        "span_type": "np",  # from the file name
        "sentence": "Crews fought the Mangum Fire for three weeks.",
        "mention_start": 17,
        "mention_end": 28,
        "span_start": 33,
        "span_end": 44,
        "span": "three weeks",
        "definition": definition,  # its own masked span filled in
        "split": None,
        "category": "event",
        "year_missing": NO_DATE,
    }
    mentions = [
        (r["id"], r["span"], r["sentence"][r["mention_start"] : r["mention_end"]]) for r in rows
    ]
    assert mentions == [
        ("Mangum Fire_64297770_2_5/template_0", "Jacob Lake", "Mangum Fire"),
        ("Mangum Fire_64297770_2_5/template_1", "three weeks", "Mangum Fire"),
        ("UFC 250_63727929_1_2/template_0", "place", "UFC 250"),
    ]
    ufc = "UFC 250 was a mixed martial arts event held in Nevada in June 2020."
    assert rows[2]["definition"] == ufc
    stats = json.loads((out / "stats.json").read_text())
    assert stats["groups"] == {"unknown": 3} and stats["undated"] == {NO_DATE: 3}


def test_ekp_rows_take_the_year_ecbd_gives_their_wikipedia_page(tmp_path):
    """The EKP release carries no origination date; ECBD's rows carry their page's year, and
    EKP ids are ECBD ids ({title}_{pageid}_...): Mangum Fire (page 64297770) is dated by
    ECBD's 2020 row, UFC 250 (63727929), in none of the files given, says why it is not."""
    out = imported(tmp_path, "ecbd-ekp", EKP, "--years-from", DATES, "--years-from", ECBD[0])
    rows = list(read_jsonl(out / "examples.jsonl"))
    assert [(r["entity"], r["year"], r.get("year_missing")) for r in rows] == [
        ("Mangum Fire", "2020", None),
        ("Mangum Fire", "2020", None),
        ("UFC 250", "unknown", "its Wikipedia page (63727929) is in none of ECBD's rows given"),
    ]
    stats = json.loads((out / "stats.json").read_text())
    assert stats["groups"] == {"2020": 2, "unknown": 1}
    assert stats["undated"] == {rows[2]["year_missing"]: 1}
    assert json.loads((out / "metrics.json").read_text())["undated"] == 1
    # a year given for every row wins
    given = imported(tmp_path / "given", "ecbd-ekp", EKP, "--years-from", DATES, "--year", "2021")
    rows = list(read_jsonl(given / "examples.jsonl"))
    assert {r["year"] for r in rows} == {"2021"} and not any("year_missing" in r for r in rows)


def test_ecbd_rows_that_disagree_on_a_page_date_none_of_its_rows(tmp_path):
    mangum = json.loads((DATES / "2020" / "np_spans_test.json").read_text())
    later = {**mangum, "ex_id": "Mangum Fire_64297770_4_0", "year": 2021}
    dates = _write(tmp_path / "dates.json", [mangum, later])
    out = imported(tmp_path, "ecbd-ekp", EKP, "--years-from", dates)
    rows = list(read_jsonl(out / "examples.jsonl"))
    assert rows[0]["year"] == "unknown"
    assert rows[0]["year_missing"] == "ECBD's rows of its Wikipedia page (64297770) give 2020, 2021"


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_bad_ecbd_rows_name_file_line_and_reason(tmp_path):
    good = [json.loads(line) for line in ECBD[0].read_text().splitlines()]
    cases = {
        "entity_span_loc [0, 1] holds 'The', not entity_span_str 'GPT-2'": {
            "entity_span_loc": [0, 1]
        },
        "answer_d 'web pages' and answer_str '1.5 billion parameters' differ": {
            "answer_d": {"<extra_id_0>": "web pages"}
        },
        "masked_sentence must hold <extra_id_0> exactly once": {
            "masked_sentence": "The GPT-2 model has many parameters."
        },
        "answer_str 'parameters' is not '<extra_id_0> span <extra_id_1>'": {
            "answer_str": "parameters"
        },
    }
    for number, (message, change) in enumerate(cases.items()):
        path = _write(tmp_path / f"bad{number}_dev.json", [good[2], {**good[0], **change}])
        result = invoke("import", "ecbd", path, "-o", tmp_path / "out")
        assert result.exit_code != 0
        assert f"{path}:2: {message}" in " ".join(result.output.split()), result.output
    assert not (tmp_path / "out").exists()
    result = invoke("import", "ecbd", EKP, "-o", tmp_path / "out")
    assert result.exit_code != 0
    assert f"{EKP}:1: not an ecbd row (no masked_sentence, answer_str, year, entity_span_str, " in (
        " ".join(result.output.split())
    )
    assert "looks like ecbd-ekp rows; read them with `chronoprobe import ecbd-ekp " in " ".join(
        result.output.split()
    )


def test_an_ekp_probe_sentence_without_its_entity_before_the_span_is_an_error(tmp_path):
    record = json.loads(EKP.read_text().splitlines()[1])
    record["probe_sentences"]["template_0"]["probe_sentence"] = "It would take <extra_id_0>."
    path = _write(tmp_path / "ekp.json", [record])
    result = invoke("import", "ecbd-ekp", path, "-o", tmp_path / "out")
    assert result.exit_code != 0
    expected = f"{path}:1: probe_sentences.template_0: 'UFC 250' is not mentioned before it"
    assert expected in " ".join(result.output.split())


@pytest.fixture(scope="module")
def tiny_causal(tmp_path_factory) -> Path:
    """A tiny random causal LM whose tokenizer knows the fixtures' words."""
    words = []
    for path in [*ECBD, EKP]:
        words += path.read_text().replace('"', " ").split()
    tokenizer = train_tokenizer([" ".join(words)] * 3, "llama", vocab_size=400)
    path = tmp_path_factory.mktemp("llama")
    random_model("llama", tokenizer, seed=1).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.mark.parametrize("fmt", ["ecbd", "ecbd-ekp"])
def test_an_imported_set_is_probed_by_span_ppl(tmp_path, tiny_causal, fmt):
    files = ECBD if fmt == "ecbd" else [EKP, "--years-from", DATES]
    data = imported(tmp_path, fmt, *files)
    out = tmp_path / "probe"
    args = ["-m", tiny_causal, "--device", "cpu", "--cutoff-year", "2019", "-o", out]
    result = invoke("probe", "span-ppl", data, *args)
    assert result.exit_code == 0, result.output
    predictions = pq.read_table(out / "predictions.parquet").to_pylist()
    (model,) = json.loads((out / "metrics.json").read_text())["models"].values()
    groups = {g: v["original"]["n"] for g, v in model["by_group"].items()}
    # the 2019 entities are seen by a model of 2019, the 2020 one (dated by ECBD) unseen
    assert groups == ({"popular": 1, "seen": 3} if fmt == "ecbd" else {"unseen": 2})
    rows = {r["id"]: r for r in read_jsonl(data / "examples.jsonl")}
    conditions = ["original", "no-ent", "random-def", "definition"]
    assert sorted((p["id"], p["condition"]) for p in predictions) == sorted(
        (i, c) for i in rows for c in conditions
    )
    for p in predictions:
        assert p["span"] == rows[p["id"]]["span"]
        if p["condition"] == "definition":
            assert p["definition_of"] == rows[p["id"]]["entity"]


def test_the_ecbd_files_that_date_the_rows_key_the_cached_import(tmp_path):
    """A step cached on the EKP files alone would serve the old years after the ECBD files
    that date them change."""
    from chronoprobe.datasets.imports import EKPImportParams, _fingerprint

    dates = tmp_path / "dates.json"
    dates.write_text((DATES / "2020" / "np_spans_test.json").read_text())
    params = EKPImportParams(paths=[EKP], years_from=[dates])
    before = _fingerprint(params)
    assert [str(dates) in entry for entry in before] == [False, True]
    dates.write_text(dates.read_text().replace('"2020"', '"2021"'))
    assert _fingerprint(params) != before
