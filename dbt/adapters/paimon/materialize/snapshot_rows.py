"""`dbt snapshot` on Paimon: the rows one snapshot run merges into its primary-key table.

A snapshot table is a Paimon primary-key table on ``dbt_scd_id`` (deduplicate merge engine). dbt's
own helpers (``snapshot_staging_table``) say what changed: ``insert`` rows are new versions,
``update``/``delete`` rows name a current version (by its ``dbt_scd_id``) and the time it ends.
Those staged rows carry the source's *new* values, so they cannot be written as they are: a
closed version is its stored row with only ``dbt_valid_to`` replaced. This module builds exactly
those rows (closed versions from the table, new versions from the staging), so that one merge
commit closes versions and inserts their successors together.
"""

from __future__ import annotations

from typing import Dict, List, Mapping, Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from dbt.adapters.paimon.datasource.spark_types import quote_identifier
from dbt.adapters.paimon.runtime import PaimonConfigError, PaimonDataError

# Config keys of a snapshot that shape its Paimon table; everything else about the table is fixed.
TABLE_CONFIG_KEYS = ("buckets", "changelog_producer", "table_options")
# Config keys that would change what a snapshot table is (its key, how versions merge).
FIXED_CONFIG_KEYS = ("primary_key", "merge_engine", "sequence_field", "sequence_groups",
                     "aggregations", "partition_by", "bucket_key", "row_kind_column", "target")
CHANGE_TYPE = "dbt_change_type"
SAMPLE_SIZE = 5


def table_config(snapshot: str, config: Mapping, scd_id: str) -> Dict:
    """The paimon_pk config of a snapshot's table: primary key ``dbt_scd_id`` (or its
    ``snapshot_meta_column_names`` name) plus the snapshot's bucket and table options."""
    fixed = [key for key in FIXED_CONFIG_KEYS if config.get(key) is not None]
    if fixed:
        raise PaimonConfigError(
            f"Snapshot '{snapshot}': config {fixed} does not apply to a snapshot. Its Paimon "
            f"table is a primary-key table on '{scd_id}' (deduplicate merge engine); only "
            f"{list(TABLE_CONFIG_KEYS)} can be set. Remove {fixed}.")
    result = {key: config[key] for key in TABLE_CONFIG_KEYS if config.get(key) is not None}
    result["primary_key"] = scd_id
    return result


def check_unique_key(spark: SparkSession, snapshot: str, source_sql: str, unique_key) -> None:
    """A snapshot's source must return each ``unique_key`` once, never NULL: otherwise the
    versions of a key cannot be told apart. PaimonDataError naming the snapshot, the key and
    sample values, before anything is written."""
    keys: List[str] = list(unique_key) if isinstance(unique_key, (list, tuple)) else [unique_key]
    aliases = [f"dbt_unique_key_{i}" for i in range(len(keys))]
    source = spark.sql(source_sql).selectExpr(
        *[f"{expr} as {alias}" for expr, alias in zip(keys, aliases)])
    any_null = F.lit(False)
    for alias in aliases:
        any_null = any_null | F.col(alias).isNull()
    problems = (source.groupBy(*aliases).agg(F.count(F.lit(1)).alias("rows"))
                .where(any_null | (F.col("rows") > 1)))
    null_rows = problems.where(any_null).agg(F.sum("rows")).collect()[0][0] or 0
    duplicates = problems.where(~any_null).orderBy(F.col("rows").desc()).limit(SAMPLE_SIZE)
    samples = [
        {**{key: row[alias] for key, alias in zip(keys, aliases)}, "rows": row["rows"]}
        for row in duplicates.collect()
    ]
    if not null_rows and not samples:
        return
    described = f"unique_key {keys[0]!r}" if len(keys) == 1 else f"unique_key {keys}"
    lines = [f"Snapshot '{snapshot}': its query returns rows that a snapshot cannot track by "
             f"{described}; nothing was written:"]
    if null_rows:
        lines.append(f"- {null_rows} row(s) with a NULL key")
    if samples:
        lines.append(f"- keys returned more than once (up to {SAMPLE_SIZE}): {samples}")
    lines.append("Fix the snapshot query (filter out NULL keys, deduplicate the keys) or choose a "
                 "unique_key that identifies one row of the source.")
    raise PaimonDataError("\n".join(lines))


def merge_rows(spark: SparkSession, staging_sql: str, target: str,
               columns: Mapping[str, str]) -> DataFrame:
    """The rows of one snapshot run: every version it closes, as stored but with its new
    ``dbt_valid_to``, and every version it inserts. ``target`` is the snapshot table's Spark
    name; ``columns`` dbt's snapshot column names (dbt_scd_id, dbt_valid_to, ...)."""
    scd_id, valid_to = columns["dbt_scd_id"], columns["dbt_valid_to"]
    staged = spark.sql(staging_sql)
    stored = spark.table(target)
    stored_types = {f.name: f.dataType for f in stored.schema.fields}
    change = F.col(quote_identifier(CHANGE_TYPE))

    ends = (staged.where(change.isin("update", "delete"))
            .select(F.col(quote_identifier(scd_id)).alias("__dbt_closed_scd_id"),
                    F.col(quote_identifier(valid_to)).cast(stored_types[valid_to])
                    .alias("__dbt_closed_valid_to")))
    closed = stored.join(ends, F.col(quote_identifier(scd_id)) == F.col("__dbt_closed_scd_id"))
    closed = closed.select(*[
        (F.col("__dbt_closed_valid_to") if f.name == valid_to
         else F.col(quote_identifier(f.name))).alias(f.name)
        for f in stored.schema.fields
    ])

    drop = set(bookkeeping_columns(staged.columns))
    inserted = staged.where(change == "insert")
    inserted = inserted.select(*[
        (F.col(quote_identifier(f.name)).cast(stored_types[f.name])
         if f.name in stored_types else F.col(quote_identifier(f.name))).alias(f.name)
        for f in inserted.schema.fields
        if f.name not in drop
    ])
    return closed.unionByName(inserted, allowMissingColumns=True)


def bookkeeping_columns(staged_columns: Sequence[str]) -> List[str]:
    """The staging's columns that are not stored: dbt_change_type and dbt_unique_key[_N]."""
    return [c for c in staged_columns
            if c.lower() == CHANGE_TYPE or c.lower().startswith("dbt_unique_key")]
