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
conditions and expressions are Spark SQL as on other tables (ops/row_ops.py). UPDATE and MERGE
choose their executor as the other row operations do (ops/row_executors.py ``choose``:
``write_path``, ``in_process_max_bytes``): in-process, the matched rows' ``_ROW_ID`` and new
values (and a MERGE's new rows) are collected to the dbt process as Arrow and written there
(write/column_update.py); distributed, they stay in Spark and are written in Spark tasks
(write/column_update_job.py, the distributed write of a ``data_evolution_update`` model), the
rows read at the snapshot whose row-id index the writers get, one commit on the driver. Both
run the same checks, with the same errors, before anything is written. DELETE collects only
row ids, whatever ``write_path`` says.

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
    when nothing matched); the executor's label (path_choice.PathChoice.label), "" for DELETE."""
    updated: int
    deleted: int
    inserted: int
    snapshot_id: Optional[int]
    executor: str = ""


NOTHING = Changed(0, 0, 0, None)


def _result(update, executor: str) -> Changed:
    return Changed(update.rows, 0, update.inserted, update.snapshot_id, executor)


def _planned(spark, location, table):
    """The latest snapshot's splits and row-id index (column_update.snapshot_splits), and the
    tracked rows of that very snapshot: the rows are matched in, and the writers merge with,
    the files the commit's row-id check starts from."""
    from dbt.adapters.paimon.ops.row_executors import tracked_rows_distributed
    from dbt.adapters.paimon.write.column_update import snapshot_splits

    planned = snapshot_splits(table)
    snapshot = planned[1].snapshot_id
    return planned, tracked_rows_distributed(spark, location,
                                             snapshot if snapshot >= 0 else None)


def update_rows(spark, location, table, base: Optional[int], what: str, condition: Column,
                sets: Dict[str, Column], write_path: Optional[str] = None,
                max_bytes: Optional[int] = None) -> Changed:
    """UPDATE t SET ``sets`` WHERE ``condition`` over the table's tracked rows; ``base``: the
    snapshot the operation opened, whose data files size the executor's choice."""
    from dbt.adapters.paimon.ops.row_executors import choose, tracked_rows_distributed
    from dbt.adapters.paimon.write.column_update import check_update, update_columns
    from dbt.adapters.paimon.write.path_choice import IN_PROCESS

    check_assignable(table, what, list(sets))
    # by the other row operations' rule: the table's live data files against the budget
    choice = choose(spark, location, table, base, what, write_path, max_bytes)
    if choice.path == IN_PROCESS:
        values = _matched_values(tracked_rows_distributed(spark, location), condition, sets)
        return _result(update_columns(table, what, values, ROW_ID, list(sets)), choice.label)
    from dbt.adapters.paimon.write.column_update_job import update_in_spark

    planned, frame = _planned(spark, location, table)
    values = frame.where(condition).select(
        F.col(ROW_ID), *[sets[c].cast(frame.schema[c].dataType).alias(c) for c in sets])
    check_update(table, what, ROW_ID, list(sets), values.columns)
    return _result(update_in_spark(spark, table, location, what, values, ROW_ID, list(sets),
                                   [], False, planned=planned), choice.label)


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
    from dbt.adapters.paimon.write.column_update import unwritten_not_null

    nulls = [c for c in unwritten_not_null(table, []) if added[c].null_count]
    _raise_not_null(what, added.num_rows, nulls)


def _raise_not_null(what: str, count: int, nulls: List[str]) -> None:
    if nulls:
        raise ValueError(f"{what}: {count} source rows match no row and would be "
                         f"inserted holding NULL in the NOT NULL column(s) {nulls}: give them "
                         f"values in 'insert', or leave those rows out of the source. Nothing "
                         f"was written.")


def _more_than_once(what: str, on: str) -> ValueError:
    return ValueError(f"{what}: some rows of the table match more than one source row on "
                      f"{on!r}; a MERGE may update each row once (deduplicate the source)")


def _inserted(frame: DataFrame, target: DataFrame, source: DataFrame, condition: Column,
              inserts: Dict[str, Column], columns: List[str]) -> DataFrame:
    """The source rows matching no row of ``target`` as whole rows of the table (columns the
    insert leaves out NULL), with their position in the source (``_ORDER``)."""
    ordered = source.withColumn(_MATCHED, F.lit(True)) \
        .withColumn(_ORDER, F.monotonically_increasing_id()).alias("s")
    return ordered.join(target, condition, "left_anti").select(
        *[inserts[c].cast(frame.schema[c].dataType).alias(c) if c in inserts
          else F.lit(None).cast(frame.schema[c].dataType).alias(c) for c in columns],
        F.col(_ORDER))


