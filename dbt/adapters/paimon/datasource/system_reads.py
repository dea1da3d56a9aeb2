"""Paimon's system tables that read a table's data: ``audit_log``, ``binlog`` and ``ro``.

As Paimon Java 1.0 builds them (``table/system/AuditLogTable.java``, ``BinlogTable.java``,
``ReadOptimizedTable.java``), for a batch read of the latest snapshot:

- ``audit_log``: the rows of the table's batch read, after a leading ``rowkind`` column
  (STRING): the row kind Java's merge gives the row. Java's aggregation and partial-update
  merges return ``+I``; deduplicate and first-row return the record they keep, with its stored
  kind (``+I``, or ``+U`` when the model wrote one); a split read without merging (one sorted
  run) shows its records' stored kinds; an append table's rows are ``+I``;
- ``binlog``: ``rowkind`` and every column as a one-element ARRAY of its value (a batch read
  has no before-image; a streaming read would pack -U/+U pairs into two-element arrays);
- ``ro`` (read-optimized): of a primary-key table only the files at the top level
  (``num-levels`` - 1: what a full compaction writes), read without the levels below, so no
  merge with newer level-0 data; an append table reads as usual.

Read through the ``paimon`` data source with option ``system_table`` (``audit_log``,
``binlog`` or ``ro``): one Spark partition per (partition, bucket), as a normal read.
"""

from __future__ import annotations

import dataclasses
from typing import Iterator, List, Optional, Sequence

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader

from dbt.adapters.paimon.datasource.source import SYSTEM_TABLE_OPTION
DATA_TABLES = ("audit_log", "binlog", "ro")
ROW_KIND = "rowkind"  # Paimon's SpecialFields.ROW_KIND
_INSERT = "+I"
# the engines whose merged row is one of the key's records, kind included
# (DeduplicateMergeFunction, FirstRowMergeFunction); the others build a +I row
_KEEPS_RECORD = ("deduplicate", "first-row")


def check_data_table(name: str) -> str:
    name = str(name or "").lower()
    if name not in DATA_TABLES:
        raise ValueError(f"option {SYSTEM_TABLE_OPTION} must be one of {list(DATA_TABLES)}, "
                         f"got {name!r}")
    return name


def system_schema(table_schema: pa.Schema, name: str) -> pa.Schema:
    """The Arrow schema of the system table ``name`` over a table of ``table_schema``."""
    name = check_data_table(name)
    if name == "ro":
        return table_schema
    if ROW_KIND in table_schema.names:
        raise ValueError(f"the table has a column named {ROW_KIND!r}, which Paimon's {name} "
                         f"system table adds: it cannot be read")
    fields = [pa.field(ROW_KIND, pa.string(), nullable=True)]
    if name == "audit_log":
        return pa.schema(fields + list(table_schema))
    # BinlogTable: each column as a nullable ARRAY of the (nullable) column type
    return pa.schema(fields + [pa.field(f.name, pa.list_(pa.field("element", f.type)),
                                        nullable=True) for f in table_schema])


def top_level(table) -> int:
    """The LSM tree's top level: ``num-levels`` - 1, ``num-levels`` defaulting to
    ``num-sorted-run.compaction-trigger`` + 1 (as ops/strategy.CompactionConfig)."""
    options = table.table_schema.options
    trigger = int(options.get("num-sorted-run.compaction-trigger", 5))
    return int(options.get("num-levels", trigger + 1)) - 1


def plan_system_splits(table, name: str, snapshot_id: Optional[int] = None) -> List:
    """The splits the system table reads: every (partition, bucket) of the snapshot; for
    ``ro`` of a primary-key table only its top-level files (buckets without any left out)."""
    from dbt.adapters.paimon.format.splits import plan_splits

    splits = plan_splits(table, snapshot_id)
    if check_data_table(name) != "ro" or not table.primary_keys:
        return splits
    top = top_level(table)
    picked = []
    for split in splits:
        files = [f for f in split.files if f.level == top]
        if files:
            picked.append(dataclasses.replace(split, files=files, levels=[top] * len(files)))
    return picked


