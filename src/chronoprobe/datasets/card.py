"""The dataset card (``README.md``) of every probe set ``build`` and ``import`` write.

A probe set travels without the command that made it: mailed, archived, uploaded to a hub. Its
card says what it is, the paper it follows, the files it was made from (with their sha256, so
a reader can tell whether theirs are the same), the command and chronoprobe version that made
it with every setting, how many rows it holds per split, period and relation (the rows without
a value counted too, so each table adds up), and the licence of its source where it is known.

The card opens with the YAML front matter the Hugging Face Hub reads (``pretty_name``,
``license``, ``task_categories``, and ``configs``: the row files as the Hub's configurations and
splits), so ``datasets.load_dataset(FOLDER)`` and the Hub's viewer load the rows as the folder
lays them out. Every row file is JSON Lines whose fields each hold one JSON type (or null) in
every row, which the card's writer checks while it counts, so they load as they are.

The card is a function of what the step's cache key holds (params, the inputs' contents, the
version): a cached set, a run's step and the command write the same card wherever their inputs
lie, so the KG and the output folder are named in its command as KG and OUT, and said what
they are.
"""

from __future__ import annotations

import hashlib
import inspect
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chronoprobe.atomic import atomic_write_text
from chronoprobe.jsonl import numbered_lines
from chronoprobe.params import option_flag
from chronoprobe.registry import first_sentence
from chronoprobe.version import __version__

CARD = "README.md"
# the row fields a card counts rows by, where a file's rows have them
COUNTED = ("split", "period", "relation", "type", "answer_type", "year", "span_type", "slot",
           "precision", "kind")  # fmt: skip
MOST_VALUES = 40  # a count table lists this many values, then says how many more there are


@dataclass(frozen=True)
class CardText:
    """What the card (README.md) of a builder's sets says of every such set: a title, what a
    row holds, the paper it follows (empty: none) and its family (which names the Hub's task
    categories)."""

    title: str
    what: str
    paper: str = ""
    family: str = ""


@dataclass(frozen=True)
class Release:
    """Where an importer's files were published: the dataset's name, the paper, the licence
    of the data and its identifier on the Hub (``other`` where it is the release's own). An
    importer declares it: ``variant(IMPORTERS, FORMAT, Params, card=Release(...))``."""

    name: str
    paper: str
    licence: str
    license_id: str = "other"


# the Hub's task categories of each family's sets
TASK_CATEGORIES = {
    "lamatk": ["fill-mask"],
    "drift": ["fill-mask", "text-generation"],
    "cronq": ["question-answering"],
    "ecbd": ["fill-mask"],
    "generative": ["text-generation"],
    "timeline": ["question-answering"],
}
# a builder's help starts with what it does; its set's title with what the set is
_VERBS = ("Build ", "Generate ", "Answer ", "Write ")


def _set_title(sentence: str) -> str:
    """ "Build LAMA-TK: masked statements." -> "LAMA-TK: masked statements"."""
    title = sentence.rstrip(".:")
    for verb in _VERBS:
        if title.startswith(verb):
            title = title.removeprefix(verb)
            return title[:1].upper() + title[1:]
    return title


def card_text(builder: Any) -> CardText:
    """A builder's card, from what it already says of itself: its docstring (the help of
    ``chronoprobe build NAME``: its first sentence, less the verb, for the title; the rest,
    less its example, for what a row holds) and its family's paper
    (:mod:`chronoprobe.families`). A plugin's builder gets a card the same way."""
    from chronoprobe.families import FAMILIES

    about = inspect.cleandoc(getattr(builder, "help", "") or inspect.getdoc(builder.run) or "")
    paragraphs = [" ".join(p.split()) for p in about.split("\n\n") if p.strip()]
    first = first_sentence(paragraphs[0]) if paragraphs else ""
    rest = [paragraphs[0][len(first) :].strip()] if paragraphs else []
    rest += [p for p in paragraphs[1:] if not p.startswith("Example:")]
    families = [f for _, f in FAMILIES.items() if builder.name in f.builders]
    return CardText(
        _set_title(first) or f"The `{builder.name}` set",
        "\n\n".join(p for p in rest if p),
        families[0].paper if families else "",
        families[0].name if families else "",
    )


