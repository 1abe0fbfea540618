"""The import graph of chronoprobe's modules: its cycles, and the imports that point up a layer.

Every ``import`` and ``from ... import`` in every module counts, those inside functions (lazy
imports) included, since a lazy import is still a dependency; only imports under
``if TYPE_CHECKING:`` are left out, as they never run. An import names the module it reads
(``from a.b import c`` reads module ``a.b.c`` if there is one, else the package ``a.b``); the
packages Python runs on the way (``a``, ``a.b``) are not counted, or every package whose
``__init__`` gathers its modules would be a cycle.

A cycle is a group of modules each of which reaches every other through imports (a strongly
connected component of more than one module); each is printed with one shortest loop through
it. An upward arrow is an import from a lower layer to a higher one (see ``LAYERS``).

    python benchmarks/import_graph.py            # the summary, every cycle and upward arrow
    python benchmarks/import_graph.py --json     # the same as JSON
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections import defaultdict, deque
from pathlib import Path

PACKAGE = "chronoprobe"
SOURCE = Path(__file__).resolve().parents[1] / "src"

# the layers, lowest first: a module may import its own layer and those below it
LAYERS: tuple[tuple[str, ...], ...] = (
    (
        "time",
        "steps",
        "step_context",
        "set_files",
        "version",
        "atomic",
        "jsonl",
        "inputs",
        "params",
        "registry",
        "safe_yaml",
        "families",
        "core",
        "metrics",
        "templates",
    ),
    ("kg",),
    ("datasets", "models"),
    ("probes", "train", "tkg", "kgqa", "export"),
    ("runs", "api"),
    ("report",),
    ("cli", "__main__"),
)


def module_names(root: Path) -> dict[str, Path]:
    """Module name -> file, for every ``.py`` file of the package under ``root``."""
    out = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _type_checking_only(tree: ast.Module) -> set[int]:
    """The ids of the import nodes under ``if TYPE_CHECKING:``."""
    skipped = set()
    for node in ast.walk(tree):
        test = node.test if isinstance(node, ast.If) else None
        name = getattr(test, "id", None) or getattr(test, "attr", None)
        if name == "TYPE_CHECKING":
            skipped |= {id(n) for child in node.body for n in ast.walk(child)}
    return skipped


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The longest known module that ``name`` is, or is inside of."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package's modules that ``module`` imports anywhere in its file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    skipped = _type_checking_only(tree)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            found |= {f"{base}.{a.name}" for a in node.names}
    targets = {_resolve(name, known) for name in found}
    return {t for t in targets if t and t != module and t.startswith(PACKAGE)}


def graph(root: Path = SOURCE) -> dict[str, set[str]]:
    known = module_names(root)
    return {module: imports(module, path, known) for module, path in known.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm,
    iterative), each sorted, largest first."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found, key=lambda c: (-len(c), c))


def shortest_loop(edges: dict[str, set[str]], component: list[str]) -> list[str]:
    """One shortest loop through the component's first module, inside the component."""
    members, start = set(component), component[0]
    parent: dict[str, str | None] = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for child in sorted(edges[node] & members):
            if child == start:
                loop = [node]
                while parent[loop[-1]] is not None:
                    loop.append(parent[loop[-1]])  # type: ignore[arg-type]
                return [*reversed(loop), start]
            if child not in parent:
                parent[child] = node
                queue.append(child)
    return []


def layer(module: str) -> int:
    top = module.split(".")[1] if "." in module else ""
    for level, names in enumerate(LAYERS):
        if top in names:
            return level
    return -1  # the package itself (chronoprobe/__init__.py)


def upward(edges: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Every import from a module to one of a higher layer."""
    return sorted(
        (a, b) for a, targets in edges.items() for b in targets if layer(b) > layer(a) >= 0
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--root", type=Path, default=SOURCE, help="the src/ folder")
    args = parser.parse_args(argv)
    edges = graph(args.root)
    found = cycles(edges)
    up = upward(edges)
    if args.json:
        report = {
            "modules": len(edges),
            "imports": sum(map(len, edges.values())),
            "cycles": [{"modules": c, "loop": shortest_loop(edges, c)} for c in found],
            "upward": [list(pair) for pair in up],
        }
        print(json.dumps(report, indent=2))
        return 0
    print(f"{len(edges)} modules, {sum(map(len, edges.values()))} imports")
    print(f"{len(found)} cycles ({sum(map(len, found))} modules in them):")
    for component in found:
        print(f"  {len(component)} modules, e.g. {' -> '.join(shortest_loop(edges, component))}")
        print(f"    {', '.join(component)}")
    by_packages: dict[tuple[str, str], list[str]] = defaultdict(list)
    for a, b in up:
        by_packages[a.split(".")[1], b.split(".")[1]].append(f"{a} -> {b}")
    print(f"{len(up)} upward arrows, {len(by_packages)} pairs of packages:")
    for (low_package, high_package), arrows in sorted(by_packages.items()):
        print(f"  {low_package} -> {high_package}: {len(arrows)}")
        for arrow in arrows:
            print(f"    {arrow}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