def merge_rows(spark, location, table, base: Optional[int], what: str, source: DataFrame,
               condition: Column, updates: Optional[Dict[str, Column]],
               inserts: Optional[Dict[str, Column]], on: str, write_path: Optional[str] = None,
               max_bytes: Optional[int] = None) -> Changed:
    """MERGE INTO t USING s ON ``condition``: the matched rows' ``updates`` written by row id,
    the unmatched source rows' ``inserts`` appended as new rows, in one commit."""
    from dbt.adapters.paimon.ops.row_executors import choose
    from dbt.adapters.paimon.write.path_choice import IN_PROCESS

    check_assignable(table, what, list(updates or {}))
    choice = choose(spark, location, table, base, what, write_path, max_bytes, source)
    if choice.path == IN_PROCESS:
        return _merge_in_process(spark, location, table, what, source, condition, updates,
                                 inserts, on)._replace(executor=choice.label)
    return _merge_distributed(spark, location, table, what, source, condition, updates,
                              inserts, on)._replace(executor=choice.label)


def _merge_in_process(spark, location, table, what: str, source: DataFrame,
                      condition: Column, updates: Optional[Dict[str, Column]],
                      inserts: Optional[Dict[str, Column]], on: str) -> Changed:
    from dbt.adapters.paimon.datasource.spark_arrow import collect_arrow
    from dbt.adapters.paimon.ops.row_executors import tracked_rows_distributed
    from dbt.adapters.paimon.write.column_update import update_columns

    frame = tracked_rows_distributed(spark, location)
    target = frame.alias("t")
    marked = source.withColumn(_MATCHED, F.lit(True)).alias("s")
    columns = list(table.field_names)
    values = pa.table({ROW_ID: pa.array([], pa.int64())})
    if updates:
        values = collect_arrow(target.join(marked, condition, "inner").select(
            F.col(f"t.{ROW_ID}").alias(ROW_ID),
            *[updates[c].cast(frame.schema[c].dataType).alias(c) for c in updates]))
        if pc.count_distinct(values[ROW_ID]).as_py() != values.num_rows:
            raise _more_than_once(what, on)
    added = None
    if inserts is not None:
        added = collect_arrow(_inserted(frame, target, source, condition, inserts, columns)
                              .orderBy(_ORDER).drop(_ORDER))
        if not added.num_rows:
            added = None
        else:
            _check_not_null(table, what, added)
    if not values.num_rows and added is None:
        return NOTHING
    update = update_columns(table, what, values, ROW_ID, list(updates or {}), appended=added)
    return _result(update, "")


def _merge_distributed(spark, location, table, what: str, source: DataFrame,
                       condition: Column, updates: Optional[Dict[str, Column]],
                       inserts: Optional[Dict[str, Column]], on: str) -> Changed:
    """The in-process merge's checks as Spark aggregations (the driver gets counts), then
    column_update_job.update_in_spark writes the matched rows' columns and the new rows in
    tasks, as one commit."""
    from pyspark import StorageLevel

    from dbt.adapters.paimon.write.column_update import check_update, unwritten_not_null
    from dbt.adapters.paimon.write.column_update_job import APPEND_ORDER, update_in_spark

    planned, frame = _planned(spark, location, table)
    target = frame.alias("t")
    columns = list(table.field_names)
    values = None
    if updates:
        values = target.join(source.withColumn(_MATCHED, F.lit(True)).alias("s"), condition,
                             "inner").select(
            F.col(f"t.{ROW_ID}").alias(ROW_ID),
            *[updates[c].cast(frame.schema[c].dataType).alias(c) for c in updates])
        check_update(table, what, ROW_ID, list(updates), values.columns)
        matches, rows = values.agg(F.count(F.lit(1)), F.countDistinct(F.col(ROW_ID))).first()
        if matches != rows:
            raise _more_than_once(what, on)
        values = values if matches else None
    added = None
    if inserts is not None:
        # computed once: the NOT NULL check and the write see the same rows and source order
        added = _inserted(frame, target, source, condition, inserts, columns) \
            .withColumnRenamed(_ORDER, APPEND_ORDER).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        if added is not None:
            required = unwritten_not_null(table, [])
            counts = added.agg(F.count(F.lit(1)), *[
                F.count(F.when(F.col(f"`{c}`").isNull(), 1)) for c in required]).first()
            if not counts[0]:
                added.unpersist()
                added = None
            else:
                _raise_not_null(what, counts[0],
                                [c for c, n in zip(required, counts[1:]) if n])
        if values is None and added is None:
            return NOTHING
        return _result(update_in_spark(spark, table, location, what, values, ROW_ID,
                                       list(updates or {}), [], False, planned=planned,
                                       appended=added), "")
    finally:
        if added is not None:
            added.unpersist()
