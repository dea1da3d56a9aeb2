"""The node config keys dbt-paimon's models, seeds and snapshots take beyond dbt-spark's: dbt
passes a node's config through ``PaimonAdapter.AdapterSpecificConfigs``. What each means is in
config/model_config.py, which validates them."""

from dataclasses import dataclass
from typing import Any, Dict, Optional

from dbt.adapters.spark.impl import SparkConfig


@dataclass
class PaimonConfig(SparkConfig):
    primary_key: Optional[Any] = None
    merge_engine: Optional[str] = None
    sequence_field: Optional[Any] = None
    sequence_groups: Optional[Dict[str, Any]] = None
    aggregations: Optional[Dict[str, str]] = None
    default_aggregate_function: Optional[str] = None
    bucket_key: Optional[Any] = None
    ignore_delete: Optional[bool] = None
    changelog_producer: Optional[str] = None
    row_tracking: Optional[bool] = None
    deletion_vectors: Optional[bool] = None
    row_kind_column: Optional[str] = None
    table_options: Optional[Dict[str, Any]] = None
    target: Optional[str] = None
    # which executor writes a primary-key run (docs/write_paths.md)
    write_path: Optional[str] = None
    in_process_max_bytes: Optional[int] = None
    # the branch of the table this model, seed or snapshot writes, for every node that
    # writes or reads it; 'main' for main (branch_config.py)
    paimon_branch: Optional[str] = None
    # the catalogs.yml catalog of the table this node writes or reads (catalog_integrations.py)
    catalog_name: Optional[str] = None
    # an incremental merge deleting the stored rows the run does not match (standard_writes.py)
    not_matched_by_source_action: Optional[str] = None
    not_matched_by_source_condition: Optional[str] = None
    # dbt-databricks' merge clauses: which run rows a merge writes (standard_writes.py)
    matched_condition: Optional[str] = None
    not_matched_condition: Optional[str] = None
    skip_matched_step: Optional[bool] = None
    skip_not_matched_step: Optional[bool] = None
    # materialized='data_evolution_update' (write/column_update.py): the key matching the
    # model's rows to the target's rows ('_ROW_ID' or a unique column), the columns it owns,
    # and what a row matching none does ('error' or 'insert': a new row)
    update_key: Optional[str] = None
    update_columns: Optional[Any] = None
    when_not_matched: Optional[str] = None
