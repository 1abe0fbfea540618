"""`chronoprobe import cronquestions` on files in the released shapes (the pickles: sets,
integer years, ids in `question` and its text in `paraphrases[0]`; the early JSON: lists, the
annotation's year as a string), every bad value a problem of its record, and the imported
questions through `kgqa train` and `kgqa eval`."""

from __future__ import annotations

import json
import math
import pickle
import runpy
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.datasets.cronq_release import read_released_questions
from chronoprobe.jsonl import read_jsonl
from chronoprobe.kg.io.safe_pickle import safe_loads
from chronoprobe.kgqa.data import AnswerVocab, encode, read_rows

FIXTURES = Path(__file__).parents[1] / "fixtures" / "cronquestions"
QUESTIONS = FIXTURES / "questions"
MADE = runpy.run_path(str(FIXTURES / "make_questions.py"))  # what wrote the fixtures
PRESIDENT, OBAMA, TRUMP, BIDEN, CLEVELAND = "Q11696", "Q76", "Q22686", "Q6279", "Q35171"
runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def text(result) -> str:
    """A command's output, its lines joined as one (rich wraps long lines)."""
    return " ".join(result.output.split())


def row(id_, question, question_ids, type_, answers, entities, template, annotation, **fields):
    """An expected row, with the fields a question of the fixtures mostly has."""
    uniq = fields.pop("uniq_id", int(id_.rpartition("-")[2]))
    return {
        "id": id_,
        "uniq_id": uniq,
        "question": question,
        "question_ids": question_ids,
        "paraphrases": fields.pop("paraphrases", []),
        "type": type_,
        "direction": fields.pop("direction", None),
        "answer_type": fields.pop("answer_type", "entity"),
        "answers": answers,
        "entities": entities,
        "times": fields.pop("times", []),
        "relations": fields.pop("relations", ["P39"]),
        "template": template,
        "template_name": fields.pop("template_name", template),
        "annotation": annotation,
        **fields,
    }


