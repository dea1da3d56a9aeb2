"""Arrow <-> Spark types for Paimon tables.

Paimon TIMESTAMP has no time zone: it maps to Spark's TIMESTAMP_NTZ; TIMESTAMP_LTZ maps to Spark's
TIMESTAMP (as Paimon's own Spark connector does).
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
from pyspark.sql.types import StructType


def spark_schema(arrow_schema: pa.Schema) -> StructType:
    return from_arrow_schema(arrow_schema, prefer_timestamp_ntz=True)


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
    columns = [table.column(field.name).cast(field.type) for field in target]
    return pa.Table.from_arrays(columns, schema=target)


def quote_identifier(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"
