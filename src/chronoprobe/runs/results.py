"""The results store: ``RUNDIR/results.duckdb``, SQL views over every Parquet table of a run.

Views, not copies: the Parquet files stay the one source of truth and the database is rebuilt
in a moment whenever it is opened, so it can never disagree with the run directory.

``metrics`` holds every step's metrics.json, one row per figure; a figure's 95% interval and
``n`` (the ``<metric>_ci95`` and ``<metric>_n`` keys beside it, or its group's ``n``) sit in its
own row's ``ci_low``, ``ci_high`` and ``n``, why it has no interval in ``no_interval``, and, for
a figure a coverage record names (a probe's headline), the rows it could have counted in
``rows`` and why the others were left out in ``left_out`` (JSON: reason -> rows). ``seeds``
gives, for each step repeated over seeds (see :mod:`chronoprobe.runs.seeds`), each figure's
mean and standard deviation over them.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from chronoprobe.atomic import atomic_path
from chronoprobe.errors import UserError
from chronoprobe.jsonl import read_json_object
from chronoprobe.runs.outputs import find_outputs, output_id, step_id
from chronoprobe.runs.ownership import describe, lstat_kind
from chronoprobe.runs.run_directory import is_run_directory
from chronoprobe.steps import STEP_RECORD

DATABASE = "results.duckdb"
OWN = "made by chronoprobe results"  # the comment on each table and view results makes
METRICS_SCHEMA = pa.schema(
    [
        ("step_id", pa.string()),
        ("kind", pa.string()),
        ("metric", pa.string()),  # dotted path into metrics.json: relation_share.P54
        ("value", pa.float64()),  # numbers and booleans
        ("text", pa.string()),  # anything else, as JSON
        ("n", pa.int64()),  # what the figure counts (rows, questions, queries), when it says
        ("ci_low", pa.float64()),  # its 95% interval, when it has one
        ("ci_high", pa.float64()),
        ("no_interval", pa.string()),  # why it has none, where it was left out
        ("rows", pa.int64()),  # the rows it could have counted (n of rows), when it says
        ("left_out", pa.string()),  # why the others were left out: JSON, reason -> rows
        ("step", pa.string()),  # the config's step: step_id, or the step a seed's copy repeats
        ("seed", pa.int64()),  # the seed of a step repeated over seeds (else null)
    ]
)
PARQUET_MAGIC = b"PAR1"  # the first and the last four bytes of every Parquet file
RESERVED = ("metrics", "seeds")  # table names no Parquet view may take
SEEDS_VIEW = """
CREATE VIEW seeds AS
SELECT step, kind, metric, avg(value) AS mean, stddev_samp(value) AS sd, count(value) AS runs,
       min(value) AS min, max(value) AS max
FROM metrics WHERE seed IS NOT NULL AND value IS NOT NULL
GROUP BY step, kind, metric
"""


def _run_file(path: Path) -> bool:
    """Whether the run holds a file at ``path`` for ``results`` to read: False when nothing is
    there; a link (never followed out of the run), a folder, a pipe (which would be waited
    on forever) or a device is refused in one line."""
    kind = lstat_kind(path)
    if kind is None:
        return False
    if kind != "file":
        raise UserError(
            f"{path} is {describe(kind)}; `chronoprobe results` reads only the files steps "
            "wrote there (never through a link, never a pipe): move it away"
        )
    return True


def _read_record(path: Path) -> dict:
    record = read_json_object(path, "the step record")
    if not (isinstance(record.get("id"), str) and isinstance(record.get("kind"), str)):
        raise UserError(f"{path}: a step record names its step's id and kind")
    return record


def _step_dirs(folder: Path) -> Iterator[tuple[Path, dict]]:
    """Every step under ``folder`` (see :mod:`chronoprobe.runs.outputs`) with its record,
    whose ``id`` (and ``step``, for a repeat over seeds) is the step's id in what was found."""
    found = find_outputs(folder)
    steps = []
    for prefix, run in found.runs:
        kind = lstat_kind(run / "steps")
        if kind not in (None, "dir"):
            _run_file(run / "steps")  # refused: a link or a file where the steps go
        if kind != "dir":
            continue
        for step_dir in sorted((run / "steps").iterdir()):
            if step_dir.name.startswith("."):
                continue
            if lstat_kind(step_dir) == "link":
                _run_file(step_dir)  # refused: a step folder elsewhere is not the run's
            if lstat_kind(step_dir) != "dir" or not _run_file(step_dir / STEP_RECORD):
                continue
            record = _read_record(step_dir / STEP_RECORD)
            renamed = {"id": step_id(prefix, record["id"])}
            if isinstance(record.get("step"), str):
                renamed["step"] = step_id(prefix, record["step"])
            steps.append((step_dir, {**record, **renamed}))
    for prefix, step_dir in found.outputs:
        record = _read_record(step_dir / STEP_RECORD)
        steps.append((step_dir, {**record, "id": output_id(found, prefix)}))
    yield from sorted(steps, key=lambda step: step[1]["id"])