US = "the President of the United States"
EXPECTED = [
    row(
        "train-0",
        f"Who was {US} in 2010",
        f"Who was the {PRESIDENT} in 2010",
        "simple_entity",
        [OBAMA],
        [PRESIDENT],
        "Who was the {tail} in {time}",
        {"tail": PRESIDENT, "time": 2010},
        paraphrases=["Who held the post of President of the United States in 2010"],
        times=[2010],
    ),
    row(
        "train-1",
        "When did Lionel Messi play for FC Barcelona",
        "When did Q615 play for Q7156",
        "simple_time",
        [str(year) for year in range(2004, 2022)],  # time answers as text
        ["Q615", "Q7156"],
        "When did {head} play for {tail}",
        {"head": "Q615", "tail": "Q7156"},
        answer_type="time",
        relations=["P54"],
    ),
    row(
        "train-2",
        f"Who was {US} before Donald Trump",
        f"Who was the {PRESIDENT} before {TRUMP}",
        "before_after",
        [OBAMA],
        [PRESIDENT, TRUMP],
        "Who was the {tail} before {head}",
        {"head": TRUMP, "tail": PRESIDENT, "type": "before"},
        direction="before",
        template_name="Who was the {tail} {type} {head}",
    ),
    row(
        "train-3",
        f"Who was {US} after Donald Trump",
        f"Who was the {PRESIDENT} after {TRUMP}",
        "before_after",
        [BIDEN],
        [PRESIDENT, TRUMP],
        "Who was the {tail} after {head}",
        {"head": TRUMP, "tail": PRESIDENT, "type": "after"},
        direction="after",
        template_name="Who was the {tail} {type} {head}",
    ),
    row(
        "train-4",
        "Who was the first President of the United States",
        f"Who was the first {PRESIDENT}",
        "first_last",
        [CLEVELAND],
        [PRESIDENT],
        "Who was the first {tail}",
        {"tail": PRESIDENT, "adj": "first"},
        direction="first",
        template_name="Who was the {adj} {tail}",
    ),
    row(
        "train-5",
        "Who was the last President of the United States",
        f"Who was the last {PRESIDENT}",
        "first_last",
        [BIDEN],
        [PRESIDENT],
        "Who was the last {tail}",
        {"tail": PRESIDENT, "adj": "last"},
        direction="last",
        template_name="Who was the {adj} {tail}",
    ),
    row(
        "train-6",
        "When did Cristiano Ronaldo play their last game",
        "When did Q11571 play their last game",
        "first_last",
        ["2022"],
        ["Q11571"],
        "When did {head} play their last game",
        {"head": "Q11571", "adj": "last"},
        answer_type="time",
        direction="last",
        relations=["P54"],
        template_name="When did {head} play their {adj} game",
    ),
    row(
        "train-7",
        "When did Julius Caesar hold the position of Roman consul",
        "When did Q1048 hold the position of Q39686",
        "simple_time",
        ["-59"],
        ["Q1048", "Q39686"],
        "When did {head} hold the position of {tail}",
        {"head": "Q1048", "tail": "Q39686"},
        answer_type="time",
    ),
    row(
        "train-8",
        f"Who held the position of {US[4:]} during World War II",
        f"Who held the position of {PRESIDENT} during Q362",
        "time_join",
        ["Q8007"],
        [PRESIDENT, "Q362"],
        "Who held the position of {tail} during {event_head}",
        {"tail": PRESIDENT, "event_head": "Q362"},
    ),
    row(
        "valid-0",
        "Who was President of the United States in 1886",
        f"Who was the {PRESIDENT} in 1886",
        "simple_entity",
        [CLEVELAND],
        [PRESIDENT],
        "Who was the {tail} in {time}",
        {"tail": PRESIDENT, "time": 1886},
        uniq_id=None,
        times=[1886],
    ),
    row(
        "valid-1",
        "When did the first President of the United States come to power",
        f"When did the first {PRESIDENT} come to power",
        "first_last",
        ["1885"],
        [PRESIDENT],
        "When did the first {tail} come to power",
        {"tail": PRESIDENT, "adj": "first"},
        uniq_id=None,
        answer_type="time",
        direction="first",
        template_name="When did the {adj} {tail} come to power",
    ),
    row(
        "test-0",
        f"Who held the position of {US[4:]} after Barack Obama",
        f"Who held the position of {PRESIDENT} after {OBAMA}",
        "before_after",
        [TRUMP],
        [PRESIDENT, OBAMA],
        "Who held the position of {tail} after {head}",
        {"head": OBAMA, "tail": PRESIDENT, "type": "after"},
        direction="after",
    ),
    row(
        "test-1",
        "When did Joe Biden become President of the United States",
        f"When did {BIDEN} become {PRESIDENT}",
        "simple_time",
        ["2021"],
        [BIDEN, PRESIDENT],
        "When did {head} become {tail}",
        {"head": BIDEN, "tail": PRESIDENT},
        answer_type="time",
    ),
]


def test_the_fixtures_are_in_the_released_shapes_and_what_the_script_writes():
    for split, questions in MADE["QUESTIONS"].items():
        loaded = safe_loads((QUESTIONS / f"{split}.pickle").read_bytes())
        assert loaded == questions
        assert all(isinstance(q["answers"], set) and isinstance(q["entities"], set) for q in loaded)
        assert all(isinstance(q["uniq_id"], int) for q in loaded)
        assert [q["uniq_id"] for q in loaded] == list(range(len(loaded)))  # each split from 0
    assert loaded[1]["answers"] == {2021} and loaded[0]["question"].endswith("after Q76")
    assert json.loads((QUESTIONS / "valid.json").read_text()) == MADE["EARLY_JSON"]["valid"]
    early = MADE["EARLY_JSON"]["valid"][0]
    assert early["annotation"]["time"] == "1886" and "uniq_id" not in early


def test_released_files_import_as_exact_rows(tmp_path):
    out = tmp_path / "cronq"
    result = invoke("import", "cronquestions", QUESTIONS, "-o", out)
    assert result.exit_code == 0, result.output
    assert list(read_jsonl(out / "questions.jsonl")) == EXPECTED
    for split in ("train", "valid", "test"):
        want = [r for r in EXPECTED if r["id"].startswith(f"{split}-")]
        assert list(read_jsonl(out / f"{split}.jsonl")) == want
    stats = json.loads((out / "stats.json").read_text())
    assert (stats["train"]["questions"], stats["valid"]["questions"]) == (9, 2)
    assert stats["all"]["answer_types"] == {"entity": 8, "time": 5}
    assert stats["entity_order"] == "question"
    # the released template counts once for before and after alike
    assert stats["train"]["templates"]["Who was the {tail} {type} {head}"] == 2
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["skipped"] == {} and metrics["entity_order"] == "question"


