"""UPDATE, DELETE and MERGE INTO on data-evolution tables (``row-tracking.enabled`` and
``data-evolution.enabled``), as Paimon 2.x's Spark runs them there: no row is rewritten.

- UPDATE writes the assigned columns of the matched rows by row id: per touched row-id range,
  one file holding only those columns (write/column_update.py, the write of a
  ``data_evolution_update`` model). The other columns, and every row's ``_ROW_ID``, stay as
  they are.
- DELETE marks the matched rows in deletion vectors (pypaimon 2.1's ``TableDeleteByRowId``).
  Like Paimon, it needs ``deletion-vectors.enabled``.
- MERGE INTO updates the matched rows' assigned columns as UPDATE does. The source rows that
  match none become new rows, appended in the same commit; the commit numbers their row ids
  after the table's last.

The rows are read with their ``_ROW_ID`` by the ``paimon_row_tracking`` source in Spark, and
conditions and expressions are Spark SQL as on other tables (ops/row_ops.py). The matched rows'
``_ROW_ID`` and new values are collected to the dbt process as Arrow, where the files are
written and committed, so ``write_path`` does not apply.

Refused before anything is read or written, naming the table and the column: assigning a
partition column (a row's partition is where its files are), a BLOB column kept as
descriptors, views or video frames (their stored values are not the bytes an expression gives;
BLOB columns in ``.blob`` files and VECTOR columns, in data or vector files, are assigned like
any other, pypaimon's update writer writing their files), and tables with 64-bit deletion
vectors (pypaimon 2.1 cannot decode them).
"""

from __future__ import annotations

from typing import Dict, List, NamedTuple, Optional

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from dbt.adapters.paimon.format.row_tracking import ROW_ID

_MATCHED = "_paimon_merge_matched"
_ORDER = "_paimon_merge_source_order"


def check_assignable(table, what: str, columns: List[str]) -> None:
    """ValueError, before anything is read, for assignments Paimon cannot write by row id."""
    from dbt.adapters.paimon.format.deletion_vectors import has_64bit_vectors
    from dbt.adapters.paimon.write.column_update import columns_not_written

    name = table.identifier.get_full_name()
    problems = []
    partition = [c for c in columns if c in table.partition_keys]
    if partition:
        problems.append(f"{partition} are partition columns: Paimon cannot change them by row "
                        f"id (a row's partition is where its files are)")
    special = columns_not_written(table, columns)
    if special:
        problems.append(f"{special} are BLOB columns kept as descriptors, views or video frames "
                        f"('blob-descriptor-field', 'blob-view-field', 'video-frame-field'); "
                        f"writing them by row id is not built")
    if has_64bit_vectors(table):
        problems.append("the table has 64-bit deletion vectors ('deletion-vectors.bitmap64'), "
                        "which pypaimon 2.1's update and delete writers cannot decode")
    if problems:
        raise ValueError(f"{what}: {name} is a data-evolution table, whose rows are changed by "
                         f"row id: " + "; ".join(problems) + ". Nothing was written.")


def _matched_values(frame: DataFrame, condition: Column, sets: Dict[str, Column]) -> pa.Table:
    from dbt.adapters.paimon.datasource.spark_arrow import collect_arrow

    return collect_arrow(frame.where(condition).select(
        F.col(ROW_ID), *[sets[c].cast(frame.schema[c].dataType).alias(c) for c in sets]))


class Changed(NamedTuple):
    """What an operation changed: rows updated, deleted and inserted, and its snapshot (None
    when nothing matched)."""
    updated: int
    deleted: int
    inserted: int
    snapshot_id: Optional[int]


NOTHING = Changed(0, 0, 0, None)


def _result(update) -> Changed:
    return Changed(update.rows, 0, update.inserted, update.snapshot_id)


def update_rows(frame: DataFrame, table, what: str, condition: Column,
                sets: Dict[str, Column]) -> Changed:
    """UPDATE t SET ``sets`` WHERE ``condition`` over ``frame`` (the tracked rows)."""
    from dbt.adapters.paimon.write.column_update import update_columns

    check_assignable(table, what, list(sets))
    values = _matched_values(frame, condition, sets)
    return _result(update_columns(table, what, values, ROW_ID, list(sets)))


