"""The dataset card (``README.md``) of every probe set ``build`` and ``import`` write.

A probe set travels without the command that made it: mailed, archived, uploaded to a hub. Its
card says what it is, the paper it follows, the files it was made from (with their sha256, so
a reader can tell whether theirs are the same), the command and chronoprobe version that made
it, how many rows it holds per split, period and relation, and the licence of its source where
it is known. It also says how to load the rows with Hugging Face ``datasets``: every row file
is JSON Lines whose fields each hold one JSON type (or null) in every row, which the card's
writer checks while it counts, so ``load_dataset("json", ...)`` reads them as they are.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chronoprobe import __version__
from chronoprobe.atomic import atomic_write_text
from chronoprobe.jsonl import numbered_lines

CARD = "README.md"
# the row fields a card counts rows by, where a file's rows have them
COUNTED = ("split", "period", "relation", "type", "answer_type", "year", "span_type", "slot",
           "precision", "kind")  # fmt: skip
MOST_VALUES = 40  # a count table lists this many values, then says how many more there are


@dataclass(frozen=True)
class Family:
    title: str
    what: str
    paper: str


FAMILIES = {
    "drift": Family(
        "Temporal drift probe set",
        "Cloze queries about time-scoped facts, one row per subject, relation and period: "
        "`query` holds one `[MASK]` gap, `answers` every object that holds in the period (ids) "
        "and `answer_labels` their names. From the second period on, `split` says how the "
        "answers changed since the previous period: unchanged, updated, new, or deleted "
        "(the row then carries the previous answers).",
        "Katerina Margatina, Shuai Wang, Yogarshi Vyas, Neha Anna John, Yassine Benajiba, Miguel "
        "Ballesteros. *Dynamic Benchmarking of Masked Language Models on Temporal Concept Drift "
        "with Multiple Views.* Findings of EACL 2023",
    ),
    "lamatk": Family(
        "LAMA-TK temporal statements",
        "Masked temporal statements for memorising and reciting time-scoped facts: each fact "
        "with both bounds gives a statement per slot (subject, object, start, end), and "
        "`answers` holds every value that makes the masked text true, conflicts included.",
        "Ruilin Zhao, Feng Zhao, Guandong Xu, Sixiao Zhang, Hai Jin. *Can Language Models Serve "
        "as Temporal Knowledge Bases?* Findings of EMNLP 2022",
    ),
    "cronq": Family(
        "CronQuestions-style temporal questions",
        "Temporal questions over a knowledge graph, five reasoning types (simple_entity, "
        "simple_time, before_after, first_last, time_join), each with the answers executed over "
        "the graph: entity ids, or years written as text for time questions (`answer_type`). "
        "train, valid and test are entity-disjoint.",
        "Apoorv Saxena, Soumen Chakrabarti, Partha Talukdar. *Question Answering Over Temporal "
        "Knowledge Graphs.* ACL 2021",
    ),
    "ecbd": Family(
        "Entity Cloze By Date spans",
        "Sentences about entities with one masked span after the entity's mention, grouped by "
        "the year the entity originated (`year`), with the entity's definition for the "
        "definition condition.",
        "Yasumasa Onoe, Michael J.Q. Zhang, Eunsol Choi, Greg Durrett. *Entity Cloze By Date: "
        "What LMs Know About Unseen Entities.* Findings of NAACL 2022",
    ),
    "dates": Family(
        "Dated statements for the date-context test",
        "Each fact's statement behind its right date and behind wrong dates before its start "
        "and after its end, at year, month and day precision (`kind`: right, before, after).",
        "Hichem Ammar Khodja et al. *Factual Knowledge in Language Models: Robustness and "
        "Anomalies under Simple Temporal Context Variations.* ACL 2025",
    ),
    "timeline": Family(
        "Timeline questions",
        "Questions about one, two or several facts' intervals (start, end, duration, Allen "
        "relations, intersections, rankings, set operations), answers computed on the KG at the "
        "bounds' common precision; `timeline` names each row's complexity, capability, answer "
        "type and typed gold answer. train, valid and test share no fact.",
        "Qiang Sun, Sirui Li, Du Huynh, Mark Reynolds, Wei Liu. *TimelineKGQA: A Comprehensive "
        "Question-Answer Pair Generator for Temporal Knowledge Graphs.* WWW 2025 Companion",
    ),
    "timeline-oracle": Family(
        "Timeline questions answered by the symbolic oracle",
        "Each timeline question answered again from the facts it names, looked up in the KG "
        "(less the dropped share of facts, if any): `answers.jsonl` in words for `probe "
        "generate --responses`, `judged.jsonl` with each answer's agreement with the gold.",
        "Qiang Sun, Sirui Li, Du Huynh, Mark Reynolds, Wei Liu. *TimelineKGQA: A Comprehensive "
        "Question-Answer Pair Generator for Temporal Knowledge Graphs.* WWW 2025 Companion",
    ),
}

# released formats: the paper that published the files, and the licence of the data
RELEASES = {
    "templama": (
        "Bhuwan Dhingra, Jeremy R. Cole, Julian Martin Eisenschlos, Daniel Gillick, Jacob "
        "Eisenstein, William W. Cohen. *Time-Aware Language Models as Temporal Knowledge "
        "Bases.* TACL 2022",
        "the facts come from Wikidata (CC0); the code is Apache-2.0: check "
        "github.com/google-research/language for the data files' own terms",
    ),
    "dynamic-templama": (
        FAMILIES["drift"].paper,
        "see the LICENSE of github.com/amazon-science/temporal-robustness; the facts come from "
        "Wikidata (CC0)",
    ),
    "ecbd": (FAMILIES["ecbd"].paper, "CC BY-SA, as the Wikipedia text it is made of"),
    "ecbd-ekp": (
        "Yasumasa Onoe, Michael J.Q. Zhang, Shankar Padmanabhan, Greg Durrett, Eunsol Choi. "
        "*Can LMs Learn New Entities from Descriptions? Challenges in Propagating Injected "
        "Knowledge.* ACL 2023",
        "CC BY-SA, as the Wikipedia text it is made of",
    ),
    "cronquestions": (
        FAMILIES["cronq"].paper,
        "see github.com/apoorvumang/CronKGQA; the facts come from Wikidata (CC0)",
    ),
}

# the licence of a KG's source, by how the KG was made
KG_LICENCES = {
    "synth": "none needed: the synthetic world is generated by chronoprobe (Apache-2.0), no "
    "third-party data",
    "sample": "Wikidata (CC0), hand-curated; entity descriptions written for the sample",
    "wikidata-json": "Wikidata (CC0)",
    "wikidata-sparql": "Wikidata (CC0)",
    "cronquestions": "the CronQuestions KG (see github.com/apoorvumang/CronKGQA); its facts "
    "come from Wikidata (CC0)",
}


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        while block := stream.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _files(paths: list[Path]) -> list[Path]:
    """The regular files of ``paths``, those under a folder in name order."""
    out: list[Path] = []
    for path in paths:
        out += sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    return out


def _json_type(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"  # readers widen integers to floats
    return {str: "string", list: "list", dict: "object"}[type(value)]


class RowFile:
    """One JSON Lines file's rows: their number, counts by the :data:`COUNTED` fields, and
    the fields whose values are of more than one JSON type (at any depth: ``answers[]``)."""

    def __init__(self, path: Path) -> None:
        self.path, self.rows = path, 0
        self.counts: dict[str, Counter] = {}
        self.types: dict[str, set[str]] = {}
        for _, row in numbered_lines(path):
            self.rows += 1
            self._walk(row, "")
            for field in COUNTED:
                if isinstance(row, dict) and row.get(field) is not None:
                    self.counts.setdefault(field, Counter())[str(row[field])] += 1

    def _walk(self, value: Any, where: str) -> None:
        kind = _json_type(value)
        if kind is None:
            return
        self.types.setdefault(where, set()).add(kind)
        if kind == "list":
            for item in value:
                self._walk(item, f"{where}[]")
        elif kind == "object":
            for key, item in value.items():
                self._walk(item, f"{where}.{key}" if where else key)

    def mixed(self) -> dict[str, list[str]]:
        """Fields of more than one JSON type, with their types."""
        return {where: sorted(kinds) for where, kinds in self.types.items() if len(kinds) > 1}


def _count_table(field: str, counts: Counter) -> list[str]:
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if field in ("period", "year"):
        ordered = sorted(counts.items())
    lines = [f"| {field} | rows |", "|---|---:|"]
    lines += [f"| {value} | {n:,} |" for value, n in ordered[:MOST_VALUES]]
    if len(ordered) > MOST_VALUES:
        rest = sum(n for _, n in ordered[MOST_VALUES:])
        lines.append(f"| ({len(ordered) - MOST_VALUES} more) | {rest:,} |")
    return lines


def _file_table(paths: list[Path], base: Path | None = None) -> list[str]:
    """Size and sha256 of each file (named relative to ``base`` where given)."""
    files = _files(paths)
    lines = ["| file | bytes | sha256 |", "|---|---:|---|"]
    for path in files[:MOST_VALUES]:
        name = path.relative_to(base) if base is not None else path
        lines.append(f"| `{name}` | {path.stat().st_size:,} | `{sha256(path)}` |")
    if len(files) > MOST_VALUES:
        rest = sum(p.stat().st_size for p in files[MOST_VALUES:])
        lines.append(f"| ({len(files) - MOST_VALUES} more files) | {rest:,} | |")
    return lines


def _kg_source(kg_dir: Path) -> tuple[list[str], str]:
    """What the card says of the KG a set was built from, and the licence of its source."""
    manifest = json.loads((kg_dir / "manifest.json").read_text(encoding="utf-8"))
    meta, name = manifest.get("meta") or {}, manifest.get("name")
    lines = [
        f"Built from a KG directory (KG below: name `{name}`, KG fingerprint "
        f"`{manifest.get('fingerprint')}`, {manifest.get('counts', {}).get('facts', 0):,} "
        "facts)."
    ]
    origin = meta.get("source") or {}
    inputs = [str(i) for i in origin.get("inputs") or []]
    if meta.get("generator"):
        config = (meta.get("config") or {}).items()
        settings = ", ".join(f"{k} {v}" for k, v in config if v is not None)
        lines.append(f"The KG is chronoprobe's synthetic world ({settings}).")
        source = "synth"
    elif inputs and all(i.startswith("chronoprobe.kg.samples:") for i in inputs):
        lines.append("The KG is the real sample shipped with chronoprobe (`kg sample`).")
        source = "sample"
    else:
        source = str(origin.get("format"))
        listed = ", ".join(f"`{i}`" for i in inputs)
        lines.append(f"The KG was converted from {source} files: {listed}.")
    licence = KG_LICENCES.get(source, f"unknown: the licence of the {source} source files")
    return lines, licence


def _load_lines(names: list[str]) -> list[str]:
    """A ``load_dataset`` call per row file; train/valid/test.jsonl as one dataset's splits."""
    splits = {"train": "train.jsonl", "validation": "valid.jsonl", "test": "test.jsonl"}
    together = [n for n in splits.values() if n in names]
    lines = []
    if len(together) > 1:
        given = ", ".join(f'"{s}": "{n}"' for s, n in splits.items() if n in together)
        lines.append(f'splits = load_dataset("json", data_files={{{given}}})')
        names = [n for n in names if n not in together]
    for name in names:
        variable = name.removesuffix(".jsonl").replace("-", "_")
        lines.append(f'{variable} = load_dataset("json", data_files="{name}", split="train")')
    return lines