def test_filled_templates_let_the_template_reader_tell_opposite_questions_apart(tmp_path):
    """Before and after (first and last) share a released template; the encoder reading
    templates saw one input for questions with opposite answers."""
    out = tmp_path / "cronq"
    assert invoke("import", "cronquestions", QUESTIONS, "-o", out).exit_code == 0
    rows = read_rows(out / "train.jsonl", "template")
    vocab = AnswerVocab((PRESIDENT, TRUMP, OBAMA, BIDEN, CLEVELAND), (2010,))
    inputs = dict(zip([r["id"] for r in rows], encode(rows, vocab, "template").inputs, strict=True))
    assert inputs["train-2"] == "Who was the {tail} before {head}"
    assert inputs["train-3"] == "Who was the {tail} after {head}"
    assert (inputs["train-4"], inputs["train-5"]) == (
        "Who was the first {tail}",
        "Who was the last {tail}",
    )
    by_id = {r["id"]: r for r in rows}
    assert by_id["train-2"]["template_name"] == by_id["train-3"]["template_name"]


def test_entities_follow_the_question_by_default_and_the_annotation_when_asked(tmp_path):
    """CronKGQA's code orders a question's entities by where its id form names them; the
    annotation's head and tail, which the paper withholds from test questions, order them
    only with --entity-order annotation."""
    out = tmp_path / "annotated"
    result = invoke("import", "cronquestions", QUESTIONS, "--entity-order", "annotation", "-o", out)
    assert result.exit_code == 0, result.output
    got = {r["id"]: r["entities"] for r in read_jsonl(out / "questions.jsonl")}
    assert got["train-2"] == [TRUMP, PRESIDENT] and got["test-0"] == [OBAMA, PRESIDENT]
    assert got["train-8"] == [PRESIDENT, "Q362"] and got["test-1"] == [BIDEN, PRESIDENT]
    changed = {r["id"] for r in EXPECTED if r["entities"] != got[r["id"]]}
    assert changed == {"train-2", "train-3", "test-0"}
    assert json.loads((out / "stats.json").read_text())["entity_order"] == "annotation"
    # A question whose id form names Q76 and Q7654: Q76 is where "Q76" stands, not in Q7654.
    question = {**MADE["QUESTIONS"]["test"][0], "question": "Who was Q7654 after Q76"}
    question["entities"] = {"Q76", "Q7654"}
    path = tmp_path / "test.pickle"
    path.write_bytes(pickle.dumps([question]))
    (only,) = read_released_questions(path)
    assert only["entities"] == ["Q7654", "Q76"]
    (only,) = read_released_questions(path, entity_order="annotation")
    assert only["entities"] == [OBAMA, PRESIDENT, "Q7654"]


def test_one_file_reads_through_the_python_function_and_a_row_in_words_stays(tmp_path):
    path = tmp_path / "valid.pickle"
    words = {
        **MADE["QUESTIONS"]["test"][1],
        "question": "When did Joe Biden become President",  # already words: no ids in it
        "paraphrases": [],
        "uniq_id": 4,
    }
    for protocol in (2, 3, 4, 5):
        path.write_bytes(pickle.dumps([words], protocol=protocol))
        (got,) = read_released_questions(path)
        assert (got["id"], got["question"], got["question_ids"]) == (
            "valid-4",
            "When did Joe Biden become President",
            "When did Joe Biden become President",
        )
    assert read_released_questions(QUESTIONS / "train.pickle") == EXPECTED[:9]
    assert read_released_questions(QUESTIONS / "valid.json") == EXPECTED[9:11]
    with pytest.raises(ValueError, match=r"its name gives no split"):
        read_released_questions(shutil.copy(QUESTIONS / "test.pickle", tmp_path / "q.pickle"))
    got = read_released_questions(tmp_path / "q.pickle", split="valid")
    assert [r["id"] for r in got] == ["valid-0", "valid-1"]