def delete_rows(frame: DataFrame, table, what: str, condition: Column) -> Changed:
    """DELETE FROM t WHERE ``condition``: the matched rows marked in deletion vectors."""
    from pypaimon.write.table_delete import TableDeleteByRowId

    from dbt.adapters.paimon.format.commit import abort_unless_committed, commit_append

    if not table.options.deletion_vectors_enabled():
        raise ValueError(f"{what}: {table.identifier.get_full_name()} is a data-evolution "
                         f"table, whose rows Paimon deletes with deletion vectors, and it has "
                         f"none: set its table option 'deletion-vectors.enabled' = 'true' "
                         f"(ALTER TABLE ... SET TBLPROPERTIES) first. Nothing was written.")
    check_assignable(table, what, [])
    ids = collect_row_ids(frame.where(condition))
    if not ids:
        return NOTHING
    messages = TableDeleteByRowId(table).delete(ids)
    try:
        snapshot = commit_append(table, messages, check_sequences=False)
    except BaseException:
        abort_unless_committed(table, messages)
        raise
    return Changed(0, len(ids), 0, snapshot)


def collect_row_ids(frame: DataFrame) -> List[int]:
    from dbt.adapters.paimon.datasource.spark_arrow import collect_arrow

    return collect_arrow(frame.select(ROW_ID))[ROW_ID].to_pylist()


def _check_not_null(table, what: str, added: pa.Table) -> None:
    from dbt.adapters.paimon.write.column_update import _arrow_schema

    nulls = [f.name for f in _arrow_schema(table) if not f.nullable and added[f.name].null_count]
    if nulls:
        raise ValueError(f"{what}: {added.num_rows} source rows match no row and would be "
                         f"inserted holding NULL in the NOT NULL column(s) {nulls}: give them "
                         f"values in 'insert', or leave those rows out of the source. Nothing "
                         f"was written.")


def merge_rows(frame: DataFrame, table, what: str, source: DataFrame, condition: Column,
               updates: Optional[Dict[str, Column]], inserts: Optional[Dict[str, Column]],
               on: str) -> Changed:
    """MERGE INTO t USING s ON ``condition``: the matched rows' ``updates`` written by row id,
    the unmatched source rows' ``inserts`` appended as new rows, in one commit."""
    from dbt.adapters.paimon.datasource.spark_arrow import collect_arrow
    from dbt.adapters.paimon.write.column_update import update_columns

    check_assignable(table, what, list(updates or {}))
    target = frame.alias("t")
    marked = source.withColumn(_MATCHED, F.lit(True)).alias("s")
    columns = list(table.field_names)
    values = pa.table({ROW_ID: pa.array([], pa.int64())})
    if updates:
        values = collect_arrow(target.join(marked, condition, "inner").select(
            F.col(f"t.{ROW_ID}").alias(ROW_ID),
            *[updates[c].cast(frame.schema[c].dataType).alias(c) for c in updates]))
        if pc.count_distinct(values[ROW_ID]).as_py() != values.num_rows:
            raise ValueError(f"{what}: some rows of the table match more than one source row "
                             f"on {on!r}; a MERGE may update each row once (deduplicate the "
                             f"source)")
    added = None
    if inserts is not None:
        ordered = source.withColumn(_MATCHED, F.lit(True)) \
            .withColumn(_ORDER, F.monotonically_increasing_id()).alias("s")
        unmatched = ordered.join(target, condition, "left_anti")
        added = collect_arrow(unmatched.orderBy(_ORDER).select(
            *[inserts[c].cast(frame.schema[c].dataType).alias(c) if c in inserts
              else F.lit(None).cast(frame.schema[c].dataType).alias(c) for c in columns]))
        if not added.num_rows:
            added = None
        else:
            _check_not_null(table, what, added)
    if not values.num_rows and added is None:
        return NOTHING
    update = update_columns(table, what, values, ROW_ID, list(updates or {}), appended=added)
    return _result(update)
