"""runtime/vectors.py: Spark's lists cast to VECTOR values and VECTOR slices handed to polars,
past the two Arrow-library faults it works around (each reproduced here as it reaches us)."""
import subprocess
import sys

import polars as pl
import pyarrow as pa
import pytest

from dbt.adapters.paimon.runtime.vectors import castable_lists, unsliced_vectors

VECTOR = pa.list_(pa.field("element", pa.float64()), 2)


def spark_like_all_null_lists(rows: int) -> pa.ListArray:
    """A list column holding no value, its child's data buffer a null pointer, as Arrow Java
    (Spark's toArrow) sends a batch whose rows are all NULL."""
    child = pa.Array.from_buffers(pa.float64(), 0, [None, pa.foreign_buffer(0, 0)])
    offsets = pa.array([0] * (rows + 1), pa.int32())
    return pa.ListArray.from_arrays(offsets, child, mask=pa.array([True] * rows))


def test_an_all_null_spark_list_crashes_pyarrows_cast_alone():
    # the fault the helper avoids, in a process of its own (it is a segmentation fault)
    code = ("import pyarrow as pa\n"
            "child = pa.Array.from_buffers(pa.float64(), 0, [None, pa.foreign_buffer(0, 0)])\n"
            "lists = pa.ListArray.from_arrays(pa.array([0, 0], pa.int32()), child,\n"
            "                                 mask=pa.array([True]))\n"
            "lists.cast(pa.list_(pa.float64(), 2))\n")
    assert subprocess.run([sys.executable, "-c", code]).returncode != 0


@pytest.mark.parametrize("chunks", [1, 2])
def test_lists_without_values_cast_to_null_vectors(chunks):
    parts = [spark_like_all_null_lists(2)] + \
        [pa.array([[1.0, None]], pa.list_(pa.float64()))] * (chunks - 1)
    column = pa.chunked_array(parts) if chunks > 1 else parts[0]
    cast = castable_lists(column).cast(VECTOR)
    assert cast.to_pylist() == [None, None] + [[1.0, None]] * (chunks - 1)


def test_columns_with_values_are_returned_as_they_are():
    lists = pa.array([[1.0, 2.0], None], pa.list_(pa.float64()))
    assert castable_lists(lists) is lists
    strings = pa.array(["a"])
    assert castable_lists(strings) is strings and unsliced_vectors(strings) is strings
    vectors = pa.array([[1.0, 2.0], None], VECTOR)
    assert unsliced_vectors(vectors) is vectors


def test_sliced_vectors_with_a_null_reach_polars():
    vectors = pa.array([[1.0, 2.0], None, [3.0, 4.0], [5.0, 6.0]], VECTOR)
    sliced = pa.chunked_array([vectors.slice(0, 1), vectors.slice(1)])
    with pytest.raises(pl.exceptions.ComputeError, match="validity mask length"):
        pl.from_arrow(pa.table({"v": sliced}))  # the polars fault
    frame = pl.from_arrow(pa.table({"v": unsliced_vectors(sliced)}))
    assert frame["v"].to_list() == [[1.0, 2.0], None, [3.0, 4.0], [5.0, 6.0]]


def test_vectors_whose_child_holds_more_rows_reach_polars():
    """One row (NULL) over a child of three rows' values, as the rows of one bucket taken from
    a batch arrive (a valid Arrow array that polars refuses)."""
    child = pa.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    validity = pa.array([False]).buffers()[1]
    one_null = pa.Array.from_buffers(VECTOR, 1, [validity], children=[child])
    with pytest.raises(pl.exceptions.ComputeError, match="validity mask length"):
        pl.from_arrow(pa.table({"v": one_null}))
    assert pl.from_arrow(pa.table({"v": unsliced_vectors(one_null)}))["v"].to_list() == [None]
