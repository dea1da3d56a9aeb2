"""UPDATE, DELETE and MERGE INTO on row-tracking append tables: copy-on-write, one commit each.

As Paimon Spark does on a row-tracking table without deletion vectors
(``UpdatePaimonTableCommand``, ``DeleteFromPaimonTableCommand``, ``MergeIntoPaimonTable``):
1. read the table at its latest snapshot with ``_ROW_ID``, ``_SEQUENCE_NUMBER`` and each row's
   data file;
2. the files holding at least one affected row are rewritten: every row keeps its ``_ROW_ID``;
   untouched rows keep their ``_SEQUENCE_NUMBER``, changed rows get NULL, which the commit turns
   into the new snapshot's id; deleted rows are left out; rows a MERGE inserts carry no id and
   get fresh ones at commit;
3. ONE commit deletes the rewritten files and adds the new ones (OVERWRITE, as in Java), or
   nothing is committed when no row is affected. Files of untouched rows are not read twice
   nor rewritten.
On a table with deletion vectors (Paimon Spark's DELETE there writes vectors) the same
copy-on-write applies: rows already deleted by a vector are not read, and the rewritten files'
vectors leave the index in the same commit (format/row_tracking.py: deletion_messages); Paimon
Spark would write vectors instead of rewriting files there, with the same rows as the result.
A data-evolution table's rows are changed by row id instead, none rewritten
(ops/data_evolution_row_ops.py).
Conditions and expressions are Spark SQL over the table's columns (and ``_ROW_ID``,
``_SEQUENCE_NUMBER``); MERGE names the table ``t`` and the source ``s``.

Two executors run this logic (ops/row_executors.py, chosen as every write is): in-process, the
tracked rows are read here and handed to Spark as a local relation, the result comes back as
Arrow and is written and committed here; distributed, the ``paimon_row_tracking`` data source
reads and writes them in Spark tasks. Both make the same snapshot; the result's message names
the executor.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Union

from pyspark.errors import AnalysisException
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.format.row_tracking import (ROW_ID, SEQUENCE_NUMBER, SOURCE_FILE,
                                                     require_row_tracking)
from dbt.adapters.paimon.ops import data_evolution_row_ops, row_executors

_MATCHED = "_paimon_merge_matched"
_ORDER = "_paimon_merge_source_order"
Assignments = Union[str, Mapping[str, Any], None]


@dataclass(frozen=True)
class RowOpResult:
    updated: int
    deleted: int
    inserted: int
    rewritten_files: int
    snapshot_id: Optional[int]
    executor: str = ""          # "in-process" or "distributed" (path_choice.PathChoice.label)

    @property
    def message(self) -> str:
        done = ", ".join(f"{n} {what}" for n, what in ((self.updated, "updated"),
                                                        (self.deleted, "deleted"),
                                                        (self.inserted, "inserted")) if n) \
            or "no rows changed"
        where = f"snapshot {self.snapshot_id}" if self.snapshot_id is not None else "no commit"
        by = f" {self.executor}" if self.executor else ""
        return f"{done}{by} ({where}; {self.rewritten_files} data files rewritten)"


def _spark_errors_as_value_errors(operation):
    """A condition or expression Spark cannot parse or resolve (unknown column, bad syntax) is
    the caller's input error: ValueError naming the operation, before anything is written."""
    @functools.wraps(operation)
    def run(spark, location, *args, **kwargs):
        try:
            return operation(spark, location, *args, **kwargs)
        except AnalysisException as exc:
            # the first line that says something (a parse error's message starts with a
            # line break)
            first = next((line for line in str(exc).splitlines() if line.strip()), str(exc))
            raise ValueError(f"{operation.__name__} on {location.name}: {first}") from exc
    return run


def tracked_rows(spark: SparkSession, location: TableRef,
                 snapshot_id: Optional[int] = None, with_source_file: bool = False) -> DataFrame:
    """The table's rows with ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` (and their data file)."""
    return row_executors.tracked_rows_distributed(spark, location, snapshot_id,
                                                  with_source_file)


