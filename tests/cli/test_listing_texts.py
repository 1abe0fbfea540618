"""`chronoprobe list` sums each entry up whole: a docstring's first paragraph however its source
wraps it (its first sentence when long), never cut at the end of a source line."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from chronoprobe.cli.listing import TABLES
from chronoprobe.cli.main import app
from chronoprobe.registry import first_sentence, summary

runner = CliRunner()


def listed(what: str) -> list[dict]:
    result = runner.invoke(app, ["list", what, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_the_importers_are_summed_up_by_whole_sentences():
    about = {row["importer"]: row["about"] for row in listed("importers")}
    assert about["cronquestions"] == (
        "Import CronQuestions (Saxena et al., ACL 2021): the released question pickles, or the "
        "same rows as JSON, as `kgqa train` and `kgqa eval` read them."
    )
    builders = {row["builder"]: row["about"] for row in listed("builders")}
    assert builders["dates"].startswith("Build dated statements for the date-context test")
    assert builders["dates"].endswith("at year, month and day precision.")


def test_no_summary_ends_where_a_source_line_did():
    """A summary ends a sentence (., ?, !, a closing bracket), or is a paragraph ending
    without a period: never a word that continues on the docstring's next line."""
    for what in TABLES:
        if what == "families":
            continue
        for row in listed(what):
            about = row.get("about") or ""
            assert "\n" not in about, (what, about)
            assert not about.endswith((",", ";", " the", " a", " of", " or", " and")), (
                what,
                about,
            )


def test_a_summary_keeps_abbreviations_and_closes_a_paragraph_leading_into_a_list():
    assert first_sentence("Rank (e.g. P@1) by Lacroix et al. 2020. Then more.") == (
        "Rank (e.g. P@1) by Lacroix et al. 2020."
    )
    assert summary("Build dated statements:\n\n- one\n- two") == "Build dated statements."
    long = "A sentence that goes on. " + "word " * 60
    assert summary(long) == "A sentence that goes on."
    assert summary("Two short\nlines. Kept whole.") == "Two short lines. Kept whole."


def test_every_entry_says_what_it_is_in_its_own_words():
    """No entry is listed without a summary, nor with another's: a class without a docstring
    of its own was summed up by its base's (causal and seq2seq both as DecoderLM, the QA
    models as their base, symbolic as any language model). Views sharing one report section
    share its summary."""
    for what in TABLES:
        if what == "families":
            continue
        rows = listed(what)
        key = next(iter(rows[0]))
        assert [row[key] for row in rows if not row.get("about")] == [], what
        if what == "sections":
            continue
        abouts = [row["about"] for row in rows]
        assert len(set(abouts)) == len(abouts), (what, abouts)
    models = {row["model"]: row["about"] for row in listed("models")}
    assert models["symbolic"].startswith("A `train memorize` model")
