"""Arrow <-> Spark types for Paimon tables.

Paimon TIMESTAMP has no time zone: it maps to Spark's TIMESTAMP_NTZ; TIMESTAMP_LTZ maps to Spark's
TIMESTAMP (as Paimon's own Spark connector does). Paimon's VARIANT maps to Spark's VARIANT.
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
from pyspark.sql.types import StructType

from dbt.adapters.paimon.runtime.vectors import castable_lists


def spark_schema(arrow_schema: pa.Schema) -> StructType:
    return from_arrow_schema(pa.schema([f.with_type(_tag_variants(f.type))
                                        for f in arrow_schema]),
                             prefer_timestamp_ntz=True)


def _tag_variants(arrow_type: pa.DataType) -> pa.DataType:
    """``arrow_type`` with each Paimon VARIANT (pypaimon's ``struct<value binary not null,
    metadata binary not null>``) marked as PySpark marks a VARIANT's Arrow struct (its
    ``metadata`` field's ``variant`` tag), so that it becomes Spark's VARIANT. Spark's Parquet
    reader reads Paimon's variant group (unshredded or shredded) as VARIANT, and a Python read's
    struct is taken as one."""
    from pypaimon.schema.data_types import is_variant_struct

    if pa.types.is_struct(arrow_type):
        if is_variant_struct(arrow_type):
            return pa.struct([arrow_type.field("value"),
                              arrow_type.field("metadata").with_metadata({b"variant": b"true"})])
        return pa.struct([arrow_type.field(i).with_type(_tag_variants(arrow_type.field(i).type))
                          for i in range(arrow_type.num_fields)])
    if pa.types.is_list(arrow_type):
        return pa.list_(arrow_type.value_field.with_type(_tag_variants(arrow_type.value_type)))
    if pa.types.is_large_list(arrow_type):
        return pa.large_list(arrow_type.value_field.with_type(
            _tag_variants(arrow_type.value_type)))
    if pa.types.is_map(arrow_type):
        return pa.map_(arrow_type.key_field,
                       arrow_type.item_field.with_type(_tag_variants(arrow_type.item_type)))
    return arrow_type


def spark_ddl_columns(arrow_schema: pa.Schema) -> str:
    """Column list for CREATE TABLE: ``\\`a\\` int, \\`b\\` string``."""
    return ", ".join(spark_column_definitions(arrow_schema))


def spark_column_definitions(arrow_schema: pa.Schema) -> list:
    """Each column as CREATE TABLE declares it: ``\\`a\\` int not null``."""
    return [f"{quote_identifier(field.name)} {field.dataType.simpleString()}"
            + ("" if field.nullable else " not null")
            for field in spark_schema(arrow_schema).fields]


def arrow_schema_for_spark(schema: StructType) -> pa.Schema:
    """The exact Arrow schema Spark expects from a data source declaring ``schema``."""
    return to_arrow_schema(schema, timezone="UTC")


def conform(batch: pa.RecordBatch | pa.Table, target: pa.Schema) -> pa.Table:
    """Select and cast columns to exactly ``target`` (Spark rejects any other Arrow type)."""
    table = batch if isinstance(batch, pa.Table) else pa.Table.from_batches([batch])
    columns = [castable_lists(table.column(field.name)).cast(field.type) for field in target]
    return pa.Table.from_arrays(columns, schema=target)


def quote_identifier(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"
