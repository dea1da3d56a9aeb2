{#- dbt run-operation rescale_buckets --args '{model: orders, buckets: 8, partitions: [{dt: "2024-03-12"}]}'
    Sets the table's bucket count and rewrites the selected partitions (default: the whole table)
    into the new buckets as ONE overwrite commit; reads return the same rows before and after.
    Partitions left out keep their old bucket count and must be rescaled before the next write
    to them. Dynamic-bucket tables (buckets=-1) are refused: they have no bucket count.
    Args: model | relation, buckets (positive integer), partitions (list of {column: value}). -#}
{% macro rescale_buckets(model=none, relation=none, buckets=none, partitions=none) %}
  {{ return(adapter.dispatch('rescale_buckets')(model, relation, buckets, partitions)) }}
{% endmacro %}

{% macro paimon__rescale_buckets(model, relation, buckets, partitions) %}
  {%- if buckets is none -%}
    {%- do exceptions.raise_compiler_error(
          "rescale_buckets: pass the new bucket count, e.g. --args '{model: orders, buckets: 8}'") -%}
  {%- endif -%}
  {%- set target = paimon_operation_relation('rescale_buckets', model, relation) -%}
  {%- set message = adapter.paimon_rescale_buckets(target, buckets, partitions) -%}
  {{ log(message, info=True) }}
  {{ return(message) }}
{% endmacro %}