def read_system_split(table, split, name: str, columns: Sequence[str]) -> pa.Table:
    """One split of the system table ``name``: ``columns`` of the table (each a one-element
    list for ``binlog``), after ``rowkind`` unless ``name`` is ``ro``."""
    from dbt.adapters.paimon.datasource.source import read_merged_split
    from dbt.adapters.paimon.format.kv_files import read_append_split

    name = check_data_table(name)
    columns = list(columns)
    if not table.primary_keys:
        rows = read_append_split(table, split, columns)
        kinds = pa.array([_INSERT] * rows.num_rows, pa.string())
    elif name == "ro":
        return read_merged_split(table, split, columns)
    else:
        rows, kinds = _merged_with_kinds(table, split, columns)
    if name == "ro":
        return rows
    arrays = [kinds] + [_one_element_lists(rows.column(c)) if name == "binlog"
                        else rows.column(c) for c in columns]
    return pa.Table.from_arrays(arrays, names=[ROW_KIND] + columns)


def _merged_with_kinds(table, split, columns: List[str]):
    """The split's merged rows (as ``read_merged_split``) and the row kind each has."""
    from dbt.adapters.paimon.datasource.source import is_raw_convertible, read_merged_split
    from dbt.adapters.paimon.format.kv_files import read_split_records
    from dbt.adapters.paimon.runtime import MergeSpec, merge_arrow

    if split.deletion_vectors:
        split = dataclasses.replace(split, files=split.batch_read_files())
    engine = str(table.table_schema.options.get("merge-engine", "deduplicate")).lower()
    if split.files and is_raw_convertible(split):
        # read as stored, without a merge: each row shows its stored kind (as Java's raw read)
        records = read_split_records(table, split, columns)
        if len(split.files) > 1 and not split.deletion_vectors:
            records = records.sort_by([(k, "ascending") for k in table.primary_keys])
        return records.select(columns), records.column("_row_kind")
    if engine not in _KEEPS_RECORD or not split.files:
        rows = read_merged_split(table, split, columns)
        return rows, pa.array([_INSERT] * rows.num_rows, pa.string())
    # the kept record's kind travels through the merge as one more column, named rowkind
    # (system_schema refuses tables with such a column; the merge refuses names with '_')
    with_kind = MergeSpec.from_table_options(
        schema=[(f.name, str(f.type)) for f in table.table_schema.fields]
        + [(ROW_KIND, "STRING")],
        primary_keys=list(table.primary_keys), options=dict(table.table_schema.options))
    records = read_split_records(table, split).drop_columns(["_level"])
    records = records.append_column(ROW_KIND, records.column("_row_kind"))
    merged = merge_arrow(with_kind, records)
    return merged.select(columns), merged.column(ROW_KIND)


def _one_element_lists(column) -> pa.Array:
    """Each value as a one-element list (BinlogTable's batch rows)."""
    values = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    offsets = pa.array(range(len(values) + 1), pa.int32())
    return pa.ListArray.from_arrays(offsets, values,
                                    type=pa.list_(pa.field("element", values.type)))


def read_system_table(table, name: str, snapshot_id: Optional[int] = None) -> pa.Table:
    """The whole system table in one Arrow table (driver-side: tests, small tables)."""
    from dbt.adapters.paimon.datasource.source import arrow_schema_of

    schema = system_schema(arrow_schema_of(table), name)
    columns = list(table.field_names)
    pieces = [read_system_split(table, s, name, columns)
              for s in plan_system_splits(table, name, snapshot_id)]
    pieces = [p.cast(schema) for p in pieces if p.num_rows]
    return pa.concat_tables(pieces) if pieces else schema.empty_table()


class PaimonSystemReader(DataSourceReader):
    """Reads the system table ``name`` of ``location`` (one Spark partition per split)."""

    def __init__(self, location, schema, name: str):
        self.location = location
        self.schema = schema
        self.name = check_data_table(name)

    def partitions(self):
        from dbt.adapters.paimon.datasource.source import SplitPartition

        splits = plan_system_splits(self.location.open(), self.name)
        return [SplitPartition(s) for s in splits] or [SplitPartition(None)]

    def read(self, partition) -> Iterator[pa.RecordBatch]:
        from dbt.adapters.paimon.datasource.spark_types import arrow_schema_for_spark, conform

        if partition.split is None:
            return
        target = arrow_schema_for_spark(self.schema)
        table = self.location.open()
        data = read_system_split(table, partition.split, self.name, list(table.field_names))
        if data.num_rows:
            yield from conform(data, target).to_batches(max_chunksize=65536)
