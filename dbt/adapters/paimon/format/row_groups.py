"""Ranges of a Parquet data file's row groups, so that several tasks can read one large file.

A row group is the smallest part of a Parquet file a reader can read alone; its byte size is
in the file's footer. Only the footer is read here. ORC files are not split: pyarrow gives a
stripe's rows only by reading it, and the row offsets of a range are what a deletion vector's
positions are counted from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List

from pypaimon.manifest.schema.data_file_meta import DataFileMeta

from dbt.adapters.paimon.format.errors import missing_data_file


@dataclass(frozen=True)
class RowGroups:
    """Row groups ``start`` to ``stop`` (exclusive) of one file, holding its rows ``first_row``
    to ``first_row + rows`` (exclusive)."""

    start: int
    stop: int
    first_row: int
    rows: int


def splittable(meta: DataFileMeta) -> bool:
    return meta.file_name.lower().endswith(".parquet")


def row_group_ranges(table, meta: DataFileMeta, target_bytes: int) -> List[RowGroups]:
    """The file's row groups as consecutive ranges of about ``target_bytes`` each (compressed,
    as stored: what a task reads); a row group larger than that is a range of its own. One
    range for a file with a single row group."""
    import pyarrow.parquet as pq

    path = meta.physical_path()
    try:
        with table.file_io.new_input_stream(path) as stream:
            footer = pq.ParquetFile(stream).metadata
    except FileNotFoundError as exc:
        raise missing_data_file(table, path) from exc
    ranges: List[RowGroups] = []
    start = first_row = rows = size = 0
    for index in range(footer.num_row_groups):
        group = footer.row_group(index)
        stored = sum(group.column(c).total_compressed_size for c in range(group.num_columns))
        if index > start and size + stored > target_bytes:
            ranges.append(RowGroups(start, index, first_row, rows))
            start, first_row, rows, size = index, first_row + rows, 0, 0
        rows += group.num_rows
        size += stored
    if footer.num_row_groups:
        ranges.append(RowGroups(start, footer.num_row_groups, first_row, rows))
    return ranges
