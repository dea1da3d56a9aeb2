"""VECTOR columns (Arrow fixed-size lists) past two faults of the Arrow libraries, for every
path that casts Spark's lists to vectors or hands vectors to polars.

- ``castable_lists``: Spark's Arrow of a batch whose list column holds no value (every row
  NULL, or empty lists) has a child whose data buffer is a null pointer; pyarrow 19's cast of
  such a list to a fixed-size list dereferences it (a segmentation fault of the process). The
  chunk gets an empty child of its own instead.
- ``unsliced_vectors``: polars 1.44 refuses a fixed-size-list array holding a NULL whose child
  holds more values than its rows ("validity mask length must be equal to the number of values
  divided by size"): a slice, or pyarrow's ``take`` of some rows, which keeps the whole child;
  a bucket's or a batch's rows are such. The chunk gets a child of its own rows' values (no
  copy: a slice of the child).
"""
from __future__ import annotations

from typing import Union

import numpy as np
import pyarrow as pa

Column = Union[pa.Array, pa.ChunkedArray]


def _chunks(column: Column):
    return column.chunks if isinstance(column, pa.ChunkedArray) else [column]


def _rebuilt(column: Column, chunks) -> Column:
    if isinstance(column, pa.ChunkedArray):
        return pa.chunked_array(chunks, column.type)
    return chunks[0]


def castable_lists(column: Column) -> Column:
    """``column`` (a list or large-list column) with each chunk that holds no list value given
    an empty child array pyarrow can read; other columns and chunks are returned as they are."""
    if not (pa.types.is_list(column.type) or pa.types.is_large_list(column.type)):
        return column
    chunks = _chunks(column)
    if all(len(chunk.values) for chunk in chunks):
        return column
    fixed = [chunk if len(chunk.values) else
             type(chunk).from_arrays(chunk.offsets, pa.array([], chunk.type.value_type),
                                     type=chunk.type, mask=chunk.is_null())
             for chunk in chunks]
    return _rebuilt(column, fixed)


def unsliced_vectors(column: Column) -> Column:
    """``column`` with each fixed-size-list chunk that does not span exactly its child's values
    (a slice, or a ``take`` of fewer rows, which keeps the whole child) rebuilt on the child
    values of its own rows; other columns are returned as they are."""
    if not pa.types.is_fixed_size_list(column.type):
        return column
    size = column.type.list_size
    chunks = _chunks(column)
    if not any(_spans_more(chunk, size) for chunk in chunks):
        return column
    return _rebuilt(column, [_own_values(chunk, size) if _spans_more(chunk, size) else chunk
                             for chunk in chunks])


def _spans_more(chunk: pa.FixedSizeListArray, size: int) -> bool:
    return chunk.offset != 0 or len(chunk.values) != len(chunk) * size


def _own_values(chunk: pa.FixedSizeListArray, size: int) -> pa.FixedSizeListArray:
    values = chunk.values.slice(chunk.offset * size, len(chunk) * size)
    mask = chunk.is_null() if chunk.null_count else None
    return pa.FixedSizeListArray.from_arrays(values, type=chunk.type, mask=mask)
