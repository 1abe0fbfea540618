"""Article sources for text-based probe sets: Wikipedia-style records, text folders, the
synthetic world's articles. Each yields (id, title, text) with paragraphs separated by newlines.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from chronoprobe.errors import UserError
from chronoprobe.jsonl import read_jsonl


@dataclass(frozen=True)
class Article:
    id: str
    title: str
    text: str


def paragraphs(text: str) -> list[str]:
    """An article's paragraphs: its non-blank lines, stripped."""
    return [p.strip() for p in text.splitlines() if p.strip()]


def _records(rows: Iterator[dict], source: Path) -> Iterator[Article]:
    for number, row in enumerate(rows, start=1):
        missing = [key for key in ("title", "text") if not row.get(key)]
        if missing:
            raise UserError(f"{source}:{number}: article record without {', '.join(missing)}")
        yield Article(str(row.get("id", row["title"])), row["title"], row["text"])


def iter_articles(source: str | Path) -> Iterator[Article]:
    """Articles of a JSONL(.gz) or Parquet file of {id, title, text}, or a folder of .txt files
    (the title is the file name, underscores read as spaces)."""
    path = Path(source)
    if path.is_dir():
        for file in sorted(path.glob("*.txt")):
            yield Article(file.stem, file.stem.replace("_", " "), file.read_text(encoding="utf-8"))
    elif path.name.endswith(".parquet"):
        table = pq.read_table(path, columns=["id", "title", "text"])
        yield from _records(iter(table.to_pylist()), path)
    elif path.name.endswith((".jsonl", ".jsonl.gz")):
        yield from _records(read_jsonl(path), path)
    else:
        raise UserError(
            f"{path}: not an article source (use .jsonl, .jsonl.gz, .parquet or a folder of .txt)"
        )
