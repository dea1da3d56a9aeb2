"""The ``paimon_row_tracking`` Spark data source: a row-tracking table with its hidden columns.

Reads return the table's columns plus ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` (never NULL), as
Paimon Spark's ``SELECT _ROW_ID, _SEQUENCE_NUMBER FROM t`` does; option ``source_file_column``
adds the data file each row lives in (the row operations rewrite exactly those files).

Writes serve the row operations (update, delete, merge): option ``rewrite_files`` (JSON list of
file names, from snapshot ``base_snapshot``) are deleted and replaced by the written rows in
ONE commit. Rows with a ``_ROW_ID`` keep it (rewritten rows; a NULL ``_SEQUENCE_NUMBER`` marks
the rows this commit changed); rows without one are new and get ids at commit.

The in-process row operations (ops/row_executors.py) read and write with this module's own
functions (``read_all_tracked_arrow``, ``write_row_rewrite``, then ``commit_rewrite``) without
Spark's Python workers, so both executors read the same Arrow and write the same files.

Options as for ``paimon`` (``warehouse``, ``table``, ``catalog.*``, ``snapshot_id``).
"""

from __future__ import annotations

import json
from typing import Iterable, Iterator, List, Optional, Union

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.datasource import DataSourceArrowWriter
from pyspark.sql.types import StructType

from dbt.adapters.paimon.datasource.source import (PaimonCommitMessage, PaimonDataSource,
                                                   PaimonPushdownReader, SplitPartition,
                                                   TableRef)
from dbt.adapters.paimon.datasource.spark_env import register_data_source
from dbt.adapters.paimon.datasource.spark_types import (arrow_schema_for_spark, conform,
                                                        spark_schema)

NAME = "paimon_row_tracking"


class PaimonRowTrackingDataSource(PaimonDataSource):
    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> StructType:
        from dbt.adapters.paimon.format import row_tracking

        table = self._location().open()
        row_tracking.require_row_tracking(table, f"reading {self._location().name} with "
                                                 "_ROW_ID and _SEQUENCE_NUMBER")
        return spark_schema(row_tracking.tracked_schema(
            table, self.options.get("source_file_column", "false").lower() == "true"))

    def reader(self, schema: StructType) -> "TrackedReader":
        snapshot = self.options.get("snapshot_id")
        return TrackedReader(self._location(), schema, int(snapshot) if snapshot else None)

    def writer(self, schema: StructType, overwrite: bool) -> "RowRewriteWriter":
        if overwrite or "rewrite_files" not in self.options:
            raise ValueError(f"the {NAME} data source only writes row operations (option "
                             f"rewrite_files); append to tables with the paimon data source")
        base = self.options.get("base_snapshot")
        return RowRewriteWriter(self._location(), json.loads(self.options["rewrite_files"]),
                                int(base) if base else None)


class TrackedReader(PaimonPushdownReader):
    # a row operation rewrites the files its Spark partitions read: whole splits, as the
    # in-process executor groups them
    split_into_tasks = False

    def read(self, partition: SplitPartition) -> Iterator[pa.RecordBatch]:
        if partition.split is None:
            return
        data = read_tracked_arrow(self.location.open(), partition.split,
                                  arrow_schema_for_spark(self.schema))
        if data.num_rows:
            yield from data.to_batches(max_chunksize=65536)


def read_tracked_arrow(table, split, target: pa.Schema) -> pa.Table:
    """One split's tracked rows exactly as this data source hands them to Spark: ``target``
    (the Arrow of the declared Spark schema) names the columns and their types."""
    from dbt.adapters.paimon.format.row_tracking import read_tracked_split

    # whole splits (TrackedReader.split_into_tasks): a data-evolution table's row-id ranges
    # are read whole, so its rows can be assembled from their files
    return conform(read_tracked_split(table, split, target.names, assemble_rows=True), target)


def read_all_tracked_arrow(table, snapshot_id: Optional[int], schema: StructType) -> pa.Table:
    """Every split's tracked rows of snapshot ``snapshot_id`` as one Arrow table, the splits in
    the order this data source's reader plans them, each split's rows as it reads them (the
    in-process row operations hand this table to Spark instead of reading through Spark)."""
    from dbt.adapters.paimon.format.bucketed_append import order_splits
    from dbt.adapters.paimon.format.splits import plan_splits

    target = arrow_schema_for_spark(schema)
    pieces = [read_tracked_arrow(table, split, target)
              for split in order_splits(table, plan_splits(table, snapshot_id))]
    pieces = [p for p in pieces if p.num_rows]
    return pa.concat_tables(pieces) if pieces else target.empty_table()


class RowRewriteWriter(DataSourceArrowWriter):
    def __init__(self, location: TableRef, rewrite_files: List[str],
                 base_snapshot: Optional[int]):
        self.location = location
        self.rewrite_files = list(rewrite_files)
        self.base_snapshot = base_snapshot

    def write(self, iterator: Iterator[pa.RecordBatch]) -> PaimonCommitMessage:
        return PaimonCommitMessage(write_row_rewrite(self.location.open(), iterator))

    def commit(self, messages: List[Optional[PaimonCommitMessage]]) -> None:
        from dbt.adapters.paimon.format.row_tracking import commit_rewrite

        commit_rewrite(self.location.open(), [m for msg in messages if msg is not None
                                              for m in msg.messages],
                       self.rewrite_files, self.base_snapshot)

    def abort(self, messages: List[Optional[PaimonCommitMessage]]) -> None:
        from dbt.adapters.paimon.format.commit import abort

        abort(self.location.open(),
              [m for msg in messages if msg is not None for m in msg.messages])


def write_row_rewrite(table, batches: Iterable[Union[pa.RecordBatch, pa.Table]]) -> list:
    """Write a row operation's rows (Spark's Arrow) as new files of ``table``; returns the
    commit messages for ``commit_rewrite``. Rows with a ``_ROW_ID`` keep it (TrackedRowsWriter);
    rows without one are new and go through the table's ordinary writer (ids at commit). On
    failure the files already written are deleted."""
    from dbt.adapters.paimon.datasource.source import arrow_schema_of
    from dbt.adapters.paimon.format.row_tracking import ROW_ID, TrackedRowsWriter

    plain = table.new_batch_write_builder().new_write()
    tracked = TrackedRowsWriter(table)
    columns = arrow_schema_of(table)
    try:
        for batch in batches:
            rows = batch if isinstance(batch, pa.Table) else pa.Table.from_batches([batch])
            new = pc.is_null(rows.column(ROW_ID))
            tracked.write(rows.filter(pc.invert(new)))
            inserted = rows.filter(new)
            if inserted.num_rows:
                plain.write_arrow(conform(inserted, columns))
        return plain.prepare_commit() + tracked.prepare_commit()
    except BaseException:
        plain.abort()
        tracked.abort()
        raise
    finally:
        plain.close()
        tracked.close()


def register(spark) -> None:
    """Register the data source in a session (idempotent)."""
    register_data_source(spark, PaimonRowTrackingDataSource)
