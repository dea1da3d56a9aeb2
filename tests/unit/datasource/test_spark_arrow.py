"""spark_arrow.py without Spark: Arrow arrays shaped as Spark sends a NULL variant (a null struct
whose children are null too), at the top level and inside arrays, structs and maps, take
pyspark's non-nullable variant type once filled, and keep every NULL and every value."""

import pyarrow as pa
import pytest
from pyspark.sql.types import (ArrayType, LongType, MapType, StringType, StructField, StructType,
                               VariantType)

from dbt.adapters.paimon.datasource.spark_arrow import _has_variant, null_variants_filled

# the type Spark sends and pyspark casts to
VARIANT = pa.struct([pa.field("value", pa.binary(), nullable=False),
                     pa.field("metadata", pa.binary(), nullable=False)])
ONE = {"value": b"\x0c\x01", "metadata": b"\x01\x00\x00"}


def sent(values) -> pa.StructArray:
    """Variants as Spark sends them: a NULL one has null children, which its type says
    cannot be null."""
    children = [pa.array([None if v is None else v[name] for v in values], pa.binary())
                for name in ("value", "metadata")]
    mask = pa.array([v is None for v in values])
    return pa.StructArray.from_arrays(children, fields=list(VARIANT), mask=mask)


def test_a_null_variant_takes_pysparks_type_once_filled():
    column = sent([ONE, None, ONE])
    with pytest.raises(pa.ArrowInvalid, match="nulls in input cannot be viewed"):
        column.cast(VARIANT)  # what pyspark's toArrow() meets
    filled = null_variants_filled(column, VARIANT).cast(VARIANT)
    assert filled.to_pylist() == [ONE, None, ONE]


def test_variants_inside_arrays_structs_and_maps():
    elements = sent([ONE, None, ONE])
    lists = pa.ListArray.from_arrays(pa.array([0, 2, 2, 3], pa.int32()), elements,
                                     mask=pa.array([False, True, False]))
    listed = pa.list_(VARIANT)
    assert null_variants_filled(lists, listed).cast(listed).to_pylist() == \
        [[ONE, None], None, [ONE]]
    # a slice: its offsets index the whole values array
    assert null_variants_filled(lists.slice(2), listed).cast(listed).to_pylist() == [[ONE]]

    structs = pa.StructArray.from_arrays([sent([None, ONE]), pa.array([1, 2])], ["x", "y"])
    target = pa.struct([("x", VARIANT), ("y", pa.int64())])
    assert null_variants_filled(structs, target).cast(target).to_pylist() == \
        [{"x": None, "y": 1}, {"x": ONE, "y": 2}]

    maps = pa.MapArray.from_arrays(pa.array([0, 1, 2], pa.int32()), pa.array(["k", "k"]),
                                   sent([None, ONE]))
    mapped = pa.map_(pa.string(), VARIANT)
    assert null_variants_filled(maps, mapped).cast(mapped).to_pylist() == \
        [[("k", None)], [("k", ONE)]]


def test_only_types_holding_a_variant_are_touched():
    assert not _has_variant(StructType([StructField("a", LongType())]))
    assert _has_variant(MapType(StringType(), ArrayType(VariantType())))
    plain = pa.array([1, None])
    assert null_variants_filled(plain, pa.int64()) is plain