def _open_tracked(location: TableRef, what: str):
    from dbt.adapters.paimon.format.splits import current_snapshot_id

    table = location.open()
    require_row_tracking(table, what)
    return table, current_snapshot_id(table)


def _by_row_id(table) -> bool:
    """A data-evolution table: its rows are changed by row id (ops/data_evolution_row_ops.py),
    never rewritten."""
    from dbt.adapters.paimon.format.data_evolution import is_data_evolution

    return is_data_evolution(table)


def _by_row_id_result(changed: data_evolution_row_ops.Changed) -> RowOpResult:
    """No data file is rewritten; the message says ``by row id`` and names the executor
    (UPDATE, MERGE)."""
    executor = f"by row id, {changed.executor}" if changed.executor else "by row id"
    return RowOpResult(changed.updated, changed.deleted, changed.inserted, 0,
                       changed.snapshot_id, executor)


def _executor(spark, location: TableRef, table, base: Optional[int], what: str,
              write_path: Optional[str], max_bytes: Optional[int],
              source: Optional[DataFrame] = None) -> row_executors.RowOpExecutor:
    """The executor path_choice's rules pick, holding the table's tracked rows. Called once
    the arguments are checked, so bad arguments fail before the table is read."""
    choice = row_executors.choose(spark, location, table, base, what, write_path, max_bytes,
                                  source)
    return row_executors.open_executor(spark, location, table, base, choice)


def _condition(text: Optional[str], argument: str, what: str) -> Column:
    if text is None or not str(text).strip():
        raise ValueError(f"{what}: argument '{argument}' is required (a Spark SQL condition, "
                         f"e.g. \"id = 11\"; use \"true\" for every row)")
    return F.expr(str(text))


def _data_columns(table) -> List[str]:
    return list(table.field_names)


def _typed(frame: DataFrame, column: str, value: Column) -> Column:
    return value.cast(frame.schema[column].dataType)


def _files_and_count(frame: DataFrame) -> tuple:
    counts = frame.groupBy(SOURCE_FILE).count().collect()
    return [r[0] for r in counts], sum(r[1] for r in counts)


def _check_assignments(table, assignments: Mapping[str, Any], argument: str, what: str):
    unknown = [c for c in assignments if c not in _data_columns(table)]
    if unknown:
        raise ValueError(f"{what}: '{argument}' names {unknown}, which are not columns of "
                         f"{table.identifier} (columns: {_data_columns(table)}); _ROW_ID and "
                         f"_SEQUENCE_NUMBER cannot be set")
    if not assignments:
        raise ValueError(f"{what}: '{argument}' is empty: name at least one column to set")


@_spark_errors_as_value_errors
def update_rows(spark: SparkSession, location: TableRef, where: Optional[str],
                values: Optional[Mapping[str, Any]] = None,
                expressions: Optional[Mapping[str, str]] = None,
                write_path: Optional[str] = None,
                in_process_max_bytes: Optional[int] = None) -> RowOpResult:
    """UPDATE t SET ... WHERE ``where``: ``values`` are literal values, ``expressions`` Spark
    SQL over the row's columns (``{"data": "upper(data)"}``). ``write_path`` /
    ``in_process_max_bytes``: which executor (ops/row_executors.py), as a model's config."""
    what = f"update_rows on {location.name}"
    table, base = _open_tracked(location, what)
    sets = {c: F.lit(v) for c, v in (values or {}).items()}
    both = set(values or {}) & set(expressions or {})
    if both:
        raise ValueError(f"{what}: columns {sorted(both)} are given in both 'set' and 'set_sql'")
    sets.update({c: F.expr(str(e)) for c, e in (expressions or {}).items()})
    _check_assignments(table, sets, "set", what)
    condition = F.coalesce(_condition(where, "where", what), F.lit(False))
    if _by_row_id(table):
        return _by_row_id_result(data_evolution_row_ops.update_rows(
            spark, location, table, base, what, condition, sets, write_path,
            in_process_max_bytes))
    executor = _executor(spark, location, table, base, what, write_path, in_process_max_bytes)
    frame = executor.frame
    files, count = _files_and_count(frame.where(condition))
    if not files:
        return RowOpResult(0, 0, 0, 0, None, executor.label)
    rewritten = frame.where(F.col(SOURCE_FILE).isin(files)).select(
        *[F.when(condition, _typed(frame, c, sets[c])).otherwise(F.col(f"`{c}`")).alias(c)
          if c in sets else F.col(f"`{c}`") for c in _data_columns(table)],
        F.col(ROW_ID),
        F.when(condition, F.lit(None).cast("bigint")).otherwise(F.col(SEQUENCE_NUMBER))
        .alias(SEQUENCE_NUMBER))
    snapshot = executor.write(rewritten, files)
    return RowOpResult(count, 0, 0, len(files), snapshot, executor.label)


