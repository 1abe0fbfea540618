"""ECBD span selection on hand-written articles: the paper's rules, one by one."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from chronoprobe.datasets.articles import Article, iter_articles, paragraphs
from chronoprobe.datasets.ecbd import (
    ECBDConfig,
    build_ecbd,
    find_mention,
    load_spacy,
    span_candidates,
)
from chronoprobe.kg import Entity, Fact, TemporalKG
from chronoprobe.time import TimePoint


@pytest.fixture(scope="module")
def nlp():
    return load_spacy()


def candidates(nlp, sentence, names=("Megxit",), seed=0):
    return list(
        span_candidates(nlp(sentence), "Q1", list(names), ECBDConfig(), np.random.default_rng(seed))
    )


def test_mentions_inside_quotes_are_ignored():
    sentence = 'The tabloid printed "Megxit" first, and Megxit became a word.'
    start, end = find_mention(sentence, ["Megxit"])
    assert sentence[start:end] == "Megxit" and start == sentence.index("and Megxit") + 4
    assert find_mention('They wrote "Megxit" only.', ["Megxit"]) is None
    assert find_mention("Megxits are plural.", ["Megxit"]) is None  # word boundary


def test_longest_alias_and_earliest_position():
    sentence = "The Duke of Sussex and Harry met."
    assert find_mention(sentence, ["Harry", "Duke of Sussex"]) == (4, 18)


def test_np_spans_follow_the_mention_within_ten_words(nlp):
    sentence = (
        "In January 2020 Megxit dominated the British press for weeks while the royal family "
        "held talks at Sandringham about the future."
    )
    found = candidates(nlp, sentence)
    mention_end = sentence.index("Megxit") + len("Megxit")
    nps = [sentence[c.span[0] : c.span[1]] for c in found if c.span_type == "np"]
    assert "the British press" in nps and "weeks" in nps and "the royal family" in nps
    assert "January" not in " ".join(nps)  # before the mention
    assert "Sandringham" not in nps and "the future" not in nps  # more than ten words away
    for c in found:
        assert c.span[0] >= mention_end  # after, never overlapping
        words_between = sentence[mention_end : c.span[0]].split()
        assert len(words_between) < 10


def test_random_span_is_one_to_five_words_after_the_mention(nlp):
    sentence = "Megxit was announced by the couple on social media in January 2020."
    for seed in range(20):
        (random,) = [c for c in candidates(nlp, sentence, seed=seed) if c.span_type == "random"]
        text = sentence[random.span[0] : random.span[1]]
        assert 1 <= len(text.split()) <= 5
        assert random.span[0] >= len("Megxit")


def test_short_sentences_and_sentences_without_mention_give_nothing(nlp):
    assert candidates(nlp, "Megxit was big.") == []  # three words
    assert candidates(nlp, "The royal couple stepped back from their duties in 2020.") == []


def kg_and_articles(tmp_path):
    facts = [Fact("Q1", "P31", "Q2", TimePoint(2020), None)]
    entities = [
        Entity("Q1", "Megxit", aliases=("Sussex exit",), start=TimePoint(2020, 1, 8)),
        Entity("Q2", "event"),
    ]
    kg = TemporalKG.from_records(facts, entities)
    filler = " ".join(["Words fill the article so that it is long enough to qualify."] * 60)
    text = (
        "Megxit is the withdrawal of Prince Harry and Meghan from royal duties. Megxit was coined "
        "in 2019.\n"
        f"{filler}\n"
        "Megxit surprised the Queen and the government in early January.\n"
        'The press said "Megxit" was a crisis.\n'
        "Later the Sussex exit became final in March 2020 after long talks.\n"
    )
    source = tmp_path / "articles.jsonl"
    source.write_text(
        '{"id": "42", "title": "Megxit", "text": ' + __import__("json").dumps(text) + "}\n"
    )
    return kg, source


def test_build_from_a_wikipedia_record(tmp_path, nlp):
    kg, source = kg_and_articles(tmp_path)
    rows = build_ecbd(kg, iter_articles(source), ECBDConfig(popular=0), nlp=nlp)
    assert rows, "expected spans"
    sentences = {r["sentence"] for r in rows}
    assert sentences <= {
        "Megxit surprised the Queen and the government in early January.",
        "Later the Sussex exit became final in March 2020 after long talks.",
    }
    for row in rows:
        assert row["year"] == "2020" and row["entity"] == "Q1"
        assert row["definition"] == (
            "Megxit is the withdrawal of Prince Harry and Meghan from royal duties."
        )
        assert row["sentence"][row["span_start"] : row["span_end"]] == row["span"]
        assert row["span_start"] >= row["mention_end"]
        assert row["split"] in ("dev", "test")
    types = [r["span_type"] for r in rows]
    assert types.count("np") == types.count("random")


def test_short_articles_are_skipped(tmp_path, nlp):
    """And counted, so an empty build can say why (the article has 766 words: 60 fillers of 12
    words, 46 others)."""
    kg, source = kg_and_articles(tmp_path)
    seen = Counter()
    config = ECBDConfig(min_article_words=5000)
    assert build_ecbd(kg, iter_articles(source), config, nlp=nlp, articles_seen=seen) == []
    assert seen == {"matched": 1, "too short": 1, "longest": 766}


def test_build_command_says_why_nothing_was_built(tmp_path):
    from typer.testing import CliRunner

    from chronoprobe.cli.main import app

    kg, source = kg_and_articles(tmp_path)
    kg.save(tmp_path / "kg")
    out = tmp_path / "out"
    args = ["build", "ecbd", str(tmp_path / "kg"), "--articles", str(source), "-o", str(out)]
    result = CliRunner().invoke(app, [*args, "--min-article-words", "5000"])
    assert result.exit_code == 2, result.output  # a build that writes nothing fails
    message = " ".join(result.output.split())
    assert "no ECBD examples: 1 articles belong to entities with an origination date" in message
    assert "shorter than --min-article-words 5000 (the longest has 766 words)" in message
    assert not out.exists()


def test_new_entities_of_a_dump_slice_convert_and_build_without_any_fact(tmp_path):
    """Dated entities with no relation facts (new entities of a dump slice) are a KG that
    `kg convert` writes, saying that it holds entities alone, and that `build ecbd` reads."""
    import json

    from typer.testing import CliRunner

    from chronoprobe.cli.main import app
    from chronoprobe.jsonl import read_jsonl

    inception = {
        "mainsnak": {
            "snaktype": "value",
            "property": "P571",
            "datatype": "time",
            "datavalue": {
                "type": "time",
                "value": {
                    "time": "+2020-01-08T00:00:00Z",
                    "timezone": 0,
                    "before": 0,
                    "after": 0,
                    "precision": 11,
                    "calendarmodel": "http://www.wikidata.org/entity/Q1985727",
                },
            },
        },
        "type": "statement",
        "rank": "normal",
    }
    entity = {
        "type": "item",
        "id": "Q1",
        "labels": {"en": {"language": "en", "value": "Megxit"}},
        "aliases": {"en": [{"language": "en", "value": "Sussex exit"}]},
        "claims": {"P571": [inception]},
    }
    dump = tmp_path / "new.json"
    dump.write_text(f"[\n{json.dumps(entity)}\n]\n")
    _, articles = kg_and_articles(tmp_path)
    kg_dir, out = tmp_path / "kg", tmp_path / "ecbd"
    result = CliRunner().invoke(
        app, ["kg", "convert", str(dump), "-f", "wikidata-json", "-o", str(kg_dir)]
    )
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "no time-scoped facts, only entities (1, 1 of them dated, 1 with aliases)" in said
    assert "`build ecbd` reads dated entities" in said
    assert "0 facts, 1 entities, 0 relations" in said and "years" not in said
    kg = TemporalKG.load(kg_dir)
    assert len(kg) == 0 and kg.entities.column("start_year").to_pylist() == [2020]
    from chronoprobe.report.blocks import Text
    from chronoprobe.report.kg_section import kg_section

    notes = [b for b in kg_section(kg_dir, {}).blocks if isinstance(b, Text)]
    assert [(b.text, b.style) for b in notes] == [
        (
            "The KG has no facts, only entities, 1 of them dated: what ECBD reads (new entities "
            "of a dump slice).",
            "note",
        )
    ]
    args = ["build", "ecbd", str(kg_dir), "--articles", str(articles), "-o", str(out)]
    result = CliRunner().invoke(app, [*args, "--min-article-words", "50"])
    assert result.exit_code == 0, result.output
    drift = ["build", "drift", str(kg_dir), "--first", "2020", "--last", "2021"]
    refused = CliRunner().invoke(app, [*drift, "-o", str(tmp_path / "drift")])
    assert refused.exit_code == 2  # a builder of facts says why rather than write nothing
    assert (
        f"error: {kg_dir}: the KG holds no facts, only entities (1; `build ecbd` reads such a "
        "KG); this builder needs time-scoped facts"
    ) in " ".join(refused.output.split())
    rows = list(read_jsonl(out / "examples.jsonl"))
    assert rows and {(r["entity"], r["year"]) for r in rows} == {("Q1", "2020")}
    assert {r["sentence"] for r in rows} <= {
        "Megxit surprised the Queen and the government in early January.",
        "Later the Sussex exit became final in March 2020 after long talks.",
    }


def test_article_sources(tmp_path):
    folder = tmp_path / "texts"
    folder.mkdir()
    (folder / "Grover_Cleveland.txt").write_text("Grover Cleveland was a president.\nMore.")
    (article,) = list(iter_articles(folder))
    assert article == Article(
        "Grover_Cleveland", "Grover Cleveland", "Grover Cleveland was a president.\nMore."
    )
    assert paragraphs(" Grover Cleveland was a president. \n\n  \nMore.") == [
        "Grover Cleveland was a president.",
        "More.",
    ]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "1", "title": "A"}\n')
    with pytest.raises(ValueError, match=r"bad\.jsonl:1: article record without text"):
        list(iter_articles(bad))
    with pytest.raises(ValueError, match="not an article source"):
        list(iter_articles(tmp_path / "x.csv"))


def test_real_wikipedia_summaries_of_the_sample_kg(nlp):
    from pathlib import Path

    from chronoprobe.kg.samples import load_sample

    source = Path(__file__).parents[1] / "fixtures/wikipedia/summaries.jsonl"
    kg = load_sample()
    config = ECBDConfig(min_article_words=20, popular=10, seed=0)
    rows = build_ecbd(kg, iter_articles(source), config, nlp=nlp)
    assert len({row["entity"] for row in rows}) >= 10
    obama = [row for row in rows if row["entity"] == "Q76"]
    ids, alias_lists = kg.entities["id"].to_pylist(), kg.entities["aliases"].to_pylist()
    aliases = dict(zip(ids, alias_lists, strict=True))
    for row in rows:
        label = kg.label(row["entity"])
        names = {label, label.split()[-1], *(aliases[row["entity"]] or [])}
        mention = row["sentence"][row["mention_start"] : row["mention_end"]]
        assert any(mention in name for name in names), row  # e.g. "Cicero", "CR7"
        assert row["sentence"][row["span_start"] : row["span_end"]] == row["span"]
        assert row["span_start"] >= row["mention_end"]
        assert row["sentence"] not in row["definition"]  # the first paragraph is never sampled
        assert row["sentence"] == row["sentence"].strip()
    assert all(row["year"] in ("1961", "popular") for row in obama)
    assert obama and obama[0]["definition"].startswith("Barack Hussein Obama II is an American")
    assert {row["span_type"] for row in rows} == {"np", "random"}
