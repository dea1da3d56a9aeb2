"""A small snapshot's merge of values, made in this process instead of by Spark's tasks.

The registry keeps a partial-update or aggregation snapshot's merged rows as Parquet files that
Spark's own reader then reads (native_read.py, ``merged_folder``). Spark writes them from the
``paimon`` Python source's read: a Spark job whose planning and tasks each need a Python worker,
seconds in a fresh process (a 5-row table's first read cost 10 s of a 29-s `dbt show`), for a
merge that takes milliseconds. A snapshot of at most MAX_RECORDS records is merged here by
the same reader (``PaimonReader``: the same splits, the merge runtime, the same Arrow schema
Spark takes from the source) and written with pyarrow; larger ones stay Spark's, spread over
the session's cores.
"""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq

from dbt.adapters.paimon.datasource.source import (PaimonReader, PostponeMergePartition,
                                                   TableRef, arrow_schema_of)
from dbt.adapters.paimon.datasource.spark_types import arrow_schema_for_spark, spark_schema

# the most records (before the merge) of a snapshot merged in this process: about half a
# second on the 2-core test machine (two runs of a 4-column partial-update table: 200,000
# records 0.21 s, 1,000,000 0.77 s), less than a Spark job's start; memory: the merged rows,
# held until written
MAX_RECORDS = 500_000
# the name of the file written here (Spark's files are ``part-*``), which tests look for
FILE_NAME = "merged-here.parquet"


def merge_here(location: TableRef, snapshot_id: int, folder: str) -> bool:
    """Write the merged rows of the snapshot into ``folder`` (created) as one Parquet file, as
    Spark writes the Python source's read, if the snapshot holds at most MAX_RECORDS records;
    False, and nothing written, otherwise."""
    table = location.open()
    reader = PaimonReader(location, spark_schema(arrow_schema_of(table)), snapshot_id,
                          parallelism=1)
    partitions = reader.partitions()
    if any(isinstance(p, PostponeMergePartition) for p in partitions):
        return False  # (a postpone merge-on-read is never kept: native_read.plan_native)
    records = sum(f.row_count for p in partitions if p.split is not None for f in p.split.files)
    if records > MAX_RECORDS:
        return False
    target = arrow_schema_for_spark(reader.schema)
    batches = [batch for p in partitions for batch in reader.read(p)]
    os.makedirs(folder, exist_ok=True)
    pq.write_table(pa.Table.from_batches(batches, schema=target),
                   os.path.join(folder, FILE_NAME), compression="snappy")
    return True
