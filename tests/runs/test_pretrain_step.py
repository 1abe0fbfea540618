"""The ``pretrain`` step (a masked LM on a world's text) and ``memorize`` starting from it."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from transformers import AutoModelForMaskedLM, AutoTokenizer

from chronoprobe.runs.engine import run_experiment
from chronoprobe.train.ops import _memorize_check, _model_dir, text_lines
from chronoprobe.train.params import MemorizeParams


def write_text(path: Path, texts: list[str | None], column: str = "text") -> None:
    pq.write_table(pa.table({"id": [str(n) for n in range(len(texts))], column: texts}), path)


def test_text_lines_split_articles_into_paragraphs(tmp_path):
    write_text(tmp_path / "articles.parquet", ["Ann is a person.\nShe played for X.\n\n", None])
    write_text(tmp_path / "snippets.parquet", ["  In 2001, Ann joined X.  "])
    assert text_lines(tmp_path, ["articles"]) == ["Ann is a person.", "She played for X."]
    assert text_lines(tmp_path, ["snippets", "articles"]) == [
        "In 2001, Ann joined X.",
        "Ann is a person.",
        "She played for X.",
    ]


def test_text_lines_name_what_is_missing(tmp_path):
    with pytest.raises(ValueError, match=r"no articles.parquet; pretraining on articles needs"):
        text_lines(tmp_path, ["articles"])
    write_text(tmp_path / "articles.parquet", ["x"], column="body")
    with pytest.raises(ValueError, match=r"articles.parquet: has no column 'text' \(columns: id"):
        text_lines(tmp_path, ["articles"])
    write_text(tmp_path / "snippets.parquet", ["\n", ""])
    with pytest.raises(ValueError, match="the snippets hold no text to pretrain on"):
        text_lines(tmp_path, ["snippets"])


def test_init_comes_from_a_param_or_an_earlier_step(tmp_path):
    (tmp_path / "pre" / "model").mkdir(parents=True)
    assert _model_dir(tmp_path / "pre") == tmp_path / "pre" / "model"
    (tmp_path / "hf").mkdir()  # a step whose directory is the model itself
    assert _model_dir(tmp_path / "hf") == tmp_path / "hf"
    both = _memorize_check(MemorizeParams(init="roberta-base"), frozenset({"kg", "pretrained"}))
    assert both == ["init: give `init` or the input `pretrained`, not both"]
    assert _memorize_check(MemorizeParams(), frozenset({"kg", "pretrained"})) == []
    neither = _memorize_check(MemorizeParams(), frozenset())
    assert neither and "give the statements" in neither[0]


def test_memorize_starts_from_the_pretrained_model(tmp_path, private_cache):
    config = tmp_path / "exp.yaml"
    config.write_text(
        textwrap.dedent(
            """
            name: pretrain-smoke
            steps:
              - id: world
                kind: kg
                params: {source: synth, facts: 200}
              - id: pre
                kind: pretrain
                inputs: {kg: world}
                params: {epochs: 2, batch_size: 32, vocab_size: 400, device: cpu}
              - id: feed
                kind: memorize
                inputs: {kg: world, pretrained: pre}
                params: {sample: 30, epochs: 1, batch_size: 16, learning_rate: 0.001, device: cpu}
            """
        )
    )
    run_experiment(config, tmp_path / "run")
    steps = tmp_path / "run" / "steps"
    metrics = json.loads((steps / "pre" / "metrics.json").read_text())
    assert metrics["lines"] == len(text_lines(steps / "world", ["articles"]))
    assert metrics["epochs"] == 2 and len(metrics["losses"]) == 2
    tokenizer = AutoTokenizer.from_pretrained(steps / "pre" / "model")
    model = AutoModelForMaskedLM.from_pretrained(steps / "pre" / "model")
    assert tokenizer.mask_token == "<mask>"
    assert model.config.vocab_size == len(tokenizer)  # words only: symbols come with memorize
    assert len(tokenizer) == metrics["word_vocab"] <= 400

    fed = json.loads((steps / "feed" / "metrics.json").read_text())
    assert fed["statements"] == 30
    assert fed["preset"].endswith("steps/pre/model")
    # the memorize model reads words with the pretrained tokenizer, symbols after them
    own = AutoTokenizer.from_pretrained(steps / "feed" / "model" / "tokenizer")
    assert own.get_vocab() == tokenizer.get_vocab()
    record = json.loads((steps / "feed" / "step.json").read_text())
    assert record["inputs"] == {"kg": "world", "pretrained": "pre"}
