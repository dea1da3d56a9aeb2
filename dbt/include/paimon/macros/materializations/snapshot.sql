{#- dbt snapshot on Paimon (file_format='paimon', the default): a Paimon primary-key table on
    dbt_scd_id. dbt's own strategy and staging macros say what changed; every run merges the
    closed versions (stored values, new dbt_valid_to) and the new versions as ONE commit. -#}
{% materialization snapshot, adapter='paimon' %}
  {%- set file_format = config.get('file_format') or 'paimon' -%}
  {%- if file_format != 'paimon' -%}
    {%- do exceptions.raise_compiler_error(
        "Snapshot '" ~ model.name ~ "': file_format '" ~ file_format ~ "' cannot hold a snapshot "
        ~ "(it needs a format with merges; this Spark session writes no Delta, Iceberg or Hudi). "
        ~ "Remove file_format or set file_format='paimon'.") -%}
  {%- endif -%}
  {%- set columns = config.get('snapshot_table_column_names')
        or get_snapshot_table_column_names() -%}

  {#-- 1. validate and find the table --#}
  {%- set target_relation_exists, target_relation = get_or_create_relation(
        database=none, schema=model.schema, identifier=model.get('alias', model.get('name')),
        type='table') -%}
  {%- if target_relation_exists and not adapter.is_paimon_relation(target_relation) -%}
    {%- do exceptions.raise_compiler_error(
        "Snapshot '" ~ model.name ~ "': " ~ target_relation ~ " exists but is not a Paimon table "
        ~ "(an earlier snapshot in another format?). Drop it (its history is lost), or snapshot "
        ~ "into another table with `alias`, then run `dbt snapshot` again.") -%}
  {%- endif -%}
  {%- if not adapter.check_schema_exists(model.database, model.schema) -%}
    {%- do create_schema(target_relation) -%}
  {%- endif -%}

  {{ run_hooks(pre_hooks) }}

  {%- set strategy_macro = strategy_dispatch(config.get('strategy')) -%}
  {%- set strategy = strategy_macro(model, "snapshotted_data", "source_data", model['config'],
                                    target_relation_exists) -%}

  {#-- 2. the rows of this run: the first versions, or closed and new versions --#}
  {%- if not target_relation_exists -%}
    {%- set rows_sql = build_snapshot_table(strategy, model['compiled_code']) -%}
    {%- set check_sql = rows_sql -%}
  {%- else -%}
    {{ adapter.assert_valid_snapshot_target_given_strategy(target_relation, columns, strategy) }}
    {%- set check_sql = snapshot_staging_table(strategy, sql, target_relation) -%}
    {%- set rows_sql = adapter.paimon_snapshot_rows(check_sql, target_relation, columns) -%}
  {%- endif -%}
  {{ check_time_data_types(check_sql) }}
  {%- set definition = adapter.paimon_snapshot_definition(model, rows_sql, columns.dbt_scd_id) -%}

  {#-- 3. one Paimon commit; source columns new to the table are added to it --#}
  {%- set response = adapter.paimon_build_model(
        definition, target_relation, rows_sql, false, 'append_new_columns') -%}
  {%- do store_result('main', response=response) -%}

  {% do persist_docs(target_relation, model) %}
  {{ run_hooks(post_hooks) }}
  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
