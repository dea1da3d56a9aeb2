"""The configs a dbt-spark / dbt-databricks (Delta) project sets, on a Paimon table: each one
is either given its Paimon meaning or refused with what to change, never silently ignored.

- `partition_by`, `unique_key`, `incremental_strategy`, `merge_update_columns`, ... : dbt's
  own meaning (model_config.py);
- `clustered_by` (with `buckets`): dbt-spark's bucketing columns, Paimon's `bucket-key`;
- `tblproperties`: table properties, as Paimon table options (each must be one);
- `not_matched_by_source_action` / `_condition`: a merge that deletes the stored rows the run
  does not match (standard_writes.merge_deleting_unmatched);
- `matched_condition`, `not_matched_condition`, `skip_matched_step`, `skip_not_matched_step`:
  which run rows a merge writes (standard_writes.merge_clauses);
- `merge_with_schema_evolution`: a merge adds the run's new columns to the table, as Delta's
  MERGE WITH SCHEMA EVOLUTION does (on_schema_change's append_new_columns where it says
  ignore; model_builder);
- Delta's layout, location and the merge aliases: refused (REFUSED below says why).

Pure Python: called by model_config._standard_definition with the model's config.
"""

from __future__ import annotations

from typing import Any, Dict, Mapping

# config -> why Paimon cannot honour it and what to do instead
REFUSED: Dict[str, str] = {
    "liquid_clustered_by": "Delta's liquid clustering has no Paimon equivalent: remove it "
                           "(Paimon places rows by `partition_by` and by bucket: `buckets`, "
                           "`bucket_key`)",
    "auto_liquid_cluster": "Delta's liquid clustering has no Paimon equivalent: remove it",
    "zorder": "Delta's OPTIMIZE ZORDER BY has no Paimon equivalent here: remove it",
    "location_root": "a Paimon table is stored in the profile's `warehouse` "
                     "(<warehouse>/<schema>.db/<table>): remove it, or set the profile's "
                     "warehouse",
    "include_full_name_in_path": "a Paimon table is stored in the profile's `warehouse`: "
                                 "remove it",
    "options": "dbt-spark's `options` are options of a Spark data source: set Paimon table "
               "options with `table_options` (e.g. {'file.compression': 'zstd'})",
    "compression": "set Paimon's `file.compression` with `table_options` instead",
    "databricks_tags": "Unity Catalog tags do not exist for a Paimon table: remove it",
    "source_alias": "merge conditions name the run's row DBT_INTERNAL_SOURCE and the stored "
                    "row DBT_INTERNAL_DEST (incremental_predicates: DBT_INTERNAL_DEST or bare "
                    "column names): remove it and write the conditions that way",
    "target_alias": "merge conditions name the run's row DBT_INTERNAL_SOURCE and the stored "
                    "row DBT_INTERNAL_DEST (incremental_predicates: DBT_INTERNAL_DEST or bare "
                    "column names): remove it and write the conditions that way",
}


def _is_set(value: Any) -> bool:
    # `skip_matched_step: false`, `zorder: []` in a project are dbt-databricks' defaults
    return value not in (None, False, "", [], {}, ())


def check_schema_evolution(config: Mapping[str, Any], materialization: str, strategy: str,
                           problems) -> None:
    """`merge_with_schema_evolution` is a merge's: dbt-databricks adds it to MERGE only."""
    value = config.get("merge_with_schema_evolution")
    if value in (None, False):
        return
    if value is not True:
        problems.add(f"config `merge_with_schema_evolution` is true or false, got {value!r}.")
    elif materialization != "incremental" or strategy != "merge":
        problems.add("config `merge_with_schema_evolution` applies to incremental models with "
                     "incremental_strategy='merge' (and a unique_key): remove it, or set "
                     "on_schema_change='append_new_columns' to add new columns on other "
                     "strategies.")


def apply_spark_configs(config: Mapping[str, Any], problems) -> Dict[str, Any]:
    """``config`` with dbt-spark's `clustered_by` as `bucket_key` and `tblproperties` merged
    into `table_options`; a problem for each config in REFUSED and each tblproperties key that
    is not a Paimon option."""
    from dbt.adapters.paimon.config.model_config import is_known_option

    config = dict(config)
    for key, reason in REFUSED.items():
        if _is_set(config.get(key)):
            problems.add(f"config `{key}` is not supported on a Paimon table: {reason}.")
    clustered_by = config.pop("clustered_by", None)
    if _is_set(clustered_by):
        if config.get("bucket_key") is not None:
            problems.add("the bucket key is given two ways (`clustered_by` and `bucket_key`): "
                         "keep one.")
        else:
            config["bucket_key"] = clustered_by
    properties = config.pop("tblproperties", None)
    if _is_set(properties):
        if not isinstance(properties, Mapping):
            problems.add(f"config `tblproperties` must be a dict of Paimon table options, "
                         f"got {properties!r}.")
            return config
        unknown = [str(k) for k in properties if not is_known_option(str(k))]
        if unknown:
            problems.add(f"config `tblproperties` has {unknown}, which are not Paimon table "
                         f"options (a Delta property such as 'delta.*' means nothing to a "
                         f"Paimon table): remove them; Paimon options are listed in "
                         f"docs/configs.md.")
        options = dict(config.get("table_options") or {})
        for key, value in properties.items():
            if str(key) in options:
                problems.add(f"Paimon option '{key}' is given two ways (`tblproperties` and "
                             f"`table_options`): keep one.")
            elif str(key) not in unknown:
                options[str(key)] = value
        config["table_options"] = options
    return config