GOOD = MADE["QUESTIONS"]["train"][2]  # a before/after question, uniq_id 2
NAN = math.nan
# (what changes in GOOD, the reason its import gives): values of every wrong kind seen in use
BAD = [
    (
        {"annotation": {("head",): TRUMP, "tail": PRESIDENT}},
        "annotation key ('head',) is not a slot name",
    ),
    ({"question": 5}, "question must be text, not a number"),
    ({"question": None}, "question must be text, not null"),
    ({"question": b"Who was the Q11696 before Q22686"}, "question must be text, not bytes"),
    ({"answers": [[OBAMA]]}, "answers must be a string id, not a list"),
    ({"answers": {OBAMA, 2009}}, "answers must be a string id, not a number"),
    ({"answers": set()}, "no answers"),
    ({"answers": OBAMA}, "answers must be a list or set, not str"),
    ({"answers": {"Q 76"}}, "answers is not an id: 'Q 76'"),
    ({"times": {NAN}}, "times: nan is not a year (an integer)"),
    ({"times": {2010.0}}, "times: 2010.0 is not a year (an integer)"),
    ({"times": "2010"}, "times must be a list or set, not str"),
    ({"entities": {"Q1\n"}}, "entities is not an id: 'Q1\\n'"),
    ({"relations": None}, "relations must be a list or set, not null"),
    ({"uniq_id": -3}, "uniq_id must be a whole number of 0 or more, not -3"),
    ({"uniq_id": "2"}, "uniq_id must be a whole number of 0 or more, not '2'"),
    ({"uniq_id": True}, "uniq_id must be a whole number of 0 or more, not True"),
    (
        {"paraphrases": []},
        "question names Wikidata ids (Q11696, Q22686) and no paraphrase gives its text "
        "(paraphrases[0] holds it in the release)",
    ),
    ({"paraphrases": [None]}, "paraphrase 0 is no text (null)"),
    ({"paraphrases": ["  "]}, "paraphrase 0 is no text (empty)"),
    ({"answer_type": "date"}, "answer_type 'date' is not entity or time"),
    ({"answer_type": "time"}, "a before_after question has entity answers, not time"),
    ({"type": "sometimes"}, "type 'sometimes' is not one of"),
    ({"type": ["before_after"]}, "type ['before_after'] is not one of"),
    (
        {"annotation": {"head": TRUMP, "tail": PRESIDENT}},
        "template slot {type} but no type (before or after) in the annotation",
    ),
    ({"annotation": None}, "template slot {tail} but no tail in the annotation"),
    # an entity or time slot the annotation does not fill: the head or tail is unknown
    (
        {"annotation": {"tail": PRESIDENT, "type": "before"}},
        "template slot {head} but no head in the annotation",
    ),
    (
        {"template": "Who was the {tail} {type} {head} in {time}"},
        "template slot {time} but no time in the annotation",
    ),
    ({"template": "Who was the {tail} {type} {foo}"}, "template slot {foo} but no foo in"),
    (
        {"paraphrases": ["Who was the Q11696 before Q22686?"]},
        "paraphrase 0, the question's text, names Wikidata ids (Q11696, Q22686)",
    ),
    (
        {"annotation": {"head": TRUMP, "type": "during"}},
        "annotation type must be before or after, not 'during'",
    ),
    ({"annotation": [TRUMP]}, "annotation must map slots to values, not a list"),
    (
        {"annotation": {"head": 76, "type": "before"}},
        "annotation head must be a string id, not a number",
    ),
    ({"template": 5}, "template must be text, not a number"),
    # a pickle's strings may hold lone surrogates, which no UTF-8 file can
    ({"paraphrases": ["Who was \ud800"]}, "paraphrase 0 holds U+D800, a lone surrogate (no text)"),
    ({"entities": {"Q\udc00"}}, "entities holds U+DC00, a lone surrogate (no text)"),
    (
        {"annotation": {"head\ud800": TRUMP, "type": "before"}},
        "annotation key holds U+D800, a lone surrogate (no text)",
    ),
    ({"template": "Who \ud800 {type}"}, "template holds U+D800, a lone surrogate (no text)"),
    (
        {"paraphrases": {"Who was it"}},
        "paraphrases must be a list (its first is the question's text), not a set",
    ),
    ({"times": {1j}}, "times: 1j is not a year (an integer)"),
    ({"times": {math.inf}}, "times: inf is not a year (an integer)"),
]
TIME = MADE["QUESTIONS"]["train"][1]  # a simple_time question, uniq_id 1
BAD_TIMES = [
    ({"answers": {NAN}}, "answers: nan is not a year (an integer)"),
    ({"answers": {True}}, "answers: True is not a year (an integer)"),
    ({"answers": {0}}, "answers: year 0 does not exist (1 BCE is -1)"),
    ({"answers": {2009, "Q76"}}, "answers: 'Q76' is not a year (an integer)"),
    ({"answers": {2**40}}, "answers: year +1099511627776 is outside"),
    (
        {"annotation": {"head": "Q615", "time": "abc"}},
        "annotation time: 'abc' is not a year (an integer)",
    ),
    (
        {"annotation": {"head": "Q615", "time": 0.5}},
        "annotation time: 0.5 is not a year (an integer)",
    ),
    ({"answer_type": "entity"}, "a simple_time question has time answers, not entity"),
]
CASES = [(GOOD, *case) for case in BAD] + [(TIME, *case) for case in BAD_TIMES]


