"""Ranges of a Parquet data file's row groups, so that several tasks can read one large file.

A row group is the smallest part of a Parquet file a reader can read alone; its byte size is
in the file's footer. Only the footer is read here. ORC files are not split: pyarrow gives a
stripe's rows only by reading it, and the row offsets of a range are what a deletion vector's
positions are counted from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Set

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


def row_group_filter(table, conditions, stored: Dict[str, Optional[str]]):
    """The ``conditions`` (file_stats.Condition: a read's pushed filters) that a file's row-group
    statistics can answer, ANDed as a pyarrow expression on the names the file stores
    (``stored``: current column -> stored name, None for a column the file predates); None if
    none can. The types are file_stats': integers, strings, dates (never floating point, whose
    NaN statistics order differently). Partition columns are not stored in the files."""
    import pyarrow.compute as pc

    from dbt.adapters.paimon.format.file_stats import skips_by_stats

    fields = {f.name: f for f in table.table_schema.fields}
    parts = []
    for operation, column, value in conditions:
        name = stored.get(column)
        if name is None or column in table.partition_keys or column not in fields or \
                not skips_by_stats(fields[column]):
            continue
        field = pc.field(name)
        if operation in _COMPARISONS:
            parts.append(_COMPARISONS[operation](field, value))
        elif operation == "is_in" and value:
            parts.append(field.isin(list(value)))
        elif operation == "is_null":
            parts.append(field.is_null())
        elif operation == "is_not_null":
            parts.append(~field.is_null())
    if not parts:
        return None
    expression = parts[0]
    for part in parts[1:]:
        expression = expression & part
    return expression


_COMPARISONS = {"equal": lambda f, v: f == v, "less_than": lambda f, v: f < v,
                "less_or_equal": lambda f, v: f <= v, "greater_than": lambda f, v: f > v,
                "greater_or_equal": lambda f, v: f >= v}


def matching_row_groups(stream, expression) -> Optional[Set[int]]:
    """The indexes of the row groups of the Parquet file open as ``stream`` whose statistics
    may hold a row satisfying ``expression`` (pyarrow's own pruning,
    ``ParquetFileFragment.split_by_row_group``, which keeps a group without statistics);
    None when the expression does not apply to the file's types: then every group is read."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    try:
        fragment = ds.ParquetFileFormat().make_fragment(stream)
        return {group.id for piece in fragment.split_by_row_group(filter=expression)
                for group in piece.row_groups}
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):
        return None
