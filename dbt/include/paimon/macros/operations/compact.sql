{#- dbt run-operation compact --args '{model: orders, partitions: [{dt: "2024-03-12"}], full: true}'
    Merges each selected (partition, bucket)'s files into files at a higher level, as one COMPACT
    snapshot. full: true merges everything into the top level; otherwise Paimon's size-tiered
    strategy decides (num-sorted-run.compaction-trigger, compaction.size-ratio).
    Args: model | relation ('schema.table'), partitions (list of {column: value}; default all),
    full (default false). -#}
{% macro compact(model=none, relation=none, partitions=none, full=false) %}
  {{ return(adapter.dispatch('compact')(model, relation, partitions, full)) }}
{% endmacro %}

{% macro paimon__compact(model, relation, partitions, full) %}
  {%- set target = paimon_operation_relation('compact', model, relation) -%}
  {%- set message = adapter.paimon_compact(target, partitions, full) -%}
  {{ log(message, info=True) }}
  {{ return(message) }}
{% endmacro %}
