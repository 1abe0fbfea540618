"""A run directory made by hand, exactly as the run contract lays it out, and its parsed report.

The KG (hand-checked numbers):

    Q1 Alice   employer (P108)        Acme   (Q10) 2000-2002
    Q1 Alice   employer (P108)        Globex (Q11) 2003-      (still true)
    Q2 Bob     employer (P108)        Acme   (Q10) 2001-2001
    Q1 Alice   award received (P166)  Prize  (Q20) 2002-2002
    Q2 Bob     award received (P166)  Prize  (Q20) 2005-2005

Years 2000-2005; facts holding per year 1, 2, 2, 1, 1, 2 (employer 1, 2, 1, 1, 1, 1; award
0, 0, 1, 0, 0, 1); shares 60% / 40%; popularity Q1 3, then Q10, Q2, Q20 2 each, Q11 1.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from chronoprobe.kg import Entity, Fact, Relation, TemporalKG
from chronoprobe.report import write_report
from chronoprobe.time import TimePoint

LONG_SNIPPET = "In January 2004 Bob said " + "that the prize was well earned, " * 10

CONFIG = {
    "name": "handmade",
    "seed": 7,
    "steps": [
        {"id": "world", "kind": "kg", "params": {"source": "synth", "facts": 5}},
        {"id": "scores", "kind": "mystery", "params": {"k": 3}, "inputs": {"kg": "world"}},
        {"id": "later", "kind": "mystery", "params": {}},
        {"id": "report", "kind": "report"},
    ],
}

ENVIRONMENT = {
    "chronoprobe": "9.9.9",
    "python": "3.11.7",
    "packages": {"numpy": "2.0.0", "duckdb": None},
    "device": "cuda:0 (Test GPU)",
    "seed": 7,
    "git_revision": "0123456789abcdef0123456789abcdef01234567",
    "started": "2026-01-31T14:05:09+00:00",
    "platform": "Linux-test",
}


def step_record(step_id: str, kind: str, *, cached: bool, seconds: float, **extra) -> dict:
    step = next(s for s in CONFIG["steps"] if s["id"] == step_id)
    return {
        "id": step_id,
        "kind": kind,
        "key": "ab" * 16,
        "params": step.get("params", {}),
        "inputs": step.get("inputs", {}),
        "cached": cached,
        "started": "2026-01-31T14:05:10+00:00",
        "finished": "2026-01-31T14:05:12+00:00",
        "seconds": seconds,
        "outputs": [],
        **extra,
    }


def save_world(directory: Path) -> None:
    people = [Entity("Q1", "Alice", type="person"), Entity("Q2", "Bob", type="person")]
    others = [Entity("Q10", "Acme"), Entity("Q11", "Globex"), Entity("Q20", "Prize")]
    y = TimePoint
    facts = [
        Fact("Q1", "P108", "Q10", y(2000), y(2002)),
        Fact("Q1", "P108", "Q11", y(2003)),
        Fact("Q2", "P108", "Q10", y(2001), y(2001)),
        Fact("Q1", "P166", "Q20", y(2002), y(2002)),
        Fact("Q2", "P166", "Q20", y(2005), y(2005)),
    ]
    relations = [Relation("P108", "employer"), Relation("P166", "award received")]
    TemporalKG.from_records(facts, people + others, relations, name="world").save(directory)
    pq.write_table(
        pa.table({"id": ["a1", "a2"], "title": ["Alice", "Bob"], "text": ["Alice is.", "Bob."]}),
        directory / "articles.parquet",
    )
    snippets = {
        "id": ["s1", "s2", "s3"],
        "entity": ["Q1", "Q2", "Q2"],
        "date": ["2001-03-04", "2001-05-06", "2004-01-01"],
        "year": [2001, 2001, 2004],
        "text": ["In March 2001 Alice joined Acme.", "Bob joined Acme.", LONG_SNIPPET],
    }
    pq.write_table(pa.table(snippets), directory / "snippets.parquet")


def make_run(root: Path) -> Path:
    """The run directory: a kg step, an unknown kind with metrics, one not run yet, the report."""
    run = root / "run"
    (run / "steps").mkdir(parents=True)
    (run / "config.yaml").write_text(yaml.safe_dump(CONFIG, sort_keys=False))
    (run / "environment.json").write_text(json.dumps(ENVIRONMENT))
    (run / "run.log").write_text("line one\nrun handmade: done <ok>\n")
    world = run / "steps" / "world"
    save_world(world)
    metrics = {"facts": 5, "entities": 5, "relations": 2, "multi_answer_share": 0.0}
    (world / "metrics.json").write_text(json.dumps(metrics))
    (world / "step.json").write_text(
        json.dumps(step_record("world", "kg", cached=True, seconds=1.5))
    )
    scores = run / "steps" / "scores"
    scores.mkdir()
    record = step_record("scores", "mystery", cached=False, seconds=12.25)
    (scores / "step.json").write_text(json.dumps(record))
    metrics = {"accuracy": 0.8125, "count": 1234, "by_split": {"new": 0.5, "old": {"a": 1}}}
    (scores / "metrics.json").write_text(json.dumps(metrics))
    pq.write_table(pa.table({"x": [1, 2, 3]}), scores / "predictions.parquet")
    return run


@dataclass
class Page(HTMLParser):
    """What the tests look at in a report: sections, tables, images, links."""

    sections: dict[str, str] = field(default_factory=dict)  # section id -> its h2 text
    tables: list[dict] = field(default_factory=list)  # {"caption", "header", "rows"}
    images: list[dict] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)  # every src and href
    svgs: int = 0
    errors: list[str] = field(default_factory=list)  # text of p.error
    text: str = ""

    def __post_init__(self) -> None:
        super().__init__()
        self._section: str | None = None
        self._capture: list[str] | None = None
        self._row: list[str] | None = None
        self._where: str | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for name in ("src", "href"):
            if name in attrs:
                self.urls.append(attrs[name])
        if tag == "section":
            self._section = attrs.get("id")
        elif tag == "h2" or (tag == "p" and attrs.get("class") == "error"):
            self._capture, self._where = [], tag
        elif tag == "table":
            self.tables.append({"caption": "", "header": [], "rows": [], "section": self._section})
        elif tag == "caption":
            self._capture, self._where = [], "caption"
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._capture, self._where = [], tag
        elif tag == "img":
            self.images.append({**attrs, "section": self._section})
        elif tag == "svg":
            self.svgs += 1

    def handle_data(self, data):
        self.text += data
        if self._capture is not None:
            self._capture.append(data)

    def handle_endtag(self, tag):
        if self._capture is None or tag != self._where:
            if tag == "tr" and self._row is not None:
                table = self.tables[-1]
                if not table["header"]:
                    table["header"] = self._row
                else:
                    table["rows"].append(self._row)
                self._row = None
            return
        text = "".join(self._capture).strip()
        self._capture = None
        if tag == "h2":
            self.sections[self._section] = text
        elif tag == "p":
            self.errors.append(text)
        elif tag == "caption":
            self.tables[-1]["caption"] = text
        else:
            self._row.append(text)

    def table(self, caption: str) -> dict:
        found = [t for t in self.tables if t["caption"].startswith(caption)]
        assert len(found) == 1, f"{len(found)} tables captioned {caption!r}"
        return found[0]


def parse(html: str) -> Page:
    page = Page()
    page.feed(html)
    page.close()
    return page


@pytest.fixture
def run_dir(tmp_path) -> Path:
    """A fresh run directory, for tests that change it."""
    return make_run(tmp_path)


@pytest.fixture
def light_run_dir(run_dir) -> Path:
    """The same run with the kg step not run yet: no figures to draw, for fast CLI tests."""
    (run_dir / "steps" / "world" / "step.json").unlink()
    return run_dir


@pytest.fixture(scope="session")
def report_file(tmp_path_factory) -> Path:
    """The report of an untouched run directory, written once for all tests that only read it."""
    return write_report(make_run(tmp_path_factory.mktemp("report")))


@pytest.fixture(scope="session")
def page(report_file) -> Page:
    return parse(report_file.read_text(encoding="utf-8"))


@pytest.fixture
def parse_page():
    return parse