def _in_sentence(title: str) -> str:
    """A title inside a sentence: "A set" -> "a set", "LAMA-TK" as it is."""
    return title if title[1:2].isupper() else title[:1].lower() + title[1:]


def import_card_text(release: Release, built: CardText) -> CardText:
    """The card of an imported set: the release's name and paper, and what its rows hold,
    which is what the matching builder writes (``built``)."""
    what = (
        f"The released {release.name} files, row for row, in the rows `chronoprobe build "
        f"{built.family}` writes ({_in_sentence(built.title)}). {built.what}"
    )
    return CardText(f"{release.name}, imported", what.strip(), release.paper, built.family)


# the Hub's licence identifier of a KG's source, by how the KG was made
KG_LICENSE_IDS = {
    "synth": "apache-2.0",
    "sample": "cc0-1.0",
    "wikidata-json": "cc0-1.0",
    "wikidata-sparql": "cc0-1.0",
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
        self.unsplit_periods: Counter = Counter()  # periods of the rows without a split
        for _, row in numbered_lines(path):
            self.rows += 1
            self._walk(row, "")
            if not isinstance(row, dict):
                continue
            for field in COUNTED:
                if row.get(field) is not None:
                    self.counts.setdefault(field, Counter())[str(row[field])] += 1
            if row.get("split") is None and row.get("period") is not None:
                self.unsplit_periods[str(row["period"])] += 1

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


NO_VALUE = "(none)"  # the row of a count table that counts the rows without a value


def _count_table(field: str, counts: Counter, rows: int) -> list[str]:
    """Rows per value of ``field``, then the rows without one, so the table adds up to
    ``rows``."""
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if field in ("period", "year"):
        ordered = sorted(counts.items())
    lines = [f"| {field} | rows |", "|---|---:|"]
    lines += [f"| {value} | {n:,} |" for value, n in ordered[:MOST_VALUES]]
    if len(ordered) > MOST_VALUES:
        rest = sum(n for _, n in ordered[MOST_VALUES:])
        lines.append(f"| ({len(ordered) - MOST_VALUES} more) | {rest:,} |")
    missing = rows - sum(counts.values())
    if missing:
        lines.append(f"| {NO_VALUE} | {missing:,} |")
    return [*lines, f"| all | {rows:,} |"]


def _unsplit_note(row_file: RowFile) -> list[str]:
    """What the rows without a split are, where they are the first period's."""
    periods = row_file.unsplit_periods
    missing = row_file.rows - sum(row_file.counts.get("split", Counter()).values())
    first = min(row_file.counts.get("period", Counter()) or [""])
    if missing and len(periods) == 1 and next(iter(periods)) == first:
        return [
            "",
            f"{NO_VALUE}: the {missing:,} rows of the first period ({first}), which has no "
            "earlier period to compare them with (unchanged, updated, new and deleted are "
            "splits against the period before).",
        ]
    return []


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


def _kg_source(kg_dir: Path) -> tuple[list[str], str, str]:
    """What the card says of the KG a set was built from, the licence of its source and the
    Hub's identifier of that licence."""
    from chronoprobe.kg.graph import read_manifest

    manifest = read_manifest(kg_dir)  # checked, as every reader of KGs checks it
    meta, name = manifest["meta"], manifest["name"]
    lines = [
        f"Built from a KG directory (KG below: name `{name}`, KG fingerprint "
        f"`{manifest['fingerprint']}`, {manifest['counts'].get('facts', 0):,} "
        "facts)."
    ]
    # the manifest's meta is free-form: a part of another shape is read as absent
    origin = meta.get("source") if isinstance(meta.get("source"), dict) else {}
    listed_inputs = origin.get("inputs")
    inputs = [str(i) for i in listed_inputs] if isinstance(listed_inputs, list) else []
    if meta.get("generator"):
        config = (meta.get("config") if isinstance(meta.get("config"), dict) else {}).items()
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
    return (
        lines,
        licence,
        KG_LICENSE_IDS.get(source, "unknown" if source not in KG_LICENCES else "other"),
    )


def kg_said(kg_dir: Path) -> str:
    """How the command of a built set's card names its KG: what KG stands for there."""
    from chronoprobe.kg.graph import read_manifest

    manifest = read_manifest(kg_dir)
    return (
        f"KG is the KG directory of Source (name `{manifest['name']}`, KG fingerprint "
        f"`{manifest['fingerprint']}`)"
    )


# train/valid/test.jsonl: one configuration's splits, by the names the Hub gives splits
SPLIT_FILES = {"train": "train.jsonl", "validation": "valid.jsonl", "test": "test.jsonl"}
MAIN_ROWS = ("examples.jsonl", "statements.jsonl", "questions.jsonl")  # first, where several


def hub_configs(names: list[str]) -> list[dict[str, Any]]:
    """The Hub's configurations of a set's row files: train/valid/test.jsonl as the splits of
    the ``default`` one, every other file a configuration of its own (named by its stem, its
    rows one ``test`` split: a probe set is for evaluation). The first is the default."""
    together = [(split, name) for split, name in SPLIT_FILES.items() if name in names]
    configs: list[dict[str, Any]] = []
    if len(together) > 1:
        files = [{"split": split, "path": name} for split, name in together]
        configs.append({"config_name": "default", "data_files": files})
        names = [n for n in names if n not in dict(together).values()]
    names = sorted(
        names, key=lambda n: (n not in MAIN_ROWS, MAIN_ROWS.index(n) if n in MAIN_ROWS else 0, n)
    )
    for name in names:
        stem = name.removesuffix(".jsonl")
        configs.append({"config_name": stem, "data_files": [{"split": "test", "path": name}]})
    if configs:
        configs[0]["default"] = True
    return configs


def front_matter(pretty_name: str, license_id: str, tasks: list[str], configs: list) -> str:
    """The YAML block the Hugging Face Hub reads at the top of a dataset's README.md."""
    import yaml

    header: dict[str, Any] = {"pretty_name": pretty_name, "license": license_id}
    if tasks:
        header["task_categories"] = tasks
    header["tags"] = ["temporal", "knowledge-probing", "chronoprobe"]
    if configs:
        header["configs"] = configs
    return "---\n" + yaml.safe_dump(header, sort_keys=False, allow_unicode=True) + "---"


def _load_lines(configs: list[dict[str, Any]]) -> list[str]:
    """A ``load_dataset`` call per configuration (the default one without its name)."""
    lines = []
    for config in configs:
        name = config["config_name"]
        variable = "splits" if name == "default" else name.replace("-", "_")
        named = "" if config.get("default") else f', "{name}"'
        files = ", ".join(f"{d['split']}: {d['path']}" for d in config["data_files"])
        lines.append(f'{variable} = load_dataset("FOLDER"{named})  # {files}')
    return lines


def _settings_table(settings: list[tuple[str, str]]) -> list[str]:
    lines = ["| option | value |", "|---|---|"]
    return lines + [f"| `{flag}` | {value} |" for flag, value in settings]


def write_card(
    out: Path,
    kind: CardText,
    command: str,
    *,
    kg: Path | None = None,
    released: tuple[str, list[Path], Release | None] | None = None,
    extra_sources: tuple[Path, ...] = (),
    settings: list[tuple[str, str]] = (),  # type: ignore[assignment]
) -> list[str]:
    """Write ``out/README.md`` for the probe set in ``out``; returns the problems found in its
    rows (fields of more than one JSON type), which the card names too.

    ``kg``: the KG directory a built set comes from; ``released``: the format, the files and
    the release of an imported one; ``extra_sources``: other files it was made from (ECBD's
    articles); ``settings``: every option of the command and its value.
    """
    row_files = [RowFile(path) for path in sorted(out.glob("*.jsonl"))]
    pretty_name = kind.title.split(": ")[0]
    placeholders = "OUT is the folder it is written to"
    if released is not None:
        fmt, paths, release = released
        paper, licence = (release.paper, release.licence) if release else (kind.paper, "unknown")
        license_id = release.license_id if release else "unknown"
        pretty_name = release.name if release else pretty_name
        source = [f"Imported from the {fmt} release, as published:", "", *_file_table(paths)]
    elif kg is not None:
        paper, (said, licence, license_id) = kind.paper, _kg_source(kg)
        files = [p for p in _files([kg]) if p.suffix == ".parquet" or p.name == "manifest.json"]
        source = [*said, "", *_file_table(files, base=kg)]
        placeholders = f"{kg_said(kg)}, and {placeholders}"
    else:
        paper, source, licence, license_id = kind.paper, ["Not recorded."], "unknown", "unknown"
    if extra_sources:
        source += ["", "Also read:", "", *_file_table(list(extra_sources))]
    configs = hub_configs([f.path.name for f in row_files if f.rows])
    lines = [
        front_matter(pretty_name, license_id, TASK_CATEGORIES.get(kind.family, []), configs),
        "",
        f"# {kind.title}",
        "",
        kind.what,
        "",
        *([f"It follows {paper}.", ""] if paper else []),
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
        f"with chronoprobe {__version__}, where {placeholders}.",
    ]
    if settings:
        lines += ["", "Every setting it ran with (the command names those not at their default):"]
        lines += ["", *_settings_table(list(settings))]
    lines += [
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
                lines += _count_table(field, counts, row_file.rows)
                if field == "split":
                    lines += _unsplit_note(row_file)
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
    elif configs:
        lines += [
            "Every file is JSON Lines, one row a line, and each field holds one JSON type in "
            "every row (or null). The front matter above names the files as the Hub's "
            "configurations and splits, so Hugging Face `datasets` loads this folder (FOLDER, "
            "or its Hub id once uploaded) as it is laid out:",
            "",
            "```python",
            "from datasets import load_dataset",
            "",
            *_load_lines(configs),
            "```",
        ]
    atomic_write_text(out / CARD, "\n".join(lines) + "\n")
    return problems


def step_settings(kind: Any, params: Any) -> list[tuple[str, str]]:
    """Every option of the command that runs ``kind`` with ``params``, and its value."""
    from chronoprobe.params import cli_of

    key = kind.variants.key if kind.variants is not None else None
    out = []
    for name, field in type(params).model_fields.items():
        if name == key or cli_of(field).argument:
            continue
        value = getattr(params, name)
        if isinstance(value, bool):
            value = "on" if value else "off"
        elif isinstance(value, list):
            value = ", ".join(map(str, value))
        elif isinstance(value, dict):
            value = ", ".join(f"{k}={v}" for k, v in value.items())
        flag = option_flag(name)
        out.append(
            (flag, "(none)" if value is None or value == "" else str(value).replace("|", "\\|"))
        )
    return out


def write_step_card(
    ctx: Any, kind: str, text: CardText, params: Any, inputs: dict[str, Path], **sources: Any
) -> None:
    """The card of a ``build`` or ``import`` step's output, with the command that runs the
    step; a field of mixed types is warned of. The card is a function of what the step's
    cache key holds (params, the inputs' contents, the version), so a step and the command
    that runs it write the same card wherever their inputs lie: inputs are named by their
    placeholders (KG)."""
    from chronoprobe.steps import STEP_KINDS, command_line

    placeholders = {name: Path(name.upper()) for name in inputs}
    step = STEP_KINDS.get(kind)
    command = command_line(step, params, placeholders)
    settings = step_settings(step, params)
    for problem in write_card(ctx.out_dir, text, command, settings=settings, **sources):
        ctx.log.warning(f"{problem}: Hugging Face datasets cannot load it as it is")
