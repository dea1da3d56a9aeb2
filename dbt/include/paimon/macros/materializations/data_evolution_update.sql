{#- Columns of an existing data-evolution table (row-tracking.enabled + data-evolution.enabled),
    written by row: the model's rows name rows of `target` by `update_key` ('_ROW_ID' or a
    column unique in the table) and carry the columns it owns (`update_columns`, default every
    query column but the key). Each run is ONE Paimon commit of files holding only those
    columns (write/column_update.py); the table's other columns are not rewritten. The model
    itself is a view of the whole table, so ref() and tests see every column. -#}
{% materialization data_evolution_update, adapter='paimon' %}
  {%- set target_relation = adapter.paimon_column_update_target(model, this) -%}
  {%- set existing_relation = load_cached_relation(this) -%}
  {%- if existing_relation is not none and existing_relation.type != 'view' -%}
    {%- do exceptions.raise_compiler_error(
        "Model '" ~ model.name ~ "' writes columns of " ~ target_relation ~ " (config `target`), "
        ~ "but " ~ this ~ " is still a table from an earlier configuration. Drop it (e.g. `dbt "
        ~ "run-operation paimon_drop_table --args '{relation: " ~ this ~ "}'`), then run "
        ~ "again.") -%}
  {%- endif -%}

  {{ run_hooks(pre_hooks) }}
  {%- set response = adapter.paimon_update_columns(model, target_relation, compiled_code) -%}
  {%- do store_result('main', response=response) -%}
  {%- do write("-- the model's rows, whose columns were written into " ~ target_relation
               ~ " as one Paimon commit:\n" ~ compiled_code) -%}

  {#-- a view of the whole table, following its columns as they change (build_model.sql) --#}
  {%- set model_relation = this.incorporate(type='view') -%}
  {%- call statement('paimon_target_view') -%}
    create or replace view {{ model_relation }} with schema evolution
    as select * from {{ target_relation }}
  {%- endcall -%}
  {% do persist_docs(model_relation, model) %}
  {{ run_hooks(post_hooks) }}
  {{ return({'relations': [model_relation]}) }}
{% endmaterialization %}
