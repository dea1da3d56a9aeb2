{#- dbt run-operation paimon_table_info --args '{model: orders}'
    Prints the table's options, snapshots, and files per (partition, bucket) and level with sizes
    and stored row counts: how many sorted runs a read merges, and whether compaction helped.
    Args: model | relation, snapshot_id (default: the latest). -#}
{% macro paimon_table_info(model=none, relation=none, snapshot_id=none) %}
  {{ return(adapter.dispatch('paimon_table_info')(model, relation, snapshot_id)) }}
{% endmacro %}

{% macro paimon__paimon_table_info(model, relation, snapshot_id) %}
  {%- set target = paimon_operation_relation('paimon_table_info', model, relation) -%}
  {%- set text = adapter.paimon_table_info(target, snapshot_id) -%}
  {{ log("\n" ~ text, info=True) }}
  {{ return(text) }}
{% endmacro %}
