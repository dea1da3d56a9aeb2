"""The ``paimon_row_tracking`` Spark data source: a row-tracking table with its hidden columns.

Reads return the table's columns plus ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` (never NULL), as
Paimon Spark's ``SELECT _ROW_ID, _SEQUENCE_NUMBER FROM t`` does; option ``source_file_column``
adds the data file each row lives in (the row operations rewrite exactly those files).

Writes serve the row operations (update, delete, merge): option ``rewrite_files`` (JSON list of
file names, from snapshot ``base_snapshot``) are deleted and replaced by the written rows in
ONE commit. Rows with a ``_ROW_ID`` keep it (rewritten rows; a NULL ``_SEQUENCE_NUMBER`` marks
the rows this commit changed); rows without one are new and get ids at commit.

Options as for ``paimon`` (``warehouse``, ``table``, ``catalog.*``, ``snapshot_id``).
"""

from __future__ import annotations

import json
from typing import Iterator, List, Optional

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.datasource import DataSourceArrowWriter
from pyspark.sql.types import StructType

from dbt.adapters.paimon.datasource.source import (PaimonCommitMessage, PaimonDataSource,
                                                   PaimonReader, SplitPartition, TableLocation)
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


class TrackedReader(PaimonReader):
    def read(self, partition: SplitPartition) -> Iterator[pa.RecordBatch]:
        from dbt.adapters.paimon.format.row_tracking import read_tracked_split

        if partition.split is None:
            return
        target = arrow_schema_for_spark(self.schema)
        data = read_tracked_split(self.location.open(), partition.split, target.names)
        if data.num_rows:
            yield from conform(data, target).to_batches(max_chunksize=65536)


class RowRewriteWriter(DataSourceArrowWriter):
    def __init__(self, location: TableLocation, rewrite_files: List[str],
                 base_snapshot: Optional[int]):
        self.location = location
        self.rewrite_files = list(rewrite_files)
        self.base_snapshot = base_snapshot

    def write(self, iterator: Iterator[pa.RecordBatch]) -> PaimonCommitMessage:
        from dbt.adapters.paimon.datasource.source import arrow_schema_of
        from dbt.adapters.paimon.format.row_tracking import ROW_ID, TrackedRowsWriter

        table = self.location.open()
        plain = table.new_batch_write_builder().new_write()
        tracked = TrackedRowsWriter(table)
        columns = arrow_schema_of(table)
        try:
            for batch in iterator:
                rows = pa.Table.from_batches([batch])
                new = pc.is_null(rows.column(ROW_ID))
                tracked.write(rows.filter(pc.invert(new)))
                inserted = rows.filter(new)
                if inserted.num_rows:
                    plain.write_arrow(conform(inserted, columns))
            return PaimonCommitMessage(plain.prepare_commit() + tracked.prepare_commit())
        except BaseException:
            plain.abort()
            tracked.abort()
            raise
        finally:
            plain.close()
            tracked.close()

    def commit(self, messages: List[Optional[PaimonCommitMessage]]) -> None:
        from dbt.adapters.paimon.format.row_tracking import commit_rewrite

        commit_rewrite(self.location.open(), [m for msg in messages if msg is not None
                                              for m in msg.messages],
                       self.rewrite_files, self.base_snapshot)

    def abort(self, messages: List[Optional[PaimonCommitMessage]]) -> None:
        from dbt.adapters.paimon.format.commit import abort

        abort(self.location.open(),
              [m for msg in messages if msg is not None for m in msg.messages])


def register(spark) -> None:
    """Register the data source in a session (idempotent)."""
    spark.dataSource.register(PaimonRowTrackingDataSource)