def _parquet_files(step_dir: Path) -> Iterator[Path]:
    """The Parquet files a step wrote (links not followed, hidden folders not entered); an
    entry named ``*.parquet`` that is no Parquet file (a folder, a link, a pipe, another
    format) is refused, naming it, before DuckDB is handed it."""
    for root, dirs, files in os.walk(step_dir):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files + dirs):
            path = Path(root) / name
            if not name.endswith(".parquet") or name.startswith("."):
                continue
            _run_file(path)
            if not _is_parquet(path):
                raise UserError(
                    f"{path}: not a Parquet file (it lacks the PAR1 marks a Parquet file starts "
                    "and ends with); move it away, or run the step again to write it"
                )
            yield path


def _is_parquet(path: Path) -> bool:
    with open(path, "rb") as stream:
        head = stream.read(4)
        if stream.seek(0, os.SEEK_END) < 12:
            return False
        stream.seek(-4, os.SEEK_END)
        return head == PARQUET_MAGIC and stream.read(4) == PARQUET_MAGIC


def _sanitize(name: str) -> str:
    name = re.sub(r"[^0-9a-zA-Z]+", "_", name).strip("_").lower()
    return name if name and not name[0].isdigit() else f"t_{name}"


def parquet_tables(run_dir: Path) -> dict[str, Path]:
    """View name -> Parquet file: ``<step_id>_<file stem>`` (subfolders joined with ``_``)."""
    tables: dict[str, Path] = {}
    for step_dir, record in _step_dirs(run_dir):
        for file in _parquet_files(step_dir):
            relative = file.relative_to(step_dir).with_suffix("")
            base = _sanitize(f"{record['id']}_{'_'.join(relative.parts)}")
            name, n = base, 1
            while name in tables or name in RESERVED:
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


def _uncertainty(group: dict, key: str) -> dict:
    """The n, 95% interval (or why it has none) and coverage that ``group`` gives its figure
    ``key`` (nulls where none)."""
    interval = group.get(f"{key}_ci95")
    n = group.get(f"{key}_n", group.get("n") if f"{key}_ci95" in group else None)
    low, high = interval if isinstance(interval, list) and len(interval) == 2 else (None, None)
    why = group.get(f"{key}_no_interval")
    coverage = group.get("coverage")
    covered = isinstance(coverage, dict) and key in (coverage.get("figures") or ())
    rows = coverage.get("rows") if covered else None
    left_out = coverage.get("left_out") if covered else None
    return {
        "n": n if isinstance(n, int) else None,
        "ci_low": low,
        "ci_high": high,
        "no_interval": why if isinstance(why, str) else None,
        "rows": rows if isinstance(rows, int) else None,
        "left_out": json.dumps(left_out) if isinstance(left_out, dict) else None,
    }


def _folded(group: dict, key: str) -> bool:
    """Is ``key`` a figure's interval, count or reason for no interval, which go into the
    figure's own row?"""
    for suffix in ("_ci95", "_n", "_no_interval"):
        base = key.removesuffix(suffix)
        if key.endswith(suffix) and base in group and f"{base}_ci95" in group:
            return True
    return False


def _figures(value: Any, prefix: str = "") -> Iterator[tuple[str, Any, dict]]:
    """(dotted path, value, its n and interval) for every leaf of a metrics.json."""
    if isinstance(value, dict):
        for key, item in value.items():
            if _folded(value, str(key)):
                continue
            path = f"{prefix}.{key}" if prefix else str(key)
            if isinstance(item, dict | list):
                yield from _figures(item, path)
            else:
                yield path, item, _uncertainty(value, str(key))
    elif isinstance(value, list):
        for path, item in _flatten(value, prefix):
            yield path, item, _uncertainty({}, "")
    else:
        yield prefix, value, _uncertainty({}, "")


