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
    columns = [pa.chunked_array([_filled(chunk, field.dataType)
                                 for chunk in raw.column(i).chunks], raw.column(i).type)
               if _has_variant(field.dataType) else raw.column(i)
               for i, field in enumerate(frame.schema.fields)]
    return pa.Table.from_arrays(columns, schema=raw.schema).cast(schema)


def _has_variant(data_type: DataType) -> bool:
    if isinstance(data_type, VariantType):
        return True
    if isinstance(data_type, StructType):
        return any(_has_variant(f.dataType) for f in data_type.fields)
    if isinstance(data_type, ArrayType):
        return _has_variant(data_type.elementType)
    if isinstance(data_type, MapType):
        return _has_variant(data_type.keyType) or _has_variant(data_type.valueType)
    return False


def _filled(array: pa.Array, data_type: DataType) -> pa.Array:
    """``array`` (of Spark type ``data_type``) with no null child under a null variant."""
    if not _has_variant(data_type):
        return array
    mask = array.is_null() if array.null_count else None
    if isinstance(data_type, VariantType):
        children = [pc.fill_null(array.field(i), b"") for i in range(array.type.num_fields)]
        return pa.StructArray.from_arrays(children, fields=list(array.type), mask=mask)
    if isinstance(data_type, StructType):
        children = [_filled(array.field(i), f.dataType) for i, f in enumerate(data_type.fields)]
        return pa.StructArray.from_arrays(children, fields=list(array.type), mask=mask)
    # lists and maps: their offsets as they are, the values below them filled; a slice's
    # offsets index the whole values array, so the values are not sliced
    offsets = array.offsets
    if isinstance(data_type, ArrayType):
        values = _filled(array.values, data_type.elementType)
        return type(array).from_arrays(offsets, values, type=array.type, mask=mask)
    keys = _filled(array.keys, data_type.keyType)
    items = _filled(array.items, data_type.valueType)
    return pa.MapArray.from_arrays(offsets, keys, items, type=array.type, mask=mask)