@_spark_errors_as_value_errors
def delete_rows(spark: SparkSession, location: TableRef, where: Optional[str],
                write_path: Optional[str] = None,
                in_process_max_bytes: Optional[int] = None) -> RowOpResult:
    """DELETE FROM t WHERE ``where``."""
    what = f"delete_rows on {location.name}"
    table, base = _open_tracked(location, what)
    condition = F.coalesce(_condition(where, "where", what), F.lit(False))
    if _by_row_id(table):
        return _by_row_id_result(data_evolution_row_ops.delete_rows(
            tracked_rows(spark, location), table, what, condition))
    executor = _executor(spark, location, table, base, what, write_path, in_process_max_bytes)
    frame = executor.frame
    files, count = _files_and_count(frame.where(condition))
    if not files:
        return RowOpResult(0, 0, 0, 0, None, executor.label)
    kept = frame.where(F.col(SOURCE_FILE).isin(files) & ~condition).select(
        *[F.col(f"`{c}`") for c in _data_columns(table)], ROW_ID, SEQUENCE_NUMBER)
    snapshot = executor.write(kept, files)
    return RowOpResult(0, count, 0, len(files), snapshot, executor.label)


def _merge_assignments(table, source: DataFrame, spec: Assignments, argument: str, what: str
                       ) -> Optional[Dict[str, Column]]:
    """'*' (every table column from the source's column of the same name), a dict of column ->
    Spark SQL over t.* and s.*, or None/'none' (that clause is left out)."""
    if spec is None or (isinstance(spec, str) and spec.strip().lower() == "none"):
        return None
    if isinstance(spec, str) and spec.strip() == "*":
        missing = [c for c in _data_columns(table) if c not in source.columns]
        if missing and argument == "insert":
            raise ValueError(f"{what}: insert '*' needs every column of {table.identifier} in "
                             f"the source, which lacks {missing}; pass insert as a dict")
        return {c: F.col(f"s.`{c}`") for c in _data_columns(table) if c in source.columns}
    if not isinstance(spec, Mapping):
        raise ValueError(f"{what}: '{argument}' must be '*', a dict of column -> expression, "
                         f"or none; got {spec!r}")
    _check_assignments(table, spec, argument, what)
    return {c: F.expr(str(e)) for c, e in spec.items()}