def metrics_table(run_dir: Path) -> pa.Table:
    """Every step's ``metrics.json`` as rows (step_id, kind, metric, value, text, n, ci_low,
    ci_high, no_interval, rows, left_out, step, seed)."""
    rows = []
    for step_dir, record in _step_dirs(run_dir):
        path = step_dir / "metrics.json"
        if not _run_file(path):
            continue
        for metric, value, uncertainty in _figures(read_json_object(path, "metrics.json")):
            number = isinstance(value, int | float)
            rows.append(
                {
                    "step_id": record["id"],
                    "kind": record["kind"],
                    "metric": metric,
                    "value": float(value) if number else None,
                    "text": None if number or value is None else json.dumps(value),
                    **uncertainty,
                    "step": record.get("step", record["id"]),
                    "seed": record.get("seed"),
                }
            )
    return pa.Table.from_pylist(rows, schema=METRICS_SCHEMA)


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _fill(con: duckdb.DuckDBPyConnection, folder: Path) -> list[str]:
    """Create the views over ``folder``'s Parquet files, ``metrics`` and ``seeds`` in ``con``;
    returns their names."""
    metrics = metrics_table(folder)
    tables = parquet_tables(folder)
    names = [*tables, "metrics", "seeds"]
    for name, file in tables.items():
        path = str(file.resolve()).replace("'", "''")
        try:
            con.execute(f"CREATE VIEW {_quote(name)} AS SELECT * FROM read_parquet('{path}')")
        except duckdb.Error as err:
            reason = str(err).strip().splitlines()[0]
            raise UserError(f"{file}: not a Parquet file DuckDB can read ({reason})") from None
    con.register("metrics_rows", metrics)
    con.execute("CREATE TABLE metrics AS SELECT * FROM metrics_rows")
    con.unregister("metrics_rows")
    con.execute(SEEDS_VIEW)
    return names


def build_results(run_dir: str | Path) -> Path:
    """(Re)build ``RUNDIR/results.duckdb``: one view per Parquet table, and ``metrics``. The
    tables and views a user added to an earlier one are carried over into the new one."""
    run_dir = Path(run_dir)
    if not is_run_directory(run_dir):
        raise UserError(
            f"{run_dir}: not a run directory (no .chronoprobe-run); `chronoprobe results` "
            "writes results.duckdb only into a folder `chronoprobe run` made"
        )
    target = run_dir / DATABASE
    with atomic_path(target) as tmp:
        tmp.unlink()  # DuckDB creates its own file; an empty one is not a database
        con = duckdb.connect(str(tmp))
        try:
            for name in _fill(con, run_dir):
                kind = "TABLE" if name == "metrics" else "VIEW"
                con.execute(f"COMMENT ON {kind} {_quote(name)} IS '{OWN}'")
            if lstat_kind(target) is not None:
                _carry_over(con, target)
        finally:
            con.close()  # checkpoints: everything is in the one file
    return target


def _carry_over(con: duckdb.DuckDBPyConnection, earlier: Path) -> None:
    """Copy into ``con`` the tables and views of the ``earlier`` database that ``results`` did
    not make (a user's own, added in a DuckDB client): the database is rebuilt at every call,
    and must not lose them. A file that is no DuckDB database is refused, not replaced."""
    if lstat_kind(earlier) != "file":  # a link is not followed out of the run
        raise UserError(f"{earlier} is not the database `chronoprobe results` writes: move it away")
    try:
        con.execute(f"ATTACH '{str(earlier).replace(chr(39), chr(39) * 2)}' AS earlier (READ_ONLY)")
    except duckdb.Error:
        raise UserError(
            f"{earlier} is no DuckDB database, so not the one `chronoprobe results` writes: "
            "move it away"
        ) from None
    try:
        tables = con.execute(
            "SELECT table_name, comment FROM duckdb_tables() WHERE database_name = 'earlier'"
        ).fetchall()
        views = con.execute(
            "SELECT view_name, comment, sql FROM duckdb_views() "
            "WHERE database_name = 'earlier' AND NOT internal"
        ).fetchall()
        marked = any(c == OWN for _, c in tables) or any(c == OWN for _, c, _ in views)
        # a database from before results marked its own: metrics and the Parquet views are
        ours = (
            {n for n, c in tables if c == OWN} | {n for n, c, _ in views if c == OWN}
            if marked
            else {"metrics", "seeds"} | {n for n, _, sql in views if "read_parquet(" in sql}
        )
        for name, _ in tables:
            if name not in ours:
                con.execute(f"CREATE TABLE {_quote(name)} AS SELECT * FROM earlier.{_quote(name)}")
        for name, _, sql in views:
            if name not in ours:
                try:
                    con.execute(sql)
                except duckdb.Error as err:
                    raise UserError(
                        f"{earlier}: your view {name} no longer works over the rebuilt results "
                        f"({err}); drop it or fix it, then run results again"
                    ) from None
    finally:
        con.execute("DETACH earlier")


