"""A partial-update or aggregation table's merge as Spark SQL aggregates, for a native read of
a snapshot whose splits need one (native_read.py).

Paimon merges a key's records in sequence-number order (Java ``SortMergeReader``; the merge
runtime does the same). When every record of the snapshot adds (no -U/-D: each file's
``delete_row_count`` is 0) and each field's function folds to a value that an SQL aggregate
over the key's records gives whatever their grouping, the merged row is ``GROUP BY`` the
primary key over the data files' rows, with each file's ``_SEQUENCE_NUMBER``:

- ``last_non_null_value`` (partial-update's every field, aggregation's default): the value of
  the largest sequence number among the non-NULL ones, ``max_by(.., seq) FILTER (WHERE .. IS
  NOT NULL)``; ``last_value``: ``max_by`` over all; ``first_value`` and
  ``first_non_null_value``: ``min_by`` likewise;
- ``max``, ``min``, ``bool_and``, ``bool_or``: Spark's own, which skip NULLs and give NULL when
  every input is NULL, as Paimon's do (not for floating point: Java orders NaN and -0.0 by
  ``Double.compare``).

A compacted file's record of a key carries the merged value of older records and the last of
their sequence numbers, lower than any later record of the key: each of these functions over it
and the later records gives the merge of all. Spark reads only the columns a query uses, and
pushes a filter on the primary key below the aggregate.

Anything else keeps the merge runtime (``merge_aggregates`` says why): sequence fields and
sequence groups (an order other than the sequence number), other functions (``sum`` and
``product`` check every running value for overflow, ``listagg`` and the collections depend on
order or shape), retractions.
"""

from __future__ import annotations

from typing import Optional, Tuple

from dbt.adapters.paimon.datasource.spark_types import quote_identifier

SEQUENCE_COLUMN = "_SEQUENCE_NUMBER"

_LAST_NON_NULL = ("last_non_null_value",)
_BY_SEQUENCE = {
    "last_non_null_value": ("max_by", True),
    "last_value": ("max_by", False),
    "first_value": ("min_by", False),
    "first_non_null_value": ("min_by", True),
    "first_not_null_value": ("min_by", True),
}
_SKIPPING_NULLS = ("max", "min", "bool_and", "bool_or")
_FLOATING = ("FLOAT", "DOUBLE")


def merge_aggregates(table) -> Tuple[Optional[Tuple[Tuple[str, str], ...]], str]:
    """(per value column, the Spark SQL aggregate that merges it over the key's rows of the data
    files; None and why not). The table's merge must be partial-update or aggregation."""
    from dbt.adapters.paimon.datasource.source import merge_spec_of

    spec = merge_spec_of(table)
    if spec.engine not in ("partial-update", "aggregation"):
        return None, f"a {spec.engine} table's merge is a choice of records"
    if spec.sequence_fields:
        return None, "records ordered by a sequence field"
    if spec.sequence_groups:
        return None, "sequence groups"
    aggregators = spec.aggregator_of
    merged = []
    for column in spec.value_fields:
        aggregator = aggregators.get(column)
        aggregator = getattr(aggregator, "inner", aggregator)  # ignore-retract: no retractions
        if aggregator is None:
            if spec.engine != "partial-update":
                return None, f"column {column} has no aggregate function"
            name = "last_non_null_value"
        else:
            name = aggregator.name
        sql = _aggregate(name, column, spec.types[column].root)
        if sql is None:
            return None, f"aggregate function {name} of column {column}"
        merged.append((column, sql))
    return tuple(merged), ""


def _aggregate(function: str, column: str, root: str) -> Optional[str]:
    name = quote_identifier(column)
    if function in _BY_SEQUENCE:
        spark_function, non_null = _BY_SEQUENCE[function]
        sql = f"{spark_function}({name}, {SEQUENCE_COLUMN})"
        return f"{sql} filter (where {name} is not null)" if non_null else sql
    if function in _SKIPPING_NULLS and root not in _FLOATING:
        return f"{function}({name})"
    return None


def merged_rows_sql(records: str, columns, primary_keys, aggregates) -> str:
    """The query of the merged rows, ``columns`` in order, of ``records`` (a query of the data
    files' rows with ``_SEQUENCE_NUMBER``)."""
    by_column = dict(aggregates)
    keys = [quote_identifier(k) for k in primary_keys]
    select = [f"{by_column[c]} as {quote_identifier(c)}" if c in by_column
              else quote_identifier(c) for c in columns]
    return (f"select {', '.join(select)} from ({records}) records "
            f"group by {', '.join(keys)}")