@_spark_errors_as_value_errors
def merge_rows(spark: SparkSession, location: TableRef, source: DataFrame,
               on: Optional[str], update: Assignments = "*", insert: Assignments = "*",
               write_path: Optional[str] = None, in_process_max_bytes: Optional[int] = None
               ) -> RowOpResult:
    """MERGE INTO t USING s ON ``on`` WHEN MATCHED THEN UPDATE SET ``update`` WHEN NOT MATCHED
    THEN INSERT ``insert``. A table row matched by several source rows is an error (as in
    Spark and Paimon); source rows matching nothing are inserted."""
    what = f"merge_rows into {location.name}"
    table, base = _open_tracked(location, what)
    condition = _condition(on, "condition", what)
    updates = _merge_assignments(table, source, update, "update", what)
    inserts = _merge_assignments(table, source, insert, "insert", what)
    if _by_row_id(table):
        return _by_row_id_result(data_evolution_row_ops.merge_rows(
            spark, location, table, base, what, source, condition, updates, inserts, on,
            write_path, in_process_max_bytes))
    columns = _data_columns(table)
    executor = _executor(spark, location, table, base, what, write_path, in_process_max_bytes,
                         source)
    frame = executor.frame
    target = frame.alias("t")
    marked = source.withColumn(_MATCHED, F.lit(True)).alias("s")
    matched = target.join(marked, condition, "inner")

    files, matches = [], 0
    if base is None:
        # no snapshot, so no row to match: skip both joins with the table (a model's first run
        # would otherwise evaluate its query three times; two of them aggregate and join). The
        # condition was still analysed against both sides above (`matched`), as Spark does
        # eagerly in classic mode and here through the schema over Spark Connect.
        matched.schema
    elif updates is not None:
        stats = matched.groupBy(F.col(f"t.{SOURCE_FILE}")).agg(
            F.count(F.lit(1)).alias("n"), F.countDistinct(F.col(f"t.{ROW_ID}")).alias("rows")
        ).collect()
        if sum(r["n"] for r in stats) != sum(r["rows"] for r in stats):
            raise ValueError(f"{what}: some rows of the table match more than one source row "
                             f"on {on!r}; a MERGE may update each row once (deduplicate the "
                             f"source)")
        files = [r[0] for r in stats]
        matches = sum(r["rows"] for r in stats)
    parts = []
    if files:
        joined = target.where(F.col(f"t.{SOURCE_FILE}").isin(files)) \
            .join(marked, condition, "left")
        hit = F.col(f"s.{_MATCHED}").isNotNull()
        parts.append(joined.select(
            *[F.when(hit, _typed(frame, c, updates[c])).otherwise(F.col(f"t.`{c}`")).alias(c)
              if c in updates else F.col(f"t.`{c}`").alias(c) for c in columns],
            F.col(f"t.{ROW_ID}").alias(ROW_ID),
            F.when(hit, F.lit(None).cast("bigint")).otherwise(F.col(f"t.{SEQUENCE_NUMBER}"))
            .alias(SEQUENCE_NUMBER)))
    inserted = 0
    if inserts is not None:
        # inserted rows are written in the source's order, so they get their ids in that order
        # whichever join Spark picks (a local relation is broadcast, a data source scan is not)
        ordered = source.withColumn(_MATCHED, F.lit(True)) \
            .withColumn(_ORDER, F.monotonically_increasing_id()).alias("s")
        unmatched = ordered if base is None else ordered.join(target, condition, "left_anti")
        new_rows = unmatched.select(
            *[_typed(frame, c, inserts[c]).alias(c) if c in inserts
              else F.lit(None).cast(frame.schema[c].dataType).alias(c) for c in columns],
            F.lit(None).cast("bigint").alias(ROW_ID),
            F.lit(None).cast("bigint").alias(SEQUENCE_NUMBER), F.col(f"s.{_ORDER}")).cache()
        try:
            inserted = new_rows.count()
            if inserted:
                parts.append(new_rows.orderBy(_ORDER).drop(_ORDER))
            if not parts:
                return RowOpResult(0, 0, 0, 0, None, executor.label)
            rows = parts[0] if len(parts) == 1 else parts[0].unionByName(parts[1])
            snapshot = executor.write(rows, files)
        finally:
            new_rows.unpersist()
    else:
        if not parts:
            return RowOpResult(0, 0, 0, 0, None, executor.label)
        snapshot = executor.write(parts[0], files)
    return RowOpResult(matches, 0, inserted, len(files), snapshot, executor.label)