@pytest.mark.parametrize(("good", "change", "reason"), CASES, ids=[c[2][:40] for c in CASES])
def test_a_bad_value_stops_the_import_at_its_record(tmp_path, good, change, reason):
    path = tmp_path / "train.pickle"
    path.write_bytes(pickle.dumps([good, {**good, **change, "uniq_id": change.get("uniq_id", 9)}]))
    out = tmp_path / "out"
    result = invoke("import", "cronquestions", path, "-o", out)
    assert result.exit_code == 2, result.output
    assert f"error: {path}: question:1: {reason}" in text(result)
    assert "Traceback" not in result.output and not (out / "questions.jsonl").exists()


def test_bad_records_are_skipped_and_counted_with_skip_bad(tmp_path):
    path = tmp_path / "train.pickle"
    bad = [
        {**GOOD, **change, "uniq_id": change.get("uniq_id", 10 + k)}
        for k, (change, _) in enumerate(BAD)
    ]
    bad += [{**TIME, **change, "uniq_id": 50 + k} for k, (change, _) in enumerate(BAD_TIMES)]
    twice = {**TIME, "uniq_id": 2}  # GOOD's uniq_id, again
    path.write_bytes(pickle.dumps([GOOD, *bad, 5, twice, {**TIME, "uniq_id": 99}]))
    out = tmp_path / "out"
    result = invoke("import", "cronquestions", path, "--skip-bad", "-o", out)
    assert result.exit_code == 0, result.output
    assert [r["id"] for r in read_jsonl(out / "train.jsonl")] == ["train-2", "train-99"]
    skipped = json.loads((out / "metrics.json").read_text())["skipped"]
    assert skipped == {
        "bad annotation": 3,
        "bad question": 5,
        "bad id": 5,
        "no answers": 1,
        "bad answers": 1,
        "bad year": 11,
        "bad times": 1,
        "bad relations": 1,
        "bad uniq_id": 3,
        "no question text": 2,
        "bad type": 5,
        "bad template": 6,
        "duplicate uniq_id": 1,
        "bad text": 4,
        "bad paraphrases": 1,
        "no question": 1,
    }
    assert sum(skipped.values()) == len(bad) + 2
    assert f"{path}: question:{len(bad) + 2}: uniq_id 2 again in the train split" in text(result)
    path.write_bytes(pickle.dumps([GOOD, 5]))
    result = invoke("import", "cronquestions", path, "-o", tmp_path / "strict")
    assert result.exit_code == 2
    assert f"error: {path}: question:1: a question is a dict, not a number" in text(result)


def test_the_early_json_names_file_and_line_and_same_ids_in_two_files_of_a_split(tmp_path):
    rows = json.loads((QUESTIONS / "valid.json").read_text())
    path = tmp_path / "valid.json"
    path.write_text(
        "[\n"
        + ",\n".join(json.dumps(r) for r in [rows[0], {**rows[1], "question": None}])
        + "\n]\n"
    )
    result = invoke("import", "cronquestions", path, "-o", tmp_path / "a")
    assert result.exit_code == 2
    assert f"error: {path}:3: question must be text, not null" in text(result)
    lines = tmp_path / "dev.jsonl"  # JSON Lines; dev is the valid split
    lines.write_text("".join(json.dumps({**r, "uniq_id": 5}) + "\n" for r in rows))
    result = invoke("import", "cronquestions", lines, "-o", tmp_path / "b")
    assert result.exit_code == 2
    assert f"error: {lines}:2: uniq_id 5 again in the valid split (first at {lines}:1)" in text(
        result
    )
    # the release numbers each split from 0: train-0 and test-0 are two questions
    out = tmp_path / "c"
    files = (QUESTIONS / "train.pickle", QUESTIONS / "test.pickle")
    assert invoke("import", "cronquestions", *files, "-o", out).exit_code == 0
    ids = [r["id"] for r in read_jsonl(out / "questions.jsonl")]
    assert ids[0] == "train-0" and ids[9] == "test-0" and len(set(ids)) == len(ids) == 11
    # the same split's file given twice: its questions again, each one reported
    result = invoke(
        "import", "cronquestions", files[1], files[1], "--skip-bad", "-o", tmp_path / "d"
    )
    assert result.exit_code == 0 and "2 duplicate uniq_id" in text(result)


