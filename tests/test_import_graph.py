"""benchmarks/import_graph.py finds the cycles and upward imports of a package from its source:
imports inside functions count, imports only a type checker reads do not."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parents[1] / "benchmarks" / "import_graph.py"


@pytest.fixture(scope="module")
def import_graph():
    spec = importlib.util.spec_from_file_location("import_graph", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FILES = {
    "__init__.py": "",
    "time.py": "def later():\n    from chronoprobe.kg.graph import TemporalKG\n",
    "kg/__init__.py": "",
    "kg/graph.py": "import chronoprobe.time\nfrom chronoprobe.kg import stats\n",
    "kg/stats.py": (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from chronoprobe.kg.graph import TemporalKG\n"
        "from . import io\n"
    ),
    "kg/io.py": "def read():\n    from .stats import x\n",
    "report/__init__.py": "",
    "report/page.py": "from chronoprobe.kg.graph import TemporalKG\n",
}


@pytest.fixture
def package(tmp_path):
    for name, text in FILES.items():
        path = tmp_path / "chronoprobe" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


def test_cycles_count_lazy_imports_and_leave_type_checking_out(import_graph, package):
    edges = import_graph.graph(package)
    assert edges["chronoprobe.time"] == {"chronoprobe.kg.graph"}  # inside a function
    assert edges["chronoprobe.kg.stats"] == {"chronoprobe.kg.io"}  # TYPE_CHECKING left out
    assert edges["chronoprobe.kg.io"] == {"chronoprobe.kg.stats"}  # a relative import
    found = import_graph.cycles(edges)
    assert found == [
        ["chronoprobe.kg.graph", "chronoprobe.time"],
        ["chronoprobe.kg.io", "chronoprobe.kg.stats"],
    ]
    assert import_graph.shortest_loop(edges, found[0]) == [
        "chronoprobe.kg.graph",
        "chronoprobe.time",
        "chronoprobe.kg.graph",
    ]
    # time sits below kg: its lazy import points up; report reading kg points down
    assert import_graph.upward(edges) == [("chronoprobe.time", "chronoprobe.kg.graph")]


def test_the_json_report(import_graph, package, capsys):
    assert import_graph.main(["--json", "--root", str(package)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["modules"] == 8 and report["imports"] == 6
    assert [c["modules"] for c in report["cycles"]][1] == [
        "chronoprobe.kg.io",
        "chronoprobe.kg.stats",
    ]
    assert report["upward"] == [["chronoprobe.time", "chronoprobe.kg.graph"]]


def test_chronoprobe_itself_has_no_cycles_and_no_upward_imports(import_graph):
    edges = import_graph.graph()
    assert len(edges) > 150  # it read the real package
    assert import_graph.cycles(edges) == []
    assert import_graph.upward(edges) == []
