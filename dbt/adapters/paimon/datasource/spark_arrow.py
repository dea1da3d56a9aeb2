"""A Spark DataFrame's rows as one Arrow table, VARIANT columns holding NULL included.

pyspark 4.3's ``DataFrame.toArrow()`` (classic and Spark Connect alike) casts what Spark sends
to the Arrow schema it derives from the DataFrame's, in which a VARIANT is
``struct<value: binary not null, metadata: binary not null>``. Spark sends a NULL variant as a
null struct whose two children are null as well, and pyarrow refuses to view children holding
nulls as non-nullable, whatever their parent: the cast fails ("nulls in input cannot be viewed
as non-nullable") for any NULL variant, at the top level or inside an array, a struct or a map.
``collect_arrow`` takes the table before that cast, puts empty bytes in the children under each
null variant (the variant stays NULL: its struct is), then casts as pyspark does.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.types import ArrayType, DataType, MapType, StructType, VariantType

from dbt.adapters.paimon.datasource.spark_env import is_connect
from dbt.adapters.paimon.runtime.types import VARIANT_ARROW


def collect_arrow(frame) -> pa.Table:
    """``frame.toArrow()``, also when a VARIANT column holds NULL (the module docstring)."""
    if not _has_variant(frame.schema):
        return frame.toArrow()
    from pyspark.sql.pandas.types import to_arrow_schema

    large = False
    if is_connect(frame.sparkSession):
        raw, _ = frame._to_table()
    else:
        large = frame.sparkSession.conf.get("spark.sql.execution.arrow.useLargeVarTypes",
                                            "false") == "true"
        raw = pa.Table.from_batches(frame._collect_as_arrow(
            split_batches=False, empty_list_if_zero_records=False,
            prefers_large_var_types=large))
    schema = to_arrow_schema(frame.schema, error_on_duplicated_field_names_in_struct=True,
                             timezone="UTC", prefers_large_types=large)
    columns = [null_variants_filled(raw.column(i), field.type)
               for i, field in enumerate(schema)]
    return pa.Table.from_arrays(columns, schema=raw.schema).cast(schema)


def _has_variant(data_type: DataType) -> bool:
    """Whether Spark type ``data_type`` holds a VARIANT anywhere."""
    if isinstance(data_type, VariantType):
        return True
    if isinstance(data_type, StructType):
        return any(_has_variant(f.dataType) for f in data_type.fields)
    if isinstance(data_type, ArrayType):
        return _has_variant(data_type.elementType)
    if isinstance(data_type, MapType):
        return _has_variant(data_type.keyType) or _has_variant(data_type.valueType)
    return False


def null_variants_filled(column, arrow_type: pa.DataType):
    """``column`` (an Arrow array or chunked array as Spark sends it, to be read as
    ``arrow_type``: pyspark's type or a Paimon table's) with empty bytes in the children of
    each NULL variant, at the top level or inside a struct, list or map; the variant stays
    NULL (its struct is). Arrow's cast and its Parquet writer both refuse those nulls."""
    if not _holds_variant(arrow_type):
        return column
    if isinstance(column, pa.ChunkedArray):
        return pa.chunked_array([_filled(c, arrow_type) for c in column.chunks], column.type)
    return _filled(column, arrow_type)


def _holds_variant(arrow_type: pa.DataType) -> bool:
    if arrow_type.equals(VARIANT_ARROW):
        return True
    if pa.types.is_struct(arrow_type):
        return any(_holds_variant(f.type) for f in arrow_type)
    if pa.types.is_map(arrow_type):
        return _holds_variant(arrow_type.key_type) or _holds_variant(arrow_type.item_type)
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return _holds_variant(arrow_type.value_type)
    return False


def _filled(array: pa.Array, arrow_type: pa.DataType) -> pa.Array:
    """``array`` (to be read as ``arrow_type``) with no null child under a null variant."""
    if not _holds_variant(arrow_type) or not pa.types.is_nested(array.type):
        return array
    mask = array.is_null() if array.null_count else None
    if arrow_type.equals(VARIANT_ARROW):
        children = [pc.fill_null(array.field(i), pa.scalar(b"", array.type.field(i).type))
                    for i in range(array.type.num_fields)]
        return pa.StructArray.from_arrays(children, fields=list(array.type), mask=mask)
    if pa.types.is_struct(arrow_type):
        targets = {f.name: f.type for f in arrow_type}
        children = [_filled(array.field(i), targets.get(f.name, f.type))
                    for i, f in enumerate(array.type)]
        return pa.StructArray.from_arrays(children, fields=list(array.type), mask=mask)
    # lists and maps: their offsets as they are, the values below them filled; a slice's
    # offsets index the whole values array, so the values are not sliced
    if pa.types.is_map(arrow_type):
        return pa.MapArray.from_arrays(array.offsets, _filled(array.keys, arrow_type.key_type),
                                       _filled(array.items, arrow_type.item_type),
                                       type=array.type, mask=mask)
    return type(array).from_arrays(array.offsets, _filled(array.values, arrow_type.value_type),
                                   type=array.type, mask=mask)
