"""A small snapshot's merge of values, made in this process instead of by Spark's tasks.

The registry keeps a partial-update or aggregation snapshot's merged rows as Parquet files that
Spark's own reader then reads (native_read.py, ``merged_folder``). Spark writes them from the
``paimon`` Python source's read: a Spark job whose planning and tasks each need a Python worker,
seconds in a fresh process (a 5-row table's first read cost 10 s of a 29-s `dbt show`), for a
merge that takes milliseconds. A snapshot of at most MAX_RECORDS records in at most
MAX_FILE_BYTES of data files is merged here by the same reader (``PaimonReader``: the same
splits, the merge runtime, the same Arrow schema Spark takes from the source) and written with
pyarrow; larger ones stay Spark's, spread over the session's cores.
"""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq

from dbt.adapters.paimon.datasource.source import (PaimonReader, PostponeMergePartition,
                                                   TableRef, arrow_schema_of)
from dbt.adapters.paimon.datasource.spark_types import arrow_schema_for_spark, spark_schema

# The largest snapshot merged in this process, in records (before the merge: the time) and in
# bytes of the data files its read opens (the memory). Measured on the 2-core test machine with
# two to four runs of a partial-update table: 4 columns, 1,000,000 records in 0.77 s; 20
# columns (9 integers, 5 doubles, 5 strings), 500,000 records (44 MB of files) in 1.6-2.9 s
# beside a running test suite, with 370 MiB of memory above the process's (Spark's tasks:
# 17 s for 2,500,000 such records, benchmarks/results/read_speed.txt).
MAX_RECORDS = 1_000_000
MAX_FILE_BYTES = 32 * 1024 * 1024
# the name of the file written here (Spark's files are ``part-*``), which tests look for
FILE_NAME = "merged-here.parquet"


def merge_here(location: TableRef, snapshot_id: int, folder: str) -> bool:
    """Write the merged rows of the snapshot into ``folder`` (created) as one Parquet file, as
    Spark writes the Python source's read, if the snapshot holds at most MAX_RECORDS records in
    at most MAX_FILE_BYTES of data files; False, and nothing written, otherwise."""
    table = location.open()
    reader = PaimonReader(location, spark_schema(arrow_schema_of(table)), snapshot_id,
                          parallelism=1)
    partitions = reader.partitions()
    if any(isinstance(p, PostponeMergePartition) for p in partitions):
        return False  # (a postpone merge-on-read is never kept: native_read.plan_native)
    files = [f for p in partitions if p.split is not None for f in p.split.files]
    if sum(f.row_count for f in files) > MAX_RECORDS \
            or sum(f.file_size for f in files) > MAX_FILE_BYTES:
        return False
    target = arrow_schema_for_spark(reader.schema)
    batches = [batch for p in partitions for batch in reader.read(p)]
    os.makedirs(folder, exist_ok=True)
    pq.write_table(pa.Table.from_batches(batches, schema=target),
                   os.path.join(folder, FILE_NAME), compression="snappy")
    return True
