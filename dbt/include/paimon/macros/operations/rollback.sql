{#- dbt run-operation rollback --args '{model: orders, tag: month_end}'
    Makes an earlier snapshot the table's latest again: snapshot_id: 7, tag: month_end, or
    timestamp: "2026-11-26 08:00:00" (the latest snapshot committed at or before it; epoch
    milliseconds work too). Later snapshots and their tags are removed, and the files only they
    used are deleted (docs/tags_and_rollback.md). Exactly one of snapshot_id, tag, timestamp. -#}
{% macro rollback(model=none, relation=none, snapshot_id=none, tag=none, timestamp=none) %}
  {{ return(adapter.dispatch('rollback')(model, relation, snapshot_id, tag, timestamp)) }}
{% endmacro %}

{% macro paimon__rollback(model, relation, snapshot_id, tag, timestamp) %}
  {%- set target = paimon_operation_relation('rollback', model, relation) -%}
  {%- set message = adapter.paimon_rollback(target, snapshot_id, tag, timestamp) -%}
  {{ log(message, info=True) }}
  {{ return(message) }}
{% endmacro %}