def write_card(
    out: Path,
    family: str,
    command: str,
    *,
    kg: Path | None = None,
    released: tuple[str, list[Path]] | None = None,
    extra_sources: tuple[Path, ...] = (),
) -> list[str]:
    """Write ``out/README.md`` for the probe set in ``out``; returns the problems found in its
    rows (fields of more than one JSON type), which the card names too.

    ``kg``: the KG directory a built set comes from; ``released``: the format and files of an
    imported one; ``extra_sources``: other files it was made from (ECBD's articles).
    """
    kind = FAMILIES[family]
    row_files = [RowFile(path) for path in sorted(out.glob("*.jsonl"))]
    if released is not None:
        fmt, paths = released
        paper, licence = RELEASES.get(fmt, (kind.paper, "unknown"))
        source = [f"Imported from the {fmt} release, as published:", "", *_file_table(paths)]
    elif kg is not None:
        paper, (said, licence) = kind.paper, _kg_source(kg)
        files = [p for p in _files([kg]) if p.suffix == ".parquet" or p.name == "manifest.json"]
        source = [*said, "", *_file_table(files, base=kg)]
    else:
        paper, source, licence = kind.paper, ["Not recorded."], "unknown"
    if extra_sources:
        source += ["", "Also read:", "", *_file_table(list(extra_sources))]
    lines = [
        f"# {kind.title}",
        "",
        kind.what,
        "",
        f"It follows {paper}.",
        "",
        "## Source",
        "",
        *source,
        "",
        f"Licence of the source: {licence}.",
        "",
        "## How it was made",
        "",
        "```bash",
        f"{command} -o OUT",
        "```",
        "",
        f"with chronoprobe {__version__}.",
        "",
        "## Rows",
        "",
        "| file | rows |",
        "|---|---:|",
        *(f"| `{f.path.name}` | {f.rows:,} |" for f in row_files),
    ]
    problems = []
    for row_file in row_files:
        for field, counts in row_file.counts.items():
            if len(counts) > 1 or field == "split":
                lines += ["", f"`{row_file.path.name}` by {field}:", ""]
                lines += _count_table(field, counts)
        problems += [
            f"{row_file.path.name}: {field} holds {', '.join(kinds)}"
            for field, kinds in row_file.mixed().items()
        ]
    lines += ["", "## Loading", ""]
    if problems:
        lines.append(
            "Some fields hold values of more than one JSON type, which Hugging Face `datasets` "
            "cannot read as they are: " + "; ".join(problems) + "."
        )
    else:
        lines += [
            "Every file is JSON Lines, one row a line, and each field holds one JSON type in "
            "every row (or null), so Hugging Face `datasets` reads the rows as they are:",
            "",
            "```python",
            "from datasets import load_dataset",
            "",
            *_load_lines([f.path.name for f in row_files if f.rows]),
            "```",
        ]
    atomic_write_text(out / CARD, "\n".join(lines) + "\n")
    return problems


def write_step_card(
    ctx: Any, kind: str, family: str, params: Any, inputs: dict[str, Path], **sources: Any
) -> None:
    """The card of a ``build`` or ``import`` step's output, with the command that runs the
    step; a field of mixed types is warned of. The card is a function of what the step's
    cache key holds (params, the inputs' contents, the version), so a step and the command
    that runs it write the same card wherever their inputs lie: inputs are named by their
    placeholders (KG)."""
    from chronoprobe.steps import STEP_KINDS, command_line

    placeholders = {name: Path(name.upper()) for name in inputs}
    command = command_line(STEP_KINDS.get(kind), params, placeholders)
    for problem in write_card(ctx.out_dir, family, command, **sources):
        ctx.log.warning(f"{problem}: Hugging Face datasets cannot load it as it is")
