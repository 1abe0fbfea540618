"""Every paper a page of the docs cites by its arXiv id is listed in docs/papers.md."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ARXIV = re.compile(r"arXiv:(\d{4}\.\d{4,5})")


def test_every_cited_arxiv_id_is_in_the_papers_page():
    listed = set(ARXIV.findall((ROOT / "docs" / "papers.md").read_text(encoding="utf-8")))
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    cited = {
        (page.name, found)
        for page in pages
        for found in ARXIV.findall(page.read_text(encoding="utf-8"))
    }
    assert cited, "the docs cite papers by arXiv id"
    assert sorted(c for c in cited if c[1] not in listed) == []


def test_the_probing_papers_of_the_generative_pages_are_listed():
    papers = (ROOT / "docs" / "papers.md").read_text(encoding="utf-8")
    for name in ("ChroKnowledge", "TimeStress", "TimelineKGQA"):
        assert f"**{name}.**" in papers
