"""The two executors of the row operations (ops/row_ops.py): where the tracked rows come from
and where the rewritten rows go. The operations' DataFrame logic is one and the same on both;
only its input relation and its output differ.

- in-process: this process reads the table's tracked rows (columns, ``_ROW_ID``,
  ``_SEQUENCE_NUMBER``, source file; rows a deletion vector deletes left out) as Arrow with the
  data source's own per-split reader, hands them to Spark as a local relation
  (``createDataFrame``: Spark Connect too) so that Spark evaluates the conditions and
  expressions, takes the result back with ``toArrow()``, and writes and commits it here with
  the data source's own write and commit functions. No Spark Python worker starts (a fresh
  dbt process pays seconds for them), and a failure in evaluating the result happens before
  any file is written.
- distributed: the ``paimon_row_tracking`` data source reads the rows in Spark tasks and its
  writer writes them in Spark tasks; the driver commits.

Both end in ``commit_rewrite``: ONE OVERWRITE snapshot deleting the rewritten files, row ids
kept, changed rows' sequence numbers the new snapshot id, inserted rows given fresh ids.

Chosen as every other write is (write/path_choice.py): ``write_path`` (the operation's
argument or the model's config, else the profile's ``spark.dbt.paimon.writePath``); a master
that is not ``local``: distributed; else in-process when the table's live data files (plus,
for a MERGE, Spark's estimate of its source) fit ``in_process_max_bytes``.

Types: the local relation is created with the very Spark schema the data source declares, from
the Arrow the data source would hand Spark (``conform`` to that schema), and ``toArrow()`` gives
the Arrow Spark's writer tasks receive (timestamps in UTC: TIMESTAMP_LTZ as
``timestamp[us, UTC]``, TIMESTAMP as ``timestamp[us]``; decimals, binary, arrays, maps and rows
as themselves). Every Paimon type the data source reads therefore round-trips exactly
(tests/integration/ops/test_row_executors.py checks each), and no type needs the
distributed path.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

from pyspark.sql import DataFrame, SparkSession

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.datasource.spark_arrow import collect_arrow
from dbt.adapters.paimon.write.path_choice import IN_PROCESS, PathChoice


@dataclass
class RowOpExecutor:
    """``frame``: the table's tracked rows at snapshot ``base`` with their source file;
    ``write(rows, rewrite_files)`` commits ``rows`` (the table's columns, ``_ROW_ID``,
    ``_SEQUENCE_NUMBER``) in place of ``rewrite_files``; returns the new snapshot id or None."""
    location: TableRef
    base: Optional[int]
    choice: PathChoice
    frame: DataFrame

    @property
    def label(self) -> str:
        return self.choice.label

    def write(self, rows: DataFrame, rewrite_files: List[str]) -> Optional[int]:
        if self.choice.path == IN_PROCESS:
            return _write_in_process(self.location, rows, rewrite_files, self.base)
        return _write_distributed(self.location, rows, rewrite_files, self.base)


def choose(spark, location: TableRef, table, base: Optional[int], what: str,
           write_path: Optional[str] = None, max_bytes: Optional[int] = None,
           source: Optional[DataFrame] = None) -> PathChoice:
    """The executor of a row operation on ``table`` (snapshot ``base``); ``source``: a MERGE's
    source rows, weighed by Spark's estimate (plan_size.py): unknown -> distributed."""
    from dbt.adapters.paimon.config.model_config import WRITE_PATHS
    from dbt.adapters.paimon.format.splits import data_file_bytes
    from dbt.adapters.paimon.write import plan_size
    from dbt.adapters.paimon.write.path_choice import (check_max_bytes, choose_path_by,
                                                       warehouse_table_bytes)

    if write_path is not None and write_path not in WRITE_PATHS:
        raise ValueError(f"{what}: 'write_path' is {write_path!r}; expected one of "
                         f"{list(WRITE_PATHS)}")
    max_bytes = check_max_bytes(max_bytes, f"{what}: 'in_process_max_bytes'")

    def size():
        found = 0 if base is None else data_file_bytes(table, base)
        basis = f" (Paimon metadata of {location.name}"
        if source is not None:
            estimate = plan_size.estimate(source, warehouse_table_bytes(location))
            if estimate.bytes is None:
                return None, ""
            found += estimate.bytes
            basis += " and the source's estimate"
        return found, basis + ")"
    return choose_path_by(spark, what, size, write_path, max_bytes)


def open_executor(spark: SparkSession, location: TableRef, table, base: Optional[int],
                  choice: PathChoice) -> RowOpExecutor:
    """The executor ``choice`` names, its tracked rows ready (in-process: read now)."""
    if choice.path == IN_PROCESS:
        frame = _tracked_in_process(spark, table, base)
    else:
        frame = tracked_rows_distributed(spark, location, base, with_source_file=True)
    return RowOpExecutor(location, base, choice, frame)


def tracked_rows_distributed(spark: SparkSession, location: TableRef,
                             snapshot_id: Optional[int] = None,
                             with_source_file: bool = False) -> DataFrame:
    """The table's rows with ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` (and their data file), read
    by the ``paimon_row_tracking`` data source in Spark tasks."""
    from dbt.adapters.paimon.datasource.row_tracking_source import NAME, register

    register(spark)
    reader = spark.read.format(NAME).options(**location.source_options())
    if snapshot_id is not None:
        reader = reader.option("snapshot_id", str(snapshot_id))
    if with_source_file:
        reader = reader.option("source_file_column", "true")
    return reader.load()


def _tracked_in_process(spark: SparkSession, table, base: Optional[int]) -> DataFrame:
    from dbt.adapters.paimon.datasource.row_tracking_source import read_all_tracked_arrow
    from dbt.adapters.paimon.datasource.spark_types import spark_schema
    from dbt.adapters.paimon.format.row_tracking import tracked_schema

    # the schema the data source declares: the local relation has the same Spark types
    schema = spark_schema(tracked_schema(table, with_source_file=True))
    if base is None:
        return spark.createDataFrame([], schema)
    return spark.createDataFrame(read_all_tracked_arrow(table, base, schema), schema)


def _write_in_process(location: TableRef, rows: DataFrame, rewrite_files: List[str],
                      base: Optional[int]) -> Optional[int]:
    from dbt.adapters.paimon.datasource.row_tracking_source import write_row_rewrite
    from dbt.adapters.paimon.format.commit import abort_unless_committed
    from dbt.adapters.paimon.format.row_tracking import commit_rewrite

    result = collect_arrow(rows)  # Spark evaluates everything here, before any file is written
    table = location.open()
    written = write_row_rewrite(table, [result]) if result.num_rows else []
    try:
        return commit_rewrite(table, written, sorted(rewrite_files), base)
    except BaseException:
        abort_unless_committed(table, written)
        raise


def _write_distributed(location: TableRef, rows: DataFrame, rewrite_files: List[str],
                       base: Optional[int]) -> Optional[int]:
    import json

    from dbt.adapters.paimon.datasource.row_tracking_source import NAME
    from dbt.adapters.paimon.format.splits import current_snapshot_id

    (rows.write.format(NAME).options(**location.source_options())
     .option("rewrite_files", json.dumps(sorted(rewrite_files)))
     .option("base_snapshot", "" if base is None else str(base))
     .mode("append").save())
    after = current_snapshot_id(location.open())
    return after if after != base else None
