"""Every set `build` and `import` write loads with Hugging Face `datasets` as the folder it is,
`load_dataset(FOLDER)`, by the front matter of its card: each configuration and split holds
the rows of its file, and the card's tables add up to the rows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from chronoprobe.cli.main import app

FIXTURES = Path(__file__).parents[1] / "fixtures"
runner = CliRunner()


@pytest.fixture(scope="module")
def sets(tmp_path_factory) -> dict[str, Path]:
    """One set of every builder and importer, from the sample KG, a small synthetic world
    with texts (ECBD's) and the released files' fixtures."""
    root = tmp_path_factory.mktemp("sets")
    cache = tmp_path_factory.mktemp("cache")

    def invoke(*args) -> None:
        result = runner.invoke(app, list(map(str, args)), env={"CHRONOPROBE_CACHE": str(cache)})
        assert result.exit_code == 0, result.output

    invoke("kg", "sample", "-o", root / "kg")
    invoke("kg", "synth", "--facts", 400, "--seed", 0, "-o", root / "world")
    builds = {
        "lamatk": ("kg", "--sample", 40),
        "drift": ("kg", "--first", 2015, "--last", 2020),
        "cronq": ("kg", "--per-group", 20),
        "dates": ("kg", "--sample", 10),
        "timeline": ("kg",),
        "ecbd": ("world", "--per-group", 3, "--min-article-words", 50),
    }
    for name, (kg, *options) in builds.items():
        invoke("build", name, root / kg, *options, "-o", root / name)
    invoke(
        "build", "timeline-oracle", root / "kg", "--questions", root / "timeline" / "test.jsonl",
        "-o", root / "timeline-oracle",
    )  # fmt: skip
    imports = {
        "templama": [FIXTURES / "templama" / "train.jsonl"],
        "dynamic-templama": [FIXTURES / "dynamic-templama" / "quarters.jsonl"],
        "ecbd-release": [FIXTURES / "ecbd"],
        "ecbd-ekp": [FIXTURES / "ecbd-ekp"],
        "cronquestions": [FIXTURES / "cronquestions" / "questions"],
    }
    for name, paths in imports.items():
        invoke("import", name.removesuffix("-release"), *paths, "-o", root / f"import-{name}")
    return {p.name: p for p in root.iterdir() if (p / "README.md").is_file()}


def lines(path: Path) -> int:
    return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


def front_matter(card: str) -> dict:
    assert card.startswith("---\n"), card[:200]
    return yaml.safe_load(card.split("---\n")[1])


def test_every_builder_and_importer_is_tried(sets):
    from chronoprobe.datasets.builders import BUILDERS
    from chronoprobe.datasets.imports import IMPORTERS

    built = set(BUILDERS.names()) - {"timeline-oracle"}
    assert built | {"timeline-oracle"} <= set(sets)
    assert {f"import-{n}" for n in IMPORTERS.names() if n != "ecbd"} | {"import-ecbd-release"} <= (
        set(sets)
    )


def test_load_dataset_reads_every_set_as_its_files_lay_it_out(sets, tmp_path, monkeypatch):
    datasets = pytest.importorskip("datasets")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for name, folder in sorted(sets.items()):
        header = front_matter((folder / "README.md").read_text(encoding="utf-8"))
        assert header["pretty_name"] and header["license"], name
        assert header["task_categories"], name
        configs = header["configs"]
        listed = {d["path"] for c in configs for d in c["data_files"]}
        assert listed == {p.name for p in folder.glob("*.jsonl") if lines(p)}, name
        assert [c.get("default", False) for c in configs].count(True) == 1, name
        default = datasets.load_dataset(str(folder), cache_dir=str(tmp_path / "hf"))
        first = configs[0]
        assert {s: len(default[s]) for s in default} == {
            d["split"]: lines(folder / d["path"]) for d in first["data_files"]
        }, name
        for config in configs[1:]:
            loaded = datasets.load_dataset(
                str(folder), config["config_name"], cache_dir=str(tmp_path / "hf")
            )
            for files in config["data_files"]:
                assert len(loaded[files["split"]]) == lines(folder / files["path"]), name


def test_the_card_tables_add_up_to_the_rows(sets):
    for name, folder in sets.items():
        card = (folder / "README.md").read_text(encoding="utf-8")
        for file, field, table in re.findall(r"`([\w-]+\.jsonl)` by (\w+):\n\n((?:\|.*\n)+)", card):
            rows = [line.split(" | ") for line in table.splitlines()[2:]]
            counts = {r[0].strip("| "): int(r[1].strip("| ").replace(",", "")) for r in rows}
            total = counts.pop("all")
            assert sum(counts.values()) == total == lines(folder / file), (name, field)


def test_an_imported_templama_card_is_titled_for_the_release_and_counts_the_first_period(sets):
    card = (sets["import-templama"] / "README.md").read_text(encoding="utf-8")
    header = front_matter(card)
    assert header["pretty_name"] == "TempLAMA"
    assert header["configs"] == [
        {
            "config_name": "examples",
            "data_files": [{"split": "test", "path": "examples.jsonl"}],
            "default": True,
        },
        {  # every answer's names: the KG the rows are judged by
            "config_name": "answer_names",
            "data_files": [{"split": "test", "path": "answer_names.jsonl"}],
        },
    ]
    assert "\n# TempLAMA, imported\n" in card and "Build a" not in card
    assert "(none): the " in card and "rows of the first period" in card


def test_a_built_card_says_what_kg_and_out_stand_for_and_lists_every_setting(sets):
    card = (sets["drift"] / "README.md").read_text(encoding="utf-8")
    assert "\n# A DynamicTempLAMA-style probe set: one row per (subject, relation, period)\n" in (
        card
    )
    assert "chronoprobe build drift KG --first 2015 --last 2020 -o OUT" in card
    assert "where KG is the KG directory of Source (name `sample`" in card
    assert "and OUT is the folder it is written to." in card
    assert "| `--granularity` | year |" in card  # at its default: named all the same
    cronq = front_matter((sets["cronq"] / "README.md").read_text(encoding="utf-8"))["configs"]
    assert cronq[0] == {
        "config_name": "default",
        "data_files": [
            {"split": "train", "path": "train.jsonl"},
            {"split": "validation", "path": "valid.jsonl"},
            {"split": "test", "path": "test.jsonl"},
        ],
        "default": True,
    }
