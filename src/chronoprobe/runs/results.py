"""The results store: ``RUNDIR/results.duckdb``, SQL views over every Parquet table of a run.

Views, not copies: the Parquet files stay the one source of truth and the database is rebuilt
in a moment whenever it is opened, so it can never disagree with the run directory.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from chronoprobe.atomic import atomic_path

DATABASE = "results.duckdb"
METRICS_SCHEMA = pa.schema(
    [
        ("step_id", pa.string()),
        ("kind", pa.string()),
        ("metric", pa.string()),  # dotted path into metrics.json: relation_share.P54
        ("value", pa.float64()),  # numbers and booleans
        ("text", pa.string()),  # anything else, as JSON
    ]
)


def _step_dirs(run_dir: Path) -> Iterator[tuple[Path, dict]]:
    steps = run_dir / "steps"
    if not steps.is_dir():
        raise FileNotFoundError(f"{run_dir}: not a run directory (no steps/)")
    for step_dir in sorted(steps.iterdir()):
        record = step_dir / "step.json"
        if step_dir.is_dir() and not step_dir.name.startswith(".") and record.is_file():
            yield step_dir, json.loads(record.read_text(encoding="utf-8"))


def _sanitize(name: str) -> str:
    name = re.sub(r"[^0-9a-zA-Z]+", "_", name).strip("_").lower()
    return name if name and not name[0].isdigit() else f"t_{name}"


def parquet_tables(run_dir: Path) -> dict[str, Path]:
    """View name -> Parquet file: ``<step_id>_<file stem>`` (subfolders joined with ``_``)."""
    tables: dict[str, Path] = {}
    for step_dir, record in _step_dirs(run_dir):
        for file in sorted(step_dir.rglob("*.parquet")):
            relative = file.relative_to(step_dir).with_suffix("")
            if any(part.startswith(".") for part in relative.parts):
                continue
            base = _sanitize(f"{record['id']}_{'_'.join(relative.parts)}")
            name, n = base, 1
            while name in tables or name == "metrics":
                n += 1
                name = f"{base}_{n}"
            tables[name] = file
    return tables


def _flatten(value: Any, prefix: str) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _flatten(item, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _flatten(item, f"{prefix}.{i}")
    else:
        yield prefix, value


def metrics_table(run_dir: Path) -> pa.Table:
    """Every step's ``metrics.json`` as rows (step_id, kind, metric, value, text)."""
    rows = []
    for step_dir, record in _step_dirs(run_dir):
        path = step_dir / "metrics.json"
        if not path.is_file():
            continue
        for metric, value in _flatten(json.loads(path.read_text(encoding="utf-8")), ""):
            number = isinstance(value, int | float)
            rows.append(
                {
                    "step_id": record["id"],
                    "kind": record["kind"],
                    "metric": metric,
                    "value": float(value) if number else None,
                    "text": None if number or value is None else json.dumps(value),
                }
            )
    return pa.Table.from_pylist(rows, schema=METRICS_SCHEMA)


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def build_results(run_dir: str | Path) -> Path:
    """(Re)build ``RUNDIR/results.duckdb``: one view per Parquet table, and ``metrics``."""
    run_dir = Path(run_dir)
    target = run_dir / DATABASE
    metrics = metrics_table(run_dir)
    with atomic_path(target) as tmp:
        tmp.unlink()  # DuckDB creates its own file; an empty one is not a database
        con = duckdb.connect(str(tmp))
        try:
            for name, file in parquet_tables(run_dir).items():
                path = str(file.resolve()).replace("'", "''")
                con.execute(f"CREATE VIEW {_quote(name)} AS SELECT * FROM read_parquet('{path}')")
            con.register("metrics_rows", metrics)
            con.execute("CREATE TABLE metrics AS SELECT * FROM metrics_rows")
            con.unregister("metrics_rows")
        finally:
            con.close()  # checkpoints: everything is in the one file
    return target


def open_results(run_dir: str | Path) -> duckdb.DuckDBPyConnection:
    """A connection to the freshly rebuilt results database of ``run_dir``."""
    return duckdb.connect(str(build_results(run_dir)))


def list_tables(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    """(name, type) of every view and table, ``metrics`` first."""
    rows = con.execute(
        "SELECT table_name, table_type FROM information_schema.tables "
        "ORDER BY table_name != 'metrics', table_name"
    ).fetchall()
    return [(name, "view" if kind == "VIEW" else "table") for name, kind in rows]