def open_results(folder: str | Path) -> duckdb.DuckDBPyConnection:
    """A connection to the results of ``folder``: a run directory's freshly rebuilt
    ``results.duckdb``; for any other folder of outputs (a command's ``--out``, a folder of
    several), a database in memory, since such a folder holds only what its commands wrote."""
    find_outputs(folder)  # refuses a folder with none
    if is_run_directory(Path(folder)):
        return duckdb.connect(str(build_results(folder)))
    con = duckdb.connect(":memory:")
    _fill(con, Path(folder))
    return con


def list_tables(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    """(name, type) of every view and table, ``metrics`` first."""
    rows = con.execute(
        "SELECT table_name, table_type FROM information_schema.tables "
        "ORDER BY table_name != 'metrics', table_name"
    ).fetchall()
    return [(name, "view" if kind == "VIEW" else "table") for name, kind in rows]


FIGURE_COLUMNS = [
    "step",
    "kind",
    "metric",
    "value",
    "ci_low",
    "ci_high",
    "n",
    "rows",
    "left_out",
    "no_interval",
    "sd",
    "per_seed",
]


def figure_rows(con: duckdb.DuckDBPyConnection, pattern: str) -> list[tuple]:
    """The figures whose metric path matches ``pattern`` (a GLOB: ``hits@1``,
    ``types.*.hits@1``), one row per step, as :data:`FIGURE_COLUMNS`, every value whole (a
    table rounds them for the eye, a program reads them as they are): a step run once gives
    its value, 95% interval, n, the rows it could have counted and why the others were left out
    (where its coverage says), or why it has no interval; a step repeated over seeds the mean
    over its seeds, their standard deviation and each seed's value (n and rows when every seed
    counted the same). A step "repeated" over one seed has no spread: it gives that run's
    interval instead, as a step run once does."""
    once = con.execute(
        "SELECT step_id, kind, metric, value, ci_low, ci_high, n, rows, left_out, no_interval "
        "FROM metrics WHERE seed IS NULL AND value IS NOT NULL AND metric GLOB ?",
        [pattern],
    ).fetchall()
    repeated = con.execute(
        "SELECT step, kind, metric, avg(value), stddev_samp(value), min(n), max(n), "
        "list(seed ORDER BY seed), list(value ORDER BY seed), min(ci_low), min(ci_high), "
        "min(rows), max(rows), min(left_out), max(left_out), min(no_interval) "
        "FROM metrics WHERE seed IS NOT NULL AND value IS NOT NULL AND metric GLOB ? "
        "GROUP BY step, kind, metric",
        [pattern],
    ).fetchall()
    rows = []
    for step, kind, metric, value, low, high, n, of, left_out, why in once:
        rows.append((step, kind, metric, value, low, high, n, of, left_out, why, None, None))
    for record in repeated:
        step, kind, metric, mean, sd, low_n, high_n, seeds, values, low, high = record[:11]
        low_rows, high_rows, low_left, high_left, why = record[11:]
        per_seed = dict(zip(seeds, values, strict=True))
        n = low_n if low_n == high_n else None
        of = low_rows if low_rows == high_rows else None
        left_out = low_left if low_left == high_left else None
        # one seed: min() is that run's own interval
        one = len(seeds) == 1
        low, high = (low, high) if one and low is not None else (None, None)
        rows.append(
            (step, kind, metric, mean, low, high, n, of, left_out, why if one else None, sd,
             per_seed)
        )  # fmt: skip
    return sorted(rows, key=lambda row: (row[0], row[2]))