def test_the_release_folder_stands_for_its_split_files(tmp_path):
    folder = tmp_path / "questions"
    shutil.copytree(QUESTIONS, folder)
    (folder / "README.txt").write_text("not questions")
    (folder / "train.txt").write_text("Q1\tP1\tQ2\t2000\t2001\n")  # a KG split, not questions
    files = [QUESTIONS / name for name in ("test.pickle", "valid.json", "train.pickle")]
    result = invoke("import", "cronquestions", *files, "-o", tmp_path / "files")
    assert result.exit_code == 0, result.output
    result = invoke("import", "cronquestions", folder, "-o", tmp_path / "folder")
    assert result.exit_code == 0, result.output
    by_split = ("train.jsonl", "valid.jsonl", "test.jsonl", "stats.json")
    for name in by_split:
        assert (tmp_path / "folder" / name).read_bytes() == (tmp_path / "files" / name).read_bytes()
    empty = tmp_path / "empty"
    empty.mkdir()
    result = invoke("import", "cronquestions", empty, "-o", tmp_path / "y")
    assert result.exit_code != 0
    assert f"{empty}: a folder with no .pickle or .pkl or .json or .jsonl file in it" in text(
        result
    )


def test_a_file_without_a_split_name_needs_split_and_other_formats_are_named(tmp_path):
    rows = tmp_path / "questions.json"
    rows.write_text((QUESTIONS / "valid.json").read_text())
    result = invoke("import", "cronquestions", rows, "-o", tmp_path / "out")
    assert result.exit_code != 0 and "its name gives no split" in result.output
    result = invoke("import", "cronquestions", rows, "--split", "test", "-o", tmp_path / "out")
    assert result.exit_code == 0, result.output
    got = list(read_jsonl(tmp_path / "out" / "test.jsonl"))
    assert [r["id"] for r in got] == ["test-0", "test-1"]
    ecbd = Path(__file__).parents[1] / "fixtures" / "ecbd" / "2019" / "np_spans_dev.json"
    result = invoke("import", "cronquestions", ecbd, "--split", "test", "-o", tmp_path / "bad")
    assert result.exit_code != 0
    assert "looks like ecbd rows" in text(result)


def test_imported_questions_go_through_kgqa_train_and_eval(tmp_path):
    questions = tmp_path / "cronq"
    assert invoke("import", "cronquestions", QUESTIONS, "-o", questions).exit_code == 0
    kg = tmp_path / "kg"
    result = invoke("kg", "convert", FIXTURES / "kg", "-f", "cronquestions", "-o", kg)
    assert result.exit_code == 0, result.output
    tkg = tmp_path / "tkg"
    args = ["--arch", "tcomplex", "--rank", "8", "--epochs", "1", "--device", "cpu"]
    result = invoke("tkg", "train", kg, *args, "-o", tkg)
    assert result.exit_code == 0, result.output
    qa = tmp_path / "qa"
    args = ["--tkg", tkg, "--arch", "lm", "--encoder", "tiny", "--epochs", "1", "--device", "cpu"]
    result = invoke("kgqa", "train", questions, *args, "-o", qa)
    assert result.exit_code == 0, result.output
    out = tmp_path / "eval"
    result = invoke("kgqa", "eval", qa, questions, "--split", "test", "--json", "-o", out)
    assert result.exit_code == 0, result.output
    predictions = pq.read_table(out / "predictions.parquet").to_pylist()
    assert sorted(p["id"] for p in predictions) == ["test-0", "test-1"]
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["questions"] == 2 and metrics["split"] == "test"
