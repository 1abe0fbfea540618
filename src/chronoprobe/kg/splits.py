"""A KG's given train/valid/test split, and how one KG takes over another's.

Released temporal KGs come with their own split (CronQuestions' ``train``/``valid``/``test``
files, as tkbc reads them); figures are only comparable on that split. A KG keeps it in the
optional ``split`` column of its facts table (:data:`~chronoprobe.kg.records.SPLIT_COLUMN`),
null for a fact in no split. :func:`adopt_split` gives a KG the split of other facts, matched by
(subject, relation, object, start, end).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from chronoprobe.errors import UserError
from chronoprobe.kg.graph import TemporalKG
from chronoprobe.kg.records import FACT_SCHEMA, SPLIT_COLUMN, SPLIT_FIELD, bound_points

_ROW = "_row"


def with_split(facts: pa.Table, split: str | None) -> pa.Table:
    """``facts`` with a ``split`` column holding ``split`` (null: in no split)."""
    column = pa.array([split] * facts.num_rows, pa.string())
    return facts.append_column(SPLIT_FIELD, column)


def _keyed(facts: pa.Table) -> pa.Table:
    """The identifying columns of facts, absent bounds as -1 (a null never joins): an absent
    bound has a null precision, so -1 cannot be mistaken for a year."""
    columns = {}
    for name in FACT_SCHEMA.names:
        column = facts.column(name)
        if pa.types.is_integer(column.type):
            column = pc.fill_null(column, pa.scalar(-1, column.type))
        columns[name] = column
    return pa.table(columns)


def _describe(facts: pa.Table) -> str:
    start, end = bound_points(facts, "start")[0], bound_points(facts, "end")[0]
    ids = [facts.column(name)[0].as_py() for name in ("subject", "relation", "object")]
    return f"({', '.join(ids)}, {start or '?'}, {end or '?'})"


def adopt_split(kg: TemporalKG, source: pa.Table, where: str) -> TemporalKG:
    """``kg`` with the split its facts have in ``source`` (facts with a ``split`` column).

    A fact of ``kg`` absent from ``source``, or in no split there, is in no split. Every fact
    ``source`` puts in a split must be a fact of ``kg``: otherwise the figures would not be those
    of ``source``'s split, and a ``ValueError`` names the first missing fact (``where`` names
    ``source`` in messages).
    """
    if SPLIT_COLUMN not in source.column_names:
        raise UserError(f"{where}: the facts carry no split (no `split` column)")
    source = source.filter(pc.is_valid(source.column(SPLIT_COLUMN)))
    split = source.column(SPLIT_COLUMN)
    given = _keyed(source).append_column(SPLIT_COLUMN, split)
    given = given.append_column("_given", pa.array(np.arange(source.num_rows)))
    target = _keyed(kg.facts).append_column(_ROW, pa.array(np.arange(len(kg))))
    joined = given.join(target, keys=FACT_SCHEMA.names, join_type="left outer")
    missing = pc.is_null(joined.column(_ROW))
    if pc.any(missing).as_py():
        count = pc.sum(missing).as_py()
        first = pc.min(joined.column("_given").filter(missing)).as_py()
        raise UserError(
            f"{where}: {count:,} of its {source.num_rows:,} split facts are not facts of the KG "
            f"{kg.name!r}, e.g. {_describe(source.slice(first, 1))}; give the split of this "
            "KG's own facts"
        )
    # A fact listed twice keeps its first split, as a KG keeps the first row of a fact.
    joined = joined.sort_by("_given")
    rows = joined.column(_ROW).to_numpy()
    splits = np.full(len(kg), None, dtype=object)
    first = np.unique(rows, return_index=True)[1]
    splits[rows[first]] = np.array(joined.column(SPLIT_COLUMN).to_pylist(), dtype=object)[first]
    facts = kg.facts
    if SPLIT_COLUMN in facts.column_names:
        facts = facts.drop_columns([SPLIT_COLUMN])
    facts = facts.append_column(SPLIT_FIELD, pa.array(splits.tolist(), pa.string()))
    return TemporalKG(kg.entities, kg.relations, facts, name=kg.name, meta=kg.meta)
